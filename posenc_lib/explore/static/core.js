// Explorable figures of the positional-encoding course: the shared core (controls, plots, state).
//
// posenc_lib.explore writes each figure as <div class="pe-explore" data-pe-kind="KIND"> holding its
// starting parameters in <script type="application/json" class="pe-params">. This script (core.js,
// then one file per kind, then boot.js, joined in one function by posenc_lib.explore) starts every figure it
// has a kind for: it builds labelled controls and plots, and after every change writes what it draws
// to <script type="application/json" class="pe-state">: {"kind", "params", "drawn"}, the convention
// tests/site/test_explorables.py reads (CONTRIBUTING.md, "Explorable figures and self-check questions").
// Everything is computed here, in float64 (T5's buckets in float32, as the library): no kernel, no request.

const KINDS = {};
const SVG_NS = "http://www.w3.org/2000/svg";
const TAU = 2 * Math.PI;
// class names are written out whole: the website's style sheet keeps only the rules whose names occur
// in its pages and scripts (PurgeCSS, tools/course_site.py)
const SERIES = ["pe-s0", "pe-s1", "pe-s2", "pe-s3", "pe-s4", "pe-s5"];
// a series of one positional scheme or context-extension method takes the course's colour for it, the same
// as in every chapter's plots (posenc_lib.plotting's SCHEME_COLORS and METHOD_COLORS; explore.css holds
// them, and their dark-mode twins, as --pe-c-<name>; tests/unit/test_explore_palette.py keeps them equal)
const COLOURS = {
  none: "pe-c-none", sinusoidal: "pe-c-sinusoidal", learned: "pe-c-learned", rope: "pe-c-rope", alibi: "pe-c-alibi",
  t5: "pe-c-t5", plain: "pe-c-rope", linear: "pe-c-linear", ntk: "pe-c-ntk", dynamic_ntk: "pe-c-dynamic-ntk",
  yarn: "pe-c-yarn", llama3: "pe-c-llama3",
};
// the colour class of a series: {colour: "<scheme or method>"} or {style: 0..5} (the course's cycle)
function seriesClass(s) {
  return (s.colour !== undefined && COLOURS[s.colour]) || SERIES[s.style || 0];
}
const BASES = [10, 100, 500, 1000, 10000, 50000, 100000, 500000, 1000000, 10000000];

function reducedMotion() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

// An element: h("label", {class: "x", onclick: f}, child, "text", ...)
function h(tag, attributes, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG_NS, tag.slice(4)) : document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
}

// ------------------------------------------------------------------ numbers as text

const SUPERSCRIPT = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹", ".": "·" };
function power(base, exponent) {
  return base + String(exponent).replace(/[-0-9.]/g, (c) => SUPERSCRIPT[c]);
}
function grouped(value) {
  return value.toLocaleString("en-US", { maximumFractionDigits: 0 });
}
// a number to read: 12,345 / 0.125 / 3.2e5 (at most 4 significant digits)
function fmt(value, digits = 4) {
  if (value === null || !Number.isFinite(value)) return "–";
  const size = Math.abs(value);
  if (size >= 100000 || (size > 0 && size < 0.001)) {
    const [mantissa, exponent] = value.toExponential(digits - 1).split("e");
    return `${Number(mantissa)}e${Number(exponent)}`.replace(/-/g, "−");
  }
  if (Number.isInteger(value)) return grouped(value).replace("-", "−");
  return String(Number(value.toPrecision(digits))).replace("-", "−");
}
function fmtBase(value) {
  return Number.isInteger(Math.log10(value)) && value >= 1000 ? `${grouped(value)} (${power(10, Math.log10(value))})` : grouped(value);
}

// ------------------------------------------------------------------ controls
// Each kind lists its controls: {name, label, type, values, format}. `values` is a list or a function
// of the current parameters (a pair index depends on d_h); a value the author passed that is not in
// the list joins it, and `valid(value, params)` drops the values the other controls rule out. Types: "steps" (a slider over the values: arrows, Home/End, drag), "select",
// "checks" (a group of check boxes; the parameter is the list of chosen values), "play" (a button
// that steps another control's value; left out when the reader asks for reduced motion).

