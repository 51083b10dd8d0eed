"""Alert precision of nightly change points on a labelled SYNTHETIC year (issue 22 item 5).

SYNTHETIC DATA, made up here and kept in memory (nothing is written anywhere): 365 nights
of the whole nightly matrix (configs/matrices/nightly.yaml: its servers × workloads ×
charsets × threads, 5 repeats a night) × 3 runner classes. A night's value of a series is
the median of its 5 repeats, each lognormal with the per-cell CV of its workload measured
on this machine (the `noise` table of data/results.duckdb, computed by `detect` from real
repeats; the noisiest hardware key per workload). Injected, each with a known date and size:

  server steps     one server and workload on every class (a rebuilt image), sizes 0.5, 1,
                   2 and 3 × the workload's CV, up or down
  workload steps   one server and workload on one class
  series steps     one series (one thread count and charset)
  environment      every series of one class and its control server (a kernel update)
  drift            a whole class (-0.02 % a night) and one server's workload on one class
                   (-0.05 % a night over 200 nights): never a step
  missing nights   3 % of class-nights, a week-long outage of one class, and 2 % of
                   class-nights that stop half-way (half of the series have no point)

Then it runs the change-point detection `perftrack detect` runs (analysis/changepoints.py,
on the points the store's `nightly_points` would return) and scores every reported row
against the labels:

    .venv/bin/python benchmarks/alert_precision.py --seeds 10
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from perftrack.analysis import changepoints, detect, steps  # noqa: E402
from perftrack.core import yamlfile  # noqa: E402
from perftrack.planning import matrix  # noqa: E402
from perftrack.store import store  # noqa: E402

NIGHTS = 365
CLASSES = ("a", "b", "c")
START = datetime(2025, 1, 1, 1, 0, tzinfo=UTC).replace(tzinfo=None)
P_MISSING = 0.03
P_HALF = 0.02
OUTAGE = ("a", 150, 157)  # class a runs nothing for a week
SIZES = (0.5, 1.0, 2.0, 3.0)  # step sizes in units of the workload's per-cell CV
CLASS_DRIFT = ("c", -0.0002)  # a night
SERIES_DRIFT_PER_NIGHT = -0.0005
MATCH = changepoints.MATCH_NIGHTS
Z95 = steps.Z_INTERVAL
FIRST, LAST = 40, NIGHTS - 40  # injected dates: each side has 40 nights of history


@dataclass
class Event:
    kind: str  # server | workload | series | environment
    night: int
    size: float  # relative: +0.06 = 6 % more throughput
    cls: str | None = None
    server: str | None = None
    workload: str | None = None
    threads: int | None = None
    collation: str | None = None
    k: float = 0.0  # size in units of the CV

    def hits(self, row: dict[str, Any]) -> bool:
        if abs(row["night"] - self.night) > MATCH:
            return False
        if self.kind == "environment":
            return row["cls"] == self.cls and row["scope"] == "class"
        if row["server"] != self.server or row["workload"] != self.workload:
            return False
        if self.kind != "server" and row["cls"] != self.cls:
            return False
        if self.kind == "series" and row["scope"] == "series":
            return (row["threads"], row["collation"]) == (self.threads, self.collation)
        return True


def measured_cv(workloads: list[str]) -> dict[str, float]:
    """Per-cell CV per workload from the real DB's `noise` table (noisiest hardware)."""
    with store.open_db(REPO / "data" / "results.duckdb", write=False) as st:
        cv = st.noise_cv()
    out = {}
    for wl in workloads:
        vals = [v for (_rc, _hw, w, metric), v in cv.items() if w == wl and metric == "tps"]
        if not vals:
            raise SystemExit(f"error: no measured noise for {wl} in data/results.duckdb")
        out[wl] = max(vals)
    return out


