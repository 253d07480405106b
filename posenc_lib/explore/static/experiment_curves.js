// Chapter 12's stored results (book/data/experiments.json, the slice posenc_lib.explore embeds):
// accuracy at each position of a sequence 4x longer than in training, by scheme or extension rule,
// averaged over the seeds the reader picks.
function curveSeries(p) {
  const view = p.data.tasks[p.task].views[p.view];
  return view.order.map((name) => [name, view.series[name].label]);
}
KINDS.experiment_curves = {
  title: "Accuracy at each position, trained on short sequences.",
  figures: ["pe-figure-accuracy"],
  controls: [
    { name: "task", label: "task", type: "select", values: (p) => p.data.order.map((name) => [name, p.data.tasks[name].label]) },
    { name: "view", label: "compare", type: "select", values: (p) => p.data.tasks[p.task].order.map((name) => [name, p.data.tasks[p.task].views[name].label]) },
    { name: "series", label: "curves", type: "checks", values: curveSeries },
    { name: "seeds", label: "seeds", type: "checks", values: (p) => p.data.seeds.map((s) => [s, String(s)]) },
  ],
  compute(p) {
    const view = p.data.tasks[p.task].views[p.view];
    const centres = view.centres;
    const series = {};
    for (const name of p.series) {
      const runs = view.series[name].runs; // {seed: [accuracy per position bucket, null where nothing is scored]}
      const chosen = p.seeds.filter((s) => runs[s]).map((s) => runs[s]);
      series[name] = centres.map((_, i) => (chosen.length === 0 || chosen.some((run) => run[i] === null) ? null : chosen.reduce((sum, run) => sum + run[i], 0) / chosen.length));
    }
    return { drawn: { centres, series } };
  },
  draw([figure], model, p) {
    const task = p.data.tasks[p.task], view = task.views[p.view];
    const names = view.order;
    const series = p.series.map((name) => ({ x: model.drawn.centres, y: model.drawn.series[name], colour: name, style: names.indexOf(name) % 6, markers: "small" }));
    linePlot(figure.plot, {
      series, xdomain: [0, view.length], ydomain: [0, 1], yaxis: {},
      vlines: [{ x: p.data.train_len, label: "training length" }], hlines: task.chance ? [{ y: task.chance }] : [],
      title: `${task.label}: accuracy per position, ${view.label}, mean of ${p.seeds.length} seeds`,
      xlabel: `position p in a ${view.length}-token sequence`, ylabel: "accuracy",
    });
    figure.plot.append(legend(p.series.map((name) => ({ label: view.series[name].label, colour: name, style: names.indexOf(name) % 6 }))));
    const inside = (values) => values.filter((v, i) => v !== null && model.drawn.centres[i] < p.data.train_len);
    const beyond = (values) => values.filter((v, i) => v !== null && model.drawn.centres[i] > p.data.train_len);
    const mean = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null);
    figure.caption.textContent = p.seeds.length === 0 || p.series.length === 0
      ? "Pick at least one curve and one seed."
      : `Mean accuracy of seeds ${p.seeds.join(", ")} in buckets of ${p.data.bucket} positions. Mean inside the training length / beyond it: ` +
        p.series.map((name) => `${view.series[name].label} ${fmt(mean(inside(model.drawn.series[name])), 2)} / ${fmt(mean(beyond(model.drawn.series[name])), 2)}`).join("; ") + ".";
  },
};
