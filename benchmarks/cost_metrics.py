"""Cost per operation (issue #9): the sampling's overhead, and tps vs cpu_us_per_txn as a signal.

Real servers, real sysbench, on this machine (loopback only); nothing is written to
data/results.duckdb (run records go to a temp dir unless --keep DIR).

(a) overhead  one server, one prepared dataset; N interleaved pairs of sysbench runs, one
              with a sampling window around it (sampler.Window, as the runner takes it) and
              one without, the order alternating per pair. Per pair the ratio of tps
              (with / without); the median ratio and a bootstrap 95% interval.
(b) signal    `perftrack run`'s own runner on a matrix of two servers (default
              mariadb-10.11.18 vs mariadb-10.11.19) with R interleaved rounds, sampling on.
              Per server (A/A) and metric: CV over the rounds, the spread of the per-round
              A/A ratio (round r+1 / round r), and stats.repeats_needed for -5% at 95%
              power; for the pair: per-round B/A ratios and the noise-calibrated verdict.
(c) noisy     which runs were flagged noisy, and whether the outliers (|robust z| > 2.5
              in either metric) are among them.

    .venv/bin/python benchmarks/cost_metrics.py [--pairs 10] [--rounds 10] [--duration 10]
        [--workload oltp_read_write] [--threads 2] [--json out.json]

Other jobs on the machine change every figure; the report prints the host load it saw.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

from perftrack.analysis import stats
from perftrack.core import paths
from perftrack.drivers import sysbench
from perftrack.planning import matrix, workloads
from perftrack.run import perf, runner, sampler, targets
from perftrack.run.server import BENCH_DB, BENCH_USER, Server
from perftrack.servers import catalog, providers

METRICS = ("tps", "cpu_us_per_txn")
EFFECT = 0.05  # the shift each metric should catch (issue #9: -5% at 95% power)
OUTLIER_Z = 2.5  # robust z (median / 1.4826 MAD) beyond which a run is an outlier
SEED = 20261123
SNAPSHOT_REPEATS = 50


def _ci_median(x: list[float]) -> tuple[float, float]:
    res = sps.bootstrap(
        (np.asarray(x),),
        np.median,
        n_resamples=2000,
        confidence_level=0.95,
        method="percentile",
        random_state=np.random.default_rng(SEED),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def overhead(
    server_id: str, workload: str, threads: int, duration: int, pairs: int, tmp: Path
) -> dict[str, Any]:
    cat = catalog.read_catalog()
    inst = providers.fetch(cat.get(server_id))
    wl = workloads.get(workload)
    with Server(install=inst, options={}, workroot=tmp) as srv:
        srv.create_database("latin1", "latin1_swedish_ci")
        target = sysbench.Endpoint(
            host="127.0.0.1",
            port=int(srv.port or 0),
            user=BENCH_USER,
            password=srv.password,
            db=BENCH_DB,
        )
        common: dict[str, Any] = dict(tables=2, table_size=10_000, options=wl.options)
        out = sysbench.prepare(wl.prepare_script(), target, **common)
        assert out.returncode == 0, out.text[-500:]
        sysbench.run_sysbench(wl.script_path(), target, threads=threads, time_s=3, **common)  # warm
        on: list[float] = []
        off: list[float] = []
        for i in range(pairs):
            for sampled in (True, False) if i % 2 == 0 else (False, True):
                tgt, why = targets.target_for(srv)
                assert tgt is not None, why
                win = sampler.Window(tgt) if sampled else None
                if win:
                    win.start()
                parsed, _ = sysbench.run_sysbench(
                    wl.script_path(), target, threads=threads, time_s=duration, **common
                )
                if win:
                    win.stop()
                (on if sampled else off).append(float(parsed["tps"]))
        # the sampling's own work, on the live server: one Window start + stop
        tgt, _ = targets.target_for(srv)
        assert tgt is not None
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for _ in range(SNAPSHOT_REPEATS):
            w = sampler.Window(tgt)
            w.start()
            w.stop()
        cpu_ms = (time.process_time() - cpu0) / SNAPSHOT_REPEATS * 1000
        wall_ms = (time.perf_counter() - wall0) / SNAPSHOT_REPEATS * 1000
    ratios = [a / b for a, b in zip(on, off, strict=True)]
    lo, hi = _ci_median(ratios)
    return {
        "pairs": pairs,
        "tps_with": on,
        "tps_without": off,
        "ratio_median": statistics.median(ratios),
        "ratio_ci95": [lo, hi],
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "window_cpu_ms": cpu_ms,
        "window_wall_ms": wall_ms,
        "window_cpu_share_of_run": cpu_ms / (duration * 1000),
    }


def signal(
    servers: list[str], workload: str, threads: int, duration: int, rounds: int, tmp: Path
) -> list[dict[str, Any]]:
    m = matrix.from_dict(
        {
            "name": "cost-metrics-benchmark",
            "servers": servers,
            "workloads": [workload],
            "charsets": ["latin1"],
            "threads": [threads],
            "repeats": rounds,
            "duration_s": duration,
            "warmup_s": 2,
            "tables": 2,
            "table_size": 10_000,
        },
        where="benchmark",
    )
    cat = catalog.read_catalog()
    rd = runner.create(m, cat, tmp / "runs", "benchmark")
    (tmp / "w").mkdir(exist_ok=True)
    r = runner.Runner(
        rd=rd,
        catalog=cat,
        config_dir=paths.config_dir(),
        emit=print,
        workroot=tmp / "w",
        reuse_datasets=True,
    )
    r.run()
    recs = [x for rs in rd.attempts().values() for x in rs if x["status"] == "ok"]
    out = []
    for x in recs:
        out.append(
            {
                "server": x["server"]["id"],
                "round": x["cell"].get("round") or x["cell"]["repeat"],
                "started_at": x["started_at"],
                "tps": x["result"]["tps"],
                "cpu_us_per_txn": x["result"].get("cpu_us_per_txn"),
                "ctx_vol_per_txn": x["result"].get("ctx_vol_per_txn"),
                "write_bytes_per_txn": x["result"].get("write_bytes_per_txn"),
                "noisy": bool((x.get("host") or {}).get("noisy")),
                "noisy_reason": (x.get("host") or {}).get("noisy_reason"),
                "foreign_cpu_pct": (x.get("host") or {}).get("foreign_cpu_pct"),
                "steal_pct": (x.get("host") or {}).get("steal_pct"),
            }
        )
    return sorted(out, key=lambda x: x["started_at"])


def robust_z(values: list[float]) -> list[float]:
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values) * 1.4826
    return [0.0 if mad == 0 else (v - med) / mad for v in values]


def analyse(runs: list[dict[str, Any]], servers: list[str]) -> dict[str, Any]:
    per: dict[str, Any] = {}
    for sid in servers:
        mine = sorted((x for x in runs if x["server"] == sid), key=lambda x: x["round"])
        row: dict[str, Any] = {"n": len(mine)}
        for m in METRICS:
            vals = [float(x[m]) for x in mine if x[m] is not None]
            cv = stats.cv(vals)
            aa = [b / a for a, b in itertools.pairwise(vals)]
            row[m] = {
                "median": statistics.median(vals) if vals else None,
                "cv": cv,
                "aa_ratio_min": min(aa) if aa else None,
                "aa_ratio_max": max(aa) if aa else None,
                "aa_ratio_sd": statistics.stdev(aa) if len(aa) > 1 else None,
                "repeats_needed_5pct": stats.repeats_needed(cv, EFFECT) if cv else None,
            }
            z = robust_z(vals) if len(vals) > 2 else [0.0] * len(vals)
            for x, zz in zip((x for x in mine if x[m] is not None), z, strict=True):
                x.setdefault("outlier_in", [])
                if abs(zz) > OUTLIER_Z:
                    x["outlier_in"].append(m)
        per[sid] = row
    pair: dict[str, Any] = {}
    if len(servers) == 2:
        a_id, b_id = servers
        for m in METRICS:
            by_round: dict[int, dict[str, float]] = {}
            for x in runs:
                if x[m] is not None:
                    by_round.setdefault(x["round"], {})[x["server"]] = float(x[m])
            ratios = [v[b_id] / v[a_id] for v in by_round.values() if a_id in v and b_id in v]
            a = [float(x[m]) for x in runs if x["server"] == a_id and x[m] is not None]
            b = [float(x[m]) for x in runs if x["server"] == b_id and x[m] is not None]
            cvs = [c for c in (stats.cv(a), stats.cv(b)) if c]
            thr = stats.noise_threshold(statistics.median(cvs) if cvs else None, len(a), len(b))
            c = stats.compare(a, b, higher_is_better=(m == "tps"), threshold=thr)
            pair[m] = {
                "round_ratio_median": statistics.median(ratios) if ratios else None,
                "round_ratio_min": min(ratios) if ratios else None,
                "round_ratio_max": max(ratios) if ratios else None,
                "round_ratio_sd": statistics.stdev(ratios) if len(ratios) > 1 else None,
                "ratio": c.ratio if c else None,
                "ci": [c.ci_low, c.ci_high] if c else None,
                "threshold": thr,
                "verdict": c.verdict if c else None,
            }
    noisy = [x for x in runs if x["noisy"]]
    outliers = [x for x in runs if x.get("outlier_in")]
    return {
        "servers": per,
        "pair": pair,
        "runs": len(runs),
        "noisy_runs": len(noisy),
        "outliers": len(outliers),
        "outliers_noisy": sum(1 for x in outliers if x["noisy"]),
        "outlier_detail": [
            {k: x[k] for k in ("server", "round", "outlier_in", "noisy", "foreign_cpu_pct")}
            for x in outliers
        ],
        "foreign_cpu_pct_median": statistics.median(
            [x["foreign_cpu_pct"] for x in runs if x["foreign_cpu_pct"] is not None] or [0]
        ),
    }


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1%}"


def report(res: dict[str, Any]) -> None:
    print(
        f"\nhost: {res['cores']} CPUs, load average before {res['load_before']}, after "
        f"{res['load_after']}"
    )
    o = res.get("overhead")
    if o:
        lo, hi = o["ratio_ci95"]
        print(
            f"\n(a) overhead, {o['pairs']} interleaved pairs: tps with/without sampling, "
            f"median ratio {o['ratio_median']:.4f} (95% CI {lo:.4f}–{hi:.4f}; "
            f"pairs from {o['ratio_min']:.3f} to {o['ratio_max']:.3f})"
        )
        print(
            f"    one sampling window (start + stop) costs {o['window_cpu_ms']:.2f} ms CPU, "
            f"{o['window_wall_ms']:.2f} ms wall, outside sysbench's measured interval: "
            f"{o['window_cpu_share_of_run']:.4%} of one {res['args']['duration']} s run"
        )
    s = res.get("signal")
    if not s:
        return
    print("\n(b) | server | metric | median | CV | A/A round ratio min–max (sd) | rounds for −5% |")
    print("|---|---|---|---|---|---|")
    for sid, row in s["servers"].items():
        for m in METRICS:
            d = row[m]
            spread = (
                f"{d['aa_ratio_min']:.3f}–{d['aa_ratio_max']:.3f} ({d['aa_ratio_sd']:.3f})"
                if d["aa_ratio_sd"] is not None
                else "—"
            )
            med = "—" if d["median"] is None else f"{d['median']:.1f}"
            print(
                f"| {sid} | {m} | {med} | {_pct(d['cv'])} | {spread} | {d['repeats_needed_5pct']} |"
            )
    for m, d in s["pair"].items():
        if d["ratio"] is None:
            print(f"pair {m}: not enough values")
            continue
        print(
            f"pair {m}: per-round B/A median {d['round_ratio_median']:.3f}, "
            f"{d['round_ratio_min']:.3f}–{d['round_ratio_max']:.3f} (sd {d['round_ratio_sd']:.3f});"
            f" ratio of medians {d['ratio']:.3f} [{d['ci'][0]:.3f}, {d['ci'][1]:.3f}], "
            f"threshold ±{d['threshold']:.1%} → {d['verdict']}"
        )
    print(
        f"\n(c) {s['noisy_runs']} of {s['runs']} runs flagged noisy (median foreign CPU "
        f"{s['foreign_cpu_pct_median']:.1f}%); {s['outliers']} outlier runs, "
        f"{s['outliers_noisy']} of them flagged noisy: {s['outlier_detail']}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", nargs=2, default=["mariadb-10.11.18", "mariadb-10.11.19"])
    ap.add_argument("--workload", default="oltp_read_write")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    ap.add_argument("--pairs", type=int, default=10, help="(a) interleaved with/without pairs")
    ap.add_argument("--rounds", type=int, default=10, help="(b) interleaved rounds")
    ap.add_argument("--skip-overhead", action="store_true")
    ap.add_argument("--skip-signal", action="store_true")
    ap.add_argument("--json", type=Path, default=None, help="write every figure here")
    ap.add_argument("--keep", type=Path, default=None, help="keep run records in this dir")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="pt-cost-bench-"))
    res: dict[str, Any] = {
        "args": {k: str(v) for k, v in vars(a).items()},
        "cores": os.cpu_count(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
        "perf_hardware": perf.perf_hardware() or "available",
    }
    try:
        if not a.skip_overhead:
            (tmp / "o").mkdir()
            res["overhead"] = overhead(
                a.servers[0], a.workload, a.threads, a.duration, a.pairs, tmp / "o"
            )
        if not a.skip_signal:
            runs = signal(a.servers, a.workload, a.threads, a.duration, a.rounds, tmp)
            res["signal"] = analyse(runs, a.servers)
            res["signal"]["run_rows"] = runs
            if a.keep:
                shutil.copytree(tmp / "runs", a.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res["load_after"] = [round(x, 2) for x in os.getloadavg()]
    report(res)
    if a.json:
        a.json.write_text(json.dumps(res, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
