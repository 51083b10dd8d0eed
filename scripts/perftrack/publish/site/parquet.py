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
file, as a file is never rewritten), and `part_sha256` (per file, the sha256 of its bytes:
a previous part whose bytes differ — truncated, edited — stops the build with one line
naming it, before anything is replaced). The page combines a table's files by column name.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from perftrack.core.errors import ConfigError
from perftrack.core.files import sha256_file
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
# The months of `results` the page ships, newest first: every repeat of the open month and
# the one before it. At the nightly's size a month of repeats is ~9 MB of Parquet, so
# ten years of them would be over a GB, past what GitHub Pages serves (issue 39).
# Every night before them is in NIGHTLY (the repeats' medians, the history page's
# points); every repeat stays in the repository's DB and the records archive.
RESULTS_MONTHS = 2
# The history's aggregate (per series, server and run: the medians of the night's
# repeats), the history cache's monthly parts (histcache.py), listed as a table too.
NIGHTLY = "nightly"


def start(results: Store, site: Path, previous: Path | None = None) -> Export:
    """Begin writing each table of TABLES under `site`/SUBDIR (results: one file per
    month); parts whose night files did not change are taken from `previous` (the site
    this build replaces), if given. The results' parts to write again (the open month's,
    each night: the largest single write of a build, ~0.6 s at 1,000 nights) are written
    by a thread on a connection of their own while the caller goes on; `Export.finish`
    writes the other tables and the manifest.

    `results` is the results DB opened read-only (store.open_db(..., write=False)); the copy
    is the store's (ZSTD Parquet, `Store.copy_to_parquet`)."""
    out = site / SUBDIR
    out.mkdir(parents=True, exist_ok=True)
    entry, todo = _plan_parts(results, out, previous)
    return Export(results, out, entry, todo)


class Export:
    """The SQL page's files being written (`start`)."""

    def __init__(
        self,
        results: Store,
        out: Path,
        entry: dict[str, Any],
        todo: list[tuple[str, list[str], str]],
    ) -> None:
        self._st, self._out, self._entry = results, out, entry
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if todo:
            con = results.side_connection()
            self._thread = threading.Thread(target=self._parts, args=(con, todo), daemon=True)
            self._thread.start()

    def _parts(self, con: Any, todo: list[tuple[str, list[str], str]]) -> None:
        try:
            for name, files, month in todo:
                self._entry["part_rows"][name] = self._st.copy_to_parquet(
                    PARTED, TABLES[PARTED], self._out / name, files, (MONTH_OF, month), con
                )
        except BaseException as exc:  # raised in the caller's thread, by finish()
            self._error = exc
        finally:
            con.close()

    def wait(self) -> None:
        """Until the parts are written (or failed): before the store is closed."""
        if self._thread is not None:
            self._thread.join()

    def finish(self, nightly: Sequence[Path] = ()) -> dict[str, Any]:
        """Write the other tables, wait for the parts, write the manifest; return it.
        `nightly`: the history's aggregate parts (in the site being written), listed as
        the table NIGHTLY (none: no such table)."""
        tables: dict[str, Any] = {}
        for name, order in TABLES.items():
            if name == PARTED:
                continue
            path = self._out / f"{name}.parquet"
            rows = self._st.copy_to_parquet(name, order, path)
            tables[name] = {"files": [path.name], "rows": rows, "bytes": path.stat().st_size}
        self.wait()
        if self._error is not None:
            raise self._error
        entry = self._entry
        entry["rows"] = sum(entry["part_rows"][f] for f in entry["files"])
        entry["bytes"] = sum((self._out / f).stat().st_size for f in entry["files"])
        entry["part_sha256"] = {f: sha256_file(self._out / f) for f in entry["files"]}
        listed = {name: entry if name == PARTED else tables[name] for name in TABLES}
        if nightly:
            listed[NIGHTLY] = {
                "files": [os.path.relpath(p, self._out) for p in nightly],
                "rows": self._st.parquet_rows([str(p) for p in nightly]),
                "bytes": sum(p.stat().st_size for p in nightly),
            }
        manifest = {
            "format": MANIFEST_FORMAT,
            "schema_version": self._st.schema_version,
            "results_months": RESULTS_MONTHS,
            "tables": listed,
        }
        text = json.dumps(manifest, indent=1) + "\n"
        (self._out / MANIFEST).write_text(text, encoding="utf-8")
        return manifest


