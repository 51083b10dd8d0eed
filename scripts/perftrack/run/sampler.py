"""Cost per operation and host signals over one measured window (issue #9).

Around every measured sysbench/mysqlslap run (after the warm-up) the runner takes a
`Window`: one snapshot when the measurement starts and one when it ends, nothing in
between, so sampling costs the benchmark two reads of a few /proc files per cell.

The server's own resource use comes from
  process providers  /proc/PID/stat (utime, stime: all threads, exited ones included),
                     /proc/PID/io (read_bytes, write_bytes: all threads),
                     /proc/PID/task/*/status (context switches, per thread, summed),
                     /proc/PID/status VmHWM (peak RSS)
  docker provider    the container's cgroup: cpu.stat (user_usec, system_usec), io.stat
                     (rbytes, wbytes), memory.peak; context switches from the threads of
                     the processes in cgroup.procs. A controller that is off (no io.stat
                     or memory.peak, e.g. a hybrid v1/v2 host): the container's server
                     process's /proc files; no cgroup v2 at all: sampled as a process
and is divided by the transactions (and queries) sysbench reports. Hardware counters
(instructions, cycles) come from `perf stat -p PID` where perf can count them; where it
cannot (VMs report "<not supported>") they are null with the reason, never zero.

Host signals of the same window: CPU steal and iowait from /proc/stat, the CPU used by
everything other than the server, the load generator and perftrack ("foreign"), and the
CPU frequency where readable. A window above the limits in configs/runners.yaml
(`noise_limits:`) is `noisy`, with the reason.

Known limit: a server thread that exits during the window takes its context switches with
it (/proc keeps no per-process total of them); sysbench's connections live for the whole
run, so the threads doing the work are counted.
"""

from __future__ import annotations

import re
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perftrack.core import yamlfile
from perftrack.core.errors import ConfigError
from perftrack.run.perf import HW_EVENTS, PerfStat, perf_hardware
from perftrack.run.targets import CLK_TCK, PROC, Counters, Target, read_file

# Defaults of `noise_limits:` in configs/runners.yaml (percent of all CPUs of the host).
DEFAULT_LIMITS: dict[str, float] = {"steal_pct": 5.0, "iowait_pct": 10.0, "foreign_cpu_pct": 25.0}
LIMIT_KEYS = (*DEFAULT_LIMITS, "repeat_noisy")


# === configuration =====================================================================


@dataclass(frozen=True)
class NoiseLimits:
    steal_pct: float = DEFAULT_LIMITS["steal_pct"]
    iowait_pct: float = DEFAULT_LIMITS["iowait_pct"]
    foreign_cpu_pct: float = DEFAULT_LIMITS["foreign_cpu_pct"]
    # re-measure a cell whose window was noisy, once, right away (both records kept)
    repeat_noisy: bool = False


def load_limits(config_dir: Path) -> NoiseLimits:
    """`noise_limits:` of configs/runners.yaml (all keys optional; no file: defaults)."""
    path = config_dir / "runners.yaml"
    if not path.is_file():
        return NoiseLimits()
    data = yamlfile.read_yaml(path)
    raw = data.get("noise_limits") if isinstance(data, dict) else None
    if raw is None:
        return NoiseLimits()
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: noise_limits must be a mapping of {', '.join(LIMIT_KEYS)}")
    unknown = sorted(set(map(str, raw)) - set(LIMIT_KEYS))
    if unknown:
        raise ConfigError(
            f"{path}: noise_limits: unknown key {unknown[0]!r}; known: {', '.join(LIMIT_KEYS)}"
        )
    values: dict[str, Any] = {}
    for key in DEFAULT_LIMITS:
        if key in raw:
            v = raw[key]
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 100:
                raise ConfigError(f"{path}: noise_limits.{key} must be a percentage 0-100")
            values[key] = float(v)
    if "repeat_noisy" in raw:
        if not isinstance(raw["repeat_noisy"], bool):
            raise ConfigError(f"{path}: noise_limits.repeat_noisy must be true or false")
        values["repeat_noisy"] = raw["repeat_noisy"]
    return NoiseLimits(**values)


