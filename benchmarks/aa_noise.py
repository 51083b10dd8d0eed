"""A/A noise of this machine: spread of tps across repeats of the same cell.

Reads real results from a perftrack DB (default data/results.duckdb, e.g. after
`make demo`): for every series (hardware × server × workload × threads × collation ×
dataset) with >= 5 ok repeats, the coefficient of variation of tps across the repeats and
the max/min ratio; then per workload the median and the worst CV over its series.

    .venv/bin/python benchmarks/aa_noise.py [--db data/results.duckdb] [--run RUN_ID]
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path

from perftrack.analysis import stats
from perftrack.store import store

MIN_REPEATS = 5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, default=Path("data/results.duckdb"))
    ap.add_argument("--run", default=None)
    a = ap.parse_args()
    sql = """SELECT ru.hw_key, s.server_id, r.workload, r.threads, r.collation,
                    r.tables, r.table_size, r.duration_s, r.tps
             FROM results r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
             WHERE r.status = 'ok'""" + (" AND r.run_id = ?" if a.run else "")
    with store.open_db(a.db, write=False) as st:
        rows = st.con.execute(sql, [a.run] if a.run else []).fetchall()
    series: dict[tuple, list[float]] = defaultdict(list)
    for *key, tps in rows:
        series[tuple(key)].append(float(tps))
    per_workload: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for key, vals in series.items():
        if len(vals) >= MIN_REPEATS:
            per_workload[key[2]].append((stats.cv(vals) or 0.0, max(vals) / min(vals)))
    print("| workload | series | repeats each | median CV | worst CV | median max/min |")
    print("|---|---|---|---|---|---|")
    for wl, items in sorted(per_workload.items()):
        cvs = [c for c, _ in items]
        spread = [s for _, s in items]
        n = statistics.median(len(v) for k, v in series.items() if k[2] == wl)
        print(
            f"| {wl} | {len(items)} | {n:.0f} | {statistics.median(cvs):.1%} | "
            f"{max(cvs):.1%} | {statistics.median(spread):.2f} |"
        )


if __name__ == "__main__":
    main()
