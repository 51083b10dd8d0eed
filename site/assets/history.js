/* perftrack site: the nightly-history page (history.html). Loaded before app.js, which
 * calls it with its helpers (window.perftrack.lib) once the page's data files are in.
 *
 * The page loads data/history_cells.js (one row per cell: the filters' values and the
 * files of that cell) and then the two files of the cell chosen, data/history/pHEX.js
 * (the nights before the open month) and hNNNNN.js (the open month's, the change points
 * `perftrack detect` stored and their before/after levels): every night of every version
 * there, with each metric's median (publish/site/history.py, histcache.py).
 *
 * The view is in the URL (#filters&metric=&median=&from=&to=&versions=): a link restores
 * it; a link naming what the data does not have says so on the page and shows the rest.
 * Safety as app.js: textContent and Vega data only, never innerHTML.
 */
"use strict";
(window.PERFTRACK_PAGES = window.PERFTRACK_PAGES || {}).history = function (lib) {
  const { el, $, setStatus, fmt, makeFilters, draw, chartCard, ready, readHash, writeHash, decode, rows, meta } = lib;
  const DATA = window.PERFTRACK_DATA || {};
  const cells = rows("history_cells");
  const changes = rows("hardware_changes");
  const notes = rows("annotations");

  // Versions get the spec's colours (its version colour scale's range: no red, no purple,
  // no black: those are the change points', annotations' and hardware changes') by their
  // place in the catalog order, so a version keeps its colour from cell to cell.
  const SPEC = (window.PERFTRACK_SPECS || {}).history;
  const PALETTE = SPEC.vconcat[1].encoding.color.scale.range;
  const KIND_TEXT = { server: "this version (server change)", environment: "environment (the control server moved too)" };
  const MEDIAN_WINDOWS = [1, 5, 7, 15, 31];
  const DEFAULT_WINDOW = 7;
  const DAY_MS = 86400000;
  const order = new Map((meta.servers || []).map((s, i) => [s.server, i]));
  const colorOf = (server) => PALETTE[(order.has(server) ? order.get(server) : 0) % PALETTE.length];
  const METRICS = new Map((meta.metrics || [{ key: "tps", label: "throughput", unit: "transactions/s" }]).map((m) => [m.key, m]));

  // Significant digits, not fixed decimals: a 0.04 ms p95 must not print "0.0". The
  // formatters are made once: toLocaleString with options builds one per call, which
  // cost ~0.6 s for a year of 11 versions' nights (benchmarks/history_scale.py).
  const SIG3 = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 3 });
  const INT = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
  const NUM1 = new Intl.NumberFormat("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  function sig(v) {
    if (v == null || !isFinite(v)) return "—";
    return Math.abs(v) >= 1000 ? INT.format(v) : SIG3.format(v);
  }
  const valueText = (metric, v) => (v == null || !isFinite(v) ? "—" : metric === "tps" ? NUM1.format(v) : sig(v));
  const day = (t) => new Date(t).toISOString().slice(0, 10);
  // dates as text for the tooltips (the chart's own x is the number t, drawn as UTC)
  const nightText = (t) => new Date(t).toISOString().slice(0, 16).replace("T", " ") + " UTC";
  const parseDay = (s) => (/^\d{4}-\d{2}-\d{2}$/.test(s || "") ? Date.parse(s + "T00:00:00Z") : NaN);

  const ctl = { metric: $("history-metric"), median: $("history-median"), from: $("history-from"), to: $("history-to"), all: $("history-all") };
  if (meta.empty || !cells.length) {
    setStatus(meta.empty ? lib.NO_RESULTS : "No history yet.", "empty");
    $("filters").hidden = true;
    $("history-controls").hidden = true;
    chartCard("history").hidden = true;
    return ready();
  }

  // What the view shows beyond the filters; from the URL first.
  const link = readHash();
  const view = {
    metric: link.metric || "tps",
    median: link.median != null && link.median !== "" ? Number(link.median) : DEFAULT_WINDOW,
    from: link.from || "",
    to: link.to || "",
    versions: link.versions ? link.versions.split(",").filter(Boolean) : null, // null: all
  };
  let linkToCheck = link; // a link's names not in the data are reported once, after its first draw
  let current = null; // {cell, sel, data}
  let problems = [];

  for (const w of MEDIAN_WINDOWS) ctl.median.append(el("option", { value: String(w), text: w === 1 ? "off" : `${w} nights` }));
  if (!MEDIAN_WINDOWS.includes(view.median)) {
    problems.push(`No rolling median of "${link.median}" nights: showing ${DEFAULT_WINDOW}.`);
    view.median = DEFAULT_WINDOW;
  }

  function saveView() {
    if (!current) return;
    const h = Object.assign({}, current.sel, {
      metric: view.metric === "tps" ? null : view.metric,
      median: view.median === DEFAULT_WINDOW ? null : String(view.median),
      from: view.from || null,
      to: view.to || null,
      versions: view.versions ? view.versions.join(",") : null,
    });
    writeHash(h);
  }

  function loadFile(name) {
    const key = "history:" + name;
    if (DATA[key]) return Promise.resolve(DATA[key]);
    return new Promise((resolve, reject) => {
      const s = el("script", { src: `data/history/${name}.js` });
      s.addEventListener("load", () => (DATA[key] ? resolve(DATA[key]) : reject(new Error(`data/history/${name}.js is empty`))));
      s.addEventListener("error", () => reject(new Error(`data/history/${name}.js is missing: rebuild the site`)));
      document.body.append(s);
    });
  }

  // A cell is two files, loaded together: its closed months (cell.past, pHEX.js, kept
  // from build to build; absent while the history is one month) and the open month
  // with the change points and steps (cell.file, hNNNNN.js). Their points, closed first.
  function loadCell(cell) {
    if (!/^h\d{5}$/.test(cell.file) || (cell.past != null && !/^p[0-9a-f]{20}$/.test(cell.past))) {
      return Promise.reject(new Error("bad history file name"));
    }
    return Promise.all([loadFile(cell.file), cell.past != null ? loadFile(cell.past) : null]).then(([open, past]) =>
      Object.assign({}, open, { pastPoints: past ? past.points : null }));
  }

  // Per line (version × hardware key), oldest first: the trailing median of the last
  // `w` nightly values (fewer at the start of a line).
  function rollingMedian(points, w) {
    const lines = new Map();
    for (const p of points) {
      if (!lines.has(p.line)) lines.set(p.line, []);
      lines.get(p.line).push(p);
    }
    for (const pts of lines.values()) {
      pts.sort((a, b) => a.t - b.t);
      for (let i = 0; i < pts.length; i++) {
        const win = pts.slice(Math.max(0, i - w + 1), i + 1).map((p) => p.v).sort((a, b) => a - b);
        const m = win.length >> 1;
        pts[i].med = win.length % 2 ? win[m] : (win[m - 1] + win[m]) / 2;
      }
    }
  }

  function versionToggles(servers) {
    const box = $("history-versions");
    box.replaceChildren();
    for (const s of servers) {
      const cb = el("input", { type: "checkbox", value: s, "data-version": s });
      cb.checked = !view.versions || view.versions.includes(s);
      const swatch = el("span", { class: "swatch" });
      swatch.style.background = colorOf(s); // CSSOM, not an inline style attribute (CSP)
      cb.addEventListener("change", () => {
        const on = [...box.querySelectorAll("input")].filter((x) => x.checked).map((x) => x.value);
        view.versions = on.length === servers.length ? null : on;
        render();
      });
      box.append(el("label", {}, cb, swatch, s));
    }
  }

  function render() {
    if (!current) return;
    const { cell, data } = current;
    const msgs = problems;
    problems = [];
    const metrics = data.metrics || ["tps"];
    if (!metrics.includes(view.metric)) {
      if (linkToCheck && linkToCheck.metric) msgs.push(`No metric "${view.metric}" measured in this cell: showing throughput.`);
      view.metric = "tps";
    }
    ctl.metric.replaceChildren(...metrics.map((m) => el("option", { value: m, text: (METRICS.get(m) || { label: m }).label })));
    ctl.metric.value = view.metric;
    ctl.median.value = String(view.median);
    const info = METRICS.get(view.metric) || { label: view.metric, unit: "" };

    const all = data.pastPoints ? decode(data.pastPoints).concat(decode(data.points)) : decode(data.points);
    const servers = [...new Set(all.map((p) => p.server))].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
    if (view.versions) {
      const unknown = view.versions.filter((v) => !servers.includes(v));
      if (unknown.length) {
        msgs.push(`No version ${unknown.map((v) => `"${v}"`).join(", ")} in this cell's history: ${view.versions.length > unknown.length ? "showing the others" : "showing every version"}.`);
        view.versions = view.versions.filter((v) => servers.includes(v));
        if (!view.versions.length) view.versions = null;
      }
      if (view.versions && view.versions.length === servers.length) view.versions = null;
    }
    versionToggles(servers);
    const shown = (s) => !view.versions || view.versions.includes(s);

    const cellFields = {};
    for (const k of ["runner_class", "profile", "dataset", "workload", "collation", "charset", "threads"]) cellFields[k] = cell[k];
    const points = [];
    for (const p of all) {
      const v = p[view.metric];
      if (v == null || !shown(p.server)) continue;
      const t = Date.parse(p.at);
      const lo = view.metric === "tps" ? p.tps_min : null;
      const hi = view.metric === "tps" ? p.tps_max : null;
      points.push({ ...cellFields, ...p, t, v, lo, hi, line: p.server + " · " + p.hw_key,
        // a point over a year old is a week's (no run: histtable.py WEEKLY_AFTER_DAYS)
        night: p.run_id == null ? `week of ${day(t)} (median of its nights)` : nightText(t), v_text: valueText(view.metric, v),
        range_text: lo == null ? "—" : `${valueText("tps", lo)} – ${valueText("tps", hi)}` });
    }
    rollingMedian(points, view.median);
    for (const p of points) p.med_text = valueText(view.metric, p.med);
    points.sort((a, b) => a.t - b.t || (a.vorder - b.vorder));

    // the date range: a link's or the inputs' (whole UTC days)
    let range = null;
    if (view.from || view.to) {
      const lo = view.from ? parseDay(view.from) : points.length ? points[0].t : NaN;
      const hi = view.to ? parseDay(view.to) + DAY_MS - 1 : points.length ? points[points.length - 1].t : NaN;
      if (isNaN(lo) || isNaN(hi) || lo > hi) {
        msgs.push(`Not a date range: "${view.from || "…"}" to "${view.to || "…"}" (use YYYY-MM-DD): showing every night.`);
        view.from = view.to = "";
      } else if (!points.some((p) => p.t >= lo && p.t <= hi)) {
        msgs.push(`No nights between ${view.from || "the first night"} and ${view.to || "the last night"} in this cell: showing every night.`);
        view.from = view.to = "";
      } else range = [lo, hi];
    }
    ctl.from.value = view.from;
    ctl.to.value = view.to;

    const cps = decode(data.change_points).filter((c) => shown(c.server));
    const cpOf = new Map(decode(data.change_points).map((c, i) => [i, c]));
    const stepRows = decode(data.steps).filter((s) => s.metric === view.metric && shown(s.server));
    const steps = [];
    const cpMarks = [];
    for (const s of stepRows) {
      const c = cpOf.get(s.cp) || {};
      const [a, b, e] = [Date.parse(s.from_at), Date.parse(s.at), Date.parse(s.to_at)];
      steps.push({ cp: s.cp, kind: s.kind, o: 0, t: a, y: s.before }, { cp: s.cp, kind: s.kind, o: 1, t: b, y: s.before },
        { cp: s.cp, kind: s.kind, o: 2, t: b, y: s.after }, { cp: s.cp, kind: s.kind, o: 3, t: e, y: s.after });
      cpMarks.push({ cp: s.cp, kind: s.kind, kind_text: KIND_TEXT[s.kind] || s.kind, t: b, day: day(b), server: s.server, run_id: c.run_id,
        before: s.before, after: s.after, before_text: valueText(view.metric, s.before), after_text: valueText(view.metric, s.after),
        change_text: s.before ? (s.after / s.before - 1 >= 0 ? "+" : "") + ((s.after / s.before - 1) * 100).toFixed(1) + "%" : "—",
        acknowledged: c.acknowledged || "no" });
    }
    const sel = current.sel;
    // the nights' span: rules outside it (a hardware change after the cell's last night)
    // would stretch the axis and push the nights to its edge
    const first = points.length ? points[0].t : NaN;
    const last = points.length ? points[points.length - 1].t : NaN;
    const inSpan = (x) => !points.length || (x >= first - DAY_MS && x <= last + DAY_MS);
    const keys = ["runner_class", "profile", "workload", "collation", "threads"];
    const match = (r) => keys.every((k) => r[k] == null || String(r[k]) === String(sel[k]));
    const datasets = {
      table: points,
      steps,
      cp_marks: cpMarks,
      hardware_changes: changes.filter((c) => c.runner_class === sel.runner_class).map((c) => ({ ...c, t: Date.parse(c.at), day: day(Date.parse(c.at)) })).filter((c) => inSpan(c.t)),
      annotations: notes.filter((a) => a.date && match(a)).map((a) => ({ ...a, t: parseDay(String(a.date).slice(0, 10)), day: String(a.date).slice(0, 10) })).filter((a) => !isNaN(a.t) && inSpan(a.t)),
    };

    const cp = $("cp-status");
    if (cps.length) cp.textContent = `${cps.length} change point${cps.length === 1 ? "" : "s"} in this cell (${cps.filter((c) => c.kind === "environment").length} environment).`;
    else if (meta.detect_ran_at) cp.textContent = `No change point in this cell: \`perftrack detect\` last ran ${fmt.time(meta.detect_ran_at)} (it needs at least 8 nights of a series).`;
    else cp.textContent = "No change points computed yet (`perftrack detect` will mark them here).";
    const nights = new Set(points.map((p) => p.run_id)).size;
    if (view.versions && !view.versions.length) msgs.push("No version chosen: tick one above the chart.");
    else if (!points.length) msgs.push(`No ${info.label} measured for ${view.versions ? "the versions shown" : "this cell"}.`);
    if (msgs.length) setStatus(msgs.join(" "), "error");
    else setStatus(nights === 1 ? "Only one night measured so far for this cell: the history grows with each nightly run." : "");
    linkToCheck = null;
    saveView();

    const unitTitle = `${info.label} (${info.unit})`;
    const cols = [{ key: "at", label: "night", fmt: fmt.time }, { key: "server", label: "version" },
      { key: "v", label: info.label, fmt: (v) => valueText(view.metric, v), num: true },
      { key: "med", label: `rolling median (${view.median})`, fmt: (v) => valueText(view.metric, v), num: true },
      { key: "lo", label: "min", fmt: fmt.num1, num: true }, { key: "hi", label: "max", fmt: fmt.num1, num: true },
      { key: "n", label: "repeats", num: true }, { key: "hw_key", label: "hardware" }, { key: "run_id", label: "run" }];
    return draw("history", datasets, cols, {
      emptyText: `Nothing to draw: no ${info.label} for this selection.`,
      tweak: (spec, host) => {
        const width = Math.max(240, host.clientWidth - 90);
        const domain = servers.filter(shown);
        const color = { field: "server", type: "nominal", legend: null, scale: { domain, range: domain.map(colorOf) } };
        spec.title.text = `Nightly ${info.label}`;
        const [focus, context] = spec.vconcat;
        focus.width = context.width = width;
        context.encoding.color = color;
        if (range) context.params[0].value = { x: range };
        focus.layer = focus.layer.filter((l) => {
          const name = l.data.name;
          if (name !== "table" && !(datasets[name] || []).length) return false;
          if (l.name === "band" && view.metric !== "tps") return false;
          if (l.name === "rolling_median" && view.median <= 1) return false;
          if (l.transform && !(datasets[name] || []).some((r) => l.transform[0].filter.includes(`'${r.kind}'`))) return false;
          return true;
        });
        for (const l of focus.layer) {
          if (l.encoding.color) l.encoding.color = color;
          if (l.encoding.y) l.encoding.y.title = unitTitle;
          if (l.encoding.y && ["p95_ms", "tps"].includes(view.metric)) l.encoding.y.axis = { format: view.metric === "tps" ? "~s" : "~r" };
        }
        // the nights' own values decide the y scale: a zoom (the overview's brush) keeps
        // only the nights in its range, so y rescales to them
        for (const l of focus.layer) {
          if (l.data.name === "table") l.transform = [...(l.transform || []), { filter: { param: "range" } }];
        }
        // a few days: whole UTC days on the axis (one night sits inside its day, not on
        // the edge) and one label per day, never the same date at every 6 hours
        const spanDays = points.length ? (last - first) / DAY_MS : 0;
        if (spanDays < 10) {
          const ticks = { interval: "day", step: Math.max(1, Math.ceil(spanDays / 8)) };
          for (const c of [focus, context]) {
            c.encoding.x.scale.nice = "day";
            c.encoding.x.axis.tickCount = ticks;
          }
        }
        // a dot per night is readable for months; past that the median line carries it
        const nightly = focus.layer.find((l) => l.name === "nightly");
        if (nightly && nights > width / 3) nightly.mark.size = 8;
      },
    }).then((v) => {
      if (v) wire(v);
      ready();
      return v;
    });
  }

  // clicks open a night's run; the brush writes the range to the inputs and the URL
  function wire(v) {
    v.addEventListener("click", (_e, item) => {
      const d = item && item.datum;
      if (d && d.run_id && item.mark && item.mark.marktype === "symbol") {
        location.href = "runs.html#run=" + encodeURIComponent(d.run_id);
      }
    });
    v.addSignalListener("range", (_name, value) => {
      const x = value && (value.t || Object.values(value)[0]);
      if (x && x.length === 2) {
        view.from = day(+x[0]);
        view.to = day(+x[1]);
      } else view.from = view.to = "";
      ctl.from.value = view.from;
      ctl.to.value = view.to;
      saveView();
    });
  }

  ctl.metric.addEventListener("change", () => { view.metric = ctl.metric.value; render(); });
  ctl.median.addEventListener("change", () => { view.median = Number(ctl.median.value); render(); });
  for (const k of ["from", "to"]) ctl[k].addEventListener("change", () => { view[k] = ctl[k].value; render(); });
  ctl.all.addEventListener("click", () => { view.from = view.to = ""; render(); });

  window.addEventListener("hashchange", () => {
    // a link typed or pasted into this page: its view, checked like a loaded one
    const h = readHash();
    view.metric = h.metric || "tps";
    view.median = h.median ? Number(h.median) : DEFAULT_WINDOW;
    if (!MEDIAN_WINDOWS.includes(view.median)) view.median = DEFAULT_WINDOW;
    view.from = h.from || "";
    view.to = h.to || "";
    view.versions = h.versions ? h.versions.split(",").filter(Boolean) : null;
    linkToCheck = h;
  });
  makeFilters(cells, { runner_class: "one", profile: "one", dataset: "one", workload: "one", collation: "one", threads: "one" }, (cur, sel) => {
    if (linkToCheck) {
      for (const [k, v] of Object.entries(linkToCheck)) {
        if (k in sel && v !== "" && String(sel[k]) !== v) problems.push(`No ${k.replace("_", " ")} "${v}" in the history: showing ${sel[k]}.`);
      }
    }
    const cell = cur[0];
    if (!cell) {
      setStatus("No history for this selection.", "empty");
      return ready();
    }
    loadCell(cell)
      .then((data) => {
        current = { cell, sel: Object.assign({}, sel), data };
        return render();
      })
      .catch((err) => {
        state().errors.push(String(err));
        setStatus(String(err.message || err), "error");
        ready();
      });
  });
  function state() {
    return window.perftrack;
  }
};
