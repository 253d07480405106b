// Keyboard access to code, output and formula boxes that scroll sideways: such a box gets a tab
// stop, checked when the box first comes into view. (pydata-sphinx-theme measured every box of the
// page when it loaded, which laid out the whole page at once and kept a phone busy for half a
// second; tools/course_site.py turns that first pass off.)
(() => {
  const boxes = document.querySelectorAll("pre, .cell_output > .output, .pst-scrollable-table-container, div.math");
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const box = entry.target;
      box.tabIndex = box.scrollWidth > box.clientWidth || box.scrollHeight > box.clientHeight ? 0 : -1;
      observer.unobserve(box);
    }
  });
  boxes.forEach((box) => observer.observe(box));
})();
