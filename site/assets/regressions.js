/* perftrack site: the Regressions page (regressions.html). Lists the open alerts of
 * data/regressions.js (written by `perftrack site build` from the DB's alerts table),
 * newest first as the data has them, each linking to its run detail and its history.
 *
 * Safety: every value from the data is put in the page with textContent; links are the
 * site's own pages (built by perftrack) or an annotation's https:// link, nothing else.
 */
"use strict";
// Registers with app.js (loaded after this file), which calls it with its helpers.
(window.PERFTRACK_PAGES = window.PERFTRACK_PAGES || {}).regressions = function (lib) {
  const { DATA, el, $, setStatus, ready } = lib;
  const data = DATA.regressions || { open: [], not_reproduced: [], closed: {} };
  const STATE_TEXT = { new: "new", acknowledged: "acknowledged", not_reproduced: "not reproduced" };

  // Only the site's own pages (NAME.html#…) or an https:// address become links.
  function safeHref(href) {
    if (typeof href !== "string") return null;
    if (/^(runs|history|regressions)\.html(#[^<>"\s]*)?$/.test(href)) return href;
    if (/^https:\/\/[^\s"'<>]+$/.test(href)) return href;
    return null;
  }
  function link(href, text) {
    const h = safeHref(href);
    return h ? el("a", { href: h, text }) : null;
  }
  const date = (v) => (v ? String(v).slice(0, 10) : "—");
  const ratio = (v) => (v == null ? "—" : Number(v).toFixed(3));

  // The stored explanation of the pair; without one, the settings `perftrack explain`
  // would try (the run page lists them all, the rest folded) and the command to run.
  function whyCell(r) {
    const td = el("td", { class: "why" });
    const w = r.why;
    if (!w) {
      td.textContent = "a nightly change point: see its history";
      return td;
    }
    const share = (v) => (v == null ? "—" : (v * 100).toFixed(0) + "%");
    if (w.explanations.length) {
      for (const x of w.explanations) {
        const groups = x.isolated.map((g) => `${g.settings.join(", ")} ${share(g.share)} [${share(g.share_low)}, ${share(g.share_high)}]`);
        td.append(el("p", { text: `explained on ${x.workload} · ${x.threads} thr: ${groups.length ? groups.join("; ") : "no setting isolated"}. ${x.conclusion}` }));
      }
      return td;
    }
    td.append(el("p", { text: w.tried
      ? `Not explained yet. ${w.tried} changed settings explain would try, first: ${w.try_first.join(", ")}${w.tried > w.try_first.length ? ", …" : ""} (${w.left_out} more it leaves out: versions, paths, sizes).`
      : "Not explained yet; no changed setting explain could try was stored for this run." }));
    td.append(el("pre", { class: "command", text: w.command }));
    return td;
  }

  // Both results of a verdict alert: detect's verdict it was found from and its
  // paired re-measurement (what settled it, or that none has yet).
  function evidence(r) {
    const box = el("div", { class: "evidence" });
    if (r.found) box.append(el("div", { class: "found", text: "found: " + r.found }));
    if (r.paired) box.append(el("div", { class: "paired", text: r.paired }));
    else if (r.kind === "verdict") box.append(el("div", { class: "paired", text: "not re-measured paired yet" }));
    return box;
  }

  function render() {
    const table = $("regressions-table");
    const rows = data.open || [];
    const head = el("tr");
    // what a reader acts on first, then the series (the box scrolls on a narrow screen)
    for (const label of ["state", "first reported", "change", "ratio", "why", "links", "workload",
      "threads", "collation", "profile", "runner class", "data set", "note", "found · re-measured paired"]) {
      head.append(el("th", { scope: "col", text: label }));
    }
    const body = el("tbody");
    for (const r of rows) {
      const tr = el("tr", { class: "alert state-" + r.state });
      if (/^[0-9a-f]{16}$/.test(r.id)) tr.id = "alert-" + r.id;
      const links = el("td", { class: "links" });
      const run = link(r.run_href, "run detail");
      const hist = link(r.history_href, "history");
      if (run) links.append(run);
      if (run && hist) links.append(" · ");
      if (hist) links.append(hist);
      const note = el("td", { text: r.reason || "" });
      const ext = link(r.link, "link");
      if (ext) note.append(" ", ext);
      tr.append(
        el("td", { class: "state", text: STATE_TEXT[r.state] || String(r.state) }),
        el("td", { text: date(r.first_seen) }),
        el("td", { text: r.change }),
        el("td", { class: "num", text: ratio(r.ratio) }),
        whyCell(r),
        links,
        el("td", { text: r.workload }),
        el("td", { class: "num", text: String(r.threads) }),
        el("td", { text: r.collation }),
        el("td", { text: r.profile }),
        el("td", { text: r.runner_class }),
        el("td", { text: r.dataset }),
        note,
        el("td", {}, evidence(r)),
      );
      body.append(tr);
    }
    table.replaceChildren(el("thead", {}, head), body);
    const closed = Object.entries(data.closed || {}).map(([s, n]) => `${n} ${s.replace("_", " ")}`);
    $("regressions-closed").textContent = closed.length
      ? `Closed: ${closed.join(", ")} (\`perftrack alerts --state all\` lists them).`
      : "";
    // the alerts a paired re-measurement closed: each with both results
    const gone = data.not_reproduced || [];
    $("regressions-not-reproduced").replaceChildren(...gone.map((r) => {
      const li = el("li", { class: "alert state-not_reproduced" });
      if (/^[0-9a-f]{16}$/.test(r.id)) li.id = "alert-" + r.id;
      li.append(el("strong", { text: `not reproduced: ${r.change}` }),
        ` (${r.workload}, ${r.threads} threads, ${r.collation}, ${r.runner_class} ${r.hw_key})`,
        evidence(r));
      return li;
    }));
    if (!rows.length) {
      setStatus(data.checked_at ? "No open regressions." : "No alerts yet: run `perftrack detect`, then `perftrack site build`.", "empty");
    } else {
      const n = rows.filter((r) => r.state === "new").length;
      setStatus(`${rows.length} open alert(s), ${n} new; checked ${String(data.checked_at || "").slice(0, 16).replace("T", " ")} UTC.`);
    }
    const target = location.hash.replace(/^#/, "");
    if (/^alert-[0-9a-f]{16}$/.test(target) && $(target)) $(target).classList.add("selected");
  }

  render();
  ready();
};
