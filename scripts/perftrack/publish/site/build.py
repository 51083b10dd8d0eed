"""`perftrack site build`: write the static site (pages, specs, data, vendored JS).

The output is self-contained: it opens from `file://` and from any static server, and
loads nothing from outside its own directory (each page's Content-Security-Policy says
so). Nothing in the HTML comes from the DB: pages are fixed templates, and the data files
are JSON assigned to a global, rendered by site/assets/app.js with textContent only.

The site is written to a temporary directory beside `--out` and renamed into place, so
a failed build leaves the previous site untouched and never a half-written one.
"""

from __future__ import annotations

import json
import os
import shutil
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perftrack.analysis import annotations as ann
from perftrack.core.errors import ConfigError
from perftrack.publish.site import (
    advisor,
    columns,
    export,
    histcache,
    parquet,
    regressions,
    rundetails,
    source,
)
from perftrack.publish.site import studies as study_files
from perftrack.store import store

MARKER = ".perftrack-site"  # identifies a directory this command wrote (safe to replace)
DEFAULT_OUT = Path("build/site")
# Tabular data sets (lists of rows) written as data/NAME.js (encoded). No CSV files: each
# table's "Download CSV" is made in the browser from the rows shown, and any query's (the
# whole history's) on the SQL page, from DuckDB-WASM's result (issue 39 item 3).
TABLES = (
    "verdicts",
    "headline",
    "metric_verdicts",
    "summary",
    "charset",
    "hardware_changes",
    "annotations",
    "runs",
    "cost",
    "history_cells",
)
# The history (a row per series, server and night: ~770k at 1,000 nights) is not a data
# set: the history page loads its index (`history_cells`) and one file per cell,
# data/history/hNNNNN.js (site/history.py); its rows are one query away on the SQL page
# (the example "Every night of a series"), from the results' monthly Parquet parts.


@dataclass(kw_only=True)
class BuildResult:
    out: Path
    pages: list[str] = field(default_factory=list)
    bytes_total: int = 0
    data_bytes: dict[str, int] = field(default_factory=dict)
    empty: bool = False


def _check_out(out: Path, root: Path) -> None:
    o, r = out.resolve(), root.resolve()
    if o == r or r in o.parents or o in r.parents:
        raise ConfigError(f"--out {out} overlaps the site sources {root}: choose another directory")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file: choose a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ConfigError(
            f"--out {out} is not empty and was not written by `perftrack site build`: "
            "choose another directory or empty it"
        )


def _nav(current: str) -> str:
    links = []
    for p in source.PAGES:
        if p.nav:
            cur = ' aria-current="page"' if p.name == current else ""
            links.append(f'<a href="{p.name}.html" data-page="{p.name}"{cur}>{p.title}</a>')
    return "\n      ".join(links)


def _scripts(page: source.Page, study: str | None) -> str:
    srcs = []
    if page.specs or page.vega:
        srcs += [f"vendor/{v}" for v in source.VENDOR_FILES]
        srcs += [f"specs/{s}.js" for s in page.specs]
    srcs += [f"data/{d}.js" for d in page.data]
    srcs += [*page.before, page.script]
    return "\n  ".join(f'<script src="{s}"></script>' for s in srcs)


def _render(root: Path, page: source.Page, study: str | None = None) -> str:
    layout = string.Template((root / "templates" / "page.html").read_text(encoding="utf-8"))
    body = (root / "templates" / f"{page.name}.html").read_text(encoding="utf-8")
    return layout.substitute(
        title=page.title,
        csp=page.csp,
        page=page.name,
        study=study or "",
        nav=_nav("studies" if study else page.name),
        body=body,
        scripts=_scripts(page, study),
    )


