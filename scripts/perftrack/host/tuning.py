"""Benchmark tuning of a runner host: kernel knobs and noisy services, with drift check and undo.

Knobs (each optional: a knob whose file does not exist, e.g. cpufreq on a VM, is reported
"not available here" and left alone):

- ``governor``        every CPU's cpufreq ``scaling_governor`` → ``performance``
- ``turbo``           off: ``intel_pstate/no_turbo`` → 1, or ``cpufreq/boost`` → 0
- ``smt``             ``/sys/devices/system/cpu/smt/control`` → ``off`` (siblings offline)
- ``thp``             transparent hugepages ``enabled`` → ``never`` (or ``madvise``)
- ``thp_defrag``      transparent hugepages ``defrag`` → the same mode
- ``swappiness``      ``vm.swappiness`` → 1
- ``numa_balancing``  ``kernel.numa_balancing`` → 0 (page migration moves memory mid-run)
- ``services``        cron and the periodic systemd timers (apt, man-db, fstrim, e2scrub…)
  stopped, so no scheduled job lands in the middle of a measurement

``apply`` saves each value it changes in a state file *before* changing it (so a crash
half-way can still be undone) and never overwrites a saved value (running it twice keeps
the original); ``undo`` writes the saved values back and removes the state file; ``check``
only reads. Every path is taken below ``root`` (``/`` on a runner), so tests point it at
a temporary directory laid out like ``/sys`` and ``/proc``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from perftrack.core.errors import ConfigError, EnvironmentProblem
from perftrack.core.files import replace_text

DEFAULT_STATE = Path("/var/lib/perftrack/tune-state.json")
STATE_VERSION = 1
THP_MODES = ("never", "madvise")
DEFAULT_THP = "never"
DEFAULT_SWAPPINESS = 1
MAX_SWAPPINESS = 200  # the kernel's own bound
NOISE_UNITS = (
    "cron.service",
    "anacron.timer",
    "apt-daily.timer",
    "apt-daily-upgrade.timer",
    "man-db.timer",
    "fstrim.timer",
    "e2scrub_all.timer",
    "motd-news.timer",
    "unattended-upgrades.service",
)
SYSTEMCTL_TIMEOUT_S = 60
SYSTEMD_UP = ("running", "degraded", "starting", "initializing")
BRACKETED_RE = re.compile(r"\[([^\]]+)\]")
STATE_PREFIXES = ("sys/", "proc/sys/")  # the only files a state file may name
UNIT_RE = re.compile(r"^[A-Za-z0-9@_.-]+\.(service|timer)\Z")

OK = "ok"
DRIFT = "drift"
UNAVAILABLE = "not available here"


def _plain(text: str) -> str:
    return text.strip()


def _bracketed(text: str) -> str:
    """``always [madvise] never`` → ``madvise`` (the THP files mark the active choice)."""
    m = BRACKETED_RE.search(text)
    return m.group(1) if m else text.strip()


@dataclass(frozen=True, kw_only=True)
class SysfsTarget:
    """Files matching ``pattern`` (a glob below root) that should read ``want``."""

    pattern: str
    want: str
    accept: frozenset[str] = frozenset()  # other values that count as tuned
    unavailable: frozenset[str] = frozenset()  # values meaning "cannot be changed here"
    parse: Callable[[str], str] = _plain

    def tuned(self, value: str) -> bool:
        return value == self.want or value in self.accept


@dataclass(frozen=True)
class Knob:
    name: str
    what: str
    targets: tuple[SysfsTarget, ...]


@dataclass(frozen=True)
class Setting:
    """One file of a knob, as found below root."""

    knob: str
    target: SysfsTarget
    path: Path  # absolute (below root)
    rel: str  # relative to root: the key in the state file


@dataclass
class Status:
    knob: str
    state: str  # OK, DRIFT or UNAVAILABLE
    detail: str

    def line(self) -> str:
        return f"{self.knob:<15} {self.state:<19} {self.detail}"


@dataclass
class State:
    """What apply changed: the previous value of each file, the units it stopped."""

    files: dict[str, str] = field(default_factory=dict)
    services: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return not self.files and not self.services


def knobs(thp: str = DEFAULT_THP, swappiness: int = DEFAULT_SWAPPINESS) -> tuple[Knob, ...]:
    if thp not in THP_MODES:
        raise ConfigError(f"--thp must be one of {', '.join(THP_MODES)}, not {thp!r}")
    if not 0 <= swappiness <= MAX_SWAPPINESS:
        raise ConfigError(f"--swappiness must be 0..{MAX_SWAPPINESS}, not {swappiness}")
    cpu = "sys/devices/system/cpu"
    thp_dir = "sys/kernel/mm/transparent_hugepage"
    return (
        Knob(
            "governor",
            "CPU frequency governor",
            (SysfsTarget(pattern=f"{cpu}/cpu[0-9]*/cpufreq/scaling_governor", want="performance"),),
        ),
        Knob(
            "turbo",
            "turbo boost off",
            (
                SysfsTarget(pattern=f"{cpu}/intel_pstate/no_turbo", want="1"),
                SysfsTarget(pattern=f"{cpu}/cpufreq/boost", want="0"),
            ),
        ),
        Knob(
            "smt",
            "SMT (hyper-threading) off",
            (
                SysfsTarget(
                    pattern=f"{cpu}/smt/control",
                    want="off",
                    accept=frozenset({"forceoff"}),
                    unavailable=frozenset({"notsupported", "notimplemented"}),
                ),
            ),
        ),
        Knob(
            "thp",
            "transparent hugepages",
            (SysfsTarget(pattern=f"{thp_dir}/enabled", want=thp, parse=_bracketed),),
        ),
        Knob(
            "thp_defrag",
            "transparent hugepage defrag",
            (SysfsTarget(pattern=f"{thp_dir}/defrag", want=thp, parse=_bracketed),),
        ),
        Knob(
            "swappiness",
            "vm.swappiness",
            (SysfsTarget(pattern="proc/sys/vm/swappiness", want=str(swappiness)),),
        ),
        Knob(
            "numa_balancing",
            "automatic NUMA balancing off",
            (SysfsTarget(pattern="proc/sys/kernel/numa_balancing", want="0"),),
        ),
    )


def settings(root: Path, knob: Knob) -> list[Setting]:
    found = []
    for target in knob.targets:
        for path in sorted(root.glob(target.pattern)):
            if path.is_file():
                rel = path.relative_to(root).as_posix()
                found.append(Setting(knob.name, target, path, rel))
    return found


def read(setting: Setting) -> str | None:
    """The parsed value, or None when the file cannot be read."""
    try:
        return setting.target.parse(setting.path.read_text())
    except OSError:
        return None


def write(path: Path, value: str) -> None:
    try:
        with path.open("w") as handle:
            handle.write(value)
    except OSError as err:
        raise EnvironmentProblem(
            f"cannot write {value!r} to {path}: {err.strerror or err}; tuning writes kernel "
            "knobs and needs root (sudo runners/tune)"
        ) from None


# --- services ------------------------------------------------------------------------------


class Systemd:
    """The host's systemd, through ``systemctl`` (only with root ``/``)."""

    def __init__(self, systemctl: str | None = None) -> None:
        self.systemctl = systemctl or shutil.which("systemctl")

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert self.systemctl is not None
        return subprocess.run(
            [self.systemctl, *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=SYSTEMCTL_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )

    def unavailable(self) -> str | None:
        """Why services cannot be managed here, or None."""
        if self.systemctl is None:
            return "no systemctl"
        state = self._run("is-system-running").stdout.strip()
        if state not in SYSTEMD_UP:
            return f"systemd is not running ({state or 'no answer'})"
        return None

    def active(self, units: Iterable[str]) -> list[str]:
        return [u for u in units if self._run("is-active", "--quiet", u).returncode == 0]

    def stop(self, unit: str) -> None:
        self._change("stop", unit)

    def start(self, unit: str) -> None:
        self._change("start", unit)

    def _change(self, verb: str, unit: str) -> None:
        done = self._run(verb, unit)
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise EnvironmentProblem(f"systemctl {verb} {unit} failed: {reason}")


def service_status(systemd: Systemd | None, units: tuple[str, ...]) -> Status:
    if systemd is None:
        return Status("services", UNAVAILABLE, "not managed below --root (only on the host)")
    why = systemd.unavailable()
    if why:
        return Status("services", UNAVAILABLE, why)
    running = systemd.active(units)
    if running:
        return Status("services", DRIFT, f"running: {', '.join(running)}")
    return Status("services", OK, "cron and periodic timers stopped")


# --- check / apply / undo ------------------------------------------------------------------


def check_knob(root: Path, knob: Knob) -> Status:
    found = settings(root, knob)
    if not found:
        where = " or ".join("/" + t.pattern for t in knob.targets)
        return Status(knob.name, UNAVAILABLE, f"no {where}")
    values = [(s, read(s)) for s in found]
    if all(v is None or v in s.target.unavailable for s, v in values):
        shown = ", ".join(sorted({str(v) for _, v in values}))
        return Status(knob.name, UNAVAILABLE, f"/{found[0].rel} = {shown}")
    off = [(s, v) for s, v in values if v is not None and not s.target.tuned(v)]
    want = found[0].target.want
    if off:
        have = sorted({str(v) for _, v in off})
        return Status(
            knob.name,
            DRIFT,
            f"{', '.join(have)} on {len(off)} of {len(found)} file(s), want {want}",
        )
    return Status(knob.name, OK, want)


def check(
    root: Path, all_knobs: tuple[Knob, ...], systemd: Systemd | None, units: tuple[str, ...]
) -> list[Status]:
    return [*(check_knob(root, k) for k in all_knobs), service_status(systemd, units)]


def load_state(path: Path) -> State:
    if not path.exists():
        return State()
    try:
        data = json.loads(path.read_text())
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"version {data.get('version')!r}")
        files = {str(k): str(v) for k, v in data["files"].items()}
        services = [str(u) for u in data["services"]]
        for rel in files:
            if not rel.startswith(STATE_PREFIXES) or ".." in rel.split("/"):
                raise ValueError(f"path {rel!r} is not a kernel knob")
        for unit in services:
            if not UNIT_RE.match(unit):
                raise ValueError(f"unit {unit!r}")
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as err:
        raise ConfigError(
            f"the tuning state file {path} is unreadable ({err}): restore the knobs by hand "
            "and delete it"
        ) from None
    return State(files, services)


