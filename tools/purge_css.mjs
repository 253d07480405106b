// PurgeCSS (pinned in package.json) for tools/course_site.py: reads [{css, content: [{raw, extension}]}]
// as JSON on stdin and writes the style sheets, cut to the rules their content can use, as JSON on stdout.
import fs from "node:fs";
import { PurgeCSS } from "purgecss";

// Names no file spells out: Bootstrap builds these classes from parts (`bs-${name}-auto`), and scripts
// set these attributes through `element.dataset` (the colour mode, Bootstrap's menu placement).
const safelist = { greedy: [/^bs-tooltip-/, /^bs-popover-/] };
const dynamicAttributes = ["data-theme", "data-mode", "data-bs-theme", "data-bs-popper"];

const purged = [];
for (const job of JSON.parse(fs.readFileSync(0, "utf8"))) {
  const [result] = await new PurgeCSS().purge({ css: [{ raw: job.css }], content: job.content, safelist, dynamicAttributes });
  purged.push(result.css);
}
process.stdout.write(JSON.stringify(purged));
