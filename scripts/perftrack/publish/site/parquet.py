"""The published tables as Parquet files for the SQL page (`sql.html`, DuckDB-WASM).

`site build` writes every table a reader queries into `data/sql/` as ZSTD Parquet, plus
`manifest.json` listing each table's files. The page (site/assets/sql.js) loads each
table from its files under the DB's own table name, so SQL typed on the page is the SQL
a user types in `duckdb data/results.duckdb`.

Manifest shape: `tables.NAME.files` is a list of paths relative to the manifest. Each
small, recomputed table is one file exported at every build. `results`, the table that
grows every night, is one file per month of night files (`results-YYYYMM.parquet`, the
month of the night file's name): a month's part is written again only when its night
files changed (the current month, each night), otherwise taken from the previous build
(`previous`), so a build costs the same after ten years as after one. Its entry also has
`parts`: per file, the sha256 of its night files' sha256s (what the next build compares).
The page combines a table's files by column name.
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


PARTED = "results"  # the table written as one file per month of its night files


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


def _export_parts(st: Store, out: Path, order: str, previous: Path | None) -> dict[str, Any]:
    months: dict[str, list[tuple[str, str, int]]] = {}
    for f in st.table_files(PARTED):
        months.setdefault(Path(f[0]).name[:6], []).append(f)
    old = _previous_parts(previous)
    entry: dict[str, Any] = {"files": [], "rows": 0, "bytes": 0, "parts": {}}
    for month, files in sorted(months.items()):
        name = f"{PARTED}-{month}.parquet"
        digest = hashlib.sha256(
            "\n".join([str(st.schema_version), *(sha for _, sha, _ in files)]).encode()
        ).hexdigest()
        path = out / name
        if (
            old.get(name) == digest
            and previous is not None
            and reuse(previous / SUBDIR / name, path)
        ):
            rows = sum(n for _, _, n in files)
        else:
            rows = st.copy_to_parquet(PARTED, order, path, files=[p for p, _, _ in files])
        entry["files"].append(name)
        entry["rows"] += rows
        entry["bytes"] += path.stat().st_size
        entry["parts"][name] = digest
    return entry


def _previous_parts(previous: Path | None) -> dict[str, str]:
    """{file: digest} of the previous build's results parts; {} if there is none."""
    if previous is None:
        return {}
    try:
        manifest = json.loads((previous / SUBDIR / MANIFEST).read_text(encoding="utf-8"))
        parts = manifest["tables"][PARTED].get("parts", {})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    return {str(k): str(v) for k, v in parts.items()} if isinstance(parts, dict) else {}


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
