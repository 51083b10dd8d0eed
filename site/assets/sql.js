/* perftrack site: the SQL page (sql.html). DuckDB-WASM runs the reader's SQL over the
 * published tables: data/sql/manifest.json lists each table's Parquet files, and each
 * table is loaded under its own name (when a query first names it), so a query typed
 * here is one that works in `duckdb data/results.duckdb`. parquet-wasm decodes the
 * files: the npm DuckDB-WASM has no Parquet reader built in (docs/site.md).
 *
 * DuckDB-WASM and parquet-wasm are loaded by this page only (vendor/). Browsers refuse
 * workers and fetch() for a page opened from file://: there the page says to serve the
 * site, and loads nothing.
 *
 * Safety: query results are put in the page with textContent only.
 */
"use strict";
(function () {
  const MAX_SHOWN = 1000; // rows drawn in the result table; the CSV download has them all
  const MANIFEST = "data/sql/manifest.json";
  const MANIFEST_FORMAT = 1; // scripts/perftrack/publish/site/parquet.py MANIFEST_FORMAT
  const VENDOR = {
    duckdb: "vendor/duckdb-browser.mjs",
    worker: "vendor/duckdb-browser-eh.worker.js",
    wasm: "vendor/duckdb-eh.wasm",
    parquet: "vendor/parquet_wasm.js",
    parquetWasm: "vendor/parquet_wasm_bg.wasm",
  };
  const CSV_FILE = "perftrack-query.csv";

  // {base}, {new}, {workload}, {threads}, {collation} are filled from the data on load
  // (the pair of the most telling verdict, that pair's most measured series).
  const EXAMPLES = [
    {
      title: "Ratio of two versions, per series",
      sql: `-- Throughput of {new} relative to {base}: the median of every
-- night and repeat, per series: runner class and hardware, profile, data set and every
-- axis (engine, isolation, durability, ...), workload, threads and collation. Nothing is
-- pooled over an axis: a ratio pooled over, say, two storage engines can point the
-- other way from both engines' own ratios.
-- ratio = new / base: below 1 is slower. Edit the two ids to compare another pair.
-- (The medians are not rounded: DuckDB-WASM and DuckDB round a tie such as x.85
-- differently.)
WITH med AS (
  SELECT s.server_id, r.workload, r.threads, r."collation", r.engine, r.isolation,
         r.durability, r.handshake, r.profile, r.tables, r.table_size, r.duration_s,
         r."connection", r.dataset_size, r.phase, ru.runner_class, ru.hw_key,
         median(r.tps) AS tps
  FROM results r JOIN servers s USING (server_key) JOIN runs ru USING (run_id)
  WHERE r.status = 'ok' AND s.server_id IN ('{base}', '{new}')
  GROUP BY ALL
)
SELECT workload, threads, "collation", engine, isolation, durability, handshake, profile,
       tables, table_size, duration_s, "connection", dataset_size, phase, runner_class,
       hw_key, any_value(tps) FILTER (WHERE server_id = '{base}') AS base_tps,
       any_value(tps) FILTER (WHERE server_id = '{new}') AS new_tps,
       round(any_value(tps) FILTER (WHERE server_id = '{new}')
             / any_value(tps) FILTER (WHERE server_id = '{base}'), 4) AS ratio
FROM med
GROUP BY ALL
HAVING count(*) = 2
ORDER BY ratio, workload, threads, "collation", engine, isolation, durability, handshake,
         profile, tables, table_size, duration_s, "connection", dataset_size, phase,
         runner_class, hw_key;`,
    },
    {
      title: "Slowest nights of a series",
      sql: `-- The ten slowest nights of {new} on {workload}, {threads} threads, {collation}.
-- A night is one run of one series (profile, data set and every axis): the median of
-- its repeats; the series columns say which.
SELECT ru.run_id, ru.first_started_at::DATE AS night, ru.runner_class, ru.hw_key,
       r.profile, r.tables, r.table_size, r.duration_s, r."connection", r.engine,
       r.isolation, r.durability, r.handshake, r.dataset_size, r.phase,
       count(*) AS repeats, round(median(r.tps), 1) AS median_tps
FROM results r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
WHERE r.status = 'ok' AND s.server_id = '{new}' AND r.workload = '{workload}'
  AND r.threads = {threads} AND r."collation" = '{collation}'
GROUP BY ALL
ORDER BY median_tps, ru.run_id, r.profile, r.tables, r.table_size, r.duration_s,
         r."connection", r.engine, r.isolation, r.durability, r.handshake,
         r.dataset_size, r.phase
LIMIT 10;`,
    },
    {
      title: "Every night of a series (the history page's points)",
      sql: `-- Each night's median of the repeats, per series and server, oldest first: the
-- nightly-history page's points (n, throughput median/min/max, p95, CPU per
-- transaction; the columns after profile are its "data set"). Here one cell:
-- {workload}, {threads} threads, {collation}; without those three conditions,
-- every series (the rows data/csv/history.csv had).
SELECT ru.runner_class, ru.hw_key, r.profile, r.tables, r.table_size, r.duration_s,
       r."connection", r.engine, r.isolation, r.durability, r.handshake, r.dataset_size,
       r.phase, r.workload, r.threads, r."collation", s.server_id AS server,
       ru.first_started_at AS "at", r.run_id, count(*) AS n, median(r.tps) AS tps,
       min(r.tps) AS tps_min, max(r.tps) AS tps_max, median(r.latency_pct_ms) AS p95_ms,
       median(r.cpu_us_per_txn) AS cpu_us_per_txn
FROM results r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
WHERE r.status = 'ok' AND r.tps IS NOT NULL
  AND r.workload = '{workload}' AND r.threads = {threads} AND r."collation" = '{collation}'
GROUP BY ALL
ORDER BY "at", r.run_id, ru.runner_class, ru.hw_key, r.profile, r.tables, r.table_size,
         r.duration_s, r."connection", r.engine, r.isolation, r.durability, r.handshake,
         r.dataset_size, r.phase, r.workload, r.threads, r."collation", server;`,
    },
    {
      title: "Server variables that differ between two versions",
      sql: `-- Server variables whose value differs between {base} and {new}
-- (each one's newest variable set; per-start values such as paths are not stored).
WITH newest AS (
  SELECT s.server_id, arg_max(r.varset_hash, r.started_at) AS varset_hash
  FROM results r JOIN servers s USING (server_key)
  WHERE r.varset_hash IS NOT NULL AND s.server_id IN ('{base}', '{new}')
  GROUP BY s.server_id
),
v AS (SELECT n.server_id, sv.name, sv.value FROM newest n JOIN server_variables sv USING (varset_hash))
SELECT name, b.value AS base_value, n.value AS new_value
FROM (SELECT * FROM v WHERE server_id = '{base}') b
FULL JOIN (SELECT * FROM v WHERE server_id = '{new}') n USING (name)
WHERE b.value IS DISTINCT FROM n.value
ORDER BY name;`,
    },
    {
      title: "Regressions found by perftrack detect",
      sql: `-- Verdicts that say "regression", largest slowdown first (empty until
-- \`perftrack detect\` has run on the published DB).
SELECT runner_class, workload, threads, "collation", base_server, new_server,
       round(ratio, 4) AS ratio, round(ci_low, 4) AS ci_low, round(ci_high, 4) AS ci_high,
       round(threshold, 4) AS threshold, acknowledged
FROM verdicts
WHERE verdict = 'regression'
ORDER BY ratio, verdict_id;`,
    },
    {
      title: "Results per server",
      sql: `-- Every server build measured, with how many results and when.
SELECT s.server_id, s.version_string, r.status, count(*) AS results,
       min(r.started_at) AS first_at, max(r.started_at) AS last_at
FROM results r JOIN servers s USING (server_key)
GROUP BY ALL
ORDER BY s.server_id, r.status;`,
    },
  ];
  const PLACEHOLDERS = { base: "BASE_SERVER", new: "NEW_SERVER", workload: "oltp_read_only", threads: "1", collation: "utf8mb4_0900_ai_ci" };
  const PICK_PAIR = `SELECT base_server, new_server FROM verdicts
    ORDER BY verdict = 'regression' DESC, last_result_at DESC NULLS LAST, verdict_id LIMIT 1`;
  const PICK_RECENT = `SELECT s.server_id FROM results r JOIN servers s USING (server_key)
    GROUP BY s.server_id ORDER BY max(r.started_at) DESC, s.server_id LIMIT 2`;
  const PICK_SERIES = `SELECT r.workload, r.threads, r."collation" FROM results r JOIN servers s USING (server_key)
    WHERE r.status = 'ok' AND s.server_id = ? GROUP BY ALL
    ORDER BY count(DISTINCT r.run_id) DESC, r.workload, r.threads, r."collation" LIMIT 1`;

  const $ = (id) => document.getElementById(id);
  const state = { phase: "loading", readyMs: null, firstResultMs: null, runs: 0, last: null, examples: [] };
  window.perftrackSql = state; // read by the tests and the benchmark
  const ui = {
    input: $("sql-input"), run: $("sql-run"), csv: $("sql-csv"), example: $("sql-example"),
    info: $("sql-info"), error: $("sql-error"), result: $("sql-result"), tables: $("sql-tables"),
  };

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }
  function setStatus(text, kind) {
    const s = $("status");
    s.textContent = text || "";
    s.className = "status" + (kind ? " " + kind : "");
  }
  function setPhase(phase) {
    state.phase = phase;
    document.body.dataset.sql = phase;
    document.body.dataset.ready = "1";
  }
  function footer() {
    const meta = (window.PERFTRACK_DATA || {}).meta;
    const g = $("generated");
    if (g && meta && meta.generated_at) g.textContent = `built ${String(meta.generated_at).slice(0, 19).replace("T", " ")} UTC`;
  }

  // ---------------------------------------------------------------- values
  // Arrow values as DuckDB's own CLI prints them: integers exact (BigInt), doubles in
  // the shortest form that reads back to the same number, timestamps in UTC.
  function two(n) { return String(n).padStart(2, "0"); }
  function timestamp(ms, withTime) {
    const d = new Date(Math.floor(ms));
    const date = `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`;
    if (!withTime) return date;
    let s = `${date} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
    const micros = Math.round((ms - Math.floor(ms / 1000) * 1000) * 1000);
    if (micros) s += "." + String(micros).padStart(6, "0");
    return s;
  }
  function text(v, type) {
    if (v == null) return null;
    const t = type ? String(type) : "";
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "number") {
      if (t.startsWith("Timestamp")) return timestamp(v, true);
      if (t.startsWith("Date")) return timestamp(v, false);
      return String(v);
    }
    if (typeof v === "string") return v;
    if (typeof v === "boolean") return String(v);
    if (v instanceof Date) return timestamp(v.getTime(), !t.startsWith("Date"));
    if (type && type.children && type.children.length && typeof v[Symbol.iterator] === "function") {
      const child = type.children[0].type;
      return "[" + Array.from(v, (x) => (x == null ? "NULL" : text(x, child))).join(", ") + "]";
    }
    if (typeof v.toJSON === "function") {
      return JSON.stringify(v.toJSON(), (_k, x) => (typeof x === "bigint" ? x.toString() : x));
    }
    return String(v);
  }
  function rowsOf(table) {
    const fields = table.schema.fields;
    const cols = fields.map((_f, i) => table.getChildAt(i));
    const rows = new Array(table.numRows);
    for (let r = 0; r < table.numRows; r++) rows[r] = cols.map((c, i) => text(c.get(r), fields[i].type));
    const numeric = fields.map((f) => /^(Int|Uint|Float|Decimal)/.test(String(f.type)));
    return { columns: fields.map((f) => f.name), numeric, rows };
  }

  // ---------------------------------------------------------------- output
  function show(res) {
    ui.result.replaceChildren();
    const head = el("tr");
    for (const c of res.columns) head.append(el("th", { scope: "col", text: c }));
    ui.result.append(el("thead", {}, head));
    const body = el("tbody");
    for (const row of res.rows.slice(0, MAX_SHOWN)) {
      const tr = el("tr");
      row.forEach((v, i) => {
        const td = el("td", { text: v == null ? "NULL" : v });
        if (res.numeric[i]) td.className = "num";
        if (v == null) td.classList.add("null");
        tr.append(td);
      });
      body.append(tr);
    }
    ui.result.append(body);
    if (res.rows.length > MAX_SHOWN) {
      ui.result.append(el("caption", { class: "more", text: `first ${MAX_SHOWN} of ${res.rows.length} rows; the CSV has all` }));
    }
  }
  function csv(res) {
    const q = (v) => {
      if (v == null) return "";
      // a text cell starting with = + - @ would be a formula in a spreadsheet: quote it
      let s = v;
      if (/^[=+@\t\r]/.test(s) || (s.startsWith("-") && Number.isNaN(Number(s)))) s = "'" + s;
      return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
    };
    const lines = [res.columns.map(q).join(",")];
    for (const r of res.rows) lines.push(r.map(q).join(","));
    return lines.join("\n") + "\n";
  }
  function download() {
    if (!state.last) return;
    const url = URL.createObjectURL(new Blob([csv(state.last)], { type: "text/csv" }));
    const a = el("a", { href: url, download: CSV_FILE });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  // ---------------------------------------------------------------- DuckDB
  let conn = null;
  const sqlString = (v) => String(v).replace(/'/g, "''");
  const sqlIdent = (v) => '"' + String(v).replace(/"/g, '""') + '"';

  // Tables are loaded when a query first names them: fetch the table's Parquet files,
  // decode each to Arrow with parquet-wasm, hand it to DuckDB; several files (one per
  // night, say) are combined by column name, so older files without a newer column read.
  let db = null, parquet = null, manifest = null;
  const loaded = {};
  async function loadTable(name) {
    if (!loaded[name]) {
      loaded[name] = (async () => {
        const files = manifest.tables[name].files;
        const base = new URL(MANIFEST, document.baseURI);
        const parts = [];
        for (const [i, f] of files.entries()) {
          const resp = await fetch(new URL(f, base));
          if (!resp.ok) throw new Error(`data/sql/${f}: HTTP ${resp.status}; rebuild the site`);
          const bytes = new Uint8Array(await resp.arrayBuffer());
          let ipc;
          try {
            ipc = parquet.readParquet(bytes).intoIPCStream();
          } catch (err) {
            throw new Error(`data/sql/${f} is not a readable Parquet file (${err && err.message ? err.message : err}); rebuild the site`);
          }
          const part = files.length === 1 ? name : `${name}__part${i}`;
          await conn.insertArrowFromIPCStream(ipc, { name: part, create: true });
          parts.push(sqlIdent(part));
        }
        if (files.length > 1) {
          await conn.query(`CREATE TABLE ${sqlIdent(name)} AS ` + parts.map((p) => `SELECT * FROM ${p}`).join(" UNION ALL BY NAME "));
          for (const p of parts) await conn.query(`DROP TABLE ${p}`);
        }
      })();
    }
    return loaded[name];
  }
  const LIST_ALL = /\b(show\s+(all\s+)?tables|information_schema|duckdb_tables|duckdb_columns|pragma\s+show_tables)\b/i;
  async function loadTablesFor(sql) {
    const names = Object.keys(manifest.tables);
    const wanted = LIST_ALL.test(sql) ? names : names.filter((n) => new RegExp(`\\b${n}\\b`, "i").test(sql));
    await Promise.all(wanted.map(loadTable));
  }
  async function query(sql) {
    await loadTablesFor(sql);
    return conn.query(sql);
  }
  function listTables(manifest) {
    ui.tables.replaceChildren();
    const head = el("tr");
    for (const c of ["table", "rows", "files", "bytes"]) head.append(el("th", { scope: "col", text: c }));
    ui.tables.append(el("thead", {}, head));
    const body = el("tbody");
    for (const [name, t] of Object.entries(manifest.tables)) {
      const link = el("button", { type: "button", class: "link", text: name, title: `SELECT * FROM ${name} LIMIT 100` });
      link.addEventListener("click", () => {
        ui.input.value = `SELECT * FROM ${name} LIMIT 100;`;
        run();
      });
      const size = (t.files || []).map((f) => el("a", { href: "data/sql/" + f, text: f }));
      const filesCell = el("td");
      size.forEach((a, i) => filesCell.append(...(i ? [" ", a] : [a])));
      body.append(el("tr", {}, el("td", {}, link), el("td", { class: "num", text: String(t.rows) }), filesCell,
        el("td", { class: "num", text: Number(t.bytes).toLocaleString("en-US") })));
    }
    ui.tables.append(body);
  }
  async function fillExamples() {
    const values = Object.assign({}, PLACEHOLDERS);
    const first = async (sql, params) => {
      let t;
      if (params) {
        const stmt = await conn.prepare(sql);
        try { t = await stmt.query(...params); } finally { await stmt.close(); }
      } else t = await query(sql);
      return t.numRows ? rowsOf(t).rows : [];
    };
    await loadTablesFor(PICK_PAIR + PICK_RECENT + PICK_SERIES);
    let pair = await first(PICK_PAIR);
    if (pair.length) [values.base, values.new] = pair[0];
    else {
      const recent = await first(PICK_RECENT);
      if (recent.length === 2) [values.new, values.base] = [recent[0][0], recent[1][0]];
      else if (recent.length === 1) values.base = values.new = recent[0][0];
    }
    const series = await first(PICK_SERIES, [values.new]);
    if (series.length) [values.workload, values.threads, values.collation] = series[0];
    state.examples = EXAMPLES.map((e) => ({
      title: e.title,
      sql: e.sql.replace(/\{(base|new|workload|threads|collation)\}/g, (_m, k) => (k === "threads" ? String(Number(values[k])) : sqlString(values[k]))),
    }));
    ui.example.replaceChildren(el("option", { value: "", text: "choose an example…" }));
    state.examples.forEach((e, i) => ui.example.append(el("option", { value: String(i), text: e.title })));
  }

  // DuckDB-WASM repeats the error's "LINE 1: ... ^" context: show each paragraph once.
  function errorText(err) {
    const paras = String(err && err.message ? err.message : err).split(/\n\s*\n/);
    return paras.filter((p, i) => p.trim() && p !== paras[i - 1]).join("\n\n");
  }

  async function run() {
    if (!conn) return;
    const sql = ui.input.value;
    ui.error.hidden = true;
    ui.error.textContent = "";
    ui.run.disabled = true;
    ui.info.textContent = "running…";
    const t0 = performance.now();
    try {
      const table = await query(sql);
      const res = rowsOf(table);
      state.last = res;
      show(res);
      ui.csv.disabled = false;
      const ms = Math.round(performance.now() - t0);
      ui.info.textContent = `${res.rows.length.toLocaleString("en-US")} row${res.rows.length === 1 ? "" : "s"} in ${ms} ms`;
      if (state.firstResultMs == null) state.firstResultMs = performance.now();
      history.replaceState(null, "", "#q=" + encodeURIComponent(sql));
    } catch (err) {
      state.last = null;
      ui.result.replaceChildren();
      ui.csv.disabled = true;
      ui.info.textContent = "";
      ui.error.textContent = errorText(err);
      ui.error.hidden = false;
    } finally {
      ui.run.disabled = false;
      state.runs += 1;
      document.body.dataset.runs = String(state.runs);
    }
  }

  async function start() {
    setStatus("Loading DuckDB-WASM (about 40 MB the first time; then from the browser's cache)…");
    const base = document.baseURI;
    const at = (path) => new URL(path, base).href;
    const resp = await fetch(MANIFEST, { cache: "no-cache" });
    if (!resp.ok) throw new Error(`${MANIFEST}: HTTP ${resp.status}; rebuild the site with perftrack site build`);
    manifest = await resp.json();
    if (manifest.format !== MANIFEST_FORMAT) throw new Error(`${MANIFEST} has format ${manifest.format}, this page reads ${MANIFEST_FORMAT}: rebuild the site`);
    const [duckdb, pq] = await Promise.all([import(at(VENDOR.duckdb)), import(at(VENDOR.parquet))]);
    await pq.default({ module_or_path: at(VENDOR.parquetWasm) });
    parquet = pq;
    db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), new Worker(at(VENDOR.worker)));
    await db.instantiate(at(VENDOR.wasm));
    await db.open({ query: { castDecimalToDouble: true } });
    conn = await db.connect();
    // Never fetch an extension from outside the site.
    await conn.query("SET autoinstall_known_extensions = false");
    await conn.query("SET autoload_known_extensions = false");
    listTables(manifest);
    await fillExamples();
    state.readyMs = performance.now();
    const results = manifest.tables.results ? manifest.tables.results.rows : 0;
    setStatus(results ? "" : "No results yet: the tables are empty until a run is ingested and the site rebuilt.", results ? "" : "empty");
    const hash = new URLSearchParams(location.hash.slice(1)).get("q");
    ui.input.value = hash != null ? hash : state.examples[0].sql;
    ui.run.disabled = false;
    setPhase("ready");
    await run();
  }

  // ---------------------------------------------------------------- start
  footer();
  ui.run.addEventListener("click", run);
  ui.csv.addEventListener("click", download);
  ui.input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      run();
    }
  });
  ui.example.addEventListener("change", () => {
    const e = state.examples[Number(ui.example.value)];
    if (ui.example.value !== "" && e) {
      ui.input.value = e.sql;
      run();
    }
  });
  if (location.protocol === "file:") {
    ui.input.disabled = true;
    ui.example.disabled = true;
    setStatus("This page runs DuckDB in the browser, which browsers refuse for a page opened " +
      "as a file (file://). Serve the site instead: run `perftrack site serve --out DIR` and " +
      "open http://127.0.0.1:8000/sql.html, or publish it on any static web host. Every other " +
      "page works from a file.", "empty");
    setPhase("file");
    return;
  }
  start().catch((err) => {
    setStatus("DuckDB-WASM could not start: " + (err && err.message ? err.message : err), "error");
    setPhase("failed");
  });
})();
