/* perftrack site, Overview (index.html): the latest verdicts as a table and a forest plot.
 * Loaded before app.js, which calls this with its helpers (`lib`, see app.js).
 *
 * Every verdict leads to its cause: the table's run / diff / history links and each dot of
 * the forest plot open the run detail with the pair's variables diff, or the cell's
 * nightly history. The forest plot has one row per verdict, grouped by series (a header
 * row "▸ runner class · profile · data set" above each), so no two series share a row.
 */
"use strict";
(window.PERFTRACK_PAGES = window.PERFTRACK_PAGES || {}).index = function (lib) {
  const { rows, meta, $, el, setStatus, fillTable, makeFilters, draw, chartCard, ready, fmt, C, NO_RESULTS, links, readHash, writeHash, linkProblem } = lib;
  // Every stored verdict is in the data; by default the page shows those measured on each
  // runner class's current hardware and says how many others there are, and where.
  const every = rows("verdicts");
  const earlier = every.filter((r) => r.hw_current === false);
  const wantedId = readHash().verdict;
  const allHw = readHash().hardware === "all" || earlier.some((r) => r.id === wantedId);
  const all = allHw ? every : every.filter((r) => r.hw_current !== false);
  const seriesOf = (r) => `${r.runner_class}${r.hw_current === false ? ` (earlier hardware ${r.hw_key})` : ""} · ${r.profile} · ${r.dataset}`;
  // "N more on earlier hardware (where), among them …: show them" — or the way back
  function elsewhere() {
    const box = $("verdict-elsewhere");
    if (!box) return;
    box.replaceChildren();
    if (!earlier.length) return;
    const where = new Map();
    for (const r of earlier) {
      const k = `${r.runner_class}: ${r.hw_key}`;
      where.set(k, (where.get(k) || 0) + 1);
    }
    const places = [...where].map(([k, n]) => `${n} on ${k}`).join(", ");
    const bad = earlier.filter((r) => r.verdict === "regression").length;
    const among = bad ? `, ${bad} of them regression${bad > 1 ? "s" : ""}` : "";
    const toggle = (text, value) => {
      const a = el("a", { href: "#", id: "verdict-hardware-toggle", text });
      a.addEventListener("click", (e) => {
        e.preventDefault();
        const h = readHash();
        delete h.verdict;
        writeHash({ ...h, hardware: value });
        location.reload();
      });
      return a;
    };
    const current = every.length - earlier.length;
    if (allHw) {
      box.append(`Showing all ${every.length} verdicts: ${current} measured on each runner class's current hardware, then ${earlier.length} on hardware it no longer has (${places}${among}). `,
        toggle(`Show only the current hardware's ${current}`, "current"), ".");
    } else {
      box.append(`Showing the ${current} verdicts measured on each runner class's current hardware. ${earlier.length} more were measured on hardware it no longer has (${places}${among}): `,
        toggle(`show all ${every.length}`, "all"), ".");
    }
  }
  const runCol = { key: "run_id", label: "run", value: (r) => r.run_id, href: links.run };
  const diffCol = { key: "diff", label: "variables", value: (r) => (r.run_id ? `diff (${r.variables_changed} changed)` : null), href: links.diff };
  const historyCol = { key: "history", label: "history", value: () => "history", href: links.history };
  // every column (the CSV, and the table with "all columns")
  const full = [
    C.verdict,
    { key: "ack", label: "acknowledged", value: (r) => (r.acknowledged ? "acknowledged" : "") },
    C.server,
    { key: "version_string", label: "reports" },
    C.previous,
    C.workload,
    C.collation,
    C.threads,
    C.ratio,
    C.ci,
    C.p,
    { key: "threshold", label: "threshold", value: (r) => (r.threshold == null ? null : `±${(r.threshold * 100).toFixed(1)}%`), num: true },
    { key: "n_previous", label: "n previous", num: true },
    { key: "n", label: "n new", num: true },
    { key: "mean_previous", label: "previous tx/s (geometric mean)", fmt: fmt.num1, num: true },
    { key: "mean", label: "new tx/s (geometric mean)", fmt: fmt.num1, num: true },
    { key: "paired", label: "paired", value: (r) => (r.paired == null ? null : r.paired ? "paired" : "unpaired") },
    { key: "undecided", label: "to decide", wrap: true },
    C.runner,
    C.profile,
    C.dataset,
    { key: "at", label: "newest result", fmt: fmt.date },
    { key: "series_last_run", label: "series last run", fmt: fmt.date },
    runCol,
    diffCol,
    historyCol,
    { key: "note", label: "note" },
  ];
  // what fits the card: the same facts, fewer and wrapping columns
  const compact = [
    C.verdict,
    { key: "pair", label: "version vs previous", value: (r) => `${r.server} vs ${r.previous}${r.version_string ? ` · reports ${r.version_string}` : ""}`, wrap: true },
    { key: "cell", label: "workload · collation · threads", value: (r) => `${r.workload} · ${r.collation} · ${r.threads} thr`, wrap: true },
    { key: "series", label: "runner class · profile · data set", value: seriesOf, wrap: true },
    { key: "ratio_ci", label: "ratio [95% interval] · threshold", value: (r) => `${fmt.ratio(r.ratio)} [${fmt.ratio(r.ci_low)}, ${fmt.ratio(r.ci_high)}] · ±${(r.threshold * 100).toFixed(1)}%`, num: true, wrap: true },
    C.p,
    // the ratio's own basis (geometric means; of the shared rounds when paired), n per
    // side, and what an inconclusive row would need (stats.undecided_note)
    { key: "means", label: "tx/s previous → new (geometric means) · n", value: (r) => `${fmt.num1(r.mean_previous)} → ${fmt.num1(r.mean)} · n ${r.n_previous}/${r.n}${r.paired ? " paired" : ""}${r.undecided ? ` · ${r.undecided}` : ""}`, num: true, wrap: true },
    { key: "run", label: "series last run", value: (r) => r.series_last_run, fmt: fmt.date, href: links.run },
    diffCol,
    historyCol,
    { key: "note", label: "note", value: (r) => (r.acknowledged ? `acknowledged: ${r.note}` : r.note) },
  ];
  elsewhere();
  // a link to a verdict of earlier hardware, typed or followed on this page: show them all
  window.addEventListener("hashchange", () => {
    const h = readHash();
    if (!allHw && (h.hardware === "all" || earlier.some((r) => r.id === h.verdict))) location.reload();
  });
  // the headline: one line per version pair (analysis/headline.py, as `perftrack compare`)
  const heads = rows("headline");
  $("headline").replaceChildren(
    ...(heads.length
      ? heads.map((h) => {
          const big = h.largest_verdict ? `largest resolved: ${fmt.ratio(h.largest_ratio)} ${h.largest_verdict} in ${h.largest_cell}` : "no resolved change";
          const counts = ["regression", "improvement", "unchanged", "inconclusive"].map((v) => el("span", { class: "verdict " + v, text: `${h[v]} ${v}${h[v] !== 1 && (v === "regression" || v === "improvement") ? "s" : ""}` }));
          const sep = (xs) => xs.flatMap((x, i) => (i ? [", ", x] : [x]));
          const geo = h.geomean == null ? "no geomean" : `geomean ${fmt.ratio(h.geomean)}`;
          return el("li", { "data-pair": h.pair }, el("b", { text: h.pair }), ": ", ...sep(counts), ` of ${h.cells} cells · ${geo} · ${big}`);
        })
      : [el("li", { text: "No version pair compared yet." })])
  );
  if (meta.empty || !all.length) {
    setStatus(meta.empty ? NO_RESULTS : "No verdicts yet: the DB has no version measured next to another.", "empty");
    $("verdict-table").closest(".card").hidden = true;
    chartCard("overview").hidden = true;
    $("filters").hidden = true;
    return ready();
  }
  const allColumns = $("verdict-all-columns");
  let current = [];
  const fill = () => {
    fillTable($("verdict-table"), allColumns && allColumns.checked ? full : compact, current, {
      limit: 500,
      rowClass: (r) => (r.verdict === "regression" ? (r.acknowledged ? "row-regression acked" : "row-regression") : ""),
      rowId: (r) => (/^[0-9a-f]{16}$/.test(r.id || "") ? "verdict-" + r.id : null),
    });
    // a deep link to one verdict (index.html#verdict=ID, e.g. from the Regressions page)
    const want = readHash().verdict;
    if (!want) return;
    const tr = /^[0-9a-f]{16}$/.test(want) ? $("verdict-" + want) : null;
    linkProblem(tr ? "" : `This link names the verdict "${want}", which is not among the verdicts shown: showing them all.`, "verdict");
    if (tr) { tr.classList.add("selected"); tr.scrollIntoView({ block: "center" }); }
  };
  if (allColumns) allColumns.addEventListener("change", fill);
  makeFilters(all, { runner_class: "all", profile: "all", dataset: "all", workload: "all", collation: "all", threads: "all" }, (data) => {
    const counts = $("counts");
    counts.replaceChildren();
    for (const v of ["regression", "improvement", "inconclusive", "unchanged"]) {
      const n = data.filter((r) => r.verdict === v).length;
      const plural = n !== 1 && (v === "regression" || v === "improvement") ? "s" : "";
      counts.append(el("span", { class: "count verdict " + v }, el("b", { text: String(n) }), " " + v + plural));
    }
    const acked = data.filter((r) => r.acknowledged).length;
    if (acked) counts.append(el("span", { class: "count" }, el("b", { text: String(acked) }), " acknowledged"));
    setStatus(data.length ? "" : "No verdicts for this selection.");
    const src = $("verdict-source");
    if (src) src.textContent = meta.verdicts_from === "detect" ? "Verdicts as stored by `perftrack detect`." : "Verdicts computed at build time (`perftrack detect` has not stored newer ones).";
    current = data;
    fill();
    // one header row per series (runner class · profile · data set), then its verdicts;
    // the spec names each row, the page adds where a dot leads
    const bySeries = new Map();
    for (const r of data) {
      const k = seriesOf(r);
      if (!bySeries.has(k)) bySeries.set(k, [{ header: true, series: k }]);
      bySeries.get(k).push({ ...r, link: links.diff(r) || links.history(r) });
    }
    const plotted = [...bySeries.values()].flat();
    draw("overview", { table: plotted }, full, {
      tableRows: data,
      tweak: (spec, host) => {
        // long row labels take at most 45% of the width, the plot the rest
        const labels = Math.min(480, Math.floor(host.clientWidth * 0.45));
        for (const l of spec.layer) if (l.encoding && l.encoding.y) l.encoding.y.axis.labelLimit = labels;
        spec.width = Math.max(140, host.clientWidth - labels - 50);
      },
    }).then(ready);
  });
};