function valuesOf(spec, params) {
  const list = typeof spec.values === "function" ? spec.values(params) : spec.values;
  return list.map((v) => (Array.isArray(v) ? v : [v, (spec.format || String)(v)]));
}

function nearest(list, value) {
  let best = 0;
  list.forEach(([v], i) => {
    if (v === value || Math.abs(v - value) < Math.abs(list[best][0] - value)) best = i;
  });
  return list[best][0] === value ? best : typeof value === "number" ? best : 0;
}

function buildControl(spec, params, changed) {
  const name = h("span", { class: "pe-name" }, spec.label);
  if (spec.type === "select") {
    const select = h("select", { class: "pe-select", "data-pe-param": spec.name, onchange: () => changed(spec.name, valuesOf(spec, params)[select.selectedIndex][0]) });
    return {
      element: h("label", { class: "pe-control" }, name, select),
      refresh(current) {
        const list = valuesOf(spec, current);
        select.replaceChildren(...list.map(([, text]) => h("option", {}, text)));
        select.setAttribute("data-pe-values", JSON.stringify(list.map(([v]) => v)));
        select.selectedIndex = nearest(list, current[spec.name]);
        return list[select.selectedIndex][0];
      },
    };
  }
  if (spec.type === "checks") {
    const group = h("fieldset", { class: "pe-checks", "data-pe-param": spec.name }, h("legend", { class: "pe-name" }, spec.label));
    let boxes = [];
    return {
      element: group,
      refresh(current) {
        const list = valuesOf(spec, current);
        group.setAttribute("data-pe-values", JSON.stringify(list.map(([v]) => v)));
        let chosen = current[spec.name].filter((v) => list.some(([w]) => w === v));
        if (boxes.length !== list.length || boxes.some((b, i) => b.value !== String(list[i][0]))) {
          if (boxes.length) chosen = list.map(([v]) => v); // other choices (another view): all of them
          boxes.forEach((box) => box.parentElement.remove());
          boxes = list.map(([value, text]) => {
            const box = h("input", { type: "checkbox", value, onchange: () => changed(spec.name, list.filter((_, i) => boxes[i].checked).map(([v]) => v)) });
            group.append(h("label", { class: "pe-check" }, box, " ", text));
            return box;
          });
        }
        boxes.forEach((box, i) => { box.checked = chosen.includes(list[i][0]); });
        return chosen;
      },
    };
  }
  if (spec.type === "play") {
    if (reducedMotion()) return null;  // no animation for readers who asked for less motion
    let timer = null;
    const button = h("button", { type: "button", class: "pe-button", "aria-pressed": "false", "data-pe-play": spec.target }, spec.label);
    const stop = () => { clearInterval(timer); timer = null; button.setAttribute("aria-pressed", "false"); button.textContent = spec.label; };
    button.addEventListener("click", () => {
      if (timer) return stop();
      button.setAttribute("aria-pressed", "true");
      button.textContent = "Pause";
      timer = setInterval(() => changed(spec.target, null, +1), spec.interval || 250);
    });
    return { element: h("div", { class: "pe-control pe-play" }, button), refresh: () => undefined, stop };
  }
  // "steps": a slider over the values
  const input = h("input", { type: "range", class: "pe-range", min: 0, step: 1, "data-pe-param": spec.name });
  const output = h("output", { class: "pe-value" });
  const start = params[spec.name]; // the author's value joins the list (unless spec.keep is false)
  let list = [];
  const show = () => {
    const text = list[+input.value][1];
    output.textContent = text;
    input.setAttribute("aria-valuetext", text);
  };
  input.addEventListener("input", () => { show(); changed(spec.name, list[+input.value][0]); });
  return {
    element: h("label", { class: "pe-control" }, name, input, output),
    refresh(current) {
      list = valuesOf(spec, current);
      if (spec.keep !== false && typeof start === "number" && !list.some(([v]) => v === start)) {
        list = [...list, [start, (spec.format || String)(start)]].sort((a, b) => a[0] - b[0]);
      }
      if (spec.valid) list = list.filter(([v]) => spec.valid(v, current));
      const value = current[spec.name];
      input.max = list.length - 1;
      input.setAttribute("data-pe-values", JSON.stringify(list.map(([v]) => v)));
      input.value = nearest(list, value);
      show();
      return list[+input.value][0];
    },
    step(by) {
      input.value = (+input.value + by + list.length) % list.length;
      show();
      return list[+input.value][0];
    },
  };
}

