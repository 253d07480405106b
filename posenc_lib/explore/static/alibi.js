// ALiBi (posenc_lib.alibi): the authors' slopes for any head count, and how far back each head looks.
function lowerPowerOfTwo(n) {
  let p = 1;
  while (2 * p <= n) p *= 2;
  return p;
}
function alibiSlopes(heads) {
  // a power of two n: m_h = 2^(-8h/n); otherwise the slopes of p heads (p the largest power of two
  // below n), then every other slope (1st, 3rd, ...) of the 2p-head sequence: n - p of them
  const p = lowerPowerOfTwo(heads);
  const slopes = [];
  for (let h = 1; h <= p; h++) slopes.push(2 ** ((-8 * h) / p));
  for (let i = 0; i < heads - p; i++) slopes.push(2 ** ((-8 * (2 * i + 1)) / (2 * p)));
  return slopes;
}
function alibiSpan(slope, seqLen, mass) {
  // the last query of seqLen keys, equal content scores: weights softmax(-m r) over distances r = 0 .. s-1;
  // the span is the number of distances whose running total is still short of `mass` (at most s - 1)
  const weights = [];
  let total = 0;
  for (let r = 0; r < seqLen; r++) { const w = Math.exp(-slope * r); weights.push(w); total += w; }
  let running = 0, short = 0;
  for (const w of weights) { running += w / total; if (running < mass - Math.pow(10, -12)) short++; }
  return Math.min(short, seqLen - 1);
}
KINDS.alibi = {
  title: "ALiBi: each head's slope m_h and how far back it looks.",
  figures: ["pe-figure-slopes", "pe-figure-spans"],
  controls: [
    { name: "n_heads", label: "heads n_h", type: "steps", values: Array.from({ length: 64 }, (_, i) => i + 1), format: String, keep: false },
    { name: "mass", label: "share of attention", type: "steps", values: [0.5, 0.75, 0.9, 0.95, 0.99], format: (m) => `${Math.round(100 * m)} %` },
    { name: "seq_len", label: "sequence length s", type: "steps", values: [64, 256, 1024, 4096, 16384], format: grouped },
  ],
  compute(p) {
    const slopes = alibiSlopes(p.n_heads);
    const naive = slopes.map((_, h) => 2 ** ((-8 * (h + 1)) / p.n_heads));
    return { drawn: { slopes, naive, spans: slopes.map((m) => alibiSpan(m, p.seq_len, p.mass)) } };
  },
  draw([slopeFigure, spanFigure], model, p) {
    const heads = model.drawn.slopes.map((_, h) => h + 1);
    const power = lowerPowerOfTwo(p.n_heads) === p.n_heads;
    const series = [{ x: heads, y: model.drawn.slopes, colour: "alibi", markers: true, markersOnly: !power }];
    if (!power) series.push({ x: heads, y: model.drawn.naive, style: 5, markers: "small", hollow: true, markersOnly: true });
    linePlot(slopeFigure.plot, {
      series, yscale: "log", yaxis: { base: 2 }, ydomain: extent([...model.drawn.slopes, ...(power ? [] : model.drawn.naive)]),
      xdomain: [0.5, p.n_heads + 0.5], xaxis: { integer: true },
      title: `ALiBi slopes of ${p.n_heads} heads on a log scale`, xlabel: "head h", ylabel: "slope m_h",
    });
    slopeFigure.plot.append(legend(power ? [{ label: "m_h = 2^(−8h/n_h)", colour: "alibi", hollow: false }]
      : [{ label: "the authors' slopes", colour: "alibi", hollow: false }, { label: "2^(−8h/n_h), not used", style: 5, hollow: true }]));
    const sorted = model.drawn.slopes.every((m, i, all) => i === 0 || m < all[i - 1]);
    slopeFigure.caption.textContent = power
      ? `${p.n_heads} is a power of two: m_h = 2^(−8h/${p.n_heads}), from ${fmt(model.drawn.slopes[0])} down to ${fmt(model.drawn.slopes[p.n_heads - 1])}.`
      : `${p.n_heads} is not a power of two: the slopes of ${lowerPowerOfTwo(p.n_heads)} heads, then every other slope of ${2 * lowerPowerOfTwo(p.n_heads)} heads;${sorted ? "" : " not sorted."}`;
    const spans = model.drawn.spans;
    const height = Math.max(200, Math.min(560, 46 + 54 + 9 * p.n_heads));
    const f = frame(spanFigure.plot, {
      height, xdomain: [0, Math.max(...spans, 1) * 1.05], ydomain: [p.n_heads + 0.5, 0.5], yaxis: { integer: true },
      title: `Distance holding ${Math.round(100 * p.mass)} % of the attention, per head`, xlabel: `distance |r| holding ${Math.round(100 * p.mass)} % of the weight`, ylabel: "head h",
    });
    const bar = Math.max(2, (f.y.scale(2) - f.y.scale(1)) * 0.7);
    const d = spans.map((s, i) => `M${f.x.scale(0).toFixed(1)} ${(f.y.scale(i + 1) - bar / 2).toFixed(1)}h${Math.max(1, f.x.scale(s) - f.x.scale(0)).toFixed(1)}v${bar.toFixed(1)}H${f.x.scale(0).toFixed(1)}z`).join("");
    f.svg.append(h("svg:path", { d, class: "pe-bars pe-c-alibi" }));
    const widest = spans.indexOf(Math.max(...spans)), narrowest = spans.indexOf(Math.min(...spans));
    spanFigure.caption.textContent = `The last of ${grouped(p.seq_len)} queries, equal content scores: head ${narrowest + 1} keeps ${Math.round(100 * p.mass)} % within |r| ≤ ${grouped(spans[narrowest])}, head ${widest + 1} needs |r| ≤ ${grouped(spans[widest])}${spans[widest] === p.seq_len - 1 ? " (the whole sequence)" : ""}.`;
  },
};
