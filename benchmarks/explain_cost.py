"""Machine time of `perftrack explain` and how it grows with the number of candidates.

Two parts:

simulate  SYNTHETIC throughput (nothing measured): B's throughput is 1000 / (1 + the
          costs of the causes still at B's value), times lognormal noise of --noise (CV);
          the real search (perftrack.experiments.explain.Search: stage 1, halving stages,
          the shares stage) runs on it for n candidates with 1 or 2 causes among them.
          Reported: rounds and cells (server starts with a measurement) per explanation,
          and minutes at --cell-s seconds per cell (measured on this machine: ~6 s for a
          2 s oltp_update_index cell of 1 x 2,000 rows, server start and prepare included).

real      REAL servers: stand-ins of the cached MariaDB 10.11.18 that differ by
          innodb_flush_log_at_trx_commit (A: 2, B: 1) and K harmless settings, for each K of
          --harmless; prints the machine time and what was isolated. Rounds go to a temp
          directory, never data/.

    .venv/bin/python benchmarks/explain_cost.py simulate --noise 0.3 --cell-s 6
    .venv/bin/python benchmarks/explain_cost.py real --harmless 2 5 10 --budget 30
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from perftrack.analysis import candidates
from perftrack.experiments import conclude, explain
from perftrack.experiments import explanation as ex
from perftrack.servers import catalog

REPO = Path(__file__).resolve().parents[1]
HARMLESS = [
    "max_connections=200", "table_open_cache=3000", "thread_cache_size=20",
    "sort_buffer_size=4M", "wait_timeout=3600", "interactive_timeout=3600",
    "join_buffer_size=1M", "read_buffer_size=256K", "tmp_table_size=32M",
    "max_heap_table_size=32M",
]  # fmt: skip


class Synthetic:
    def __init__(self, causes: dict[str, float], noise: float, seed: int):
        self.causes, self.noise = causes, noise
        self.rng = np.random.default_rng(seed)
        self.cells = 0

    def round(self, arms: list[explain.Arm]) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for label, members in arms:
            self.cells += 1
            fixed = set(self.causes) if label == "A" else {c.name for c in members or ()}
            left = sum(v for k, v in self.causes.items() if k not in fixed)
            out[label] = 1000 / (1 + left) * float(self.rng.lognormal(0, self.noise))
        return out


def simulate(args: argparse.Namespace) -> None:
    print(
        f"SYNTHETIC: noise CV {args.noise:.0%}, {args.cell_s:.0f} s per cell, "
        f"{args.seeds} seeds per row; min_effect {args.min_effect:.0%}"
    )
    print(
        f"{'candidates':>10} {'causes':>6} {'rounds':>7} {'cells':>6} {'minutes':>8} {'found':>6}"
    )
    for n in args.n:
        for k in (1, 2):
            names = [f"v{i:03d}" for i in range(n)]
            causes = {names[(i + 1) * n // (k + 1)]: 2.0 if k == 2 else 9.0 for i in range(k)}
            rounds, cells, found = [], [], 0
            for seed in range(args.seeds):
                model = Synthetic(causes, args.noise, seed)
                req = conclude.Request(a="a", b="b", budget_s=10**9, min_effect=args.min_effect)
                cands = [candidates.Candidate(x, x, "a", "b") for x in names]
                res = ex.Explanation(a="a", b="b", cell={}, candidates=cands, left=[])
                explain.Search(
                    req=req,
                    result=res,
                    run_round=model.round,
                    starts=lambda _m: None,
                    emit=lambda _l: None,
                    clock=lambda: 0.0,  # no budget: the search's own cost
                ).run()
                rounds.append(res.rounds)
                cells.append(model.cells)
                iso = sorted(c for lb in res.isolated for c in res.group(lb).names)
                found += iso == sorted(causes)
            c = float(np.mean(cells))
            print(
                f"{n:>10} {k:>6} {np.mean(rounds):>7.1f} {c:>6.0f} "
                f"{c * args.cell_s / 60:>8.1f} {found:>3}/{args.seeds}"
            )


def real(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from standins import basedir

    for k in args.harmless:
        with tempfile.TemporaryDirectory() as tmp:
            cfg = Path(tmp) / "configs"
            shutil.copytree(REPO / "configs", cfg)
            lines = ["servers:"]
            for sid, opts in (
                ("ea", ["innodb_flush_log_at_trx_commit=2"]),
                ("eb", ["innodb_flush_log_at_trx_commit=1", *HARMLESS[:k]]),
            ):
                lines += [
                    f"  - {{id: {sid}, product: mariadb, version: '10.11.18', provider: path,",
                    f"     basedir: {basedir()}, stand_in: explain benchmark {sid},",
                    f"     server_options: [{', '.join(opts)}]}}",
                ]
            (cfg / "versions.yaml").write_text("\n".join(lines) + "\n")
            cat = catalog.read_catalog(cfg / "versions.yaml")
            req = conclude.Request(
                a="ea",
                b="eb",
                budget_s=args.budget * 60,
                workload="oltp_update_index",
                threads=2,
                duration_s=2,
                warmup_s=0,
                tables=1,
                table_size=2000,
                min_effect=0.5,
            )
            t0 = time.monotonic()
            res = explain.explain(req, cat, cfg, Path(tmp) / "runs", lambda _m: None)
            print(
                f"harmless {k}: {len(res.candidates)} candidates, {res.rounds} rounds, "
                f"{(time.monotonic() - t0) / 60:.1f} min; {res.conclusion}"
            )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("simulate")
    s.add_argument("--n", type=int, nargs="+", default=[4, 8, 16, 32, 64, 128, 200])
    s.add_argument("--noise", type=float, default=0.3)
    s.add_argument("--cell-s", type=float, default=6.0)
    s.add_argument("--seeds", type=int, default=10)
    s.add_argument("--min-effect", type=float, default=0.5)
    r = sub.add_parser("real")
    r.add_argument("--harmless", type=int, nargs="+", default=[2, 5, 10])
    r.add_argument("--budget", type=float, default=30)
    args = p.parse_args()
    simulate(args) if args.cmd == "simulate" else real(args)


if __name__ == "__main__":
    main()
