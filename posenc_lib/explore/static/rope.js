// RoPE (posenc_lib.rope): one pair of a query turning as its position moves, and the score q · R_r k
// against the relative position r, with the base B, the head width d_h and the layout.
function ropeVector(kind, headDim) {
  // the query (= the key): all ones, or ones in the first half and 0.3 in the second (stored coordinates)
  return Array.from({ length: headDim }, (_, c) => (kind === "ones" || c < headDim / 2 ? 1 : 0.3));
}
function ropePair(x, l, layout) {
  // coordinates of pair ℓ: (x_ℓ, x_{ℓ + d_h/2}) in the half layout, (x_2ℓ, x_2ℓ+1) interleaved
  return layout === "half" ? [x[l], x[l + x.length / 2]] : [x[2 * l], x[2 * l + 1]];
}
KINDS.rope = {
  title: "RoPE: one pair turning with the position, and the score q · R_r k against r.",
  figures: ["pe-figure-pair", "pe-figure-score"],
  controls: [
    { name: "base", label: "base B", type: "steps", values: BASES, format: fmtBase },
    { name: "head_dim", label: "head width d_h", type: "steps", values: [4, 8, 16, 32, 64, 128, 256], format: String },
    { name: "layout", label: "layout", type: "select", values: [["half", "half (x_ℓ, x_ℓ+d_h/2)"], ["interleaved", "interleaved (x_2ℓ, x_2ℓ+1)"]] },
    { name: "vector", label: "q = k", type: "select", values: [["ones", "all ones"], ["split", "1 in the first half, 0.3 in the second"]] },
    { name: "pair", label: "pair ℓ", type: "steps", values: (p) => Array.from({ length: p.head_dim / 2 }, (_, l) => l), format: String, keep: false },
    { name: "position", label: "position p", type: "steps", values: Array.from({ length: 128 }, (_, i) => i), format: String, keep: false },
    { type: "play", label: "Play", target: "position", interval: 300 },
    { name: "max_distance", label: "r up to", type: "steps", values: [32, 128, 512, 2048, 8192], format: grouped },
  ],
  compute(p) {
    const dh = p.head_dim, half = dh / 2;
    const theta = Array.from({ length: half }, (_, l) => Math.pow(p.base, (-2 * l) / dh)); // θ_ℓ = B^(-2ℓ/d_h)
    const q = ropeVector(p.vector, dh), k = q;
    const [a, b] = ropePair(q, p.pair, p.layout);
    const path = [];
    for (let pos = 0; pos <= p.position; pos++) {
      const angle = pos * theta[p.pair];
      path.push([a * Math.cos(angle) - b * Math.sin(angle), b * Math.cos(angle) + a * Math.sin(angle)]);
    }
    const qPairs = theta.map((_, l) => ropePair(q, l, p.layout));
    const kPairs = theta.map((_, l) => ropePair(k, l, p.layout));
    const r = [], score = [];
    for (let distance = 0; distance <= p.max_distance; distance++) {
      let sum = 0; // q at position 0 (not turned) · k at position r (turned by r θ_ℓ), pair by pair
      for (let l = 0; l < half; l++) {
        const angle = distance * theta[l], cos = Math.cos(angle), sin = Math.sin(angle);
        const [ka, kb] = kPairs[l];
        sum += qPairs[l][0] * (ka * cos - kb * sin) + qPairs[l][1] * (kb * cos + ka * sin);
      }
      r.push(distance);
      score.push(sum);
    }
    return { drawn: { pair_path: path, angle: p.position * theta[p.pair], r, score }, theta };
  },
  draw([pairFigure, scoreFigure], model, p) {
    const path = model.drawn.pair_path, [x, y] = path[path.length - 1];
    const radius = Math.hypot(...path[0]) || 1;
    const f = frame(pairFigure.plot, {
      square: true, xdomain: [-1.25 * radius, 1.25 * radius], ydomain: [-1.25 * radius, 1.25 * radius], yaxis: {},
      xlabel: "1st coordinate", ylabel: "2nd coordinate", title: `Pair ${p.pair} of the query at positions 0 to ${p.position}`,
    });
    const cx = f.x.scale(0), cy = f.y.scale(0), rx = f.x.scale(radius) - cx, ry = cy - f.y.scale(radius);
    const trail = path.slice(-24, -1).map(([u, v]) => `M${(f.x.scale(u) - 2).toFixed(1)} ${f.y.scale(v).toFixed(1)}a2 2 0 1 0 4 0a2 2 0 1 0 -4 0`).join("");
    f.svg.append(
      h("svg:ellipse", { cx, cy, rx, ry, class: "pe-circle" }),
      h("svg:path", { d: trail, class: "pe-dots pe-c-rope pe-hollow" }),
      h("svg:path", { d: `M${cx} ${cy}L${f.x.scale(x).toFixed(1)} ${f.y.scale(y).toFixed(1)}`, class: "pe-line pe-c-rope pe-arrow" }),
      h("svg:path", { d: `M${(f.x.scale(x) - 4).toFixed(1)} ${f.y.scale(y).toFixed(1)}a4 4 0 1 0 8 0a4 4 0 1 0 -8 0`, class: "pe-dots pe-c-rope" }),
    );
    const theta = model.theta[p.pair], turns = model.drawn.angle / TAU;
    const coordinates = p.layout === "half" ? `x_${p.pair}, x_${p.pair + p.head_dim / 2}` : `x_${2 * p.pair}, x_${2 * p.pair + 1}`;
    pairFigure.caption.textContent = `Pair ℓ = ${p.pair} (${coordinates}) at p = ${p.position}: angle p θ_ℓ = ${fmt(model.drawn.angle)} rad, ${fmt(turns)} turns; θ_ℓ = ${fmt(theta)}, one turn every ${fmt(TAU / theta)} positions.`;
    const score = model.drawn.score;
    linePlot(scoreFigure.plot, {
      series: [{ x: model.drawn.r, y: score, colour: "rope" }], hlines: [{ y: 0 }],
      title: `Score of q and k against the relative position r, d_h = ${p.head_dim}, base ${grouped(p.base)}, ${p.layout} layout`,
      xlabel: "relative position r = j − i", ylabel: "score q · R_r k",
    });
    let low = 0;
    score.forEach((s, i) => { if (s < score[low]) low = i; });
    scoreFigure.caption.textContent = `${fmt(score[0])} at r = 0 (|q|²); smallest ${fmt(score[low])} at r = ${grouped(low)}; ${fmt(score[score.length - 1])} at r = ${grouped(p.max_distance)}. The same for any query position i.`;
  },
};