def noisy_reason(host: dict[str, Any], limits: NoiseLimits) -> str | None:
    """Why a window's host signals make it noisy (None: within every limit)."""
    reasons = []
    for key, label in (
        ("steal_pct", "CPU steal"),
        ("iowait_pct", "iowait"),
        ("foreign_cpu_pct", "foreign CPU"),
    ):
        value, limit = host.get(key), getattr(limits, key)
        # A limit of 0 allows nothing: every window with the signal is noisy (even at 0%).
        if value is not None and (value > limit or limit == 0):
            reasons.append(f"{label} {value:.1f}% > {limit:g}%")
    return "; ".join(reasons) or None


# === the server's counters ==============================================================


# === host signals ========================================================================


def _proc_stat_cpu() -> list[int]:
    """The aggregate `cpu` line of /proc/stat: user nice system idle iowait irq softirq
    steal (guest time is already inside user)."""
    line = (read_file(PROC / "stat") or "").splitlines()[0]
    return [int(x) for x in line.split()[1:9]]


def cpu_mhz() -> float | None:
    """Mean current frequency over the CPUs: cpufreq if exposed, else /proc/cpuinfo."""
    freqs = []
    for p in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_cur_freq"):
        text = read_file(p)
        if text and text.strip().isdigit():
            freqs.append(int(text) / 1000)
    if not freqs:
        cpuinfo = read_file(PROC / "cpuinfo") or ""
        freqs = [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", cpuinfo, re.M)]
    return round(sum(freqs) / len(freqs), 1) if freqs else None


def _own_cpu_us() -> float:
    """CPU of perftrack and its reaped children (the load generator) so far, µs."""
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime) * 1e6


@dataclass(kw_only=True)
class Snapshot:
    t: float
    server: Counters
    host_cpu: list[int]
    own_cpu_us: float
    mhz: float | None


def snapshot(target: Target) -> Snapshot:
    return Snapshot(
        t=time.monotonic(),
        server=target.counters(),
        host_cpu=_proc_stat_cpu(),
        own_cpu_us=_own_cpu_us(),
        mhz=cpu_mhz(),
    )


# === the window ==========================================================================


@dataclass(kw_only=True)
class WindowSample:
    """What one window measured: raw deltas, ready to divide by the work done."""

    source: str
    pid: int | None
    window_s: float
    totals: dict[str, float | None]
    peak_rss_bytes: int | None
    host: dict[str, Any]
    unavailable: dict[str, str]


class Window:
    """`start()` before the measured run, `stop()` right after it returns (its load
    generator reaped, so its CPU is in RUSAGE_CHILDREN)."""

    def __init__(self, target: Target, *, perf: bool = True) -> None:
        self.target = target
        self.perf_reason = perf_hardware() if perf else "perf sampling is off"
        pid = target.pid
        if self.perf_reason is None and pid is None:
            self.perf_reason = "no host PID for the server to attach perf to"
        self.perf = PerfStat(pid) if self.perf_reason is None and pid is not None else None
        self.first: Snapshot | None = None

    def start(self) -> None:
        self.first = snapshot(self.target)
        if self.perf is not None:  # after the snapshot: a failed one leaves no perf behind
            self.perf.start()

    def stop(self) -> WindowSample:
        assert self.first is not None, "stop() before start()"
        try:
            last = snapshot(self.target)
        finally:
            counts = self.perf.stop() if self.perf is not None else {}
        return _sample(self.target, self.first, last, counts, self._perf_reason(counts))

    def _perf_reason(self, counts: dict[str, float | str]) -> str | None:
        if self.perf_reason is not None:
            return self.perf_reason
        if self.perf is not None and self.perf.error:
            return self.perf.error
        bad = [f"{e}: {counts.get(e)}" for e in HW_EVENTS if not isinstance(counts.get(e), float)]
        return f"perf stat gave no hardware counts ({', '.join(bad)})" if bad else None


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else max(b - a, 0.0)


