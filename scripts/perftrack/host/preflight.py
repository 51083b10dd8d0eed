"""Preflight of a runner before it benchmarks: its runner class key and a short noise probe.

The runner class key is the hardware fingerprint's key (`perftrack.core.hardware`): CPU
model, cores, memory and kernel. Results are only ever compared within one key, so a
runner whose key differs from its class's (``--expect-key``) is refused.

The noise probe takes a few seconds (``duration_s``, default 4):

1. a quiet quarter: perftrack sleeps and reads ``/proc/stat`` — every busy jiffy then is
   another process's (``other_busy_pct``), and ``procs_running`` minus the reader is the
   number of other runnable tasks (``other_runnable``);
2. the rest: a fixed CPU loop repeated; the run-to-run coefficient of variation of its
   times (``loop_cv_pct``) shows interference a mean hides;
3. over the whole window, the CPUs' ``steal`` and ``iowait`` shares (``steal_pct``,
   ``iowait_pct``): a hypervisor taking CPU time, or the disk holding work up.

Each figure has a limit (``preflight:`` in configs/runners.yaml); any figure above its
limit refuses the benchmark with one line naming the figure, its value and the limit.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from perftrack.core import hardware, yamlfile
from perftrack.core.errors import ConfigError, EnvironmentProblem

CONFIG_FILE = "runners.yaml"
CONFIG_KEY = "preflight"
PROC_STAT = Path("/proc/stat")
LOOP_WORK = 200_000  # iterations per loop rep: ~10-30 ms of pure Python
MIN_LOOP_REPS = 5
QUIET_SHARE = 0.25  # of duration_s spent sleeping (the quiet phase)
SAMPLE_EVERY_S = 0.1
MIN_DURATION_S = 1.0
MAX_DURATION_S = 120.0


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The probe's duration and the most noise a benchmark may start with."""

    duration_s: float = 4.0
    max_steal_pct: float = 2.0
    max_iowait_pct: float = 5.0
    max_other_busy_pct: float = 10.0
    max_other_runnable: float = 0.5
    max_loop_cv_pct: float = 3.0


@dataclass(frozen=True, kw_only=True)
class ProbeSample:
    """What one probe saw."""

    interval_s: float
    steal_pct: float
    iowait_pct: float
    other_busy_pct: float
    other_runnable: float
    loop_times_s: tuple[float, ...]

    @property
    def loop_cv_pct(self) -> float:
        times = self.loop_times_s
        if len(times) < 2 or statistics.fmean(times) <= 0:
            return 0.0
        return 100.0 * statistics.stdev(times) / statistics.fmean(times)


@dataclass(frozen=True, kw_only=True)
class Violation:
    figure: str
    value: float
    limit: float
    key: str
    unit: str

    def text(self) -> str:
        return (
            f"{self.figure} {self.value:.1f}{self.unit} > {self.limit:g}{self.unit} "
            f"({CONFIG_KEY}.{self.key})"
        )


# (figure shown, ProbeSample attribute, Limits attribute, unit)
CHECKS = (
    ("CPU steal", "steal_pct", "max_steal_pct", "%"),
    ("iowait", "iowait_pct", "max_iowait_pct", "%"),
    ("CPU busy from other processes", "other_busy_pct", "max_other_busy_pct", "%"),
    ("runnable tasks from other processes", "other_runnable", "max_other_runnable", ""),
    ("CPU loop run-to-run CV", "loop_cv_pct", "max_loop_cv_pct", "%"),
)


def judge(sample: ProbeSample, limits: Limits) -> list[Violation]:
    """Every figure of ``sample`` above its limit (empty: quiet enough to benchmark)."""
    found = []
    for figure, attr, key, unit in CHECKS:
        value = float(getattr(sample, attr))
        limit = float(getattr(limits, key))
        if value > limit:
            found.append(Violation(figure=figure, value=value, limit=limit, key=key, unit=unit))
    return found


def refusal(violations: list[Violation]) -> str:
    found = "; ".join(v.text() for v in violations)
    return f"noisy host, not benchmarking: {found}; limits in configs/{CONFIG_FILE}"


# --- limits from configs/runners.yaml ------------------------------------------------------


