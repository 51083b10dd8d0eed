/* perftrack site, Heatmap (heatmap.html): each version against the previous one, per
 * workload, one panel per collation and thread count. Loaded before app.js, which calls
 * this with its helpers (`lib`, see app.js).
 *
 * A cell's colour is its verdict as `perftrack detect` stored it (publish/site/verdicts.py:
 * the Overview's colours); the ratio is its text. Nothing here computes a verdict. The
 * metric selector picks whose verdicts: throughput, p95 latency, CPU per transaction
 * (meta.metrics with a `verdict` name). A cell opens its nightly history.
 */
"use strict";
(window.PERFTRACK_PAGES = window.PERFTRACK_PAGES || {}).heatmap = function (lib) {
  const { rows, chartPage, metricPicker, links, C, readHash, writeHash } = lib;
  const all = rows("verdicts").concat(rows("metric_verdicts"));
  // The page opens on the worst verdict's series (runner class, hardware, profile, data
  // set): a regression before an inconclusive verdict before the rest, on any hardware
  // (the current one first), the largest slowdown first; a link that names a series keeps it.
  const RANK = { regression: 0, inconclusive: 1, improvement: 2, unchanged: 3 };
  const rank = (r) => [RANK[r.verdict] ?? 4, r.hw_current === false ? 1 : 0, r.ratio];
  const worst = rows("verdicts").slice().sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  })[0];
  if (worst) {
    const h = readHash();
    const series = ["runner_class", "hw_key", "profile", "dataset"];
    if (series.every((k) => h[k] == null || h[k] === "all")) {
      for (const k of series) h[k] = worst[k];
      writeHash(h);
    }
  }
  const of = (m) => all.filter((r) => (r.metric || "tps") === m.verdict);
  const metric = metricPicker((m) => m.verdict && of(m).length > 0);
  const WIDTH_STEP = 110;
  const Y_AXIS = 230; // the version labels and the panel's margin
  chartPage("heatmap", "verdicts", { runner_class: "one", hw_key: "one", profile: "one", dataset: "one", workload: "all", collation: "all", threads: "all" },
    "No verdicts yet: the DB has no version measured next to another.", {
      // the filters run over throughput's verdicts; the chart shows the chosen metric's
      rows: (data, sel) => {
        const m = metric();
        if (!m) return [];
        const keys = Object.keys(sel).filter((k) => sel[k] !== "all");
        return of(m)
          .filter((r) => keys.every((k) => String(r[k]) === String(sel[k])))
          .map((r) => ({ ...r, link: links.history(r) }))
          .sort((a, b) => String(a.collation).localeCompare(String(b.collation)) || a.threads - b.threads);
      },
      emptyText: "No verdicts of this metric for this selection.",
      cols: [C.server, C.previous, { key: "hw_key", label: "hardware" }, C.workload, C.collation, C.threads, C.ratio, C.ci, C.p, C.verdict,
        { key: "metric", label: "metric" }, { key: "run_id", label: "run", href: links.run }],
      tweak: (spec, host, data) => {
        const m = metric();
        spec.title.subtitle = `${m.label}, new / previous${m.higher ? "" : " (above 1: more, i.e. worse)"} · colour: the verdict (perftrack detect) · text: the ratio · click a cell: its nightly history`;
        const workloads = new Set(data.map((r) => r.workload)).size;
        spec.columns = Math.max(1, Math.floor((host.clientWidth - 40) / (workloads * WIDTH_STEP + Y_AXIS)));
        spec.spec.width = { step: WIDTH_STEP };
      },
    });
};
