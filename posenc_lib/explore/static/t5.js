// T5's relative-position buckets (posenc_lib.t5_relative_position_bucket): which bucket each relative
// position r = j - i falls in, with the bucket count and the maximum distance. The logarithm is taken
// in float32, in the library's (and HF transformers') order of operations, which pretrained T5 used.
function t5Bucket(r, numBuckets, maxDistance, bidirectional) {
  const f32 = Math.fround;
  let n = numBuckets, bucket = 0, distance;
  if (bidirectional) {
    n = Math.floor(n / 2); // half of the buckets for keys after the query
    if (r > 0) bucket = n;
    distance = Math.abs(r);
  } else distance = Math.max(-r, 0); // the future collapses to bucket 0
  const exact = Math.floor(n / 2);
  if (distance < exact) return bucket + distance; // one bucket per small distance
  const scaled = f32(f32(distance) / exact);
  const spread = f32(f32(f32(Math.log(scaled)) / f32(Math.log(maxDistance / exact))) * (n - exact));
  return bucket + Math.min(exact + Math.trunc(spread), n - 1);
}
function t5Exact(p) {
  return Math.floor((p.bidirectional ? Math.floor(p.num_buckets / 2) : p.num_buckets) / 2);
}
KINDS.t5_buckets = {
  title: "T5's relative-position buckets: exact near the query, logarithmic further out.",
  figures: ["pe-figure-buckets"],
  controls: [
    { name: "bidirectional", label: "attention", type: "select", values: [[true, "encoder (both directions)"], [false, "decoder (causal)"]] },
    { name: "num_buckets", label: "buckets", type: "steps", values: [4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128], format: String },
    { name: "max_distance", label: "max distance", type: "steps", values: [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], valid: (m, p) => m > t5Exact(p), format: grouped },
    { name: "probe", label: "relative position r", type: "steps", values: (p) => Array.from({ length: 4 * p.max_distance + 1 }, (_, i) => i - 2 * p.max_distance), format: String, keep: false },
  ],
  compute(p) {
    const reach = 2 * p.max_distance, r = [], bucket = [];
    for (let x = -reach; x <= reach; x++) { r.push(x); bucket.push(t5Bucket(x, p.num_buckets, p.max_distance, p.bidirectional)); }
    return { drawn: { r, bucket, probe_bucket: t5Bucket(p.probe, p.num_buckets, p.max_distance, p.bidirectional) } };
  },
  draw([figure], model, p) {
    const { r, bucket } = model.drawn;
    linePlot(figure.plot, {
      series: [{ x: r, y: bucket, colour: "t5", step: true }, { x: [p.probe], y: [model.drawn.probe_bucket], style: 5, markers: true, markersOnly: true }],
      vlines: [{ x: -p.max_distance }, { x: p.max_distance }],
      xdomain: [r[0], r[r.length - 1]], ydomain: [0, (p.bidirectional ? 2 * Math.floor(p.num_buckets / 2) : p.num_buckets) - 1], yaxis: { integer: true, pad: 0.04 },
      title: `T5 bucket of each relative position, ${p.num_buckets} buckets, max distance ${p.max_distance}, ${p.bidirectional ? "encoder" : "decoder"}`,
      xlabel: "relative position r = j − i", ylabel: "bucket",
    });
    const same = r.filter((_, i) => bucket[i] === model.drawn.probe_bucket);
    const exact = t5Exact(p);
    // buckets grow with the distance: the keys furthest back share bucket[0], from this distance on
    const lastStart = -r[bucket.findIndex((b) => b !== bucket[0]) - 1];
    figure.caption.textContent = `r = ${p.probe} is in bucket ${model.drawn.probe_bucket}, with r = ${same[0]} … ${same[same.length - 1]} (in the range shown). Distances below ${exact} get a bucket each; the last bucket of the past starts at |r| = ${lastStart}, ${lastStart < p.max_distance ? "before" : "at"} the max distance ${p.max_distance} (dashed).`;
  },
};
