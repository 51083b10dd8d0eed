"""Datasets prepared once: wall time of the same run with `prepare` in every group vs a
template datadir prepared once per server x options and copied for every group.

Real servers and sysbench (MariaDB 10.11.18 from the catalog); the two variants run
alternately (A B A B) so drift on the machine hits both alike; prints each wall time and
the ratio of the medians.

    .venv/bin/python benchmarks/dataset_templates.py [--tables 4] [--table-size 50000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from perftrack.core import paths
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.servers import catalog


def one_run(m: matrix.Matrix, reuse: bool, out: Path) -> float:
    cat = catalog.read_catalog()
    rd = runner.create(m, cat, out, "benchmark")
    t0 = time.monotonic()
    s = runner.Runner(
        rd=rd, catalog=cat, config_dir=paths.config_dir(), emit=lambda _: None, reuse_datasets=reuse
    ).run()
    elapsed = time.monotonic() - t0
    if s.failed or s.ok != len(rd.cells()):
        raise SystemExit(f"run {rd.run_id}: {s.failed} failed cells: {s.final_failed[:1]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default="mariadb-10.11.18")
    ap.add_argument("--tables", type=int, default=4)
    ap.add_argument("--table-size", type=int, default=50_000)
    ap.add_argument("--groups", type=int, default=4, help="rounds = groups per variant")
    ap.add_argument("--pairs", type=int, default=2, help="A/B pairs of whole runs")
    a = ap.parse_args()
    m = matrix.from_dict(
        {
            "name": "bench-templates",
            "servers": [a.server],
            "workloads": ["oltp_point_select", "oltp_update_index"],
            "charsets": ["latin1"],
            "threads": [2],
            "repeats": a.groups,
            "duration_s": 1,
            "warmup_s": 0,
            "tables": a.tables,
            "table_size": a.table_size,
        }
    )
    times: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="pt-bench-") as tmp:
        for _ in range(a.pairs):
            for reuse in (False, True):
                times[reuse].append(one_run(m, reuse, Path(tmp)))
                print(f"reuse_datasets={reuse}: {times[reuse][-1]:.1f} s", flush=True)
    before, after = statistics.median(times[False]), statistics.median(times[True])
    print(
        f"{a.server}, {a.tables} x {a.table_size} rows, {a.groups} groups x 2 cells of 1 s: "
        f"prepare every group {before:.1f} s, prepared once {after:.1f} s, "
        f"speed-up {before / after:.2f}x (medians of {a.pairs})"
    )


if __name__ == "__main__":
    main()
