"""The published tables as Parquet files for the SQL page (`sql.html`, DuckDB-WASM).

`site build` writes every table a reader queries into `data/sql/` as ZSTD Parquet, plus
`manifest.json` listing each table's files. The page (site/assets/sql.js) loads each
table from its files under the DB's own table name, so SQL typed on the page is the SQL
a user types in `duckdb data/results.duckdb`.

Manifest shape: `tables.NAME.files` is a list of paths relative to the manifest. Today
each table is one file exported here; once results are stored as immutable per-night
Parquet files (issue 19), the build lists those files under `results` as they are (the
page combines a table's files by column name, so nights written before a column was
added still read), and only the small, recomputed tables are exported each night.
"""

from __future__ import annotations

import json
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


def export(st: Store, site: Path) -> dict[str, Any]:
    """Write each table of TABLES as `SUBDIR/NAME.parquet` under `site`, and the manifest.

    `st` is the results DB opened read-only (store.open_db(..., write=False)); the copy
    is the store's (ZSTD Parquet, `Store.copy_to_parquet`). Returns the manifest.
    """
    out = site / SUBDIR
    out.mkdir(parents=True, exist_ok=True)
    tables: dict[str, Any] = {}
    for name, order in TABLES.items():
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
