"""False-alarm rate and power of perftrack's tag-vs-tag verdicts, on real repeats.

Input: a DB holding many interleaved repeats of the same cells (e.g. after
`perftrack run benchmarks/matrices/aa.yaml` + ingest). For each series (server × cell
shape) with >= 2n repeats:
  A/A: draw two disjoint random n-subsets of the same server's real repeats, compare them
       exactly as `perftrack compare` does (noise-calibrated threshold from the series'
       own CV); count "regression" verdicts — false alarms.
  power (SEMI-SYNTHETIC: real noise, injected shift): the same draws with side B
       multiplied by (1 - shift) for shift 3%, 5%, 10%, 20%; count "regression".
Also prints how many repeats per side stats.repeats_needed says a -5% shift needs at the
measured noise.

    .venv/bin/python benchmarks/stats_error_rates.py --db /tmp/aa.duckdb --draws 300 --n 5
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from perftrack.analysis import stats
from perftrack.store import store

SHIFTS = (0.0, 0.03, 0.05, 0.10, 0.20)
SEED = 11


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--n", type=int, nargs="+", default=[5, 10])
    a = ap.parse_args()
    with store.open_db(a.db, write=False) as st:
        rows = st.con.execute("""
            SELECT s.server_id, r.workload, r.threads, r."collation", r.tps
            FROM results r JOIN servers s USING (server_key) WHERE r.status = 'ok'
        """).fetchall()
    series: dict[tuple, list[float]] = defaultdict(list)
    for *key, tps in rows:
        series[tuple(key)].append(float(tps))
    rng = np.random.default_rng(SEED)
    print(
        "| series | repeats | CV | n per side | threshold | "
        + " | ".join("A/A false alarms" if s == 0 else f"detected at -{s:.0%}" for s in SHIFTS)
        + " | repeats needed for -5% |"
    )
    print("|---" * (6 + len(SHIFTS)) + "|")
    for key, vals in sorted(series.items()):
        x = np.asarray(vals)
        cv = stats.cv(vals) or 0.0
        for n in a.n:
            if len(x) < 2 * n:
                continue
            rates = []
            for shift in SHIFTS:
                hits = 0
                for _ in range(a.draws):
                    idx = rng.permutation(len(x))
                    side_a, side_b = x[idx[:n]], x[idx[n : 2 * n]] * (1 - shift)
                    thr = stats.noise_threshold(cv, n, n)
                    c = stats.compare(list(side_a), list(side_b), threshold=thr)
                    hits += c is not None and c.verdict == "regression"
                rates.append(hits / a.draws)
            thr = stats.noise_threshold(cv, n, n)
            print(
                f"| {key[0]} {key[1]} t={key[2]} | {len(x)} | {cv:.1%} | {n} | ±{thr:.1%} | "
                + " | ".join(f"{r:.1%}" for r in rates)
                + f" | {stats.repeats_needed(cv, 0.05)} |"
            )
    print(
        f"\n{a.draws} draws per cell of the table; shifts are applied to real values "
        "(semi-synthetic)."
    )


if __name__ == "__main__":
    main()