// ------------------------------------------------------------------ plots (SVG drawn at the box's width)

function niceTicks(lo, hi, count = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const ratio = raw / magnitude;
  const step = (ratio >= 7.5 ? 10 : ratio >= 3.5 ? 5 : ratio >= 1.5 ? 2 : 1) * magnitude;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step / 1000; t += step) ticks.push(Math.abs(t) < step / 1000 ? 0 : Number(t.toPrecision(12)));
  return ticks;
}

function logTicks(lo, hi, base, count = 6) {
  const first = Math.floor(Math.log(lo) / Math.log(base) + 1 / 1000);
  const last = Math.ceil(Math.log(hi) / Math.log(base) - 1 / 1000);
  const every = Math.max(1, Math.ceil((last - first + 1) / count));
  const ticks = [];
  for (let k = first; k <= last; k++) if ((k - first) % every === 0) ticks.push(k);
  return ticks;
}

function extent(values, fallback = [0, 1]) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (v !== null && Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
  return lo <= hi ? [lo, hi] : fallback;
}

// An axis: scale(value) -> pixel, and its ticks as [value, text].
function axis(kind, domain, range, options = {}) {
  let [lo, hi] = domain;
  if (kind === "log") {
    const base = options.base || 10;
    if (lo === hi) { lo /= base; hi *= base; }
    const pad = (options.pad === undefined ? 0.04 : options.pad) * Math.log(hi / lo);
    const a = Math.log(lo) - pad, b = Math.log(hi) + pad;
    const scale = (v) => range[0] + ((Math.log(v) - a) / (b - a)) * (range[1] - range[0]);
    const ticks = logTicks(lo, hi, base).map((k) => [base ** k, base === 10 && k >= 0 && k <= 4 ? grouped(10 ** k) : power(base, k)]);
    return { scale, ticks: ticks.filter(([v]) => Math.log(v) >= a - 1 / 1000 && Math.log(v) <= b + 1 / 1000), domain: [lo, hi] };
  }
  if (lo === hi) { lo -= 1; hi += 1; }
  if (options.pad) { const pad = (hi - lo) * options.pad; lo -= pad; hi += pad; }
  const scale = (v) => range[0] + ((v - lo) / (hi - lo)) * (range[1] - range[0]);
  const ticks = niceTicks(Math.min(lo, hi), Math.max(lo, hi), options.count || 5);
  return { scale, ticks: ticks.map((v) => [v, options.integer && !Number.isInteger(v) ? null : fmt(v)]).filter(([, t]) => t !== null), domain: [lo, hi] };
}

const MARGIN = { left: 58, right: 14, top: 12, bottom: 42 };