Files = list[tuple[str, str, int]]  # (path, sha256, rows) of night files (`table_files`)


def results_months(
    results: Store, old_months: dict[str, tuple[str, list[str]]]
) -> tuple[Files, dict[str, Files], dict[str, list[str]]]:
    """(every results night file, {month: the files with results of it}, {file: its
    months}): a file's months read once, then taken from `old_months` (the second half
    of `previous_parts`: the previous build's manifest; a file is never rewritten).
    With files but no result yet: one month, of the first file's name, with every file
    (so an empty part exists)."""
    files = results.table_files(PARTED)
    file_months: dict[str, list[str]] = {}  # night file -> its months, known once per sha256
    months: dict[str, Files] = {}
    for f in files:
        path, sha, _rows = f
        known = old_months.get(path)
        got = known[1] if known and known[0] == sha else results.file_months(PARTED, path, MONTH_OF)
        file_months[path] = got
        for m in got:
            months.setdefault(m, []).append(f)
    if files and not months:  # no result yet: one empty part, so the table and its
        months[Path(files[0][0]).name[:6]] = files  # columns exist on the page
    return files, months, file_months


def _plan_parts(
    results: Store, out: Path, previous: Path | None
) -> tuple[dict[str, Any], list[tuple[str, list[str], str]]]:
    """The results' manifest entry, with the parts whose night files did not change
    taken from `previous`; and (part, its night files, month) of each part to write."""
    old_parts, old_months = previous_parts(previous)
    files, months, file_months = results_months(results, old_months)
    entry: dict[str, Any] = {"files": [], "rows": 0, "bytes": 0, "parts": {}, "part_rows": {}}
    old_shas = previous_shas(previous)
    todo: list[tuple[str, list[str], str]] = []
    for month, month_files in sorted(months.items())[-RESULTS_MONTHS:]:
        name = f"{PARTED}-{month}.parquet"
        digest = hashlib.sha256(
            "\n".join(
                [str(results.schema_version), MONTH_OF, *(sha for _, sha, _ in month_files)]
            ).encode()
        ).hexdigest()
        old_digest, old_rows = old_parts.get(name, (None, None))
        rows = None
        if old_digest == digest and old_rows is not None and previous is not None:
            _check_intact(previous / SUBDIR / name, old_shas.get(name))
            rows = old_rows if reuse(previous / SUBDIR / name, out / name) else None
        if rows is None:
            todo.append((name, [p for p, _, _ in month_files], month))
        entry["files"].append(name)
        entry["parts"][name] = digest
        entry["part_rows"][name] = rows
    entry["night_files"] = {
        path: {"sha256": sha, "months": file_months[path]} for path, sha, _ in files
    }
    return entry, todo


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


def previous_shas(previous: Path | None) -> dict[str, str]:
    """{part file: sha256} the previous build's manifest records ({} if none)."""
    if previous is None:
        return {}
    try:
        manifest = json.loads((previous / SUBDIR / MANIFEST).read_text(encoding="utf-8"))
        shas = manifest["tables"][PARTED].get("part_sha256", {})
        return {str(k): str(v) for k, v in shas.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _check_intact(path: Path, sha: str | None) -> None:
    """Refuse to take a previous build's part whose bytes are not what its manifest
    recorded (or, without a recorded sha256, not a whole Parquet file)."""
    if not path.is_file():
        return  # missing: written again
    if sha is not None:
        ok = sha256_file(path) == sha
    else:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(4)
            f.seek(max(size - 4, 0))
            ok = size >= 12 and head == b"PAR1" and f.read(4) == b"PAR1"
    if not ok:
        raise ConfigError(
            f"{path} is damaged (not the Parquet part the previous build wrote): "
            "delete it, or the whole site directory, and build again"
        )


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
