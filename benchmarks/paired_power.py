"""Power and false alarms of `--until-conclusive`'s paired verdicts (issue 22 item 4).

SEMI-SYNTHETIC: real paired A/A rounds (A and A' the same server, measured in the same
round) are replayed in a random order — a round's A and A' stay together, so what varies
is the real per-round ratio; the pool is reshuffled when a sequence needs more rounds than
it has; A and A' swapped at random, as the labels of one server are exchangeable — and B
is multiplied by (1 - shift). The
sequential procedure of `perftrack compare --until-conclusive` (experiments/conclude.py:
looks at n = 4, 6, 9, 14, … rounds, its planned number of looks K from the budget, the one
paired verdict `looks.decide(paired=True)` at 1 - 0.01/K, stop at the first settled look)
is replayed on them with the budget in machine time: rounds x the seconds a round took
when the A/A rounds were measured.

Sources of real A/A rounds:
  --fidelity FILE --variant NAME   a variant's rounds saved by
                                   `benchmarks/noise_fidelity.py --save FILE`
  --runs DIR --pair A B            the rounds of `--until-conclusive` sessions of A and B
                                   (each run directory under DIR one round)

    .venv/bin/python benchmarks/paired_power.py --fidelity f.json --variant 'perftrack run: run'
    .venv/bin/python benchmarks/paired_power.py --runs /tmp/verdict-cost/runs \\
        --pair ke-base ke-again --round-s 25 --duration 10
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

import numpy as np

from perftrack.analysis import stats
from perftrack.experiments import conclude
from perftrack.run import runner

# (shift, budget minutes, --min-effect): the targets of issue 22 item 4. A -5% change is
# `unchanged` by definition at the default ±10%: finding it takes --min-effect below 5.
ROWS = (
    (0.0, 10.0, 0.10),
    (0.0, 30.0, 0.02),
    (0.05, 30.0, 0.02),
    (0.10, 10.0, 0.10),
    (0.10, 10.0, 0.02),
    (0.20, 10.0, 0.10),
)


def from_fidelity(path: Path, variant: str) -> tuple[list[tuple[float, float]], float, dict]:
    """(A, A') per round of a noise_fidelity variant, its seconds per round, its settings."""
    data = json.loads(path.read_text())
    names = [v["name"] for v in data["variants"]]
    match = [v for v in data["variants"] if v["name"] == variant]
    if not match:
        raise SystemExit(f"error: no variant {variant!r} in {path}; it has: {', '.join(names)}")
    v, s = match[0], data["settings"]
    pairs = [
        (r[s["A"]], r[s["A2"]])
        for _, r in sorted(v["rounds"].items(), key=lambda kv: int(kv[0]))
        if s["A"] in r and s["A2"] in r
    ]
    return pairs, v["seconds"] / s["rounds"], s


def from_runs(runs: Path, a: str, b: str) -> list[tuple[float, float]]:
    """(A, B) of every run directory under `runs` that measured both servers once: the
    rounds of `--until-conclusive` sessions (one run each), read from their records."""
    out = []
    for path in sorted(p for p in runs.iterdir() if (p / "plan.json").exists()):
        tps: dict[str, list[float]] = {}
        for recs in runner.RunDir(path).attempts().values():
            rec = recs[-1]
            if rec["status"] == "ok" and rec["result"]["tps"] > 0:
                tps.setdefault(rec["server"]["id"], []).append(float(rec["result"]["tps"]))
        if len(tps.get(a, [])) == 1 and len(tps.get(b, [])) == 1:
            out.append((tps[a][0], tps[b][0]))
    return out


def replay(
    pairs: np.ndarray,
    shift: float,
    max_rounds: int,
    looks: int,
    rng: np.random.Generator,
    min_effect: float,
    aa_spread: float | None = None,
) -> tuple[str, int]:
    """One sequence: (its verdict, rounds used), as conclude.run_rounds would end it."""
    # A random order of the real rounds (reshuffled when used up: no round twice before
    # every round was drawn once: duplicates among the first rounds would shrink their
    # spread and make the early looks' t-bounds too narrow), each round's A and A'
    # swapped at random (the same server under two ids: the labels are exchangeable).
    reps = -(-max_rounds // len(pairs))
    idx = np.concatenate([rng.permutation(len(pairs)) for _ in range(reps)])[:max_rounds]
    swap = rng.random(max_rounds) < 0.5
    first, second = pairs[idx, 0], pairs[idx, 1]
    a = list(np.where(swap, second, first))
    b = list(np.where(swap, first, second) * (1 - shift))
    points = conclude.look_points(max_rounds)[:looks]
    for i, n in enumerate(points, 1):
        c = conclude.decide(
            a[:n], b[:n], cv=None, looks=conclude.SIDES * looks, paired=True,
            min_effect=min_effect,
            aa_spread=aa_spread,
        )  # fmt: skip
        v = c.verdict if c else "inconclusive"
        if v != "inconclusive" or i >= looks:
            return v, n
    return "inconclusive", max_rounds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fidelity", type=Path)
    ap.add_argument("--variant", default="perftrack run: run")
    ap.add_argument("--runs", type=Path)
    ap.add_argument("--pair", nargs=2, metavar=("A", "B"))
    ap.add_argument("--round-s", type=float, help="seconds per round (default: the source's)")
    ap.add_argument("--duration", type=int, help="cell seconds (for K; default: the source's)")
    ap.add_argument("--warmup", type=int, help="warm-up seconds (for K)")
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument(
        "--stored-spread",
        action="store_true",
        help="bands from a stored paired A/A spread (the rounds' own, as detect would store "
        "it from them), as --until-conclusive uses when the DB has one; default: each "
        "sequence's own spread with Student's t",
    )
    a = ap.parse_args()
    if a.fidelity:
        pairs, round_s, s = from_fidelity(a.fidelity, a.variant)
        duration, warmup = s["duration"], s["warmup"]
        source = f"{a.fidelity.name}, variant {a.variant!r}"
    elif a.runs and a.pair:
        pairs, round_s, duration, warmup = from_runs(a.runs, *a.pair), 0.0, 5, 1
        source = f"{a.runs}, {a.pair[0]} vs {a.pair[1]}"
    else:
        raise SystemExit("error: give --fidelity FILE (--variant) or --runs DIR --pair A B")
    round_s = a.round_s or round_s
    duration = a.duration or duration
    warmup = a.warmup if a.warmup is not None else warmup
    if len(pairs) < 10 or not round_s:
        raise SystemExit(f"error: {len(pairs)} A/A rounds (need 10) or no --round-s")
    arr = np.asarray(pairs, dtype=float)
    d = np.log(arr[:, 1] / arr[:, 0])
    # An A/A pair's true ratio is 1 (the same server twice a round): its rounds' mean
    # log-ratio is estimation noise, and resampling rounds around it would inject it as a
    # real shift. Centred, the rounds keep their real spread, shape and levels.
    arr[:, 1] = arr[:, 0] * np.exp(d - d.mean())
    stored = float(np.sqrt(np.mean((d - d.mean()) ** 2))) if a.stored_spread else None
    print(
        f"SEMI-SYNTHETIC: {len(pairs)} real paired A/A rounds ({source}), per-round "
        f"log-ratio spread {d.std(ddof=1):.1%}, mean {d.mean():+.1%}; {round_s:.1f} s per "
        f"round; {duration} s cells, {warmup} s warm-up; {a.draws} sequences per row "
        "(rounds centred on a ratio of 1); bands from "
        + (f"a stored A/A spread of {stored:.1%}" if stored else "each sequence's own spread")
    )
    print(
        "\n| shift | budget | unchanged within | K looks | max rounds | regression | unchanged "
        "| improvement | inconclusive | machine time median / p90 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for shift, minutes, min_effect in ROWS:
        req = conclude.Request(
            a="a", b="b", budget_s=minutes * 60, duration_s=duration, warmup_s=warmup
        )
        looks = req.planned_looks()
        max_rounds = int(minutes * 60 // round_s)
        rng = np.random.default_rng(20261125)
        out = [
            replay(arr, shift, max_rounds, looks, rng, min_effect, stored) for _ in range(a.draws)
        ]
        vs = [o[0] for o in out]
        mins = [o[1] * round_s / 60 for o in out]
        pct = {k: f"{100 * vs.count(k) / len(vs):.1f}%" for k in stats.VERDICTS}
        print(
            f"| {-shift:+.0%} | {minutes:.0f} min | ±{min_effect:.0%} | {looks} | {max_rounds} | "
            f"{pct['regression']} | {pct['unchanged']} | {pct['improvement']} | "
            f"{pct['inconclusive']} | {statistics.median(mins):.1f} / "
            f"{float(np.percentile(mins, 90)):.1f} min |"
        )
        sys.stdout.flush()
    z = 1.645 + 2.9
    print(
        f"\nrounds a fixed paired design needs for -5% at 95% power (normal approximation, "
        f"one look at z≈2.9): {math.ceil((z * d.std(ddof=1) / 0.05) ** 2)}"
    )


if __name__ == "__main__":
    main()
