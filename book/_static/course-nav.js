// Reading a long chapter on a phone (the header and drawers of sphinx-book-theme):
// 1. a link tapped in a drawer (the site's contents or this page's sections) closes the drawer,
//    which the theme left open over the page the reader jumped to;
// 2. the phone header names the section being read, next to the page's name
//    (book/_templates/toggle-primary-sidebar.html; hidden on a desktop by course.css).
(() => {
  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("dialog a[href]");
    const dialog = link && link.closest("dialog");
    if (dialog && dialog.open) dialog.close();
  });

  const label = document.querySelector(".course-header-title__section");
  const headings = [...document.querySelectorAll("article.bd-article section > h2")];
  if (!label || !headings.length) return;
  const name = (heading) => {
    const copy = heading.cloneNode(true); // as read: no permalink sign, no KaTeX MathML twin
    copy.querySelectorAll(".headerlink, .katex-mathml").forEach((e) => e.remove());
    return copy.textContent.replace(/\s+/g, " ").trim();
  };
  const names = headings.map(name);
  let queued = false;
  const update = () => {
    queued = false;
    if (!label.parentElement.offsetParent) return; // hidden (a desktop)
    // a section is being read once its heading is under the header (a jump puts it 1rem below);
    // at the end of the page, whose last sections cannot scroll up to the header, once it shows
    const root = document.documentElement;
    const atEnd = scrollY + innerHeight >= root.scrollHeight - 2;
    const header = label.closest(".bd-header-article").getBoundingClientRect().bottom;
    const line = atEnd ? innerHeight / 2 : header + 24;
    let current = "";
    for (let i = 0; i < headings.length; i++) {
      if (headings[i].getBoundingClientRect().top <= line) current = names[i];
      else break;
    }
    if (label.textContent !== current) label.textContent = current;
  };
  const queue = () => {
    if (!queued) {
      queued = true;
      requestAnimationFrame(update);
    }
  };
  addEventListener("scroll", queue, { passive: true });
  addEventListener("resize", queue, { passive: true });
  queue();
})();
