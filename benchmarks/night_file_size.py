"""The bytes one nightly-sized night adds as its committed `results` night file.

SYNTHETIC DATA (benchmarks/synthetic_history.py: the nightly matrix × 3 runner classes,
3,960 results a night), ingested through the store as the publish job does; prints the
results night file's size, in total and per result. Run it at two commits to compare
(issue 39: before/after `tps_series` left the night files, docs/benchmarks.md).

    .venv/bin/python benchmarks/night_file_size.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import duckdb  # noqa: E402
import synthetic_history as synth  # noqa: E402

from perftrack.store.files import nightfiles  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "results.duckdb"
        synth.grow(db, synth.load_setup(365), 0, 1)
        files = [p for p in nightfiles.listed_paths(db) if ".results." in p.name]
        (n,) = duckdb.connect().execute(
            "SELECT count(*) FROM read_parquet(?)", [[str(p) for p in files]]
        ).fetchone() or (0,)
        size = sum(p.stat().st_size for p in files)
        print(f"{n} results, {size} bytes of results night files, {size / max(n, 1):.1f} B/result")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
