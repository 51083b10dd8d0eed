"""Harness overhead: perftrack's measurement path vs the same sysbench command by hand.

One real server (from the catalog, started by perftrack's server lifecycle), one prepared
dataset, then N interleaved pairs on that same server:
  hand: the sysbench command run directly, output to a file, tps read from the summary
  perftrack: `drivers.sysbench.run_sysbench` — what `perftrack run` does for every measured cell
    (piped output, wall-clock bound, full parse, interval series)
The figure is the median of per-pair ratios perftrack/hand (target >= 0.98).

    .venv/bin/python benchmarks/harness_overhead.py --pairs 7 --duration 10
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

from perftrack.drivers import sysbench
from perftrack.run.server import BENCH_DB, BENCH_USER, Server
from perftrack.servers import catalog, providers

SUMMARY_TPS = re.compile(r"transactions:\s+\d+\s+\(([\d.]+) per sec")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default="mariadb-10.11.19")
    ap.add_argument("--workload", default="oltp_point_select")
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    inst = providers.fetch(catalog.read_catalog().get(a.server))
    with Server(install=inst, options={"character-set-server": "latin1"}) as srv:
        srv.create_database("latin1", "latin1_swedish_ci")
        target = sysbench.Endpoint(
            host="127.0.0.1",
            port=int(srv.port or 0),
            user=BENCH_USER,
            password=srv.password,
            db=BENCH_DB,
        )
        size = dict(tables=2, table_size=10_000)
        sysbench.prepare(a.workload, target, **size)
        sysbench.run_sysbench(a.workload, target, threads=a.threads, time_s=3, **size)  # warm-up
        cmd = sysbench.command(
            a.workload, "run", target, threads=a.threads, time_s=a.duration, **size
        )
        ratios, hand_tps, pt_tps = [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(a.pairs):
                out = Path(tmp) / f"hand{i}.txt"
                with out.open("w") as fh:
                    subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, check=True)
                m = SUMMARY_TPS.search(out.read_text())
                assert m, "hand run printed no summary"
                hand = float(m.group(1))
                parsed, _ = sysbench.run_sysbench(
                    a.workload, target, threads=a.threads, time_s=a.duration, **size
                )
                ours = float(parsed["tps"])
                hand_tps.append(hand)
                pt_tps.append(ours)
                ratios.append(ours / hand)
                print(
                    f"pair {i + 1}: hand {hand:.0f} tps, perftrack {ours:.0f} tps, "
                    f"ratio {ours / hand:.3f}"
                )
    print(
        f"server {srv.version_string}, {a.workload}, {a.threads} threads, "
        f"{a.duration} s per run, {a.pairs} interleaved pairs"
    )
    print(
        f"median ratio perftrack/hand: {statistics.median(ratios):.3f} "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f}); "
        f"median tps hand {statistics.median(hand_tps):.0f}, "
        f"perftrack {statistics.median(pt_tps):.0f}"
    )


if __name__ == "__main__":
    main()
