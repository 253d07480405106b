// Drop the rules no page can use from the website's style sheets (PurgeCSS, pinned in package.json).
//
//   node tools/purge_css.mjs < jobs.json
//
// jobs.json: [{"css": "/abs/course-x.css", "content": ["/abs/page.html", "/abs/script.js", ...]}, ...]
// Each style sheet is rewritten in place, keeping the rules whose selectors name only classes, ids,
// tags and attributes that occur in its pages or in the scripts those pages load (scripts add
// classes such as "show" or "toggle-hidden" at run time). tools/course_site.py writes the jobs.
import fs from "node:fs";
import { PurgeCSS } from "purgecss";

// Bootstrap builds these class names from parts (`bs-${name}-auto`), so no script spells them out.
const BUILT_AT_RUN_TIME = [/^bs-tooltip-/, /^bs-popover-/];
// Attributes scripts set through `element.dataset`, so no file spells out their names: the colour
// mode on <html> (pydata-sphinx-theme) and Bootstrap's placement of dropdown menus.
const SET_AT_RUN_TIME = ["data-theme", "data-mode", "data-bs-theme", "data-bs-popper"];

const jobs = JSON.parse(fs.readFileSync(0, "utf8"));
for (const job of jobs) {
  const [result] = await new PurgeCSS().purge({
    css: [job.css],
    content: job.content,
    safelist: { greedy: BUILT_AT_RUN_TIME },
    dynamicAttributes: SET_AT_RUN_TIME,
  });
  fs.writeFileSync(job.css, result.css);
}