def labelled_year(seed: int, cv: dict[str, float], m: matrix.Matrix, control: str):
    """(points as nightly_points returns them, events, drifting groups)."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    servers = list(m.servers)
    tested = [s for s in servers if s != control]
    collations = {"latin1": "latin1_swedish_ci", "utf8mb4": "utf8mb4_general_ci"}
    events: list[Event] = []
    busy: dict[tuple[Any, ...], list[int]] = defaultdict(list)

    def free_night(target: tuple[Any, ...]) -> int:
        while True:
            n = rng.randrange(FIRST, LAST)
            if not OUTAGE[1] - MATCH <= n <= OUTAGE[2] + MATCH:
                busy[target].append(n)
                return n

    # each injected step gets a server and workload of its own (24 steps, 30 pairs)
    pairs = rng.sample([(s, wl) for s in tested for wl in m.workloads], 3 * 2 * len(SIZES))

    def signed(k: float, wl: str) -> float:
        return math.expm1(rng.choice((-1, 1)) * k * cv[wl])

    for k in SIZES:
        for _ in range(2):
            s, wl = pairs.pop()
            events.append(Event("server", free_night((s, wl)), signed(k, wl), None, s, wl, k=k))
            (s, wl), c = pairs.pop(), rng.choice(CLASSES)
            events.append(Event("workload", free_night((s, wl)), signed(k, wl), c, s, wl, k=k))
            (s, wl), c = pairs.pop(), rng.choice(CLASSES)
            th, ch = rng.choice(m.threads), rng.choice(m.charsets)
            events.append(
                Event("series", free_night((s, wl)), signed(k, wl), c, s, wl, th, collations[ch], k)
            )
    for c, size in (("b", 0.06), ("a", -0.05)):
        events.append(Event("environment", free_night(("env", c)), size, c))
    drift_group = (CLASSES[0], rng.choice(tested), rng.choice(m.workloads))
    drift_from = rng.randrange(FIRST, NIGHTS - 200)

    points: dict[tuple[Any, ...], list[tuple[Any, ...]]] = defaultdict(list)
    base = {s: 1.0 + 0.03 * i for i, s in enumerate(servers)}
    for ci, cls in enumerate(CLASSES):
        hw = f"synthetic-hw-{cls}"
        for night in range(NIGHTS):
            if rng.random() < P_MISSING or (cls == OUTAGE[0] and OUTAGE[1] <= night < OUTAGE[2]):
                continue
            half = rng.random() < P_HALF
            run_id = f"synthetic-{night:05d}-{cls}"
            at = START + timedelta(days=night, minutes=7 * ci)
            level = 1.0
            if cls == CLASS_DRIFT[0]:
                level *= (1 + CLASS_DRIFT[1]) ** night
            for e in events:
                if e.kind == "environment" and e.cls == cls and night >= e.night:
                    level *= 1 + e.size
            i = 0
            for s in servers:
                for wl in m.workloads:
                    for ch in m.charsets:
                        for th in m.threads:
                            i += 1
                            if half and i % 2:
                                continue
                            f = level * base[s] * (th**0.4)
                            for e in events:
                                if e.kind == "environment" or night < e.night:
                                    continue
                                if (e.server, e.workload) != (s, wl):
                                    continue
                                if e.kind != "server" and e.cls != cls:
                                    continue
                                if e.kind == "series" and (e.threads, e.collation) != (
                                    th,
                                    collations[ch],
                                ):
                                    continue
                                f *= 1 + e.size
                            if (cls, s, wl) == drift_group and night >= drift_from:
                                f *= (1 + SERIES_DRIFT_PER_NIGHT) ** (night - drift_from)
                            sig = math.sqrt(math.log(1 + cv[wl] ** 2))
                            reps = f * np.exp(nrng.normal(-sig * sig / 2, sig, m.repeats))
                            key = (
                                hw,
                                f"synthetic-class-{cls}",
                                wl,
                                th,
                                collations[ch],
                                m.profile,
                                m.tables,
                                m.table_size,
                                m.duration_s,
                                m.connection,
                                *([None] * (len(detect.SERIES_COLS) - 10)),
                                s,
                            )
                            points[key].append((run_id, at, float(np.median(reps)) * 1000))
    return points, events, {("class", CLASS_DRIFT[0]), ("group", *drift_group)}


def rows_of(changes: list[changepoints.Change]) -> list[dict[str, Any]]:
    cols = detect.SERIES_COLS
    out = []
    for c in changes:
        k = dict(zip((*cols, "server_id"), c.key, strict=True))
        low, high = c.step.interval
        out.append(
            {
                "night": (c.at - START).days,
                "cls": k["runner_class"].removeprefix("synthetic-class-"),
                "server": k["server_id"],
                "workload": k["workload"],
                "threads": k["threads"],
                "collation": k["collation"],
                "scope": c.scope,
                "environment": c.environment,
                "rel": c.step.rel,
                "low": low,
                "high": high,
            }
        )
    return out


def score(rows: list[dict[str, Any]], events: list[Event], drift: set) -> dict[str, Any]:
    matched: dict[int, list[dict[str, Any]]] = defaultdict(list)
    errors: dict[str, list[float]] = defaultdict(list)
    false = []
    for r in rows:
        hit = [i for i, e in enumerate(events) if e.hits(r)]
        if hit:
            matched[hit[0]].append(r)
        else:
            false.append(r)
    per = []
    for i, e in enumerate(events):
        rs = matched.get(i, [])
        inside = any(r["low"] <= e.size <= r["high"] for r in rs)
        if rs:  # the size's error in units of its standard error (calibrated: sd ≈ 1)
            r = rs[0]
            se = (math.log1p(r["high"]) - math.log1p(r["low"])) / (2 * Z95)
            errors[e.kind].append((math.log1p(r["rel"]) - math.log1p(e.size)) / se)
        if e.kind == "environment":
            once = sum(1 for r in rs if r["environment"]) == 1
            per.append((e, bool(rs), inside, once, len(rs)))
        else:
            per.append((e, bool(rs), inside, None, len(rs)))
    drift_false = [
        r
        for r in false
        if ("class", r["cls"]) in drift or ("group", r["cls"], r["server"], r["workload"]) in drift
    ]
    return {
        "rows": len(rows),
        "false": false,
        "drift_false": drift_false,
        "per": per,
        "errors": errors,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5, help="synthetic years (seeds 1..N)")
    args = ap.parse_args(argv)
    m = matrix.read_matrix(REPO / "configs" / "matrices" / "nightly.yaml")
    control = yamlfile.read_yaml(REPO / "configs" / "runners.yaml")["control_server"]
    cv = measured_cv(list(m.workloads))
    n_series = len(m.servers) * len(m.workloads) * len(m.charsets) * len(m.threads) * 3
    print(
        f"matrix: {len(m.servers)} servers (control {control}) × {len(m.workloads)} workloads"
        f" × {len(m.charsets)} charsets × {len(m.threads)} threads × 3 classes = {n_series}"
        f" series; per-cell CV {', '.join(f'{w} {v:.1%}' for w, v in cv.items())}"
    )
    total_rows = total_false = total_drift = 0
    per_all = []
    errors: dict[str, list[float]] = defaultdict(list)
    secs = []
    for seed in range(1, args.seeds + 1):
        points, events, drift = labelled_year(seed, cv, m, control)
        t0 = time.perf_counter()
        changes = changepoints.detect(points, control, detect.SERIES_COLS)
        secs.append(time.perf_counter() - t0)
        s = score(rows_of(changes), events, drift)
        total_rows += s["rows"]
        total_false += len(s["false"])
        total_drift += len(s["drift_false"])
        per_all += s["per"]
        for kind, zs in s["errors"].items():
            errors[kind] += zs
        for r in s["false"]:
            print(f"  seed {seed} false: {r}")
    real = total_rows - total_false
    years = args.seeds
    print(
        "\n| synthetic years | rows reported | real | false | precision | false alerts / 30"
        " nights (matrix) | of them on drift |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {years} | {total_rows} | {real} | {total_false} | {real / max(1, total_rows):.1%} |"
        f" {total_false / (years * NIGHTS / 30):.2f} | {total_drift} |"
    )
    print(
        "\n| injected | size (× CV) | events | found ±3 nights | size in interval | rows / found"
        " event |"
    )
    print("|---|---|---|---|---|---|")
    by: dict[tuple[str, float], list[Any]] = defaultdict(list)
    for e, found, inside, _once, n in per_all:
        by[(e.kind, e.k)].append((found, inside, n))
    for (kind, k), xs in sorted(by.items()):
        f = [x for x in xs if x[0]]
        print(
            f"| {kind} | {k:g} | {len(xs)} | {len(f)} | {sum(x[1] for x in xs)} |"
            f" {sum(x[2] for x in f) / max(1, len(f)):.2f} |"
        )
    print(
        "\nsize error / its standard error (a calibrated interval: mean ≈ 0, sd ≈ 1, 95 % of"
        " |error| ≤ 1.96):"
    )
    for kind, zs in sorted(errors.items()):
        z = np.asarray(zs)
        print(
            f"  {kind}: {len(z)} found, mean {z.mean():+.2f}, sd {z.std(ddof=1):.2f},"
            f" within ±1.96: {np.mean(np.abs(z) <= Z95):.1%}"
        )
    big = [x for x in per_all if x[1] and (x[0].kind == "environment" or x[0].k >= 2)]
    print(
        f"steps ≥ 2 × CV and environment steps found with their size in the interval: "
        f"{sum(1 for x in big if x[2])}/{len(big)}"
    )
    env = [x for x in per_all if x[0].kind == "environment"]
    print(
        f"\nenvironment steps reported once per class as environment: "
        f"{sum(1 for x in env if x[3])}/{len(env)}"
    )
    print(
        f"detect's change-point step: {np.median(secs):.1f} s a year (median of {years}; "
        "shared machine)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
