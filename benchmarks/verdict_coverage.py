"""Coverage of the verdicts' 95% intervals, and their false-regression rate, on real A/A data.

A/A: real repeats of ONE server in ONE cell and run (read through the store,
`Store.series_samples`), split at random into two disjoint groups of n. The true ratio of
the two groups is 1, so:

- coverage: the share of splits whose 95% interval contains 1, at n = 2 … 10, for the
  unpaired verdict (`stats.compare`: Welch t on the logs) and the paired one
  (`stats.compare_paired`: the i-th value of each group as round i); target >= 93%;
- false regressions of nightly-shaped verdicts: a night measures both servers in the same
  5 rounds (configs/matrices/nightly.yaml: repeats 5), so detect's verdict is paired over
  5 rounds with the band from the stored paired A/A spread (`stats.paired_threshold`,
  z = 2.326), or from the pair's own spread (Student's t) when none is stored. Each
  split's verdict is made by `compare.versus` exactly as detect makes it; the share that
  says "regression" is the false-regression rate (target <= 1%). The stored spread is the
  series' own A/A spread (`stats.aa_spread` of `stats.aa_log_ratios`: consecutive rounds)
  where it has >= 10 pairs. The same splits as two different nights (no shared round) are
  the unpaired verdict detect makes then: Welch t, band from the A/A CV
  (`stats.noise_threshold`).

Every sample with >= 2n values takes part at n; with few distinct splits (5 values, n = 2:
15 splits) every split is counted once, else `--draws` random ones.

    .venv/bin/python benchmarks/verdict_coverage.py --db data/results.duckdb --db /tmp/aa.duckdb
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from perftrack.analysis import compare, stats
from perftrack.store import store

SEED = 37
NS = range(2, 11)
NIGHT_ROUNDS = 5  # configs/matrices/nightly.yaml
Sample = tuple[str, list[float]]  # a label, one server's repeats of one cell and run


def samples(db: Path) -> list[Sample]:
    """One server's values of one series and run, in repeat order."""
    out: list[Sample] = []
    with store.open_db(db, write=False) as st:
        n = len(compare.GROUP_COLS)
        for s in st.series_samples("tps", recent=None):
            key = dict(zip(compare.GROUP_COLS, s[:n], strict=True))
            values, _lat, run_ids, repeats = s[n + 5 :]
            by_run: dict[str, list[tuple[int, float]]] = defaultdict(list)
            for v, r, k in zip(values, run_ids, repeats, strict=True):
                by_run[r].append((k, v))
            for run, vals in by_run.items():
                label = f"{db.name}:{s[n]}:{key['workload']}:{key['threads']}:{run}"
                out.append((label, [v for _, v in sorted(vals)]))
    return out


def splits(m: int, n: int, draws: int, rng: np.random.Generator) -> list[tuple[list[int], ...]]:
    """Disjoint index groups (A, B) of n each out of m: all of them if few, else `draws`."""
    combos = math.comb(m, n) * math.comb(m - n, n)
    if combos <= draws:
        out = []
        for a in itertools.combinations(range(m), n):
            rest = [i for i in range(m) if i not in a]
            out += [(list(a), list(b)) for b in itertools.combinations(rest, n)]
        return out
    out = []
    for _ in range(draws):
        p = rng.permutation(m)
        out.append((list(p[:n]), list(p[n : 2 * n])))
    return out


def row(n: int, data: list[Sample], draws: int, rng: np.random.Generator) -> dict[str, float]:
    """Coverage at n per side: how often each interval of an A/A split contains 1."""
    cov = {"unpaired": [0, 0], "paired": [0, 0]}
    used = 0
    for _label, vals in data:
        x = np.asarray(vals, dtype=float)
        if len(x) < 2 * n:
            continue
        used += 1
        for ia, ib in splits(len(x), n, draws, rng):
            a, b = list(x[ia]), list(x[ib])
            for name, c in (
                ("unpaired", stats.compare(a, b)),
                ("paired", stats.compare_paired(a, b)),
            ):
                if c is not None:
                    cov[name][0] += c.ci_low <= 1 <= c.ci_high
                    cov[name][1] += 1
    return _rates(cov, samples=used)


def _rates(counts: dict[str, list[int]], **extra: float) -> dict[str, float]:
    out: dict[str, float] = dict(extra)
    for name, (hit, tot) in counts.items():
        out[name] = hit / tot if tot else float("nan")
        out[name + " n"] = tot
    return out


