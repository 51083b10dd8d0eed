"""A real known-effect check: a configuration change with a real cost must come out as
`regression`, and the same configuration measured twice as `unchanged`.

On one real server release, interleaved rounds of three arms, each a fresh server:
  base     the release's defaults
  again    the release's defaults (the A/A twin of base)
  binlog   defaults + log-bin + sync_binlog=1 (an fsync of the binary log per commit)
on oltp_read_write, then perftrack's verdicts (noise-calibrated thresholds from the pooled
CV of the base arms) for base→again and base→binlog.

    .venv/bin/python benchmarks/known_effect.py --rounds 8 --duration 5
"""

from __future__ import annotations

import argparse

from perftrack.analysis import stats
from perftrack.drivers import sysbench
from perftrack.run.server import BENCH_DB, BENCH_USER, Server
from perftrack.servers import catalog, providers

ARMS: dict[str, dict[str, str | None]] = {
    "base": {},
    "again": {},
    "binlog": {"log-bin": "binlog", "sync_binlog": "1"},
}
WORKLOAD = "oltp_read_write"


def measure(inst, extra: dict[str, str | None], duration: int) -> float:
    opts = {"character-set-server": "latin1", "collation-server": "latin1_swedish_ci", **extra}
    with Server(install=inst, options=opts) as srv:
        srv.create_database("latin1", "latin1_swedish_ci")
        target = sysbench.Endpoint(
            host="127.0.0.1",
            port=int(srv.port or 0),
            user=BENCH_USER,
            password=srv.password,
            db=BENCH_DB,
        )
        size = dict(tables=2, table_size=10_000)
        sysbench.prepare(WORKLOAD, target, **size)
        sysbench.run_sysbench(WORKLOAD, target, threads=2, time_s=1, **size)  # warm-up
        parsed, _ = sysbench.run_sysbench(WORKLOAD, target, threads=2, time_s=duration, **size)
        return float(parsed["tps"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default="mariadb-10.11.19")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--duration", type=int, default=5)
    a = ap.parse_args()
    inst = providers.fetch(catalog.read_catalog().get(a.server))
    values: dict[str, list[float]] = {arm: [] for arm in ARMS}
    names = list(ARMS)
    for r in range(a.rounds):
        order = names[r % len(names) :] + names[: r % len(names)]  # rotate the arm order
        for arm in order:
            values[arm].append(measure(inst, ARMS[arm], a.duration))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.0f}" for k, v in values.items()))
    cv = stats.cv(values["base"] + values["again"])
    n = a.rounds
    thr = stats.noise_threshold(cv, n, n)
    print(
        f"{a.server}, {WORKLOAD}, 2 threads, {a.duration} s, {n} interleaved rounds; "
        f"pooled A/A CV {cv:.1%}, threshold ±{thr:.1%}"
    )
    for arm in ("again", "binlog"):
        c = stats.compare(values["base"], values[arm], threshold=thr)
        assert c is not None
        print(
            f"base -> {arm}: ratio {c.ratio:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}] "
            f"p={c.p_value:.4f} verdict {c.verdict}"
        )


if __name__ == "__main__":
    main()
