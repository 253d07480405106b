// Start every explorable on the page that this module has a kind for (each notebook output carries
// its own copy of the module; a figure is started once, by whichever copy runs first).
function boot() {
  for (const root of document.querySelectorAll(".pe-explore[data-pe-kind]:not([data-pe-live])")) {
    const kind = KINDS[root.dataset.peKind];
    if (!kind) continue;
    root.setAttribute("data-pe-live", "");
    if (kind.start) kind.start(root);
    else start(root, kind);
  }
}
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();
