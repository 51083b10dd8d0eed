"""Machine time to a conclusive verdict, with and without `--until-conclusive`.

Two parts:

simulate  SEMI-SYNTHETIC: real repeated measurements from a DB (the A/A runs of
          benchmarks/matrices/aa.yaml) are resampled with replacement into A and B; B is
          multiplied by (1 - shift). The sequential procedure of
          perftrack.experiments.conclude (looks at n = 4, 6, 9, …, Bonferroni z per look, stop
          at the first settled look or at
          the budget) is replayed on them, and compared with fixed 5 repeats per side
          (replayed) and with the n per side stats.repeats_needed gives for -5% at 95%
          power (computed, not replayed: resampling 30 values thousands of times says
          nothing more). Machine time = rounds x the measured seconds per round.

real      REAL servers: the known-effect check re-done with --until-conclusive. A temp
          catalog points three ids at one real release's basedir: ke-base and ke-again
          (the release's defaults, an A/A pair) and ke-binlog (log-bin + sync_binlog=1).
          perftrack's sequential verdicts of ke-base -> ke-binlog and ke-base -> ke-again
          on oltp_read_write; results in a scratch DB, never data/.

    .venv/bin/python benchmarks/verdict_cost.py simulate --db /tmp/aa.duckdb --round-s 13
    .venv/bin/python benchmarks/verdict_cost.py real --budget 20 --aa-budget 10
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np

from perftrack.analysis import stats
from perftrack.experiments import conclude
from perftrack.planning import matrix
from perftrack.servers import catalog, providers

REPO = Path(__file__).resolve().parents[1]


# --- simulate -----------------------------------------------------------------------------
def real_values(db: Path) -> dict[str, list[float]]:
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        "SELECT s.server_id, r.tps FROM results r JOIN servers s USING (server_key) "
        "WHERE r.status = 'ok' AND r.tps IS NOT NULL"
    ).fetchall()
    out: dict[str, list[float]] = {}
    for sid, v in rows:
        out.setdefault(sid, []).append(float(v))
    return out


def sequential(
    pool: np.ndarray,
    shift: float,
    max_rounds: int,
    looks: int,
    rng: np.random.Generator,
    min_effect: float = conclude.DEFAULT_MIN_EFFECT,
) -> tuple[str, int]:
    """One replay: (final verdict, rounds used)."""
    a = list(rng.choice(pool, max_rounds))
    b = list(rng.choice(pool, max_rounds) * (1 - shift))
    for done, n in enumerate(conclude.look_points(max_rounds), 1):
        c = conclude.decide(a[:n], b[:n], cv=None, looks=looks, min_effect=min_effect)
        v = c.verdict if c else "inconclusive"
        if v != "inconclusive" or done >= looks:
            return v, n
    return "inconclusive", max_rounds


def fixed(pool: np.ndarray, shift: float, n: int, rng: np.random.Generator) -> str:
    """One comparison at a fixed n per side, as `perftrack compare` makes it."""
    a, b = rng.choice(pool, n), rng.choice(pool, n) * (1 - shift)
    c = stats.compare(list(a), list(b), threshold=stats.noise_threshold(stats.cv(list(a)), n, n))
    return c.verdict if c else "inconclusive"


def simulate(a: argparse.Namespace) -> None:
    vals = real_values(a.db)
    print(
        f"SEMI-SYNTHETIC (real noise from {a.db}, injected shifts); {a.draws} replays per "
        f"row; {a.round_s:.0f} s per round of two cells (measured); budget {a.budget} min; "
        f"min effect {a.min_effect:.0%}"
    )
    print(
        "| series | CV | shift | mode | regression | unchanged | improvement | inconclusive "
        "| machine time: median | p90 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for sid, v in sorted(vals.items()):
        pool = np.asarray(v)
        cv = stats.cv(v) or 0.0
        req = conclude.Request(
            a="a", b="b", budget_s=a.budget * 60, duration_s=a.duration, warmup_s=a.warmup
        )
        looks = req.planned_looks()
        max_rounds = int(a.budget * 60 // a.round_s)
        for shift in a.shifts:
            rng = np.random.default_rng(20261123)
            out = [
                sequential(pool, shift, max_rounds, looks, rng, a.min_effect)
                for _ in range(a.draws)
            ]
            _row(sid, cv, shift, f"until-conclusive (K={looks})", [o[0] for o in out],
                 [o[1] * a.round_s / 60 for o in out])  # fmt: skip
        if a.no_fixed:
            continue
        for shift in a.shifts:
            rng = np.random.default_rng(20261123)
            verdicts = [fixed(pool, shift, 5, rng) for _ in range(a.draws)]
            _row(sid, cv, shift, "fixed n=5 per side", verdicts, [5 * a.round_s / 60] * a.draws)
        n = stats.repeats_needed(cv, 0.05)
        print(
            f"| {sid} | {cv:.1%} | -5% | fixed n={n} per side (stats.repeats_needed: ~95% "
            f"power by its normal approximation, not replayed) | | | | | "
            f"{n * a.round_s / 60:.0f} min | |"
        )
        sys.stdout.flush()


def _row(sid: str, cv: float, shift: float, mode: str, verdicts: list[str], mins: list[float]):
    n = len(verdicts)
    pct = {k: f"{100 * verdicts.count(k) / n:.1f}%" for k in stats.VERDICTS}
    p90 = float(np.percentile(mins, 90))
    print(
        f"| {sid} | {cv:.1%} | {-shift:+.0%} | {mode} | {pct['regression']} | "
        f"{pct['unchanged']} | {pct['improvement']} | {pct['inconclusive']} | "
        f"{statistics.median(mins):.1f} min | {p90:.1f} min |"
    )


# --- real ---------------------------------------------------------------------------------
ARMS = {
    "ke-base": [],
    "ke-again": [],
    "ke-binlog": ["log-bin=binlog", "sync_binlog=1"],
}


def real(a: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="verdict-cost-"))
    try:
        cfg = work / "configs"
        shutil.copytree(REPO / "configs", cfg)
        base = providers.fetch(catalog.read_catalog().get(a.server)).basedir
        ver = catalog.read_catalog().get(a.server).version
        lines = ["servers:"]
        for i, (sid, opts) in enumerate(ARMS.items()):
            major, minor, _patch = ver.split(".")
            lines += [
                f"  - id: {sid}",
                "    product: mariadb",
                f'    version: "{major}.{minor}.{900 + i}"',
                "    provider: path",
                f"    basedir: {base}",
                f"    stand_in: {a.server} ({'defaults' if not opts else ', '.join(opts)})",
            ]
            if opts:
                lines.append(f"    server_options: [{', '.join(opts)}]")
        (cfg / "versions.yaml").write_text("\n".join(lines) + "\n")
        cat = catalog.read_catalog(cfg / "versions.yaml")
        db = a.out / "verdict-cost.duckdb"
        pairs = [("ke-binlog", a.budget), ("ke-again", a.aa_budget)]
        for b, budget in [p for p in pairs if a.only in (None, p[0])]:
            req = conclude.Request(
                a="ke-base", b=b, budget_s=budget * 60, workload=a.workload, threads=a.threads,
                duration_s=a.duration, warmup_s=a.warmup, min_effect=a.min_effect,
                server_lifetime=a.server_lifetime,
            )  # fmt: skip
            t0 = time.monotonic()
            o = conclude.run_rounds(req, cat, cfg, db, a.out / "runs", print)
            print(f"wall {time.monotonic() - t0:.0f} s; runs {o.run_ids[0]} .. {o.run_ids[-1]}")
            sys.stdout.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("simulate")
    s.add_argument("--db", type=Path, required=True)
    s.add_argument("--draws", type=int, default=300)
    s.add_argument("--budget", type=float, default=30.0, help="minutes per verdict")
    s.add_argument("--round-s", type=float, default=13.0, help="measured seconds per round")
    s.add_argument("--duration", type=int, default=3)
    s.add_argument("--warmup", type=int, default=1)
    s.add_argument("--no-fixed", action="store_true", help="only the sequential rows")
    s.add_argument("--min-effect", type=float, default=conclude.DEFAULT_MIN_EFFECT)
    s.add_argument("--shifts", type=float, nargs="+", default=[0.0, 0.05, 0.10, 0.20])
    r = sub.add_parser("real")
    r.add_argument("--server", default="mariadb-10.11.19")
    r.add_argument("--workload", default="oltp_read_write")
    r.add_argument("--threads", type=int, default=2)
    r.add_argument("--duration", type=int, default=4)
    r.add_argument("--warmup", type=int, default=1)
    r.add_argument("--budget", type=float, default=20.0, help="minutes, base -> binlog")
    r.add_argument("--aa-budget", type=float, default=10.0, help="minutes, base -> again")
    r.add_argument("--out", type=Path, default=Path("/tmp/verdict-cost"))
    r.add_argument("--only", choices=list(ARMS)[1:], help="only base -> this arm")
    r.add_argument("--min-effect", type=float, default=conclude.DEFAULT_MIN_EFFECT)
    r.add_argument("--server-lifetime", default=matrix.DEFAULT_SERVER_LIFETIME)
    a = ap.parse_args()
    simulate(a) if a.cmd == "simulate" else real(a)


if __name__ == "__main__":
    main()
