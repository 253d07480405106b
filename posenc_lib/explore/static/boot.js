// Start each explorable on the page that this script has a kind for, when it comes near the screen:
// a page does no work for figures the reader has not reached (and nothing moves in the first screen
// but the figures there). Each notebook output carries its own copy of the script; a figure is
// claimed once, by whichever copy runs first. Until it starts, a figure keeps a placeholder's height.
function boot() {
  const claimed = [...document.querySelectorAll(".pe-explore[data-pe-kind]:not([data-pe-waiting]):not([data-pe-live])")]
    .filter((root) => KINDS[root.dataset.peKind]);
  const begin = (root) => {
    if (!root.hasAttribute("data-pe-waiting")) return;
    root.removeAttribute("data-pe-waiting");
    root.setAttribute("data-pe-live", "");
    const kind = KINDS[root.dataset.peKind];
    if (kind.start) kind.start(root);
    else start(root, kind);
  };
  const near = "IntersectionObserver" in window
    ? new IntersectionObserver((entries) => entries.forEach((entry) => {
      if (entry.isIntersecting) { near.unobserve(entry.target); begin(entry.target); }
    }), { rootMargin: "600px 0px" })
    : null;
  for (const root of claimed) {
    root.setAttribute("data-pe-waiting", "");
    if (near) near.observe(root);
    else begin(root);
  }
}
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();
