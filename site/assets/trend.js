/* perftrack site, Trend (trend.html): one metric of each release, one line per
 * configuration, one panel per workload. Loaded before app.js, which calls this with its
 * helpers (`lib`, see app.js).
 *
 * The metric selector: throughput, p95 latency and the per-transaction costs the results
 * have (meta.metrics). Configurations: a line per charset/collation, and per profile and
 * data set when their filter is "all" ("compare configurations" sets both), so durability
 * settings or profiles are overlaid on one chart.
 */
"use strict";
(window.PERFTRACK_PAGES = window.PERFTRACK_PAGES || {}).trend = function (lib) {
  const { rows, $, chartPage, metricPicker, readHash, hashOf, summaryCols, fmt } = lib;
  const all = rows("summary");
  const metric = metricPicker((m) => all.some((r) => r[m.key] != null));
  const CONFIG = [["collation", "charset / collation"], ["profile", "profile"], ["dataset", "data set"]];
  const compare = $("compare-configs");
  if (compare) {
    compare.addEventListener("change", () => {
      const h = readHash();
      for (const k of ["profile", "dataset"]) h[k] = compare.checked ? "all" : "";
      location.hash = hashOf(h);
    });
  }
  // a Vega expression reading one field (names from meta.metrics / CONFIG, never data)
  const field = (name) => `datum[${JSON.stringify(name)}]`;
  let varying = ["collation"];
  chartPage("trend", "summary", { runner_class: "one", profile: "pick", dataset: "pick", workload: "all", collation: "all", threads: "one" }, "No results yet.", {
    rows: (data, sel) => {
      if (compare) compare.checked = sel.profile === "all" || sel.dataset === "all";
      const m = metric();
      const out = m ? data.filter((r) => r[m.key] != null) : [];
      varying = CONFIG.map(([k]) => k).filter((k) => k === "collation" || new Set(out.map((r) => r[k])).size > 1);
      return out;
    },
    note: (d) => {
      if (!d.length) return "";
      return new Set(d.map((r) => r.server)).size < 2 ? "Only one version measured for this selection: a trend needs two." : "";
    },
    emptyText: "No results of this metric for this selection (older results have no cost columns).",
    cols: summaryCols.concat([{ key: "cpu_us_per_txn", label: "CPU µs/txn", fmt: fmt.sig3, num: true }, { key: "run_id", label: "run" }]),
    tweak: (spec) => {
      const m = metric();
      const [value, low, high, config] = spec.transform;
      value.calculate = field(m.key);
      low.calculate = field(m.key + "_low");
      high.calculate = field(m.key + "_high");
      config.calculate = varying.map(field).join(" + ' · ' + ");
      spec.title.text = `${m.label[0].toUpperCase()}${m.label.slice(1)} per release`;
      const [band, line] = spec.spec.layer;
      band.encoding.y.title = `${m.label} (${m.unit})${m.higher ? "" : ", lower is better"}`;
      band.encoding.y.axis.format = m.key === "tps" ? "~s" : ",~r";
      for (const t of line.encoding.tooltip) if (["value", "low", "high"].includes(t.field)) t.format = m.key === "tps" ? ",.1f" : ",.3~r";
      spec.spec.encoding.color.title = varying.map((k) => CONFIG.find(([c]) => c === k)[1]).join(" · ");
    },
  });
};
