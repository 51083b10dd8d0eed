"""SYNTHETIC BENCHMARK DATA: a made-up nightly history for measuring perftrack itself.

Not measurements. N nights × the nightly matrix (configs/matrices/nightly.yaml: its
servers, workloads, charsets, thread ladder, repeats, durations) × K runner classes,
with:
  - noise: lognormal, CV per workload as measured here in A/A runs (docs/benchmarks.md:
    point_select 11.3 %, read_only 10.6 %, read_write 19.9 %);
  - step changes: the newest MySQL release loses 8 % on read_write from 40 % of the history on;
    one runner class gets +6 % on everything (a kernel update) at 70 %;
  - slow drift: one class drifts by -0.01 % a night;
  - missing nights: each class misses a night with probability 3 %, and a night's
    shard dies half-way with probability 2 % (its second half of the cells is absent).

Everything is marked synthetic where a human would look: run ids `synthetic-…`, runner
classes `synthetic-class-…`, server ids `synthetic-…` (except the control server, which
keeps configs/runners.yaml's id so that `detect` finds it; its version string says
synthetic), CPU model "synthetic benchmark data". It refuses to write under the
repository's data/ directory.

    .venv/bin/python benchmarks/synthetic_history.py --nights 30 --db /tmp/h.duckdb
    .venv/bin/python benchmarks/synthetic_history.py --nights 1 --records /tmp/recs
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import math
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

import yaml  # noqa: E402

from perftrack.core import record  # noqa: E402
from perftrack.planning import matrix  # noqa: E402
from perftrack.store import store  # noqa: E402
from perftrack.store.files import nightfiles, rows  # noqa: E402

START = datetime(2025, 1, 1, 1, 0, tzinfo=UTC)
CV = {"oltp_point_select": 0.113, "oltp_read_only": 0.106, "oltp_read_write": 0.199}
BASE_TPS = {"oltp_point_select": 30_000.0, "oltp_read_only": 1_500.0, "oltp_read_write": 700.0}
CHARSET = {
    "latin1": ("latin1", "latin1_swedish_ci", 1.0),
    "utf8mb4": ("utf8mb4", "utf8mb4_general_ci", 0.93),
}
CLASSES = ("a", "b", "c")
P_MISSING_NIGHT = 0.03
P_HALF_NIGHT = 0.02
STEP_REGRESSION = 0.08  # newest server, read_write, from STEP_AT of the history on
STEP_AT = 0.4
ENV_STEP = 0.06  # class b, everything, from ENV_AT on
ENV_AT = 0.7
DRIFT_PER_NIGHT = -0.0001  # class c
INTERVAL_S = 1  # sysbench --report-interval
N_VARIABLES = 480  # a MariaDB 10.11 SHOW GLOBAL VARIABLES has ~650; most are constant
# Records with the cost-per-operation and host fields a real nightly record has (the
# sampler's, run/sampler.py) when True (repo_cost.py --cost): off by default, so the
# speed benchmarks keep the history they were measured on. Per workload at 4 threads, the
# medians of data/results.duckdb's real records (this VM, 2026-11-23..25): user and
# system CPU µs, voluntary and involuntary context switches, bytes written and read, a
# transaction; peak RSS in bytes. Perf counters are unavailable there, as on that VM.
COST = False
REAL_COST = {
    "oltp_point_select": (27.6, 16.1, 0.0042, 0.98, 0.0, 0.0, 109_080_576),
    "oltp_read_only": (876.9, 350.4, 5.45, 14.6, 92.0, 53.7, 138_594_304),
    "oltp_read_write": (1381.9, 613.1, 16.5, 19.0, 52_050.4, 904.3, 147_150_848),
}
COST_CV = 0.08  # repeat to repeat, CPU and context switches; IO twice that
PERF_UNAVAILABLE = "perf stat cannot count hardware events on this machine (synthetic)"


@dataclass(frozen=True)
class Setup:
    m: matrix.Matrix
    classes: tuple[str, ...]
    nights: int  # the history's planned length (where the steps fall)
    seed: int = 1


def load_setup(nights: int, classes: int = 3, seed: int = 1) -> Setup:
    m = matrix.read_matrix(REPO / "configs" / "matrices" / "nightly.yaml")
    return Setup(m, CLASSES[:classes], nights, seed)


def _id(*parts: Any) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def _iso(ts: datetime) -> str:
    """Whole seconds, as a run record writes its timestamps (run/rundir.now)."""
    return ts.isoformat(timespec="seconds").replace("+00:00", "Z")


@functools.cache
def _variables(server: str, charset: str, collation: str) -> dict[str, str]:
    """A variable set like a real one: hundreds of settings, a few differ by version."""
    out = {f"synthetic_setting_{i:03d}": str((i * 7919) % 1000) for i in range(N_VARIABLES)}
    out.update(
        character_set_server=charset,
        collation_server=collation,
        version=server.removeprefix("synthetic-") + "-synthetic",
        innodb_buffer_pool_size="134217728" if "10.2" in server else "268435456",
    )
    return out


@functools.cache
def _control() -> str | None:
    doc = yaml.safe_load((REPO / "configs" / "runners.yaml").read_text(encoding="utf-8"))
    return doc.get("control_server") if isinstance(doc, dict) else None


def _server_id(catalog_id: str) -> str:
    """`synthetic-<id>`, except the control server: it keeps configs/runners.yaml's id, so
    `perftrack detect` recognises it (its version string and the run still say synthetic)."""
    return catalog_id if catalog_id == _control() else f"synthetic-{catalog_id}"


def _newest_mysql(ids: tuple[str, ...] | list[str]) -> str:
    """The step's server: the newest MySQL release of the matrix (never the control)."""
    mysql = [i for i in ids if i.startswith("mysql-") and i != _control()]
    return max(mysql, key=lambda i: tuple(int(x) for x in i.split("-")[1].split(".")))