def night_draws(m: int, draws: int, rng: np.random.Generator) -> list[tuple[list[int], ...]]:
    """A night's A/A rounds: NIGHT_ROUNDS disjoint pairs of adjacent repeats (2k, 2k+1),
    each side of a pair to A or B at random: the two arms of one round are next to each
    other in time, as a night's two servers are."""
    pairs = m // 2
    out = []
    for _ in range(draws):
        chosen = rng.choice(pairs, NIGHT_ROUNDS, replace=False)
        flip = rng.integers(0, 2, NIGHT_ROUNDS)
        out.append(
            (
                [2 * k + f for k, f in zip(chosen, flip, strict=True)],
                [2 * k + 1 - f for k, f in zip(chosen, flip, strict=True)],
            )
        )
    return out


def nightly(data: list[Sample], draws: int, rng: np.random.Generator) -> dict[str, float]:
    """False regressions of nightly-shaped A/A verdicts, made by compare.versus as detect
    makes them: paired over NIGHT_ROUNDS rounds (adjacent repeats, or random ones), with
    the band from the stored A/A spread or the pair's own; unpaired from random repeats."""
    alarms = {k: [0, 0] for k in ("adjacent stored", "adjacent own", "random stored")}
    alarms |= {"random own": [0, 0], "unpaired": [0, 0]}
    n = NIGHT_ROUNDS
    for _label, vals in data:
        x = np.asarray(vals, dtype=float)
        if len(x) < 2 * n:
            continue
        spread = stats.aa_spread(stats.aa_log_ratios(vals))
        cv = stats.cv(vals)
        shaped = [("adjacent", d) for d in night_draws(len(x), draws, rng)]
        shaped += [("random", d) for d in splits(len(x), n, draws, rng)]
        for how, (ia, ib) in shaped:
            a, b = list(x[ia]), list(x[ib])
            rounds = [("aa", i) for i in range(n)]
            ra = compare.Row(
                server_id="A",
                product="p",
                version="1",
                version_string=None,
                values=a,
                latency=[],
                rounds=rounds,
            )
            rb = compare.Row(
                server_id="B",
                product="p",
                version="1",
                version_string=None,
                values=b,
                latency=[],
                rounds=rounds,
            )
            for band, s in (("stored", spread), ("own", None)):
                if band == "stored" and s is None:
                    continue
                c = compare.versus(ra, rb, None, True, s)
                if c is not None:
                    alarms[f"{how} {band}"][0] += c.verdict == "regression"
                    alarms[f"{how} {band}"][1] += 1
            if how != "random":
                continue
            # the same values from two nights (no shared round): unpaired, with the band
            # from the A/A CV (the sample's; detect's noise table holds it per class)
            ua = compare.Row(
                server_id="A",
                product="p",
                version="1",
                version_string=None,
                values=a,
                latency=[],
                rounds=[("n1", i) for i in range(n)],
            )
            ub = compare.Row(
                server_id="B",
                product="p",
                version="1",
                version_string=None,
                values=b,
                latency=[],
                rounds=[("n2", i) for i in range(n)],
            )
            c = compare.versus(ua, ub, cv, True, None)
            if c is not None and not c.paired:
                alarms["unpaired"][0] += c.verdict == "regression"
                alarms["unpaired"][1] += 1
    return _rates(alarms)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, action="append", required=True)
    ap.add_argument("--draws", type=int, default=400, help="random splits per sample and n")
    a = ap.parse_args()
    data = [s for db in a.db for s in samples(db)]
    rng = np.random.default_rng(SEED)
    print(f"{len(data)} samples (server × cell × run), {sum(len(v) for _, v in data)} values")
    print()
    print("| n per side | samples | unpaired coverage (splits) | paired coverage (splits) |")
    print("|--:|--:|--:|--:|")
    for n in NS:
        r = row(n, data, a.draws, rng)
        if not r["samples"]:
            continue
        print(
            f"| {n} | {r['samples']:.0f} | {r['unpaired']:.1%} ({r['unpaired n']:.0f}) "
            f"| {r['paired']:.1%} ({r['paired n']:.0f}) |"
        )
    night = nightly(data, a.draws, rng)
    print()
    print(f"Nightly-shaped A/A verdicts ({NIGHT_ROUNDS} values a side, compare.versus):")
    print()
    print("| verdict | A/A pairs from | verdicts | false regressions |")
    print("|---|---|--:|--:|")
    names = {
        "adjacent stored": ("paired, band from the stored A/A spread", "adjacent repeats"),
        "adjacent own": ("paired, band from its own spread (Student t)", "adjacent repeats"),
        "random stored": ("paired, band from the stored A/A spread", "random repeats"),
        "random own": ("paired, band from its own spread (Student t)", "random repeats"),
        "unpaired": ("unpaired (no shared round), band from the A/A CV", "random repeats"),
    }
    for key, (text, source) in names.items():
        print(f"| {text} | {source} | {night[key + ' n']:.0f} | {night[key]:.2%} |")


if __name__ == "__main__":
    main()