def build(
    db: Path,
    out: Path = DEFAULT_OUT,
    *,
    annotations_path: Path | None = None,
    studies_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> BuildResult:
    say = progress or (lambda _m: None)
    root = source.site_dir()
    source.verify_vendor(root)
    _check_out(out, root)
    notes = ann.read_annotations(annotations_path) if annotations_path else []
    studies = study_files.load_all(studies_dir)
    tmp = out.parent / f".{out.name}.building-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    # The site this build replaces: files that did not change are taken from it (run
    # detail files, monthly results parts, the history's monthly aggregates and closed
    # rows), so a night's build does not redo the history.
    previous = out if (out / MARKER).is_file() else None
    try:
        # one snapshot for the charts and the SQL; the store writes the parts beside --out
        with store.open_db(db, write=False, allow=[out.parent]) as st:
            sql_files = parquet.start(st, tmp, previous)  # its results parts: meanwhile
            try:
                cache = histcache.HistoryCache(tmp, previous)
                data = export.export(st, notes, _kept_runs(previous), cache)
                counts = st.cell_counts(study_files.servers(studies))
                data.studies = [study_files.page_data(s, st, counts) for s in studies]
                advice = advisor.page_data(st)
                alerts = regressions.page_data(st)
                sql_files.finish(cache.part_paths())
            finally:
                sql_files.wait()  # never close the store under the parts' thread
            data.history = None  # the store's table: gone with the connection
        say(
            f"exported {len(data.verdicts)} verdicts, {len(data.summary)} summary rows, "
            f"{data.history_rows} history points, {len(data.runs)} runs"
        )
        result = _write(tmp, root, data, studies, advice, alerts, previous)
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        if out.exists():
            out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    result.out = out
    return result


def _write(
    tmp: Path,
    root: Path,
    data: export.SiteData,
    studies: list[study_files.StudyPage],
    advice: dict[str, Any],
    alerts: dict[str, Any],
    previous: Path | None = None,
) -> BuildResult:
    res = BuildResult(out=tmp, empty=bool(data.meta.get("empty")))
    shutil.copytree(root / "assets", tmp / "assets")
    (tmp / "vendor").mkdir()
    for name in (*source.VENDOR_FILES, *source.SQL_VENDOR_FILES, "SHA256SUMS", "VERSIONS"):
        shutil.copy2(root / "vendor" / name, tmp / "vendor" / name)
    for lic in (root / "vendor").glob("LICENSE-*"):
        shutil.copy2(lic, tmp / "vendor" / lic.name)
    (tmp / "specs").mkdir()
    for chart in source.CHARTS:
        spec = source.spec(root, chart)
        (tmp / "specs" / f"{chart}{source.SPEC_SUFFIX}").write_text(
            json.dumps(spec, indent=1) + "\n", encoding="utf-8"
        )
        js = f"(window.PERFTRACK_SPECS=window.PERFTRACK_SPECS||{{}})[{columns.script_json(chart)}]"
        (tmp / "specs" / f"{chart}.js").write_text(
            f"{js}={columns.script_json(spec)};\n", encoding="ascii"
        )
    data_dir = tmp / "data"
    sets: dict[str, Any] = {name: getattr(data, name) for name in TABLES}
    sets["change_points"] = data.change_points
    study_sets = data.studies
    res.data_bytes["meta"] = columns.write_data_file(data_dir / "meta.js", "meta", data.meta)
    res.data_bytes["studies"] = columns.write_data_file(
        data_dir / "studies.js", "studies", study_sets
    )
    res.data_bytes["advisor"] = columns.write_data_file(data_dir / "advisor.js", "advisor", advice)
    res.data_bytes["regressions"] = columns.write_data_file(
        data_dir / "regressions.js", "regressions", alerts
    )
    (tmp / regressions.FEED).write_bytes(regressions.feed(alerts))
    for name, rows in sets.items():
        res.data_bytes[name] = columns.write_data_file(
            data_dir / f"{name}.js", name, columns.encode(rows)
        )
    for key, cell in data.history_files.items():
        columns.write_data_text(data_dir / "history" / f"{key}.js", f"history:{key}", cell)
    for key, detail in data.run_details.items():
        columns.write_data_file(
            data_dir / "runs" / f"{key}.js", f"run:{key}", rundetails.encoded(detail)
        )
    for key in data.reused_runs:  # _kept_runs checked that the previous build has it
        assert previous is not None
        parquet.reuse(previous / "data" / "runs" / f"{key}.js", data_dir / "runs" / f"{key}.js")
    for page in source.PAGES:
        (tmp / f"{page.name}.html").write_text(_render(root, page), encoding="utf-8")
        res.pages.append(f"{page.name}.html")
    for s in studies:
        name = f"study-{s.name}.html"
        (tmp / name).write_text(_render(root, source.STUDY_PAGE, s.name), encoding="utf-8")
        res.pages.append(name)
    (tmp / MARKER).write_text(
        json.dumps({"generated_at": data.meta["generated_at"], "runs": data.run_fingerprints})
        + "\n",
        encoding="utf-8",
    )
    res.bytes_total = sum(p.stat().st_size for p in tmp.rglob("*") if p.is_file())
    return res


def _kept_runs(previous: Path | None) -> dict[str, list[str]]:
    """run_id -> [file, fingerprint] of the run detail files the previous build wrote
    and still has (its marker lists them); {} without a previous build."""
    if previous is None:
        return {}
    try:
        runs = json.loads((previous / MARKER).read_text(encoding="utf-8")).get("runs") or {}
    except (OSError, ValueError, AttributeError):
        return {}
    if not isinstance(runs, dict):
        return {}
    return {
        str(rid): [str(v[0]), str(v[1])]
        for rid, v in runs.items()
        if isinstance(v, list)
        and len(v) == 2
        and (previous / "data" / "runs" / f"{v[0]}.js").is_file()
    }


def page_bytes(site: Path, page: str) -> int:
    """Bytes a browser loads for one page of a built site: the HTML and what it references."""
    import re

    html = (site / f"{page}.html").read_text(encoding="utf-8")
    refs: list[str] = re.findall(r'(?:src|href)="([^"#?:]+\.(?:js|css))"', html)
    return len(html.encode()) + sum((site / r).stat().st_size for r in set(refs))
