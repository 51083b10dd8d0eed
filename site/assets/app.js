/* perftrack site: renders the pages from the data files (data/*.js) and chart specs
 * (specs/*.js) that `perftrack site build` wrote. No framework, no network: everything
 * this page needs was loaded by its <script> tags (works from file:// too).
 *
 * Safety: every value from the data is put in the page with textContent or as a Vega
 * datum (Vega draws text, never HTML); innerHTML is never used.
 */
"use strict";
(function () {
  const DATA = window.PERFTRACK_DATA || {};
  const SPECS = window.PERFTRACK_SPECS || {};
  const page = document.body.dataset.page;
  const state = { charts: {}, datasets: {}, drawn: 0, firstChartMs: null, errors: [] };
  window.perftrack = state; // read by the tests and the benchmark

  // ---------------------------------------------------------------- data
  function decode(encoded) {
    if (!encoded || !encoded.columns) return [];
    const cols = Object.keys(encoded.columns);
    const plain = {};
    for (const c of cols) {
      const col = encoded.columns[c];
      plain[c] = Array.isArray(col) ? col : col.codes.map((k) => (k < 0 ? null : col.dict[k]));
    }
    const rows = new Array(encoded.n);
    for (let i = 0; i < encoded.n; i++) {
      const r = {};
      for (const c of cols) r[c] = plain[c][i];
      rows[i] = r;
    }
    return rows;
  }
  const cache = {};
  function rows(name) {
    if (!(name in cache)) cache[name] = decode(DATA[name]);
    return cache[name];
  }
  const meta = DATA.meta || { empty: true, results: {}, servers: [] };

  // ---------------------------------------------------------------- DOM helpers
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c != null) e.append(c instanceof Node ? c : String(c));
    return e;
  }
  const $ = (id) => document.getElementById(id);
  function setStatus(text, kind) {
    const s = $("status");
    if (!s) return;
    s.textContent = text || "";
    s.className = "status" + (kind ? " " + kind : "");
    s.hidden = !text;
  }

  const fmt = {
    int: (v) => (v == null ? "—" : Math.round(v).toLocaleString("en-US")),
    num1: (v) => (v == null ? "—" : v.toLocaleString("en-US", { maximumFractionDigits: 1, minimumFractionDigits: 1 })),
    ratio: (v) => (v == null ? "—" : v.toFixed(3)),
    // three significant digits, the precision a latency or a cost needs at any size:
    // 0.0421, 1.52, 12.3, 123, 4,560 (never "0.0")
    sig3: (v) => (v == null ? "—" : v.toLocaleString("en-US", { maximumSignificantDigits: 3 })),
    p: (v) => (v == null ? "—" : v < 0.001 ? "<0.001" : v.toFixed(3)),
    date: (v) => (v ? String(v).slice(0, 10) : "—"),
    time: (v) => (v ? String(v).slice(0, 19).replace("T", " ") + " UTC" : "—"),
    text: (v) => (v == null ? "—" : String(v)),
  };

  // A table built with textContent only. cols: [{key, label, fmt?, cls?(row)}]
  function fillTable(table, cols, data, opts) {
    table.replaceChildren();
    const head = el("tr");
    for (const c of cols) head.append(el("th", { scope: "col", text: c.label }));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    const limit = (opts && opts.limit) || data.length;
    for (const r of data.slice(0, limit)) {
      const tr = el("tr");
      if (opts && opts.rowClass) tr.className = opts.rowClass(r) || "";
      if (opts && opts.rowId) { const id = opts.rowId(r); if (id) tr.id = id; }
      for (const c of cols) {
        const v = c.value ? c.value(r) : r[c.key];
        const td = el("td");
        const text = (c.fmt || fmt.text)(v);
        // a link to where the row's cause is: a relative URL of this site, built from
        // encodeURIComponent'd values (links.*), shown with textContent
        const href = c.href ? c.href(r) : null;
        if (href) td.append(el("a", { href, text }));
        else td.textContent = text;
        if (c.cls) td.className = c.cls(r) || "";
        if (c.num) td.classList.add("num");
        if (c.wrap) td.classList.add("wrap");
        tr.append(td);
      }
      body.append(tr);
    }
    table.append(body);
    if (data.length > limit) {
      table.append(el("caption", { class: "more", text: `first ${limit} of ${data.length} rows; the CSV has all` }));
    }
  }

  function toCsv(cols, data) {
    const q = (v) => {
      // a text cell starting with = + - @ would be a formula in a spreadsheet: quote it
      let s = v == null ? "" : String(v);
      if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = "'" + s;
      return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
    };
    const lines = [cols.map((c) => q(c.label)).join(",")];
    for (const r of data) lines.push(cols.map((c) => q(c.value ? c.value(r) : r[c.key])).join(","));
    return lines.join("\n") + "\n";
  }
  function downloadButton(label, filename, makeCsv) {
    const b = el("button", { type: "button", class: "csv", text: label });
    b.addEventListener("click", () => {
      const url = URL.createObjectURL(new Blob([makeCsv()], { type: "text/csv" }));
      const a = el("a", { href: url, download: filename });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    });
    return b;
  }

  // ---------------------------------------------------------------- filters + URL
  const FILTERS = [
    { key: "runner_class", label: "Runner class" },
    { key: "hw_key", label: "Hardware" }, // pages that list it (the heatmap) only
    { key: "profile", label: "Profile" },
    { key: "dataset", label: "Data set" },
    { key: "workload", label: "Workload" },
    { key: "collation", label: "Charset / collation" },
    { key: "threads", label: "Threads" },
  ];
  function readHash() {
    const out = {};
    const h = location.hash.replace(/^#/, "");
    for (const part of h.split("&")) {
      if (!part) continue;
      const i = part.indexOf("=");
      const k = decodeURIComponent(i < 0 ? part : part.slice(0, i));
      out[k] = i < 0 ? "" : decodeURIComponent(part.slice(i + 1));
    }
    return out;
  }
  function writeHash(obj) {
    const parts = Object.entries(obj)
      .filter(([, v]) => v != null && v !== "")
      .map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v));
    const h = parts.length ? "#" + parts.join("&") : "";
    if (h !== location.hash) history.replaceState(null, "", location.pathname + location.search + h);
    // the other pages' links carry the same view
    for (const a of document.querySelectorAll("nav a[data-page]")) {
      a.setAttribute("href", a.dataset.page + ".html" + h);
    }
  }
  // Where a mark's cause is: relative links of this site (values encodeURIComponent'd).
  const hashOf = (obj) =>
    Object.entries(obj)
      .filter(([, v]) => v != null && v !== "")
      .map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v))
      .join("&");
  const CELL_KEYS = FILTERS.map((f) => f.key).filter((k) => k !== "hw_key"); // a history cell spans hardware
  const links = {
    run: (r) => (r.run_id ? "runs.html#" + hashOf({ run: r.run_id }) : null),
    // the run page, with the variables diff of the row's pair selected
    diff: (r) => (r.run_id ? "runs.html#" + hashOf({ run: r.run_id, previous: r.previous, server: r.server, collation: r.collation, profile: r.profile, workload: r.workload, threads: r.threads }) : null),
    history: (r) => "history.html#" + hashOf(Object.fromEntries(CELL_KEYS.map((k) => [k, r[k]]))),
  };
  const sortValues = (vals) =>
    vals.sort((a, b) => (typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b))));
  // Most common value; ties go to the first in sort order (same rule as site/png.py).
  function defaultValue(data, key, options) {
    const counts = new Map();
    for (const r of data) counts.set(r[key], (counts.get(r[key]) || 0) + 1);
    let best = options[0];
    for (const v of options) if (counts.get(v) > counts.get(best)) best = v;
    return best;
  }

  // A deep link naming something the data does not have: said next to the filters (never
  // a blank chart); "" clears it.
  const linkProblems = {};
  function linkProblem(text, source) {
    linkProblems[source || "filters"] = text;
    text = Object.values(linkProblems).filter(Boolean).join(" ");
    let p = $("link-problem");
    if (!p) {
      const box = $("filters") || document.querySelector("main .filters") || $("status");
      if (!box) return;
      p = el("p", { id: "link-problem", class: "status error", role: "alert" });
      box.after(p);
    }
    p.textContent = text;
    p.hidden = !text;
  }

  // The metric selector (trend, heatmap): the meta.metrics entries `available` keeps; the
  // choice is `metric=` in the URL (a change re-applies the filters through hashchange).
  // Returns a getter of the chosen entry.
  function metricPicker(available) {
    const defs = (meta.metrics || []).filter(available);
    const box = $("metric-box");
    const want = readHash().metric;
    linkProblem(want && !defs.some((m) => m.key === want) ? `This link names the metric "${want}", which this page does not have: showing ${defs.length ? defs[0].label : "none"}.` : "", "metric");
    const sel = el("select", { id: "metric", name: "metric" });
    for (const m of defs) sel.append(el("option", { value: m.key, text: `${m.label} (${m.unit})` }));
    sel.addEventListener("change", () => {
      linkProblem("", "metric");
      location.hash = hashOf(Object.assign(readHash(), { metric: sel.value }));
    });
    if (box) box.replaceChildren(el("label", {}, "Metric ", sel));
    return () => {
      const m = defs.find((x) => x.key === readHash().metric) || defs[0];
      if (m) sel.value = m.key;
      return m;
    };
  }

  // modes: {key: "all" | "one" | "pick"} ("pick": one value, the most common unless the
  // reader picks another or "all"); calls onChange(filtered rows, selection); draws the selects.
  function makeFilters(data, modes, onChange) {
    const box = $("filters");
    const wanted = readHash();
    const selection = {};
    function apply() {
      let cur = data;
      const unknown = [];
      box.replaceChildren();
      for (const f of FILTERS) {
        const mode = modes[f.key];
        if (!mode) continue;
        const options = sortValues([...new Set(cur.map((r) => r[f.key]))].filter((v) => v != null));
        let value = f.key in selection ? selection[f.key] : wanted[f.key];
        const known = options.map(String);
        if (value != null && value !== "" && !(f.key in selection) && ((value !== "all" && !known.includes(String(value))) || (value === "all" && mode === "one"))) {
          unknown.push(`${f.label.toLowerCase()} "${value}"`);
        }
        if (value == null || (value !== "all" && !known.includes(String(value))) || (value === "all" && mode === "one")) {
          value = mode === "all" ? "all" : options.length ? String(defaultValue(cur, f.key, options)) : "";
        }
        selection[f.key] = value;
        const sel = el("select", { id: "filter-" + f.key, name: f.key });
        if (mode === "all" || mode === "pick") sel.append(el("option", { value: "all", text: "all" }));
        for (const o of options) sel.append(el("option", { value: String(o), text: String(o) }));
        sel.value = value;
        sel.addEventListener("change", () => {
          selection[f.key] = sel.value;
          apply();
        });
        box.append(el("label", {}, f.label + " ", sel));
        if (value !== "all") cur = cur.filter((r) => String(r[f.key]) === String(value));
      }
      const extra = {};
      for (const [k, v] of Object.entries(wanted)) if (!FILTERS.some((f) => f.key === k)) extra[k] = v;
      writeHash(Object.assign(extra, selection));
      linkProblem(unknown.length ? `This link names ${unknown.join(", ")}: no results have it, so the view shows the ${unknown.length > 1 ? "defaults" : "default"} instead.` : "");
      onChange(cur, selection);
    }
    window.addEventListener("hashchange", () => {
      const w = readHash();
      for (const k of Object.keys(selection)) delete selection[k];
      Object.assign(wanted, w);
      for (const k of Object.keys(wanted)) if (!(k in w)) delete wanted[k];
      apply();
    });
    apply();
  }

  // ---------------------------------------------------------------- charts
  const EMBED_OPTIONS = {
    ast: true, // CSP: Vega's expression interpreter instead of new Function (no unsafe-eval)
    renderer: "svg",
    actions: false,
    defaultStyle: false, // its CSS is in assets/site.css (no inline <style>: CSP)
    tooltip: { disableDefaultStyle: true },
    config: {
      font: "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif",
      title: { fontSize: 15, subtitleFontSize: 12, subtitleColor: "#555" },
      axis: { labelFontSize: 11, titleFontSize: 12, titleColor: "#333" },
      legend: { labelFontSize: 11, titleFontSize: 12 },
      view: { stroke: "#ddd" },
    },
  };

  function clone(x) {
    return JSON.parse(JSON.stringify(x));
  }
  // Facet charts: as many columns as fit the screen, panels as wide as they can be.
  function fitFacets(spec, host) {
    if (!spec.facet || !spec.spec) return;
    const avail = Math.max(260, host.clientWidth - 40);
    const panels = spec.__panels || 1;
    const yAxis = 70;
    const cols = Math.max(1, Math.min(panels, Math.floor(avail / 320)));
    spec.columns = cols;
    spec.spec.width = Math.max(200, Math.floor(avail / cols) - yAxis);
  }

  function chartCard(name) {
    return document.querySelector(`[data-chart="${name}"]`);
  }

  // Draw chart `name` with datasets {table: rows, ...}; table view + CSV under it.
  function draw(name, datasets, tableCols, opts) {
    const card = chartCard(name);
    const host = $("chart-" + name);
    let tools = card.querySelector(".chart-tools");
    if (!tools) {
      tools = el("div", { class: "chart-tools" });
      card.append(tools);
    }
    tools.replaceChildren();
    const data = datasets.table;
    const tableData = (opts && opts.tableRows) || data; // the table view's and CSV's rows
    if (!data.length) {
      host.replaceChildren(el("p", { class: "empty", text: (opts && opts.emptyText) || "No results for this selection." }));
      host.dataset.marks = "0";
      delete state.charts[name];
      return Promise.resolve(null);
    }
    const spec = clone(SPECS[name]);
    spec.datasets = datasets;
    state.datasets[name] = datasets;
    if (spec.facet) {
      spec.__panels = new Set(data.map((r) => r[spec.facet.field])).size;
      fitFacets(spec, host);
      delete spec.__panels;
    }
    if (spec.width === "container") {
      // a fixed width from the page's column: Vega's own container sizing cannot be
      // combined with a height per row (it drops the fit and warns)
      spec.width = Math.max(240, host.clientWidth - 40);
    }
    if (opts && opts.tweak) opts.tweak(spec, host, data);
    if (spec.layer) {
      // a layer over an empty data set draws nothing but makes Vega warn about its extent
      spec.layer = spec.layer.filter((l) => !(l.data && l.data.name && l.data.name !== "table" && !(datasets[l.data.name] || []).length));
    }
    const t0 = performance.now();
    return vegaEmbed(host, spec, EMBED_OPTIONS)
      .then((res) => {
        state.charts[name] = res.view;
        host.dataset.marks = String(countMarks(res.view));
        if (state.firstChartMs == null) state.firstChartMs = performance.now();
        state.drawn++;
        host.setAttribute("role", "img");
        host.setAttribute("aria-label", (spec.title && spec.title.text) || name);
        const details = el("details", { class: "table-view" });
        const table = el("table", { class: "data" });
        details.append(el("summary", { text: `Table view (${tableData.length} rows)` }), el("div", { class: "scroll" }, table));
        details.addEventListener("toggle", () => {
          if (details.open && !table.rows.length) fillTable(table, tableCols, tableData, { limit: 2000 });
        });
        tools.append(details, downloadButton("Download CSV", `${name}.csv`, () => toCsv(tableCols, tableData)));
        return res.view;
      })
      .catch((err) => {
        state.errors.push(String(err));
        host.replaceChildren(el("p", { class: "error", text: "This chart could not be drawn: " + err }));
        console.error(err);
      })
      .finally(() => {
        state.lastDrawMs = performance.now() - t0;
      });
  }

  // Number of data marks drawn (items of marks with role "mark": not axes, legends,
  // titles or facet cells), for the tests and the page's aria label.
  function countMarks(view) {
    let n = 0;
    (function walk(node) {
      if (!node || !node.items) return;
      if (node.marktype && node.marktype !== "group" && node.role === "mark") n += node.items.length;
      for (const it of node.items) walk(it);
    })(view.scenegraph().root);
    return n;
  }

  function ready() {
    document.body.dataset.ready = "1";
  }

  function footer() {
    const g = $("generated");
    if (g) {
      const n = (meta.results && meta.results.ok) || 0;
      g.textContent = `built ${fmt.time(meta.generated_at)} from ${n.toLocaleString("en-US")} results (perftrack ${meta.perftrack_version || "?"})`;
    }
  }

  const NO_RESULTS = "No results yet: run `perftrack run`, `perftrack ingest`, then `perftrack site build`.";

  // ---------------------------------------------------------------- columns
  const C = {
    verdict: {
      key: "verdict",
      label: "verdict",
      cls: (r) => "verdict " + r.verdict,
      // values whose window was still warming up (run/steady.py): said beside the verdict
      value: (r) => (r.unsteady ? `${r.verdict} (${r.unsteady} not steady)` : r.verdict),
    },
    server: { key: "server", label: "version" },
    previous: { key: "previous", label: "vs previous" },
    workload: { key: "workload", label: "workload" },
    collation: { key: "collation", label: "collation" },
    threads: { key: "threads", label: "threads", num: true },
    ratio: { key: "ratio", label: "ratio", fmt: fmt.ratio, num: true },
    ci: { key: "ci", label: "95% interval", value: (r) => (r.ci_low == null ? null : `${fmt.ratio(r.ci_low)} – ${fmt.ratio(r.ci_high)}`) },
    p: { key: "p_value", label: "p", fmt: fmt.p, num: true },
    runner: { key: "runner_class", label: "runner class" },
    profile: { key: "profile", label: "profile" },
    dataset: { key: "dataset", label: "data set" },
    tps: { key: "tps", label: "median tx/s", fmt: fmt.num1, num: true },
    n: { key: "n", label: "repeats", num: true },
  };

  // ---------------------------------------------------------------- pages
  const pages = {};

  // pages.index: assets/overview.js

  const summaryCols = [C.server, C.workload, C.collation, C.threads, C.tps,
    { key: "tps_low", label: "95% from", fmt: fmt.num1, num: true },
    { key: "tps_high", label: "95% to", fmt: fmt.num1, num: true },
    { key: "p95_ms", label: "p95 latency (ms)", fmt: fmt.sig3, num: true },
    C.n, C.runner, C.profile, C.dataset];

  function chartPage(chart, datasetName, modes, emptyText, extra) {
    const all = rows(datasetName);
    if (meta.empty || !all.length) {
      setStatus(meta.empty ? NO_RESULTS : emptyText, "empty");
      $("filters").hidden = true;
      chartCard(chart).hidden = true;
      return ready();
    }
    makeFilters(all, modes, (filtered, sel) => {
      // extra.rows: the chart's rows from the filtered ones (e.g. the chosen metric's)
      const data = extra && extra.rows ? extra.rows(filtered, sel) : filtered;
      setStatus(extra && extra.note ? extra.note(data, sel) : "");
      draw(chart, Object.assign({ table: data }, extra && extra.datasets ? extra.datasets(data, sel) : {}), extra && extra.cols ? extra.cols : summaryCols,
        { tweak: extra && extra.tweak, emptyText: extra && extra.emptyText }).then((view) => {
        if (view && extra && extra.onDraw) extra.onDraw(view, data);
        ready();
      });
    });
  }

  // pages.trend: assets/trend.js

  pages.scaling = () =>
    chartPage("scaling", "summary", { runner_class: "one", profile: "one", dataset: "one", workload: "all", collation: "one" }, "No results yet.", {
      note: (d) => (new Set(d.map((r) => r.threads)).size < 2 ? "Only one thread count measured for this selection: run a matrix with several `threads:` to see scaling." : ""),
    });

  pages.charset = () =>
    chartPage("charset", "charset", { runner_class: "one", profile: "one", dataset: "one", workload: "all", collation: "all", threads: "one" },
      "No charset comparison yet: it needs latin1 and another charset measured on the same version.", {
        cols: [C.server, C.collation, { key: "baseline", label: "vs" }, C.workload, C.threads, C.ratio, C.ci, C.p, C.verdict, C.runner, C.dataset],
      });

  // pages.heatmap: assets/heatmap.js

  // Cost per transaction (sampler.py): one bar chart per measure, versions side by side.
  pages.cost = () =>
    chartPage("cost", "cost", { runner_class: "one", profile: "one", dataset: "one", workload: "one", collation: "one", threads: "one" }, "No results yet.", {
      note: (d) => (d.some((r) => r.porder > 1) ? "" : "No cost per transaction measured for this selection yet (results older than the sampler, or sampling off): throughput only."),
      cols: [C.server, { key: "panel", label: "measure" }, { key: "part", label: "part" },
        { key: "value", label: "median", fmt: fmt.num1, num: true },
        { key: "cpu_us_per_txn", label: "CPU µs/txn", fmt: fmt.num1, num: true },
        C.n, { key: "noisy", label: "noisy repeats", num: true },
        C.workload, C.collation, C.threads, C.runner, C.profile, C.dataset],
    });

  pages.runs = function () {
    const runs = rows("runs");
    const select = $("run-select");
    if (!runs.length) {
      setStatus(NO_RESULTS, "empty");
      select.disabled = true;
      return ready();
    }
    for (const r of runs) {
      select.append(el("option", { value: r.run_id, text: `${fmt.time(r.started_at)} · ${r.run_id} · ${r.runner_class}` }));
    }
    const link = readHash();
    const known = runs.some((r) => r.run_id === link.run);
    select.value = known ? link.run : runs[0].run_id;
    if (link.run && !known) linkProblem(`No run "${link.run}" in the data (the site keeps the runs of the last year; older ones are on the SQL page): showing the newest run instead.`);
    const show = (pair) => {
      const run = runs.find((r) => r.run_id === select.value);
      writeHash({ run: run.run_id, ...(pair || {}) });
      loadRun(run, pair);
    };
    select.addEventListener("change", () => {
      linkProblem("");
      show();
    });
    show(known && link.previous && link.server ? { previous: link.previous, server: link.server, collation: link.collation, profile: link.profile, workload: link.workload, threads: link.threads } : null);
  };

  function loadRun(run, pair) {
    const key = "run:" + run.file;
    if (!/^r\d{5}$/.test(run.file)) return setStatus("bad run file name", "error");
    if (DATA[key]) return showRun(DATA[key], pair);
    setStatus("loading…");
    const s = el("script", { src: `data/runs/${run.file}.js` });
    s.addEventListener("load", () => showRun(DATA[key], pair));
    s.addEventListener("error", () => setStatus(`data/runs/${run.file}.js is missing: rebuild the site`, "error"));
    document.body.append(s);
  }

  // A run file's tables are in the column encoding (rundetails.py TABLES): rows once.
  const RUN_TABLES = ["servers", "cells", "effective", "failures", "variable_diffs", "explain_commands"];
  function runDetail(raw) {
    if (!raw || raw.rows) return raw;
    const d = { ...raw, rows: true };
    for (const t of RUN_TABLES) d[t] = decode(raw[t]);
    return d;
  }

  // `perftrack explain` of one cell, as publish/site/why.py `command` writes it (its
  // words quoted as Python's shlex.quote does; the regressions page shows why.py's own)
  function shellWord(w) {
    const s = String(w);
    if (s === "") return "''";
    return /^[\w@%+=:,./-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\"'\"'") + "'";
  }
  function explainCommand(c) {
    return ["perftrack", "explain", c.previous, c.server, "--workload", c.workload, "--threads", c.threads,
      "--charset", c.collation, "--profile", c.profile].map(shellWord).join(" ");
  }

  // pair: {previous, server, collation, profile} of a deep link: that diff selected
  function showRun(raw, pair) {
    const d = runDetail(raw);
    setStatus("");
    $("run-detail").hidden = false;
    const r = d.run;
    const kv = [
      ["run id", r.run_id], ["runner class", r.runner_class], ["hardware key", r.hw_key],
      ["CPU", r.cpu_model], ["cores", r.cores], ["memory (GiB)", r.mem_gib], ["kernel", r.kernel],
      ["started", fmt.time(r.started_at)], ["finished", fmt.time(r.finished_at)],
      ["perftrack", r.perftrack_version], ["cells ok / failed / skipped", `${r.ok} / ${r.failed} / ${r.skipped}`],
    ].map(([k, v]) => ({ k, v }));
    fillTable($("run-config"), [{ key: "k", label: "setting" }, { key: "v", label: "value" }], kv);
    fillTable($("run-servers"), [C.server, { key: "product", label: "product" }, { key: "version", label: "version" },
      { key: "version_string", label: "VERSION() reported" }, { key: "provider", label: "provider" },
      { key: "results", label: "results", num: true }], d.servers);
    fillTable($("run-effective"), [C.server, C.collation, C.profile, { key: "name", label: "setting" }, { key: "value", label: "value" }], d.effective);
    fillTable($("run-cells"), [C.server, C.workload, C.collation, C.threads, C.profile, C.dataset, { key: "ok", label: "ok", num: true },
      { key: "n", label: "attempts", num: true }, C.tps, { key: "p95_ms", label: "p95 ms", fmt: fmt.sig3, num: true }], d.cells);
    // variable diffs: one pair of versions (and profile/collation) at a time
    const diffSel = $("diff-select");
    diffSel.replaceChildren();
    const pairs = [...new Set(d.variable_diffs.map((x) => `${x.previous} → ${x.server} · ${x.collation} · ${x.profile}`))];
    const allSets = [...new Set(d.servers.map((s) => s.server))];
    if (!pairs.length) {
      $("diff-status").textContent = allSets.length < 2 ? "Only one version in this run: nothing to compare." : "The versions in this run report identical variables.";
      $("run-diff").replaceChildren();
      $("run-diff-rest").replaceChildren();
      $("diff-rest-count").textContent = "0";
      diffSel.disabled = true;
      // a link's pair still gets its why: a stored explanation, or the command
      showWhy(d, pair && pair.previous && pair.server ? pair : null, pair || {});
    } else {
      for (const p of pairs) diffSel.append(el("option", { value: p, text: p }));
      diffSel.disabled = false;
      // no pair named: the first with a stored explanation, if any
      const explained = new Set((d.explanations || []).map((x) => `${x.previous} → ${x.server}`));
      const withWhy = pairs.find((p) => explained.has(p.split(" · ")[0]));
      if (!pair && withWhy) diffSel.value = withWhy;
      if (pair) {
        const wantedPair = `${pair.previous} → ${pair.server} · ${pair.collation} · ${pair.profile}`;
        if (pairs.includes(wantedPair)) {
          diffSel.value = wantedPair;
          $("run-diff").closest(".card").scrollIntoView();
        } else {
          linkProblem(`This run has no variables diff of ${wantedPair}: the two versions report the same variables here, or this run did not measure both.`);
        }
      }
      const showDiff = () => {
        const order = { changed: 0, added: 1, removed: 2 };
        const sel = d.variable_diffs
          .filter((x) => `${x.previous} → ${x.server} · ${x.collation} · ${x.profile}` === diffSel.value)
          .sort((a, b) => order[a.change] - order[b.change] || a.name.localeCompare(b.name));
        const first = sel[0] || {};
        const cell = pair && pair.previous === first.previous && pair.server === first.server && pair.workload ? { workload: pair.workload, threads: pair.threads } : {};
        writeHash({ run: d.run.run_id, previous: first.previous, server: first.server, collation: first.collation, profile: first.profile, ...cell });
        const n = (c) => sel.filter((x) => x.change === c).length;
        // ranked: the settings `perftrack explain` would try (its order) first, the rest folded
        const tried = sel.filter((x) => x.rank != null).sort((a, b) => a.rank - b.rank);
        const rest = sel.filter((x) => x.rank == null);
        $("diff-status").textContent = `${first.previous} → ${first.server}: ${n("changed")} changed, ${n("added")} only in the new version, ${n("removed")} only in the previous one. ` +
          `${tried.length} of them \`perftrack explain\` would try on ${first.server} at ${first.previous}'s value, listed first; the other ${rest.length} (versions, paths, sizes from the machine, names in one release only, …) are folded below.`;
        const cols = (extra) => [{ key: "name", label: "variable", wrap: true }, { key: "change", label: "change" },
          { key: "previous_value", label: first.previous || "previous", wrap: true }, { key: "value", label: first.server || "new", wrap: true }, ...extra];
        fillTable($("run-diff"), cols([]), tried, { rowClass: (x) => "change-" + x.change });
        fillTable($("run-diff-rest"), cols([{ key: "left", label: "why explain leaves it out", wrap: true }]), rest, { rowClass: (x) => "change-" + x.change });
        $("diff-rest-count").textContent = String(rest.length);
        showWhy(d, first, cell);
      };
      diffSel.onchange = showDiff;
      showDiff();
    }
    const box = $("run-failures");
    box.replaceChildren();
    if (!d.failures.length) box.append(el("p", { class: "note", text: "None: every cell of this run succeeded." }));
    for (const f of d.failures) {
      const det = el("details", { class: "failure" });
      det.append(el("summary", { text: `${f.status}: ${f.server} · ${f.workload} · ${f.collation} · ${f.threads} threads — ${f.reason || ""}` }));
      if (f.error_log_tail) det.append(el("pre", { text: f.error_log_tail }));
      box.append(det);
    }
    ready();
  }

  // The why of the selected pair: its stored explanations (`perftrack explain`) first;
  // without one, the command that computes it, on the cell a deep link names or else on
  // the run's cell where the new version lost most.
  function showWhy(d, pairRow, cell) {
    const all = d.explanations || [];
    if (!pairRow) return showExplanations(all, "");
    const mine = all.filter((x) => x.previous === pairRow.previous && x.server === pairRow.server);
    const cmds = (d.explain_commands || []).filter((c) => c.previous === pairRow.previous && c.server === pairRow.server && c.collation === pairRow.collation && c.profile === pairRow.profile);
    const cmd = cmds.find((c) => c.workload === cell.workload && String(c.threads) === String(cell.threads)) || cmds[0];
    const how = cmd
      ? `No explanation stored for ${pairRow.previous} → ${pairRow.server} yet. To compute one on ${cmd.workload} · ${cmd.threads} threads (ratio ${fmt.ratio(cmd.ratio)} in this run): `
      : `No explanation stored for ${pairRow.previous} → ${pairRow.server}, and this run measured no cell of both.`;
    showExplanations(mine.length ? mine : [], mine.length ? "" : how, mine.length ? null : cmd && explainCommand(cmd));
  }

  function showExplanations(xs, none, command) {
    // one row per isolated setting (or group); a conclusion without any is one row too
    const share = (v) => (v == null ? "—" : (v * 100).toFixed(0) + "%");
    const rows = [];
    for (const x of xs) {
      const head = { pair: `${x.previous} → ${x.server}`, cell: `${x.workload} · ${x.threads} threads`, conclusion: x.conclusion };
      if (!x.isolated.length) rows.push({ ...head, settings: "none isolated", share: "—" });
      for (const g of x.isolated)
        rows.push({ ...head, settings: g.settings.join(", "), share: `${share(g.share)} [${share(g.share_low)}, ${share(g.share_high)}]` });
    }
    const pairs = [...new Set(xs.map((x) => `${x.previous} → ${x.server}`))];
    $("explain-status").textContent = xs.length
      ? `${xs.length} explanation(s) of ${pairs.join(", ")}.`
      : none || "No explanation stored for the versions of this run.";
    const code = $("explain-command");
    code.textContent = command || "";
    code.hidden = !command;
    $("run-explain").closest(".scroll").hidden = !xs.length;
    fillTable($("run-explain"), [{ key: "pair", label: "versions" }, { key: "cell", label: "cell" },
      { key: "settings", label: "setting (previous value)" }, { key: "share", label: "share of the gap [95%]" },
      { key: "conclusion", label: "conclusion" }], rows);
  }

  pages.studies = function () {
    const list = $("study-list");
    const studies = DATA.studies || [];
    if (!studies.length) {
      setStatus("No studies yet: add a study file under configs/studies/ (one per article) and rebuild.", "empty");
      return ready();
    }
    for (const s of studies) {
      const measured = s.rows.filter((r) => r.ours != null).length;
      list.append(el("li", {}, el("a", { href: `study-${s.name}.html`, text: s.title }),
        el("span", { class: "note", text: ` — scale ${s.scale}: ${measured} ratios measured, ${s.skipped.length} cells not measured` })));
    }
    ready();
  };

  // Our ratio (point, 95% interval as a bar) next to the article's (diamond), per row.
  function studySpec(rows, width) {
    const data = rows.filter((r) => r.ours != null || r.article != null).map((r) => ({
      row: `${r.comparison} · ${r.cells}`,
      ours: r.ours, ci_low: r.ci_low, ci_high: r.ci_high, article: r.article,
      noise: r.grade.startsWith("stand-in:") ? "stand-in: direction only" : (r.sure ? "outside the noise" : "within the noise"),
    }));
    const y = { field: "row", type: "nominal", sort: null, title: null, axis: { labelLimit: 520 } };
    const x = { type: "quantitative", scale: { zero: false }, title: "ratio (> 1: the numerator is faster)" };
    return {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width, height: { step: 16 }, data: { values: data },
      title: { text: "Our ratios (95% interval) and the article's", subtitle: "dots: ours, coloured by the noise test (ochre: a side ran on another product's stand-in, read for direction only) · red diamonds: the article's published ratio" },
      layer: [
        { mark: { type: "rule", color: "#888" }, encoding: { x: { datum: 1, type: "quantitative" } } },
        { mark: { type: "rule" }, encoding: { y, x: { ...x, field: "ci_low" }, x2: { field: "ci_high" },
          color: { field: "noise", type: "nominal", scale: { domain: ["outside the noise", "within the noise", "stand-in: direction only"], range: ["#1f6fb2", "#9aa7b1", "#d4a24c"] }, title: "ours" } } },
        { mark: { type: "point", filled: true, size: 50 }, encoding: { y, x: { ...x, field: "ours" },
          color: { field: "noise", type: "nominal" }, tooltip: [{ field: "row" }, { field: "ours", format: ".3f" }, { field: "ci_low", format: ".3f" }, { field: "ci_high", format: ".3f" }, { field: "article", format: ".3f" }] } },
        { mark: { type: "point", shape: "diamond", size: 70, color: "#c0392b", filled: true }, encoding: { y, x: { ...x, field: "article" } } },
      ].filter((layer, i) => i < 3 || data.some((r) => r.article != null)),  // no article numbers: no empty layer
    };
  }

  pages.study = function () {
    const name = document.body.dataset.study;
    const s = (DATA.studies || []).find((x) => x.name === name);
    if (!s) {
      setStatus("This study is not in the data: rebuild the site.", "error");
      return ready();
    }
    document.title = s.title + " · perftrack";
    $("study-title").textContent = s.title;
    $("study-source").textContent = "Scale " + s.scale + (s.local_notes ? ": " + s.local_notes : ".") + " Who plays each role:";
    $("study-roles").replaceChildren(...s.players.map((line) => el("li", { text: line })));
    $("study-rule").textContent = "Grades (one rule for every study, as `perftrack study report` prints them): " + s.rule + ".";
    const measured = s.rows.filter((r) => r.ours != null).length;
    $("study-summary").textContent = `${measured} of our ratios measured (${s.rows.filter((r) => r.sure).length} outside the noise: 95% interval excludes 1 and p < 0.05, one t test); the article publishes ${s.reference_rows} numbers. Ratios are throughput ratios: above 1 = the numerator is faster.`;
    $("study-claims").replaceChildren(...(s.claims.length ? s.claims : ["The article's claims are its numbers: see the table."]).map((c) => el("li", { text: c })));
    $("study-skipped").replaceChildren(...s.skipped.map((c) => el("li", { text: c })));
    $("study-skipped-count").textContent = String(s.skipped.length);
    if (!s.rows.length) setStatus("No results of this study's servers yet: run `perftrack study run " + s.name + " --scale local`, ingest and rebuild.", "empty");
    fillTable($("study-table"), [{ key: "comparison", label: "comparison" }, { key: "cells", label: "cells" },
      { key: "ours", label: "our ratio", fmt: (v) => (v == null ? "—" : fmt.ratio(v)), num: true },
      { key: "ci_low", label: "95% low", fmt: (v) => (v == null ? "—" : fmt.ratio(v)), num: true },
      { key: "ci_high", label: "95% high", fmt: (v) => (v == null ? "—" : fmt.ratio(v)), num: true },
      { key: "sure", label: "outside the noise", fmt: (v) => (v ? "yes" : "no") },
      { key: "n", label: "n" },
      { key: "article", label: "article's ratio", fmt: (v) => (v == null ? "—" : fmt.ratio(v)), num: true },
      { key: "grade", label: "grade", cls: () => "grade" }], s.rows);
    const host = $("chart-study");
    const chartRows = s.rows.filter((r) => r.ours != null || r.article != null);
    if (!chartRows.length) {
      host.replaceChildren(el("p", { class: "empty", text: "Nothing to draw yet." }));
      host.dataset.marks = "0";
      return ready();
    }
    vegaEmbed(host, studySpec(s.rows, Math.max(240, host.clientWidth - 600)), EMBED_OPTIONS)
      .then((res) => {
        state.charts.study = res.view;
        host.dataset.marks = String(countMarks(res.view));
        host.setAttribute("role", "img");
        host.setAttribute("aria-label", "Our ratios and the article's");
      })
      .catch((err) => {
        state.errors.push(String(err));
        host.replaceChildren(el("p", { class: "error", text: "This chart could not be drawn: " + err }));
      })
      .finally(ready);
  };


  // ---------------------------------------------------------------- upgrade advisor
  const VERDICT_COLORS = { domain: ["regression", "improvement", "unchanged", "inconclusive"], range: ["#c0392b", "#2471a3", "#7f8c8d", "#b9770e"] };
  const pct = (v) => (v == null ? "—" : (v >= 1 ? "+" : "") + ((v - 1) * 100).toFixed(1) + "%");
  function advisorSpec(data, width) {
    const y = { field: "release", type: "nominal", sort: null, title: null };
    const x = { type: "quantitative", title: "expected change of throughput (ratio to your release; 1 = no change)", scale: { zero: false } };
    return {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      width, height: { step: 26 }, data: { values: data },
      layer: [
        { mark: { type: "rule", color: "#888" }, encoding: { x: { datum: 1, type: "quantitative" } } },
        { mark: { type: "rule", strokeWidth: 2 }, encoding: { y, x: { ...x, field: "ci_low" }, x2: { field: "ci_high" }, color: { field: "verdict", type: "nominal", scale: VERDICT_COLORS, legend: { orient: "bottom" } } } },
        { mark: { type: "point", filled: true, size: 70 }, encoding: { y, x: { ...x, field: "ratio" }, color: { field: "verdict", type: "nominal", scale: VERDICT_COLORS },
          shape: { field: "measured_kind", type: "nominal", title: "measured", scale: { domain: ["directly", "chained"], range: ["circle", "triangle-right"] } },
          tooltip: [{ field: "release" }, { field: "ratio", format: ".3f" }, { field: "ci_low", format: ".3f" }, { field: "ci_high", format: ".3f" }, { field: "verdict" }, { field: "measured" }] } },
      ],
    };
  }
  pages.advisor = function () {
    const A = DATA.advisor || { from: [], rows: [], unreachable: [] };
    const box = $("advisor-filters");
    if (!A.from.length) {
      setStatus("No results yet: run and ingest a benchmark, then rebuild.", "empty");
      $("chart-advisor").dataset.marks = "0";
      return ready();
    }
    const wanted = readHash();
    const keys = [["from", "Your release"], ["workload", "Workload"], ["collation", "Charset / collation"], ["threads", "Threads"], ["profile", "Profile"]];
    const sel = {};
    function options(key, rows) {
      const vals = key === "from" ? A.from.slice() : sortValues([...new Set(rows.map((r) => r[key]))].filter((v) => v != null));
      return vals.map(String);
    }
    function render() {
      box.replaceChildren();
      let cur = A.rows;
      let unr = A.unreachable;
      let problem = "";
      for (const [key, label] of keys) {
        const opts = options(key, key === "from" ? cur : cur.concat(unr));
        let v = key in sel ? sel[key] : wanted[key];
        if (v != null && v !== "" && !opts.includes(String(v))) {
          const what = key === "from" ? "release with results named" : label.toLowerCase();
          if (!problem) problem = `No ${what} "${v}" in the data: showing ${key === "from" ? opts[0] : "the most measured"} instead.`;
          v = null;
        }
        if (v == null || v === "") v = opts.length ? (key === "from" ? opts[0] : String(defaultValue(cur.length ? cur : unr, key, opts))) : "";
        sel[key] = v;
        const s = el("select", { id: "advisor-" + key, name: key });
        for (const o of opts) s.append(el("option", { value: o, text: o }));
        s.value = v;
        s.addEventListener("change", () => { sel[key] = s.value; for (const [k] of keys.slice(keys.findIndex(([kk]) => kk === key) + 1)) delete sel[k]; delete wanted[key]; render(); });
        box.append(el("label", {}, label + " ", s));
        cur = cur.filter((r) => String(r[key]) === String(v));
        unr = unr.filter((r) => String(r[key]) === String(v));
      }
      writeHash(sel);
      setStatus(problem || (cur.length ? "" : `No newer release measured after ${sel.from} in this series.`), problem ? "error" : cur.length ? "" : "empty");
      fillTable($("advisor-table"), [
        { key: "release", label: "release" },
        { key: "ratio", label: "throughput", fmt: pct, num: true },
        { key: "ci_low", label: "95% low", fmt: pct, num: true },
        { key: "ci_high", label: "95% high", fmt: pct, num: true },
        { key: "verdict", label: "verdict", cls: (r) => "verdict " + r.verdict },
        { key: "p95_ratio", label: "p95", fmt: pct, num: true },
        { key: "p95_interval", label: "p95 95% interval", value: (r) => (r.p95_ci_low == null ? null : pct(r.p95_ci_low) + " … " + pct(r.p95_ci_high)) },
        { key: "p95_verdict", label: "p95 verdict", cls: (r) => "verdict " + (r.p95_verdict || "") },
        { key: "measured", label: "measured", value: (r) => `${r.measured} (${r.series} series)` },
      ], cur);
      $("advisor-unreachable").replaceChildren(...unr.map((r) => el("li", { text: `${r.release}: no path of measurements from ${sel.from} in this series (not compared)` })));
      $("advisor-settings").replaceChildren(...cur.map((r) => {
        const rest = [];
        if (r.settings_more) rest.push(`+${r.settings_more} more changed`);
        if (r.settings_new) rest.push(`${r.settings_new} new`);
        if (r.settings_removed) rest.push(`${r.settings_removed} removed`);
        return el("li", { text: `${sel.from} → ${r.release}: ${r.settings.join(", ") || "no changed value"}${rest.length ? " (" + rest.join(", ") + ")" : ""}` });
      }));
      const host = $("chart-advisor");
      const data = cur.filter((r) => r.ratio != null).map((r) => ({ ...r, measured_kind: r.measured === "directly" ? "directly" : "chained" }));
      if (!data.length) {
        host.replaceChildren(el("p", { class: "empty", text: "Nothing to draw for this choice." }));
        host.dataset.marks = "0";
        return ready();
      }
      vegaEmbed(host, advisorSpec(data, Math.max(240, host.clientWidth - 240)), EMBED_OPTIONS)
        .then((res) => { state.charts.advisor = res.view; host.dataset.marks = String(countMarks(res.view)); host.dataset.points = String(data.length); })
        .catch((err) => { state.errors.push(String(err)); host.replaceChildren(el("p", { class: "error", text: "This chart could not be drawn: " + err })); })
        .finally(ready);
    }
    window.addEventListener("hashchange", () => {
      const w = readHash();
      for (const k of Object.keys(sel)) delete sel[k];
      for (const k of Object.keys(wanted)) delete wanted[k];
      Object.assign(wanted, w);
      render();
    });
    render();
  };

  // ---------------------------------------------------------------- pages in their own file
  // assets/PAGE.js (loaded by its template, before this file) registers
  // window.PERFTRACK_PAGES[PAGE] = function (lib) {…}; it gets this file's helpers
  // (also window.perftrack.lib, for the tests).
  const lib = { DATA, meta, state, decode, rows, el, $, setStatus, fmt, fillTable, toCsv, downloadButton,
    makeFilters, linkProblem, metricPicker, readHash, writeHash, hashOf, links, draw, chartCard, ready, C,
    NO_RESULTS, summaryCols, chartPage, VERDICT_COLORS, EMBED_OPTIONS, countMarks };
  state.lib = lib;
  for (const [name, fn] of Object.entries(window.PERFTRACK_PAGES || {})) pages[name] = () => fn(lib);

  // ---------------------------------------------------------------- start
  footer();
  try {
    (pages[page] || ready)();
  } catch (err) {
    state.errors.push(String(err));
    setStatus("This page failed to render: " + err, "error");
    console.error(err);
    ready();
  }
})();
