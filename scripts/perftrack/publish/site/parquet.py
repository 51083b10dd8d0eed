"""The published tables as Parquet files for the SQL page (`sql.html`, DuckDB-WASM).

`site build` writes every table a reader queries into `data/sql/` as ZSTD Parquet, plus
`manifest.json` listing each table's files. The page (site/assets/sql.js) loads each
table from its files under the DB's own table name, so SQL typed on the page is the SQL
a user types in `duckdb data/results.duckdb`.

Manifest shape: `tables.NAME.files` is a list of paths relative to the manifest. Each
small, recomputed table is one file exported at every build. `results`, the table that
grows every night, is one file per month of its results (`results-YYYYMM.parquet`, the
UTC month of `started_at`): a month's part is written again only when the night files
holding its results changed (the current month, each night), otherwise taken from the
previous build (`previous`), so a build costs the same after ten years as after one.
Its entry also has `parts` (per file, the sha256 of the schema version, the partitioning
and its night files' sha256s: what the next build compares), `part_rows` (per file) and
`night_files` (per night file, its sha256 and the months of its results: read once per
file, as a file is never rewritten). The page combines a table's files by column name.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from perftrack.store.store import Store

SUBDIR = "data/sql"  # in the built site
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1  # bump when the manifest's shape changes (sql.js checks it)

# Table -> the ORDER BY that makes its file deterministic and compress well (a table's
# key, results by time). Every table of the results DB a reader may ask about.
TABLES: dict[str, str] = {
    "results": "started_at, record_id",
    "runs": "run_id",
    "servers": "server_key",
    "server_variables": "varset_hash, name",
    "hardware": "hw_key",
    "noise": "runner_class, hw_key, workload, metric",
    "verdicts": "verdict_id",
    "change_points": "series_key, run_id",
    "alerts": "alert_id, metric",
    "schema_version": "version",
}


PARTED = "results"  # the table written as one file per month of its results
MONTH_OF = "started_at"  # …the month (UTC) of this column


def export(st: Store, site: Path, previous: Path | None = None) -> dict[str, Any]:
    """Write each table of TABLES under `site`/SUBDIR (results: one file per month), and
    the manifest; parts whose night files did not change are taken from `previous` (the
    site this build replaces), if given.

    `st` is the results DB opened read-only (store.open_db(..., write=False)); the copy
    is the store's (ZSTD Parquet, `Store.copy_to_parquet`). Returns the manifest.
    """
    out = site / SUBDIR
    out.mkdir(parents=True, exist_ok=True)
    tables: dict[str, Any] = {}
    for name, order in TABLES.items():
        if name == PARTED:
            tables[name] = _export_parts(st, out, order, previous)
            continue
        path = out / f"{name}.parquet"
        rows = st.copy_to_parquet(name, order, path)
        tables[name] = {"files": [path.name], "rows": rows, "bytes": path.stat().st_size}
    manifest = {
        "format": MANIFEST_FORMAT,
        "schema_version": st.schema_version,
        "tables": tables,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


Files = list[tuple[str, str, int]]  # (path, sha256, rows) of night files (`table_files`)


def results_months(
    st: Store, old_months: dict[str, tuple[str, list[str]]]
) -> tuple[Files, dict[str, Files], dict[str, list[str]]]:
    """(every results night file, {month: the files with results of it}, {file: its
    months}): a file's months read once, then taken from `old_months` (the second half
    of `previous_parts`: the previous build's manifest; a file is never rewritten).
    With files but no result yet: one month, of the first file's name, with every file
    (so an empty part exists)."""
    files = st.table_files(PARTED)
    file_months: dict[str, list[str]] = {}  # night file -> its months, known once per sha256
    months: dict[str, Files] = {}
    for f in files:
        path, sha, _rows = f
        known = old_months.get(path)
        got = known[1] if known and known[0] == sha else st.file_months(PARTED, path, MONTH_OF)
        file_months[path] = got
        for m in got:
            months.setdefault(m, []).append(f)
    if files and not months:  # no result yet: one empty part, so the table and its
        months[Path(files[0][0]).name[:6]] = files  # columns exist on the page
    return files, months, file_months


def _export_parts(st: Store, out: Path, order: str, previous: Path | None) -> dict[str, Any]:
    old_parts, old_months = previous_parts(previous)
    files, months, file_months = results_months(st, old_months)
    entry: dict[str, Any] = {"files": [], "rows": 0, "bytes": 0, "parts": {}, "part_rows": {}}
    for month, month_files in sorted(months.items()):
        name = f"{PARTED}-{month}.parquet"
        digest = hashlib.sha256(
            "\n".join(
                [str(st.schema_version), MONTH_OF, *(sha for _, sha, _ in month_files)]
            ).encode()
        ).hexdigest()
        path = out / name
        old_digest, old_rows = old_parts.get(name, (None, None))
        rows = None
        if old_digest == digest and old_rows is not None and previous is not None:
            rows = old_rows if reuse(previous / SUBDIR / name, path) else None
        if rows is None:
            rows = st.copy_to_parquet(
                PARTED, order, path, files=[p for p, _, _ in month_files], month=(MONTH_OF, month)
            )
        entry["files"].append(name)
        entry["rows"] += rows
        entry["bytes"] += path.stat().st_size
        entry["parts"][name] = digest
        entry["part_rows"][name] = rows
    entry["night_files"] = {
        path: {"sha256": sha, "months": file_months[path]} for path, sha, _ in files
    }
    return entry


def previous_parts(
    previous: Path | None,
) -> tuple[dict[str, tuple[str, int | None]], dict[str, tuple[str, list[str]]]]:
    """({part file: (digest, rows)}, {night file: (sha256, months)}) of the previous
    build's results parts, from its manifest read once; empty if there is none (or it has
    another manifest format)."""
    if previous is None:
        return {}, {}
    try:
        manifest = json.loads((previous / SUBDIR / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("format") != MANIFEST_FORMAT:
            return {}, {}
        entry = manifest["tables"][PARTED]
        counts = entry.get("part_rows", {})
        parts = {
            str(k): (str(v), int(counts[k]) if k in counts else None)
            for k, v in entry.get("parts", {}).items()
        }
        nights = {
            str(k): (str(v["sha256"]), [str(m) for m in v["months"]])
            for k, v in entry.get("night_files", {}).items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}, {}
    return parts, nights


def reuse(old: Path, new: Path) -> bool:
    """Hard-link (else copy) a previous build's file; False if it is not there."""
    if not old.is_file():
        return False
    new.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(old, new)
    except OSError:
        shutil.copy2(old, new)
    return True
