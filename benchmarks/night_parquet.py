"""What one night of results would cost git as an immutable Parquet file (docs/schema.md).

SYNTHETIC DATA (benchmarks/synthetic_history.py: the nightly matrix × 3 runner classes).
The alternative layout to committing the DuckDB file every night is one compressed
Parquet file per night that never changes again: then a night costs the pack exactly its
own file. This grows a few nights into a temporary DB through the store, exports the
`results` rows as ZSTD Parquet, and prints bytes per result and per night, and which
columns weigh most.

    .venv/bin/python benchmarks/night_parquet.py --nights 3
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import duckdb  # noqa: E402
import synthetic_history as synth  # noqa: E402


def measure(nights: int, work: Path) -> dict[str, object]:
    db = work / "results.duckdb"
    synth.grow(db, synth.load_setup(365), 0, nights)
    con = duckdb.connect(str(db), read_only=True)
    try:
        (n,) = con.execute("SELECT count(*) FROM results").fetchone() or (0,)
        out = work / "nights.parquet"
        con.execute(
            f"COPY (SELECT * FROM results ORDER BY started_at) TO '{out}' "
            "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 19)"
        )
        total = out.stat().st_size
        info = con.execute("SELECT name FROM pragma_table_info('results')").fetchall()
        columns = [c for (c,) in info]
        weights = {}
        for c in columns:
            one = work / "column.parquet"
            con.execute(
                f"COPY (SELECT \"{c}\" FROM results ORDER BY started_at) TO '{one}' "
                "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 19)"
            )
            weights[c] = round(one.stat().st_size / n, 1)
    finally:
        con.close()
    top = dict(sorted(weights.items(), key=lambda kv: -kv[1])[:6])
    return {
        "nights": nights,
        "results": n,
        "bytes_per_result": round(total / n, 1),
        "kb_per_night": round(total / nights / 1e3, 1),
        "heaviest_columns_bytes_per_result": top,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="perftrack-night-parquet-") as tmp:
        print(json.dumps(measure(a.nights, Path(tmp))))


if __name__ == "__main__":
    main()