// A frame: axes with ticks and labels; returns {svg, x, y, plot: [x0, y0, x1, y1]}.
function frame(box, spec) {
  const width = Math.max(260, Math.round(box.clientWidth || 640));
  const height = spec.square ? width - MARGIN.left - MARGIN.right + MARGIN.top + MARGIN.bottom
    : spec.height || Math.round(Math.min(300, Math.max(200, width * 0.48)));
  const [x0, y0, x1, y1] = [MARGIN.left, MARGIN.top, width - MARGIN.right, height - MARGIN.bottom];
  const x = axis(spec.xscale || "linear", spec.xdomain, [x0, x1], spec.xaxis || {});
  const y = axis(spec.yscale || "linear", spec.ydomain, [y1, y0], spec.yaxis || { pad: 0.04 });
  const svg = h("svg:svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "pe-svg", role: "img", "aria-label": spec.title });
  const grid = [], labels = [];
  const xTicks = x.ticks.length > Math.floor((x1 - x0) / 56) ? x.ticks.filter((_, i) => i % 2 === 0) : x.ticks;
  for (const [v, text] of xTicks) {
    const px = x.scale(v);
    grid.push(`M${px.toFixed(1)} ${y0}V${y1}`);
    labels.push(h("svg:text", { x: px.toFixed(1), y: y1 + 16, "text-anchor": "middle", class: "pe-tick" }, text));
  }
  for (const [v, text] of y.ticks) {
    const py = y.scale(v);
    grid.push(`M${x0} ${py.toFixed(1)}H${x1}`);
    labels.push(h("svg:text", { x: x0 - 6, y: (py + 4).toFixed(1), "text-anchor": "end", class: "pe-tick" }, text));
  }
  svg.append(
    h("svg:path", { d: grid.join(""), class: "pe-grid" }),
    h("svg:rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, class: "pe-frame" }),
    ...labels,
    h("svg:text", { x: (x0 + x1) / 2, y: height - 6, "text-anchor": "middle", class: "pe-label" }, spec.xlabel),
    h("svg:text", { x: 14, y: (y0 + y1) / 2, "text-anchor": "middle", class: "pe-label", transform: `rotate(-90 14 ${(y0 + y1) / 2})` }, spec.ylabel),
  );
  box.replaceChildren(svg);
  return { svg, x, y, plot: [x0, y0, x1, y1] };
}

// A path through the points (gaps where y is null); "step" draws a staircase.
function pathOf(xs, ys, fx, fy, step = false) {
  let d = "", open = false;
  for (let i = 0; i < xs.length; i++) {
    if (ys[i] === null || !Number.isFinite(ys[i])) { open = false; continue; }
    const px = fx(xs[i]).toFixed(1), py = fy(ys[i]).toFixed(1);
    if (!open) d += `M${px} ${py}`;
    else if (step) d += `H${px}V${py}`;
    else d += `L${px} ${py}`;
    open = true;
  }
  return d;
}

// A line plot: spec.series = [{label, x, y, style: 0..5 or colour: scheme, dash, markers, step}], vlines: [{x, label}].
function linePlot(box, spec) {
  const all = spec.series.flatMap((s) => s.y);
  const f = frame(box, { ...spec, xdomain: spec.xdomain || extent(spec.series.flatMap((s) => s.x)), ydomain: spec.ydomain || extent(all) });
  const [x0, y0, x1, y1] = f.plot;
  const clip = h("svg:g", {});
  for (const line of spec.vlines || []) {
    const px = f.x.scale(line.x);
    if (px < x0 - 1 || px > x1 + 1) continue;
    clip.append(h("svg:path", { d: `M${px.toFixed(1)} ${y0}V${y1}`, class: "pe-mark" }));
    if (line.label) clip.append(h("svg:text", { x: (px + 4).toFixed(1), y: line.bottom ? y1 - 6 : y0 + 14, class: "pe-tick", "text-anchor": px > (x0 + x1) / 2 ? "end" : "start", dx: px > (x0 + x1) / 2 ? -8 : 0 }, line.label));
  }
  for (const line of spec.hlines || []) {
    const py = f.y.scale(line.y);
    if (py < y0 - 1 || py > y1 + 1) continue;
    clip.append(h("svg:path", { d: `M${x0} ${py.toFixed(1)}H${x1}`, class: "pe-mark" }));
  }
  for (const s of spec.series) {
    const cls = `pe-line ${seriesClass(s)}${s.dash ? " pe-dash" : ""}${s.thin ? " pe-thin" : ""}`;
    if (!s.markersOnly) clip.append(h("svg:path", { d: pathOf(s.x, s.y, f.x.scale, f.y.scale, s.step), class: cls }));
    if (s.markers) {
      const r = s.markers === "small" ? 2.5 : 3.5;
      const d = s.x.map((x, i) => (s.y[i] === null ? "" : `M${(f.x.scale(x) - r).toFixed(1)} ${f.y.scale(s.y[i]).toFixed(1)}a${r} ${r} 0 1 0 ${2 * r} 0a${r} ${r} 0 1 0 ${-2 * r} 0`)).join("");
      clip.append(h("svg:path", { d, class: `pe-dots ${seriesClass(s)}${s.hollow ? " pe-hollow" : ""}` }));
    }
  }
  f.svg.append(clip);
  return f;
}

// A heat map of rows x cols values (row-major), drawn as one image scaled to the plot area.
const DIVERGING = [[33, 102, 172], [103, 169, 207], [247, 247, 247], [239, 138, 98], [178, 24, 43]];
function colour(t) {
  const u = Math.min(1, Math.max(0, t)) * (DIVERGING.length - 1);
  const i = Math.min(DIVERGING.length - 2, Math.floor(u)), w = u - i;
  return DIVERGING[i].map((c, k) => Math.round(c + w * (DIVERGING[i + 1][k] - c)));
}
function heatPlot(box, spec) {
  const f = frame(box, { ...spec, xdomain: [-0.5, spec.cols - 0.5], ydomain: [spec.rows - 0.5, -0.5], yaxis: {}, xaxis: {} });
  const [x0, y0, x1, y1] = f.plot;
  const canvas = document.createElement("canvas");
  canvas.width = spec.cols;
  canvas.height = spec.rows;
  const context = canvas.getContext("2d");
  const image = context.createImageData(spec.cols, spec.rows);
  for (let i = 0; i < spec.rows * spec.cols; i++) {
    const [r, g, b] = colour((spec.values[i] - spec.vmin) / (spec.vmax - spec.vmin));
    image.data.set([r, g, b, 255], 4 * i);
  }
  context.putImageData(image, 0, 0);
  f.svg.insertBefore(
    h("svg:image", { href: canvas.toDataURL(), x: x0, y: y0, width: x1 - x0, height: y1 - y0, preserveAspectRatio: "none", class: "pe-pixels" }),
    f.svg.querySelector(".pe-frame"),
  );
  return f;
}

// ------------------------------------------------------------------ a figure's life

function legend(items) {
  return h("ul", { class: "pe-legend" }, items.map(({ label, style, colour, dash, hollow }) => h("li", {},
    h("svg:svg", { width: 26, height: 12, "aria-hidden": "true", class: "pe-swatch" },
      hollow !== undefined
        ? h("svg:circle", { cx: 13, cy: 6, r: 4, class: `pe-dots ${seriesClass({ style, colour })}${hollow ? " pe-hollow" : ""}` })
        : h("svg:path", { d: "M1 6H25", class: `pe-line ${seriesClass({ style, colour })}${dash ? " pe-dash" : ""}` })),
    label)));
}

function publish(root, state) {
  let node = root.querySelector(":scope > script.pe-state");
  if (!node) root.append((node = h("script", { type: "application/json", class: "pe-state" })));
  node.textContent = JSON.stringify(state);
  root.setAttribute("data-pe-revision", String(Number(root.getAttribute("data-pe-revision") || 0) + 1));
}

function start(root, kind) {
  const params = { ...JSON.parse(root.querySelector(":scope > script.pe-params").textContent) };
  const data = root.querySelector(":scope > script.pe-data");  // large fixed data: read, never published
  if (data) Object.defineProperty(params, "data", { value: JSON.parse(data.textContent), enumerable: false });
  root.querySelector(":scope > .pe-nojs")?.remove();
  const controls = h("div", { class: "pe-controls" });
  const figures = (kind.figures || ["pe-figure-plot"]).map((name) => {
    const plot = h("div", { class: "pe-plot" });
    const caption = h("figcaption", { class: "pe-caption" });
    return { name, plot, caption, element: h("figure", { class: `pe-figure ${name}` }, plot, caption) };
  });
  const extra = h("div", { class: "pe-extra" });
  const widgets = {};
  let model = null;
  const update = () => {
    for (const spec of kind.controls) if (widgets[spec.name]) params[spec.name] = widgets[spec.name].refresh(params);
    model = kind.compute(params);
    publish(root, { kind: root.dataset.peKind, params, drawn: model.drawn });
    draw();
  };
  const draw = () => { if (model) kind.draw(figures, model, params, extra); };
  const changed = (name, value, step) => {
    params[name] = step ? widgets[name].step(step) : value;
    update();
  };
  for (const spec of kind.controls) {
    const widget = buildControl(spec, params, changed);
    if (widget) { widgets[spec.type === "play" ? `play:${spec.target}` : spec.name] = widget; controls.append(widget.element); }
  }
  root.append(
    h("p", { class: "pe-title" }, h("strong", {}, kind.title), kind.subtitle ? ` ${kind.subtitle}` : ""),
    controls,
    h("div", { class: "pe-figures" }, figures.map((f) => f.element)),
    extra,
  );
  update();
  let width = root.clientWidth;
  new ResizeObserver(() => { if (root.clientWidth !== width) { width = root.clientWidth; draw(); } }).observe(root);
}
