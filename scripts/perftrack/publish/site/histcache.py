"""What the history page's data keeps from one `site build` to the next (in the built site).

Every night adds a run to every cell, but no past run's aggregate and no past month's
points change. So the build keeps, under `data/history/`:

- `parts/YYYYMM.parquet`: the history's aggregate (per result series, server and run:
  the medians, `HistoryQueries.history_part`) of the results night files whose first
  result is of that month (UTC; the months of each file as the SQL page's parts know
  them, publish/site/parquet.py `results_months`): a night's run is in one file, so in
  one part, even across midnight at a month's end (parts by the month of each result
  would cut such runs in two; a run ingested in two files of two parts is aggregated
  again from those parts' files, store/queries/history.py). A part's digest is the
  sha256 of the cache's format, the schema version, the metrics, the servers' night
  files and its own night files: a part whose digest is unchanged is taken from the
  previous build, the others (the open month, each night) are aggregated again. The
  labels, version order and run times are joined after (store/queries/history.py),
  never cached.
- `pHEX.js`: a cell's closed rows (the runs before the open month), named by the digest
  of what they are made of (`past_name`: the closed parts' digests and the cell's own
  inputs, publish/site/history.py `_past_names`), written once a month, taken from the
  previous build the other nights. The cell's `hNNNNN.js` has the open month's rows.
- `closed.json`: what the cells' index takes of the closed rows (`closed_state`): their
  lines (series and server) and each cell's nights, first and last time, charset and
  metrics, under the digest of the closed parts and runs (and per cell, of its series'
  labels), so a night's build reads and labels the open month's rows only; the closed
  ones are read again (from the parts) for the cells whose closed file is made.
- `cache.json`: the manifest (`format`; per part its digest and sha256; per closed file
  its sha256). A previous file is taken (hard-linked, else copied) only when its digest
  is the one wanted and its bytes still have the sha256 the manifest recorded: a
  missing, hand-edited or unlisted file is made again. A previous build without the
  manifest (older code) or with another format: everything is made again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from perftrack.core.files import sha256_file
from perftrack.publish.site import columns, parquet
from perftrack.store.store import Store

SUBDIR = "data/history"  # in the built site
PARTS = "parts"
MANIFEST = "cache.json"
CLOSED = "closed.json"
FORMAT = 2  # bump when a part's or a closed file's content changes for the same inputs
# (2: closed rows over a year old are weekly, store/queries/histtable.py WEEKLY_AFTER_DAYS)
PAST_PREFIX = "p"
PAST_HEX = 20  # hex digits of the digest in a closed file's name


class HistoryCache:
    """One build's cache: `site` the site being written, `previous` the one it replaces."""

    def __init__(self, site: Path, previous: Path | None) -> None:
        self.site = site
        self.dir = site / SUBDIR
        self.previous = previous
        self.old_dir = previous / SUBDIR if previous is not None else None
        self.old = _read_manifest(self.old_dir)
        self.parts: dict[str, dict[str, str]] = {}
        self.past: dict[str, str] = {}
        self.closed = ""  # the digest of every part but the last (the open month)
        self.old_closed = _read_json(self.old_dir / CLOSED) if self.old_dir else {}
        self.closed_out: dict[str, Any] | None = None
        self.reused: list[str] = []  # files taken from the previous build (relative)

    # --- the aggregate ------------------------------------------------------------

    def aggregate(self, results: Store, metrics: Sequence[str]) -> list[tuple[Path, list[str]]]:
        """The history's aggregate parts, oldest first, each with its night files: taken
        from the previous build or made (`Store.history_part`). Empty when the DB has no
        results night file."""
        _, old_months = parquet.previous_parts(self.previous)
        files, _, file_months = parquet.results_months(results, old_months)
        months: dict[str, parquet.Files] = {}
        for f in files:  # by the first month of the file's results (none: no part)
            if file_months.get(f[0]):
                months.setdefault(file_months[f[0]][0], []).append(f)
        servers = [sha for _, sha, _ in results.table_files("servers")]
        (self.dir / PARTS).mkdir(parents=True, exist_ok=True)
        out: list[tuple[Path, list[str]]] = []
        digests: list[str] = []
        for month, files in sorted(months.items()):
            name = f"{PARTS}/{month}.parquet"
            digest = self.digest(
                "\n".join(
                    [str(FORMAT), str(results.schema_version), *metrics, "", *servers, ""]
                    + [f"{path} {sha}" for path, sha, _ in files]
                )
            )
            path = self.dir / name
            old = self.old["parts"].get(name) or {}
            night = [p for p, _, _ in files]
            if old.get("digest") == digest and self._take(name, old.get("sha256")):
                sha = str(old["sha256"])  # the bytes _take checked (and linked)
            else:
                results.history_part(night, metrics, path)
                sha = sha256_file(path)
            self.parts[name] = {"digest": digest, "sha256": sha}
            out.append((path, night))
            digests.append(digest)
        self.closed = self.digest("\n".join(digests[:-1]))
        return out

    def part_paths(self) -> list[Path]:
        """The aggregate's parts this build has (oldest first): the SQL page's `nightly`."""
        return [self.dir / name for name in sorted(self.parts)]

    # --- the cells' closed rows ---------------------------------------------------

    @staticmethod
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def past_name(self, payload: str) -> str:
        """The name of a cell's closed rows' file: the digest of the closed parts and
        `payload` (what else the rows are made of)."""
        return PAST_PREFIX + self.digest(f"{FORMAT}\n{self.closed}\n{payload}")[:PAST_HEX]

    def reuse_past(self, name: str) -> bool:
        """Take the closed file `name` from the previous build if it is there unchanged."""
        if name in self.past:
            return True
        if not self._take(f"{name}.js", self.old["past"].get(name)):
            return False
        self.past[name] = str(self.old["past"][name])
        return True

    def write_past(self, name: str, json_text: str) -> None:
        """Write the closed file `name` (its data: `json_text`, in `script_json` form)."""
        path = self.dir / f"{name}.js"
        columns.write_data_text(path, f"history:{name}", json_text)
        self.past[name] = sha256_file(path)

    # --- what the index takes of the closed rows ------------------------------------

    def closed_state(self, runs: str) -> dict[str, Any] | None:
        """The previous build's `closed.json` ({"lines": [...], "cells": {digest:
        summary}}) if it is of the same closed rows: the same closed parts and `runs`
        (the digest of the closed runs, with their time and hardware)."""
        old = self.old_closed
        if old.get("key") != self._closed_key(runs):
            return None
        if not isinstance(old.get("lines"), list) or not isinstance(old.get("cells"), dict):
            return None
        return old

    def keep_closed(self, runs: str, lines: list[Any], cells: dict[str, Any]) -> None:
        """What `finish` writes to `closed.json` (see `closed_state`)."""
        self.closed_out = {"key": self._closed_key(runs), "lines": lines, "cells": cells}

    def _closed_key(self, runs: str) -> str:
        return self.digest(f"{FORMAT}\n{self.closed}\n{runs}")

    def finish(self) -> None:
        """Write the manifest and `closed.json` (sorted: the same inputs give the same
        bytes)."""
        manifest = {"format": FORMAT, "parts": self.parts, "past": self.past}
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / MANIFEST).write_text(
            json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        if self.closed_out is not None:
            (self.dir / CLOSED).write_text(
                json.dumps(self.closed_out, sort_keys=True, separators=(",", ":")) + "\n",
                encoding="utf-8",
            )

    def _take(self, name: str, sha: Any) -> bool:
        """Hard-link the previous build's file `name` if its bytes have sha256 `sha`."""
        if self.old_dir is None or not isinstance(sha, str):
            return False
        old = self.old_dir / name
        if not old.is_file() or sha256_file(old) != sha:
            return False
        new = self.dir / name
        new.unlink(missing_ok=True)
        if parquet.reuse(old, new):
            self.reused.append(name)
            return True
        return False


def _read_manifest(where: Path | None) -> dict[str, dict[str, Any]]:
    """{"parts": {name: {"digest", "sha256"}}, "past": {name: sha256}} of a previous
    build; empty parts if there is none, or it is unreadable or of another format."""
    empty: dict[str, dict[str, Any]] = {"parts": {}, "past": {}}
    if where is None:
        return empty
    try:
        manifest = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            return empty
        parts, past = manifest.get("parts"), manifest.get("past")
        if not isinstance(parts, dict) or not isinstance(past, dict):
            return empty
        return {
            "parts": {str(k): v for k, v in parts.items() if isinstance(v, dict)},
            "past": {str(k): v for k, v in past.items() if isinstance(v, str)},
        }
    except (OSError, ValueError):
        return empty


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object from `path`; empty if there is none or it is unreadable."""
    try:
        got = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return got if isinstance(got, dict) else {}