def _factor(server_index: int, n_servers: int) -> float:
    return 1.0 + 0.04 * server_index - 0.02 * (server_index == n_servers - 1)


def night_records(
    setup: Setup, night: int, rng: random.Random, records: bool = True
) -> Iterator[Any]:
    """Every record of one night, all classes (some classes or half-nights missing).
    `records=False`: (run_id, class, hw, server, workload, threads, collation, repeat, tps,
    started) tuples instead, the same values without building the records (a test's
    quick path; the random stream differs from the records' one)."""
    m = setup.m
    servers = [_server_id(s) for s in m.servers]
    step_server = _server_id(_newest_mysql(m.servers))
    for ci, cls in enumerate(setup.classes):
        if rng.random() < P_MISSING_NIGHT:
            continue
        half = rng.random() < P_HALF_NIGHT
        run_id = f"synthetic-{night:05d}-{cls}"
        hw = _id("hw", cls)[:12]
        level = 1.0
        if cls == "b" and night >= ENV_AT * setup.nights:
            level *= 1 + ENV_STEP
        if cls == "c":
            level *= (1 + DRIFT_PER_NIGHT) ** night
        t = START + timedelta(days=night, minutes=7 * ci)
        cells = _cells(m, len(servers))
        if half:
            cells = cells[: len(cells) // 2]
        for rep, axis, si, wl, th in cells:
            charset, collation, cf = CHARSET[axis]
            f = level * cf * _factor(si, len(servers))
            if (
                servers[si] == step_server
                and wl == "oltp_read_write"
                and night >= STEP_AT * setup.nights
            ):
                f *= 1 - STEP_REGRESSION
            scale = th ** (0.5 if wl != "oltp_read_write" else 0.35)
            sigma = math.sqrt(math.log(1 + CV[wl] ** 2))
            tps = BASE_TPS[wl] * f * scale * math.exp(rng.gauss(-sigma * sigma / 2, sigma))
            wall = m.warmup_s + m.duration_s + rng.uniform(1.0, 4.0)
            if not records:  # the value alone (tests of the statistics: no record dicts)
                yield (run_id, cls, hw, servers[si], wl, th, collation, rep, tps, t)
                t += timedelta(seconds=wall)
                continue
            rec = _record(
                setup,
                run_id,
                cls,
                hw,
                servers[si],
                wl,
                th,
                charset,
                collation,
                axis,
                rep,
                tps,
                t,
                rng,
            )
            yield with_cost(rec, 2445.4 + 100 * ci) if COST else rec
            t += timedelta(seconds=wall)


def _record(
    setup: Setup,
    run_id: str,
    cls: str,
    hw: str,
    server: str,
    wl: str,
    threads: int,
    charset: str,
    collation: str,
    axis: str,
    rep: int,
    tps: float,
    started: datetime,
    rng: random.Random,
) -> dict[str, Any]:
    m = setup.m
    cell_id = _id(server, wl, threads, axis, rep)
    n = m.duration_s // INTERVAL_S
    wobble = CV[wl] / 2
    series = [max(0.01, round(tps * (1 + rng.gauss(0, wobble)), 2)) for _ in range(n)]
    qpt = {"oltp_point_select": 1, "oltp_read_only": 16, "oltp_read_write": 20}[wl]
    lat = 1000.0 * threads / tps
    version = server.removeprefix("synthetic-").split("-")[1]  # mysql-9.7.4-docker: 9.7.4
    return {
        "schema": record.SCHEMA_ID,
        "record_id": record.record_id(run_id, cell_id, 1),
        "run_id": run_id,
        "cell_id": cell_id,
        "attempt": 1,
        "status": "ok",
        "reason": None,
        "started_at": _iso(started),
        "finished_at": _iso(started + timedelta(seconds=m.warmup_s + m.duration_s + 1)),
        "runner_class": f"synthetic-class-{cls}",
        "hardware": {
            "key": hw,
            "cpu_model": f"synthetic benchmark data, class {cls}",
            "cores": 16,
            "mem_gib": 64.0,
            "kernel": "6.1.0-synthetic",
        },
        "server": {
            "id": server,
            "product": "mariadb",
            "version": version,
            "provider": "debian",
            "version_string": f"{version}-MariaDB-synthetic",
            "source_sha256": _id("src", server) * 4,
            "stand_in": None,
        },
        "cell": {
            "workload": wl,
            "threads": threads,
            "charset": charset,
            "collation": collation,
            "profile": m.profile,
            "tables": m.tables,
            "table_size": m.table_size,
            "duration_s": m.duration_s,
            "warmup_s": m.warmup_s,
            "repeat": rep,
            "round": rep,
            "connection": m.connection,
        },
        "effective": {
            "character_set_server": charset,
            "collation_server": collation,
            "database_collation": collation,
            "table_collations": collation,
        },
        "variables": _variables(server, charset, collation),
        "result": {
            "tps": round(tps, 2),
            "qps": round(tps * qpt, 2),
            "latency_avg_ms": round(lat, 3),
            "latency_pct_ms": round(lat * 1.6, 3),
            "latency_pct": 95,
            "latency_max_ms": round(lat * 9, 3),
            "errors_per_s": 0.0,
            "reconnects_per_s": 0.0,
            "total_time_s": float(m.duration_s),
            "threads": threads,
            "events": int(tps * m.duration_s),
            "intervals": [
                {
                    "t": (i + 1) * INTERVAL_S,
                    "tps": v,
                    "qps": round(v * qpt, 2),
                    "lat_pct_ms": round(lat * 1.6, 3),
                    "threads": threads,
                }
                for i, v in enumerate(series)
            ],
        },
        "error_log_tail": None,
        "tool": {
            "name": "sysbench",
            "version": "1.0.20",
            "command": ["sysbench", wl, "run"],
            "perftrack_version": "synthetic",
        },
    }


def with_cost(rec: dict[str, Any], mhz: float) -> dict[str, Any]:
    """The record with SYNTHETIC cost and host fields shaped like real ones: the values
    from REAL_COST with repeat-to-repeat noise, rounded as the sampler rounds them; its
    own random stream (seeded by the record id), so the throughput draws do not move."""
    rng = random.Random(rec["record_id"])
    res, cell = rec["result"], rec["cell"]
    user, sys_, vol, invol, wbytes, rbytes, rss = REAL_COST[cell["workload"]]
    load = (cell["threads"] / 4) ** 0.1

    def noisy(x: float, cv: float = COST_CV) -> float:
        return x * load * math.exp(rng.gauss(-cv * cv / 2, cv))

    txns = res["events"]
    queries = round(res["qps"] * res["total_time_s"])
    user_us, sys_us = noisy(user) * txns, noisy(sys_) * txns
    res.update(
        cpu_us_per_txn=round((user_us + sys_us) / txns, 3),
        cpu_user_us_per_txn=round(user_us / txns, 3),
        cpu_sys_us_per_txn=round(sys_us / txns, 3),
        cpu_us_per_query=round((user_us + sys_us) / queries, 3),
        ctx_vol_per_txn=round(noisy(vol), 4),
        ctx_invol_per_txn=round(noisy(invol), 4),
        read_bytes_per_txn=round(noisy(rbytes, 2 * COST_CV), 1),
        write_bytes_per_txn=round(noisy(wbytes, 2 * COST_CV), 1),
        peak_rss_bytes=float(4096 * round(rss * math.exp(rng.gauss(0, 0.02)) / 4096)),
        instructions_per_txn=None,
        cycles_per_txn=None,
        ipc=None,
    )
    rec["cost"] = {
        "source": "proc",
        "pid": 4242,
        "window_s": float(cell["duration_s"]),
        "transactions": txns,
        "queries": queries,
        "totals": {"cpu_user_us": round(user_us), "cpu_sys_us": round(sys_us)},
        "unavailable": {
            f: PERF_UNAVAILABLE for f in ("cycles_per_txn", "instructions_per_txn", "ipc")
        },
    }
    foreign = round(min(100.0, rng.lognormvariate(0.0, 1.0)), 3)
    rec["host"] = {
        "steal_pct": round(min(100.0, rng.lognormvariate(-1.0, 1.0)), 3),
        "iowait_pct": round(min(100.0, rng.lognormvariate(-1.5, 1.2)), 3),
        "foreign_cpu_pct": foreign,
        "cpu_mhz": mhz,
        "noisy": foreign > 25.0,
        "noisy_reason": f"foreign CPU {foreign}% > 25%" if foreign > 25.0 else None,
    }
    return rec


def refuse_data_dir(path: Path) -> None:
    target = path.resolve()
    data = (REPO / "data").resolve()
    if target == data or data in target.parents:
        raise SystemExit(f"refusing to write synthetic history under {data}: real runs only")


def prepared_night(
    setup: Setup, night: int, rng: random.Random, validate: bool = False
) -> list[store.PreparedRecord]:
    """One night as store rows (the store's own `prepare`); `validate` checks every record
    against the run-record schema (slow: ~ms each), else only the first."""
    out = []
    for i, rec in enumerate(night_records(setup, night, rng)):
        if validate or i == 0:
            record.validate(rec, where=rec["record_id"])
        out.append(store.prepare(rec, rec["record_id"]))
    return out


def grow(db: Path, setup: Setup, first: int, last: int, batch: int = 30) -> int:
    """Ingest nights first..last-1 into `db` through the store, `batch` nights per
    transaction (a fast way to build a long history; the nightly path is one night)."""
    refuse_data_dir(db)
    rngs = night_rngs(setup)
    added = 0
    pending: list[store.PreparedRecord] = []
    for night in range(first, last):
        pending += prepared_night(setup, night, rngs(night))
        if len(pending) and ((night + 1 - first) % batch == 0 or night == last - 1):
            with store.open_db(db, write=True) as st:
                added += st.ingest_prepared(pending).added
            pending = []
    return added


def grow_fast(db: Path, setup: Setup, first: int, last: int, batch: int = 30) -> int:
    """`grow` for long histories (1,000 nights of 3,960 records: minutes, not an hour):
    the same model as `night_records` (noise, steps, drift, missing and half nights),
    but each runner class × cell is turned into rows by the store's `prepare` once, and
    every night only changes the measured columns of those rows, drawn with numpy (the
    per-second series too: its p5/p50/p95 and CV as `prepare` computes them; the series
    itself is not stored, as `prepare` leaves it null). The values differ from `grow`'s
    draw for draw; the model does not."""
    import numpy as np

    refuse_data_dir(db)
    # zstd level 19 takes ~1 s a night here: a long history is written at level 3 (the
    # files ~8% larger; reading them is as fast). Not for measuring sizes: repo_cost.py
    # measures the nights it commits, written as ingest writes them.
    saved = nightfiles.COPY_OPTIONS
    nightfiles.COPY_OPTIONS = saved.replace("COMPRESSION_LEVEL 19", "COMPRESSION_LEVEL 3")
    try:
        return _grow_fast(db, setup, first, last, batch, np)
    finally:
        nightfiles.COPY_OPTIONS = saved


def _cells(m: Any, n_servers: int) -> list[tuple[Any, ...]]:
    """A night's cells in the order they run: (repeat, charset, server index, workload,
    threads)."""
    return [
        (rep, axis, si, wl, th)
        for rep in range(1, m.repeats + 1)
        for axis in m.charsets
        for si in range(n_servers)
        for wl in m.workloads
        for th in m.threads
    ]


def _grow_fast(db: Path, setup: Setup, first: int, last: int, batch: int, np: Any) -> int:
    nights = FastNights(setup, np)
    added = 0
    pending: list[store.PreparedRecord] = []
    for night in range(first, last):
        pending += nights.night(night)
        if pending and ((night + 1 - first) % batch == 0 or night == last - 1):
            with store.open_db(db, write=True) as st:
                added += st.ingest_prepared(pending).added
            pending = []
    return added


class FastNights:
    """grow_fast's model, one night at a time: each runner class × cell is made into rows by
    the store's `prepare` once (with the cost and host fields of `with_cost` when `cost`),
    and each night only changes the measured columns, drawn with numpy (the cost and host
    columns too: the same centres, noise and rounding as `with_cost`)."""

    def __init__(self, setup: Setup, np: Any, cost: bool = False) -> None:
        self.setup, self.np, self.cost = setup, np, cost
        m = setup.m
        servers = [_server_id(s) for s in m.servers]
        step_server = _server_id(_newest_mysql(m.servers))
        self.cells = cells = _cells(m, len(servers))
        self.col = {name: i for i, (name, _) in enumerate(store.RESULT_COLUMNS)}
        self.templates: dict[str, list[store.PreparedRecord]] = {}
        for ci, cls in enumerate(setup.classes):
            rng = random.Random(0)
            hw = _id("hw", cls)[:12]
            recs = (
                _record(
                    setup,
                    f"synthetic-template-{cls}",
                    cls,
                    hw,
                    servers[si],
                    wl,
                    th,
                    *CHARSET[axis][:2],
                    axis,
                    rep,
                    BASE_TPS[wl],
                    START,
                    rng,
                )
                for rep, axis, si, wl, th in cells
            )
            self.templates[cls] = [
                store.prepare(rec, rec["record_id"])
                for rec in (with_cost(r, 2445.4 + 100 * ci) if cost else r for r in recs)
            ]
        self.threads = np.array([c[4] for c in cells], dtype=float)
        self.cv = np.array([CV[c[3]] for c in cells])
        base = np.array(
            [BASE_TPS[c[3]] * CHARSET[c[1]][2] * _factor(c[2], len(servers)) for c in cells]
        )
        rw = np.array([c[3] for c in cells]) == "oltp_read_write"
        self.base = base * self.threads ** np.where(rw, 0.35, 0.5)
        self.stepped = np.array(
            [servers[c[2]] == step_server and c[3] == "oltp_read_write" for c in cells]
        )
        self.qpt = np.array(
            [
                {"oltp_point_select": 1, "oltp_read_only": 16, "oltp_read_write": 20}[c[3]]
                for c in cells
            ]
        )
        # with_cost's centres per cell: (user, sys, vol, invol, write, read) × load, and RSS
        real = np.array([REAL_COST[c[3]][:6] for c in cells])
        self.cost_centre = real * ((self.threads / 4) ** 0.1)[:, None]
        self.rss = np.array([REAL_COST[c[3]][6] for c in cells], dtype=float)

    def night(self, night: int) -> list[store.PreparedRecord]:
        """Every row of one night, all classes (some classes or half-nights missing)."""
        np, setup, m, col = self.np, self.setup, self.setup.m, self.col
        n_int = m.duration_s // INTERVAL_S
        out: list[store.PreparedRecord] = []
        rng = night_rngs(setup)(night)
        npr = np.random.default_rng(setup.seed * 1_000_003 + night)
        for ci, cls in enumerate(setup.classes):
            if rng.random() < P_MISSING_NIGHT:
                continue
            n = len(self.cells) // 2 if rng.random() < P_HALF_NIGHT else len(self.cells)
            level = 1.0
            if cls == "b" and night >= ENV_AT * setup.nights:
                level *= 1 + ENV_STEP
            if cls == "c":
                level *= (1 + DRIFT_PER_NIGHT) ** night
            f = self.base[:n] * level
            if night >= STEP_AT * setup.nights:
                f = f * np.where(self.stepped[:n], 1 - STEP_REGRESSION, 1.0)
            cv = self.cv[:n]
            sigma = np.sqrt(np.log(1 + cv**2))
            tps = f * np.exp(npr.normal(-sigma * sigma / 2, sigma))
            ser = tps[:, None] * (1 + npr.normal(0, 1, (n, n_int)) * (cv[:, None] / 2))
            ser = np.maximum(0.01, np.round(ser, 2))
            pct = np.round(np.percentile(ser, rows.TPS_PERCENTILES, axis=1), 2).tolist()
            cvs = np.round(ser.std(axis=1, ddof=1) / ser.mean(axis=1), 4).tolist()
            lat = (1000.0 * self.threads[:n] / tps).tolist()
            qps = (tps * self.qpt[:n]).tolist()
            costs = self._costs(n, npr) if self.cost else None
            tps_l = tps.tolist()
            run_id = f"synthetic-{night:05d}-{cls}"
            t0 = START + timedelta(days=night, minutes=7 * ci)
            t0 = t0.replace(tzinfo=None)
            walls = np.cumsum(m.warmup_s + m.duration_s + npr.uniform(1.0, 4.0, n)).tolist()
            length = timedelta(seconds=m.warmup_s + m.duration_s + 1)
            for i in range(n):
                tpl = self.templates[cls][i]
                row = list(tpl.result)
                # whole seconds, as _iso writes records
                started = (t0 + timedelta(seconds=walls[i - 1] if i else 0)).replace(microsecond=0)
                rid = f"{run_id}:{row[col['cell_id']]}:1"
                row[col["record_id"]], row[col["run_id"]] = rid, run_id
                row[col["started_at"]] = started
                row[col["finished_at"]] = started + length
                t = tps_l[i]
                row[col["tps"]], row[col["qps"]] = round(t, 2), round(qps[i], 2)
                row[col["latency_avg_ms"]] = round(lat[i], 3)
                row[col["latency_pct_ms"]] = round(lat[i] * 1.6, 3)
                row[col["latency_max_ms"]] = round(lat[i] * 9, 3)
                row[col["events"]] = int(t * m.duration_s)
                row[col["tps_p5"]], row[col["tps_p50"]], row[col["tps_p95"]] = (
                    pct[0][i],
                    pct[1][i],
                    pct[2][i],
                )
                row[col["tps_cv"]] = cvs[i]
                if costs is not None:
                    for name, values in costs.items():
                        row[col[name]] = values[i]
                run = (run_id, *tpl.run[1:3], started, row[col["finished_at"]], tpl.run[5])
                out.append(
                    store.PreparedRecord(
                        record_id=rid,
                        hardware=tpl.hardware,
                        server=tpl.server,
                        run=run,
                        result=tuple(row),
                        varset_hash=tpl.varset_hash,
                        variables=tpl.variables,
                    )
                )
        return out

    def _costs(self, n: int, npr: Any) -> dict[str, list[Any]]:
        """One class's cost and host columns for a night: with_cost's draws, numpy's stream."""
        np = self.np

        def noisy(x: Any, cv: float = COST_CV) -> Any:
            return x * np.exp(npr.normal(-cv * cv / 2, cv, x.shape))

        c = self.cost_centre[:n]
        user, sys_ = noisy(c[:, 0]), noisy(c[:, 1])
        foreign = np.round(np.minimum(100.0, npr.lognormal(0.0, 1.0, n)), 3)
        return {
            "cpu_us_per_txn": np.round(user + sys_, 3).tolist(),
            "cpu_user_us_per_txn": np.round(user, 3).tolist(),
            "cpu_sys_us_per_txn": np.round(sys_, 3).tolist(),
            "cpu_us_per_query": np.round((user + sys_) / self.qpt[:n], 3).tolist(),
            "ctx_vol_per_txn": np.round(noisy(c[:, 2]), 4).tolist(),
            "ctx_invol_per_txn": np.round(noisy(c[:, 3]), 4).tolist(),
            "write_bytes_per_txn": np.round(noisy(c[:, 4], 2 * COST_CV), 1).tolist(),
            "read_bytes_per_txn": np.round(noisy(c[:, 5], 2 * COST_CV), 1).tolist(),
            "peak_rss_bytes": (
                4096 * np.round(self.rss[:n] * np.exp(npr.normal(0, 0.02, n)) / 4096)
            ).tolist(),
            "host_steal_pct": np.round(np.minimum(100.0, npr.lognormal(-1.0, 1.0, n)), 3).tolist(),
            "host_iowait_pct": np.round(np.minimum(100.0, npr.lognormal(-1.5, 1.2, n)), 3).tolist(),
            "host_foreign_cpu_pct": foreign.tolist(),
            "noisy": (foreign > 25.0).tolist(),
            "noisy_reason": [
                f"foreign CPU {x}% > 25%" if x > 25.0 else None for x in foreign.tolist()
            ],
        }


def night_rngs(setup: Setup) -> Callable[[int], random.Random]:
    """A random stream per night: any night can be generated on its own, identically."""
    return lambda night: random.Random(setup.seed * 1_000_003 + night)


def write_records(setup: Setup, night: int, out: Path) -> int:
    refuse_data_dir(out)
    n = 0
    for rec in night_records(setup, night, night_rngs(setup)(night)):
        record.write(rec, out / rec["run_id"] / "records")
        n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=30)
    ap.add_argument("--classes", type=int, default=3, choices=(1, 2, 3))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--db", type=Path, help="DuckDB file to grow (never under data/)")
    ap.add_argument("--records", type=Path, help="write the last night's run records here")
    args = ap.parse_args(argv)
    setup = load_setup(args.nights, args.classes, args.seed)
    if args.db:
        n = grow(args.db, setup, 0, args.nights)
        print(f"{args.db}: {n} synthetic records over {args.nights} nights")
    if args.records:
        n = write_records(setup, args.nights - 1, args.records)
        print(f"{args.records}: {n} synthetic run records of night {args.nights - 1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
