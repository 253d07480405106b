// Sinusoidal encodings (posenc_lib.sinusoidal): the table PE(p) and PE(p) · PE(p + Δ), with d and B.
KINDS.sinusoidal = {
  title: "The sinusoidal table and the dot product PE(p) · PE(p + Δ).",
  figures: ["pe-figure-table", "pe-figure-dot"],
  controls: [
    { name: "d_model", label: "width d", type: "steps", values: [4, 8, 16, 32, 64, 128, 256, 512], format: String },
    { name: "base", label: "base B", type: "steps", values: BASES, format: fmtBase },
    { name: "layout", label: "layout", type: "select", values: [["interleaved", "interleaved (sin, cos, …)"], ["concatenated", "concatenated (sin … | cos …)"]] },
    { name: "max_distance", label: "distances |Δ| up to", type: "steps", values: [16, 64, 256, 1024, 4096], format: grouped },
  ],
  compute(p) {
    const d = p.d_model, pairs = Math.ceil(d / 2), rows = p.positions;
    const theta = [];
    for (let l = 0; l < pairs; l++) theta.push(Math.pow(p.base, (-2 * l) / d)); // θ_ℓ = B^(-2ℓ/d)
    const table = [];
    for (let pos = 0; pos < rows; pos++) {
      const row = new Array(d);
      for (let l = 0; l < pairs; l++) {
        const angle = pos * theta[l];
        const [sinColumn, cosColumn] = p.layout === "interleaved" ? [2 * l, 2 * l + 1] : [l, pairs + l];
        row[sinColumn] = Math.sin(angle);
        if (2 * l + 1 < d) row[cosColumn] = Math.cos(angle); // an odd d has no last cosine
      }
      table.push(row);
    }
    const distance = [], dot = [];
    for (let delta = -p.max_distance; delta <= p.max_distance; delta++) {
      let sum = 0;
      for (let l = 0; l < pairs; l++) sum += Math.cos(delta * theta[l]); // Σ_ℓ cos(Δ θ_ℓ)
      distance.push(delta);
      dot.push(sum);
    }
    return { drawn: { table, distance, dot } };
  },
  draw([table, dot], model, p) {
    const d = p.d_model;
    heatPlot(table.plot, {
      rows: p.positions, cols: d, values: model.drawn.table.flat(), vmin: -1, vmax: 1,
      title: `Heat map of the sinusoidal table, ${p.positions} positions by ${d} columns, base ${grouped(p.base)}`,
      xlabel: "column c", ylabel: "position p", height: 220, xaxis: { integer: true }, yaxis: { integer: true },
    });
    const kind = p.layout === "interleaved" ? "column 2ℓ holds sin(p θ_ℓ), column 2ℓ + 1 cos(p θ_ℓ)" : "the first half holds the sines, the second the cosines";
    table.caption.textContent = `PE(p) for p = 0 … ${p.positions - 1} (blue −1, white 0, red +1); ${kind}, θ_ℓ = B^(−2ℓ/d).`;
    const values = model.drawn.dot;
    const centre = p.max_distance;
    let low = centre;
    for (let i = centre; i < values.length; i++) if (values[i] < values[low]) low = i;
    linePlot(dot.plot, {
      series: [{ x: model.drawn.distance, y: values, colour: "sinusoidal" }],
      title: `Dot product of PE(p) and PE(p + Δ) for d = ${d}, base ${grouped(p.base)}`,
      xlabel: "distance Δ", ylabel: "PE(p) · PE(p + Δ)", hlines: [{ y: 0 }],
    });
    dot.caption.textContent = `Σ_ℓ cos(Δ θ_ℓ): ${fmt(values[centre])} (= d/2) at Δ = 0, smallest ${fmt(values[low])} at Δ = ±${grouped(low - centre)}; the same for every p.`;
  },
};
