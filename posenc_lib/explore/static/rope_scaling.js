// RoPE context extension (posenc_lib.rope_scaling): each pair's new frequency or wavelength under
// position interpolation, NTK-aware, dynamic NTK, YaRN and Llama 3's rule, with α, L and the method.
const SCALING_METHODS = [
  ["linear", "PI (position interpolation)"], ["ntk", "NTK-aware"], ["dynamic_ntk", "dynamic NTK"],
  ["yarn", "YaRN"], ["llama3", "Llama 3"],
];
function ntkFrequencies(theta, factor) {
  const half = theta.length; // θ_ℓ α^(-ℓ/(d_h/2 - 1)): the fastest pair kept, the slowest divided by α
  return theta.map((t, l) => t * factor ** (-l / (half - 1)));
}
function yarnRamp(theta, L, betaFast, betaSlow) {
  // the pair indices at which a pair turns β times in L positions (log θ_ℓ is linear in ℓ), rounded
  // outwards and clamped to [0, d_h - 1] as in the authors' code and HF transformers
  const half = theta.length, logFirst = Math.log(theta[0]), slope = (Math.log(theta[half - 1]) - logFirst) / (half - 1);
  const index = (target) => (Math.log(target) - logFirst) / slope;
  const low = Math.max(Math.floor(index((betaFast * 2 * Math.PI) / L)), 0);
  let high = Math.min(Math.ceil(index((betaSlow * 2 * Math.PI) / L)), 2 * half - 1);
  if (low === high) high += 0.001;
  return { low, high, ramp: theta.map((_, l) => Math.min(1, Math.max(0, (l - low) / (high - low)))) };
}
function dynamicFactor(p) {
  // HF transformers' "dynamic": α' = α s / L - (α - 1) for a sequence of s = (multiple) L tokens, at least 1
  const L = p.original_max_len, s = Math.round(p.seq_multiple * L);
  return (p.factor * Math.max(s, L)) / L - (p.factor - 1);
}
function scaledFrequencies(method, theta, p) {
  const a = p.factor, L = p.original_max_len;
  if (method === "linear") return theta.map((t) => t / a);
  if (method === "ntk") return ntkFrequencies(theta, a);
  if (method === "dynamic_ntk") return ntkFrequencies(theta, dynamicFactor(p));
  if (method === "yarn") {
    const { ramp } = yarnRamp(theta, L, p.beta_fast, p.beta_slow);
    return theta.map((t, l) => t * (1 - ramp[l]) + (t / a) * ramp[l]);
  }
  // Llama 3: kept above high_freq_factor turns in L, divided by α below low_freq_factor, a ramp in the turns between
  return theta.map((t) => {
    const turns = L / ((2 * Math.PI) / t);
    const blend = Math.min(1, Math.max(0, (turns - p.low_freq_factor) / (p.high_freq_factor - p.low_freq_factor)));
    return ((1 - blend) * t) / a + blend * t;
  });
}
KINDS.rope_scaling = {
  title: "Stretching RoPE: each pair's new frequency under five rules.",
  figures: ["pe-figure-frequencies"],
  controls: [
    { name: "methods", label: "rules", type: "checks", values: SCALING_METHODS },
    { name: "factor", label: "factor α", type: "steps", values: [1, 1.5, 2, 3, 4, 6, 8, 16, 32, 64], format: String },
    { name: "original_max_len", label: "training length L", type: "steps", values: [512, 1024, 2048, 4096, 8192, 16384, 32768, 131072], format: grouped },
    { name: "seq_multiple", label: "dynamic NTK: length s", type: "steps", values: [1, 1.5, 2, 3, 4, 6, 8, 16, 32, 64], format: (k) => `${fmt(k)} L` },
    { name: "head_dim", label: "head width d_h", type: "steps", values: [8, 16, 32, 64, 128, 256], format: String },
    { name: "base", label: "base B", type: "steps", values: BASES, format: fmtBase },
    { name: "view", label: "show", type: "select", values: [["ratio", "new frequency / old"], ["wavelength", "wavelength (positions)"]] },
  ],
  compute(p) {
    const half = p.head_dim / 2;
    const theta = Array.from({ length: half }, (_, l) => Math.pow(p.base, (-2 * l) / p.head_dim));
    const methods = {};
    for (const [method] of SCALING_METHODS) {
      if (!p.methods.includes(method)) continue;
      const frequency = scaledFrequencies(method, theta, p);
      methods[method] = { frequency, wavelength: frequency.map((t) => (2 * Math.PI) / t) };
    }
    const ramp = yarnRamp(theta, p.original_max_len, p.beta_fast, p.beta_slow);
    return { drawn: { frequency: theta, wavelength: theta.map((t) => (2 * Math.PI) / t), methods }, yarn: [ramp.low, ramp.high] };
  },
  draw([figure], model, p) {
    const pair = model.drawn.frequency.map((_, l) => l);
    const ratio = p.view === "ratio";
    const value = (m) => (ratio ? m.frequency.map((t, l) => t / model.drawn.frequency[l]) : m.wavelength);
    const series = [{ x: pair, y: value(model.drawn), colour: "plain", dash: true }];
    const items = [{ label: "original", colour: "plain", dash: true }];
    SCALING_METHODS.forEach(([method, label], i) => {
      if (!model.drawn.methods[method]) return;
      series.push({ x: pair, y: value(model.drawn.methods[method]), colour: method, style: i });
      items.push({ label, colour: method, style: i });
    });
    const unturned = model.drawn.wavelength.findIndex((w) => w > p.original_max_len);
    const y = series.flatMap((s) => s.y);
    linePlot(figure.plot, {
      series, xdomain: [0, pair.length - 1], xaxis: { integer: true },
      yscale: "log", yaxis: { base: ratio ? 2 : 10 }, ydomain: extent(y),
      vlines: unturned >= 0 ? [{ x: unturned - 0.5, label: "< 1 turn in L", bottom: true }] : [],
      title: `${ratio ? "New frequency over old" : "Wavelength"} of each RoPE pair, α = ${p.factor}, L = ${grouped(p.original_max_len)}, d_h = ${p.head_dim}`,
      xlabel: "pair ℓ (fast → slow)", ylabel: ratio ? "θ′_ℓ / θ_ℓ (log)" : "λ_ℓ = 2π / θ_ℓ (log)",
    });
    figure.plot.append(legend(items));
    const [low, high] = model.yarn;
    figure.caption.textContent = `${unturned >= 0 ? `Pairs ${unturned} to ${pair.length - 1} turn less than once in L.` : "Every pair turns at least once in L."} YaRN keeps pairs up to ${fmt(low)} and interpolates fully from ${fmt(high)} (β = ${p.beta_fast}, ${p.beta_slow}); Llama 3 keeps pairs with λ < L/${p.high_freq_factor} and divides those with λ > L/${p.low_freq_factor} by α; dynamic NTK uses α′ = ${fmt(dynamicFactor(p))} at s = ${fmt(p.seq_multiple)} L.`;
  },
};