def _ctx_delta(
    before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]]
) -> tuple[int, int]:
    """Switches of every thread alive at the end (a thread new in the window counts whole)."""
    vol = invol = 0
    for tid, (v, i) in after.items():
        v0, i0 = before.get(tid, (0, 0))
        if v < v0 or i < i0:  # a tid reused by a new thread
            v0 = i0 = 0
        vol, invol = vol + v - v0, invol + i - i0
    return vol, invol


def _sample(
    target: Target,
    before: Snapshot,
    after: Snapshot,
    counts: dict[str, float | str],
    perf_reason: str | None,
) -> WindowSample:
    unavailable: dict[str, str] = {}
    for what, reason in {**before.server.unavailable, **after.server.unavailable}.items():
        unavailable[what] = reason
    user = _delta(before.server.cpu_user_us, after.server.cpu_user_us)
    sys_ = _delta(before.server.cpu_sys_us, after.server.cpu_sys_us)
    vol, invol = (
        _ctx_delta(before.server.ctx, after.server.ctx) if after.server.ctx else (None, None)
    )
    totals: dict[str, float | None] = {
        "cpu_user_us": user,
        "cpu_sys_us": sys_,
        "ctx_vol": vol,
        "ctx_invol": invol,
        "read_bytes": _delta(before.server.read_bytes, after.server.read_bytes),
        "write_bytes": _delta(before.server.write_bytes, after.server.write_bytes),
        "instructions": None,
        "cycles": None,
    }
    if perf_reason is None:
        totals["instructions"] = float(counts["instructions"])
        totals["cycles"] = float(counts["cycles"])
    else:
        unavailable["instructions"] = unavailable["cycles"] = perf_reason
    return WindowSample(
        source=target.source,
        pid=target.pid,
        window_s=round(after.t - before.t, 3),
        totals=totals,
        peak_rss_bytes=after.server.peak_rss_bytes,
        host=host_signals(before, after, (user or 0.0) + (sys_ or 0.0)),
        unavailable=unavailable,
    )


def host_signals(before: Snapshot, after: Snapshot, server_cpu_us: float) -> dict[str, Any]:
    """Steal, iowait and foreign CPU over the window, in % of all the host's CPUs."""
    d = [y - x for x, y in zip(before.host_cpu, after.host_cpu, strict=True)]
    user, nice, system, _idle, iowait, irq, softirq, steal = d
    total = sum(d)
    mhz = [m for m in (before.mhz, after.mhz) if m is not None]
    out: dict[str, Any] = {
        "steal_pct": None,
        "iowait_pct": None,
        "foreign_cpu_pct": None,
        "server_cpu_pct": None,
        "loadgen_cpu_pct": None,
        "cpu_mhz": round(sum(mhz) / len(mhz), 1) if mhz else None,
    }
    if total <= 0:
        return out
    busy_us = (user + nice + system + irq + softirq) * 1e6 / CLK_TCK
    capacity_us = total * 1e6 / CLK_TCK
    own_us = max(after.own_cpu_us - before.own_cpu_us, 0.0)

    def pct(x: float) -> float:
        return round(min(max(100.0 * x / capacity_us, 0.0), 100.0), 3)

    out.update(
        steal_pct=round(100.0 * steal / total, 3),
        iowait_pct=round(100.0 * iowait / total, 3),
        foreign_cpu_pct=pct(busy_us - server_cpu_us - own_us),
        server_cpu_pct=pct(server_cpu_us),
        loadgen_cpu_pct=pct(own_us),
    )
    return out


# === per operation ========================================================================


def _per(x: float | None, n: int | None, digits: int = 3) -> float | None:
    return None if x is None or not n else round(x / n, digits)