def limits_from(raw: Any, where: str) -> Limits:
    if raw is None:
        return Limits()
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: '{CONFIG_KEY}' must be a mapping of limits")
    known = [f.name for f in fields(Limits)]
    values: dict[str, float] = {}
    for key, value in raw.items():
        if key not in known:
            raise ConfigError(
                f"{where}: unknown key {key!r} under '{CONFIG_KEY}'; known: {', '.join(known)}"
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{where}: {CONFIG_KEY}.{key} must be a number >= 0, got {value!r}")
        values[key] = float(value)
    limits = Limits(**values)
    if not MIN_DURATION_S <= limits.duration_s <= MAX_DURATION_S:
        raise ConfigError(
            f"{where}: {CONFIG_KEY}.duration_s must be {MIN_DURATION_S:g}..{MAX_DURATION_S:g} s"
        )
    return limits


def load_limits(config_dir: Path) -> Limits:
    path = config_dir / CONFIG_FILE
    if not path.is_file():
        return Limits()
    data = yamlfile.read_yaml(path)
    raw = data.get(CONFIG_KEY) if isinstance(data, dict) else None
    return limits_from(raw, str(path))


# --- the probe -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CpuTimes:
    """The aggregate ``cpu`` line of /proc/stat, and ``procs_running``."""

    busy: int
    idle: int
    iowait: int
    steal: int
    procs_running: int

    @property
    def total(self) -> int:
        return self.busy + self.idle + self.iowait


def parse_proc_stat(text: str) -> CpuTimes:
    """``cpu user nice system idle iowait irq softirq steal …`` (guest is inside user)."""
    cpu: list[int] | None = None
    running = 0
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            cpu = [int(x) for x in parts[1:9]] + [0] * max(0, 9 - len(parts))
        elif parts and parts[0] == "procs_running":
            running = int(parts[1])
    if cpu is None:
        raise EnvironmentProblem("/proc/stat has no 'cpu' line: cannot probe noise here")
    user, nice, system, idle, iowait, irq, softirq, steal = cpu[:8]
    busy = user + nice + system + irq + softirq + steal
    return CpuTimes(busy=busy, idle=idle, iowait=iowait, steal=steal, procs_running=running)


def _read_stat(stat: Path) -> CpuTimes:
    try:
        return parse_proc_stat(stat.read_text())
    except OSError as err:
        raise EnvironmentProblem(f"cannot read {stat}: {err}") from None


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole > 0 else 0.0


def cpu_loop(work: int = LOOP_WORK) -> int:
    """A fixed amount of CPU work (no allocation, no I/O)."""
    acc = 0
    for i in range(work):
        acc = (acc + i * i) & 0xFFFFFFFF
    return acc


def probe(
    duration_s: float,
    stat: Path = PROC_STAT,
    clock: Callable[[], float] = time.perf_counter,
) -> ProbeSample:
    """Measure the host's noise for about ``duration_s`` seconds."""
    start_clock = clock()
    first = _read_stat(stat)
    quiet_end = start_clock + duration_s * QUIET_SHARE
    runnable: list[int] = []
    while clock() < quiet_end:
        time.sleep(SAMPLE_EVERY_S)
        runnable.append(max(0, _read_stat(stat).procs_running - 1))  # minus the reader
    quiet = _read_stat(stat)
    loop_end = start_clock + duration_s
    times: list[float] = []
    while clock() < loop_end or len(times) < MIN_LOOP_REPS:
        t0 = clock()
        cpu_loop()
        times.append(clock() - t0)
    last = _read_stat(stat)
    whole = last.total - first.total
    return ProbeSample(
        interval_s=clock() - start_clock,
        steal_pct=_pct(last.steal - first.steal, whole),
        iowait_pct=_pct(last.iowait - first.iowait, whole),
        other_busy_pct=_pct(quiet.busy - first.busy, quiet.total - first.total),
        other_runnable=statistics.fmean(runnable) if runnable else 0.0,
        loop_times_s=tuple(times),
    )


# --- the verb ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PreflightReport:
    key: str
    fingerprint: dict[str, Any]
    limits: Limits
    sample: ProbeSample | None
    violations: tuple[Violation, ...]

    def as_json(self) -> str:
        sample = None
        if self.sample is not None:
            sample = {**asdict(self.sample), "loop_cv_pct": self.sample.loop_cv_pct}
            sample["loop_times_s"] = list(self.sample.loop_times_s)
        return json.dumps(
            {
                "schema": "perftrack.preflight.v1",  # as every --json output (cli/app.py)
                "runner_key": self.key,
                "fingerprint": self.fingerprint,
                "limits": asdict(self.limits),
                "sample": sample,
                "ok": not self.violations,
                "violations": [v.text() for v in self.violations],
            },
            indent=2,
        )

    def lines(self) -> list[str]:
        fp = self.fingerprint
        out = [
            f"runner class key: {self.key} ({fp['cpu_model']}, {fp['cores']} cores, "
            f"{fp['mem_gib']} GiB, kernel {fp['kernel']})"
        ]
        s = self.sample
        if s is not None:
            out.append(
                f"noise over {s.interval_s:.1f} s: steal {s.steal_pct:.1f}%, iowait "
                f"{s.iowait_pct:.1f}%, other processes {s.other_busy_pct:.1f}% busy / "
                f"{s.other_runnable:.1f} runnable, CPU loop CV {s.loop_cv_pct:.1f}% "
                f"({len(s.loop_times_s)} reps)"
            )
            out.append("quiet enough to benchmark" if not self.violations else "noisy")
        return out


def run_preflight(
    config_dir: Path,
    duration_s: float | None = None,
    expect_key: str | None = None,
    probe_noise: bool = True,
) -> PreflightReport:
    """Fingerprint and probe; `EnvironmentProblem` (one line) when the host must not bench."""
    limits = load_limits(config_dir)
    if duration_s is not None:
        limits = limits_from({**asdict(limits), "duration_s": duration_s}, "--duration")
    fp = dict(hardware.fingerprint())
    key = str(fp["key"])
    if expect_key is not None and expect_key != key:
        raise EnvironmentProblem(
            f"this machine's runner class key is {key}, not the expected {expect_key}: its "
            "hardware or kernel differs from its class (results would mix hardware); give "
            "it its own runner class label (runners/README.md)"
        )
    sample = probe(limits.duration_s) if probe_noise else None
    violations = tuple(judge(sample, limits)) if sample is not None else ()
    return PreflightReport(
        key=key, fingerprint=fp, limits=limits, sample=sample, violations=violations
    )