def save_state(path: Path, state: State) -> None:
    """Write the state file atomically (temp file + rename in the same directory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "version": STATE_VERSION,
        "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "files": state.files,
        "services": state.services,
    }
    replace_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def apply(
    root: Path,
    state_path: Path,
    all_knobs: tuple[Knob, ...],
    systemd: Systemd | None,
    units: tuple[str, ...],
    dry_run: bool = False,
) -> list[str]:
    """Tune every available knob; the actions taken (or, with dry_run, to be taken)."""
    state = load_state(state_path)
    actions: list[str] = []
    for knob in all_knobs:
        for setting in settings(root, knob):
            value = read(setting)
            target = setting.target
            if value is None or value in target.unavailable or target.tuned(value):
                continue
            actions.append(f"write {target.want} to {setting.path} (was {value})")
            if dry_run:
                continue
            if setting.rel not in state.files:  # keep the original across repeated runs
                state.files[setting.rel] = value
                save_state(state_path, state)
            write(setting.path, target.want)
    if systemd is not None and systemd.unavailable() is None:
        for unit in systemd.active(units):
            actions.append(f"systemctl stop {unit}")
            if dry_run:
                continue
            if unit not in state.services:
                state.services.append(unit)
                save_state(state_path, state)
            systemd.stop(unit)
    return actions


def undo(root: Path, state_path: Path, systemd: Systemd | None, dry_run: bool = False) -> list[str]:
    """Restore what apply saved; the actions taken. No state file: nothing to do."""
    state = load_state(state_path)
    actions: list[str] = []
    # SMT first: turning it back on brings the sibling CPUs (and their cpufreq files) back.
    for rel, value in sorted(state.files.items(), key=lambda kv: ("smt/" not in kv[0], kv[0])):
        path = root / rel
        if not path.exists():
            actions.append(f"skip {path} (gone; was {value})")
            continue
        actions.append(f"write {value} to {path}")
        if not dry_run:
            write(path, value)
    for unit in state.services:
        actions.append(f"systemctl start {unit}")
        if not dry_run and systemd is not None:
            systemd.start(unit)
    if not dry_run and state_path.exists():
        state_path.unlink()
    return actions