def work_done(parsed: dict[str, Any]) -> tuple[int | None, int | None]:
    """(transactions, queries) of a parsed sysbench/slap result."""
    t = parsed.get("total_time_s") or 0.0
    txns = parsed.get("events") or (round(parsed["tps"] * t) if parsed.get("tps") else None)
    if all(isinstance(parsed.get(k), int) for k in ("reads", "writes", "other")):
        queries = parsed["reads"] + parsed["writes"] + parsed["other"]
    else:
        queries = round(parsed["qps"] * t) if parsed.get("qps") and t else None
    return txns or None, queries or None


def per_operation(
    sample: WindowSample, transactions: int | None, queries: int | None, limits: NoiseLimits
) -> tuple[dict[str, float | None], dict[str, Any], dict[str, Any]]:
    """(result cost fields, the record's `cost` object, its `host` object)."""
    t = sample.totals
    cpu = None if t["cpu_user_us"] is None else (t["cpu_user_us"] or 0) + (t["cpu_sys_us"] or 0)
    ins, cyc = t["instructions"], t["cycles"]
    fields: dict[str, float | None] = {
        "cpu_us_per_txn": _per(cpu, transactions),
        "cpu_user_us_per_txn": _per(t["cpu_user_us"], transactions),
        "cpu_sys_us_per_txn": _per(t["cpu_sys_us"], transactions),
        "cpu_us_per_query": _per(cpu, queries),
        "ctx_vol_per_txn": _per(t["ctx_vol"], transactions, 4),
        "ctx_invol_per_txn": _per(t["ctx_invol"], transactions, 4),
        "read_bytes_per_txn": _per(t["read_bytes"], transactions, 1),
        "write_bytes_per_txn": _per(t["write_bytes"], transactions, 1),
        "peak_rss_bytes": None if sample.peak_rss_bytes is None else float(sample.peak_rss_bytes),
        "instructions_per_txn": _per(ins, transactions, 1),
        "cycles_per_txn": _per(cyc, transactions, 1),
        "ipc": round(ins / cyc, 4) if ins is not None and cyc else None,
    }
    unavailable = _unavailable_by_field(sample.unavailable, transactions, queries)
    cost = {
        "source": sample.source,
        "pid": sample.pid,
        "window_s": sample.window_s,
        "transactions": transactions,
        "queries": queries,
        "totals": {k: v for k, v in t.items()},
        "unavailable": unavailable,
    }
    reason = noisy_reason(sample.host, limits)
    host = {**sample.host, "noisy": reason is not None, "noisy_reason": reason}
    return fields, cost, host


FIELD_SOURCES = {  # result field -> the counter group it needs
    "cpu_us_per_txn": "cpu",
    "cpu_user_us_per_txn": "cpu",
    "cpu_sys_us_per_txn": "cpu",
    "cpu_us_per_query": "cpu",
    "ctx_vol_per_txn": "ctx",
    "ctx_invol_per_txn": "ctx",
    "read_bytes_per_txn": "io",
    "write_bytes_per_txn": "io",
    "peak_rss_bytes": "rss",
    "instructions_per_txn": "instructions",
    "cycles_per_txn": "cycles",
    "ipc": "instructions",
}


def _unavailable_by_field(
    groups: dict[str, str], transactions: int | None, queries: int | None
) -> dict[str, str]:
    out = {f: groups[g][:500] for f, g in FIELD_SOURCES.items() if g in groups}
    if not transactions:
        for f in FIELD_SOURCES:
            if f.endswith("_per_txn") or f == "ipc":
                out.setdefault(f, "the run reported no transactions")
    if not queries:
        out.setdefault("cpu_us_per_query", "the run reported no queries")
    return out


def unavailable_everything(reason: str) -> tuple[dict[str, None], dict[str, Any], None]:
    """Result fields and `cost` object when no window could be taken (no target)."""
    return (
        dict.fromkeys(FIELD_SOURCES),
        {"source": "proc", "window_s": 0, "unavailable": dict.fromkeys(FIELD_SOURCES, reason)},
        None,
    )
