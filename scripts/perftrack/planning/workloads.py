"""The workloads perftrack knows, declared once in the checkout's `workloads/*.yaml`.

Order matters inside a server group: read-only workloads run before ones that write,
so every read measurement sees the freshly prepared dataset (Mark Callaghan's
"read passes before write passes").
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from perftrack.core import yamlfile
from perftrack.core.errors import ConfigError

ENV_WORKLOADS_DIR = "PERFTRACK_WORKLOADS_DIR"
# The checkout's workloads/ (the package lives in scripts/perftrack/ of the same checkout).
DEFAULT_DIR = Path(__file__).resolve().parents[3] / "workloads"
TOOLS = ("sysbench", "slap")
NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
OPTION_RE = re.compile(r"^--[a-z][a-z0-9-]{0,63}(=[A-Za-z0-9_.,:/+-]{0,200})?$")
KEYS = {"name", "tool", "script", "writes", "description", "options", "dataset", "max_tables"}
REQUIRED = ("name", "tool", "script", "writes", "description")
DEFAULT_DATASET = "oltp"  # sysbench's oltp_common tables sbtest1..N
# The script that prepares a shared dataset for any number of tables (select_random_*
# refuse to prepare more than one table, but read sbtest1 of the common dataset).
# The read-only pass a `prepost` matrix runs before (phase pre) and after (post) the writes.
PREPOST_WORKLOAD = "oltp_read_only"
DATASET_PREPARE = {DEFAULT_DATASET: "oltp_read_only"}


@dataclass(frozen=True, kw_only=True)
class Workload:
    name: str
    tool: str  # driver name
    script: str  # sysbench test name, Lua path (relative to workloads/) or slap load
    writes: bool
    description: str
    options: tuple[str, ...] = ()  # extra options for the tool's `run`
    dataset: str = DEFAULT_DATASET  # the prepared data it reads; one prepare per dataset
    max_tables: int | None = None  # the script reads only this many tables

    def script_path(self, root: Path | None = None) -> str:
        """The script argument for the tool: a built-in name, or the Lua file's path."""
        if self.script.endswith(".lua"):
            return str((root or workloads_dir()) / self.script)
        return self.script

    def prepare_script(self) -> str:
        """The script whose `prepare` creates this workload's dataset."""
        return DATASET_PREPARE.get(self.dataset) or self.script_path()


def workloads_dir() -> Path:
    return Path(os.environ.get(ENV_WORKLOADS_DIR) or DEFAULT_DIR)


def _entry(raw: Any, where: str) -> Workload:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: each workload must be a mapping")
    unknown = sorted(set(map(str, raw)) - KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key '{unknown[0]}'; known: {', '.join(sorted(KEYS))}")
    for key in REQUIRED:
        if key not in raw:
            raise ConfigError(f"{where}: a workload lacks '{key}'")
    name = raw["name"]
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ConfigError(f"{where}: workload name {name!r} must be lower-case letters, digits, _")
    if raw["tool"] not in TOOLS:
        raise ConfigError(f"{where}: {name}: tool must be one of {', '.join(TOOLS)}")
    if not isinstance(raw["writes"], bool):
        raise ConfigError(f"{where}: {name}: 'writes' must be true or false")
    options = raw.get("options") or []
    if not isinstance(options, list) or not all(
        isinstance(o, str) and OPTION_RE.match(o) for o in options
    ):
        raise ConfigError(f"{where}: {name}: 'options' must be a list of --name=value strings")
    max_tables = raw.get("max_tables")
    if max_tables is not None and (isinstance(max_tables, bool) or not isinstance(max_tables, int)):
        raise ConfigError(f"{where}: {name}: 'max_tables' must be a whole number")
    return Workload(
        name=name,
        tool=raw["tool"],
        script=str(raw["script"]),
        writes=raw["writes"],
        description=" ".join(str(raw["description"]).split()),
        options=tuple(options),
        dataset=str(raw.get("dataset", DEFAULT_DATASET)),
        max_tables=max_tables,
    )


def read_workloads(directory: Path) -> dict[str, Workload]:
    """Every workload declared in DIR/*.yaml; a name declared twice is an error."""
    out: dict[str, Workload] = {}
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise ConfigError(f"no workload files (*.yaml) in {directory}")
    for path in files:
        data = yamlfile.read_yaml(path)
        if not isinstance(data, dict) or not isinstance(data.get("workloads"), list):
            raise ConfigError(f"{path}: must have a 'workloads:' list")
        for raw in data["workloads"]:
            w = _entry(raw, str(path))
            if w.name in out:
                raise ConfigError(f"{path}: workload '{w.name}' is declared twice")
            if w.script.endswith(".lua") and not (directory / w.script).is_file():
                raise ConfigError(f"{path}: {w.name}: no Lua file {directory / w.script}")
            out[w.name] = w
    return out


WORKLOADS: dict[str, Workload] = read_workloads(workloads_dir())


def get(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ConfigError(f"unknown workload '{name}'; known: {', '.join(WORKLOADS)}") from None


# `sysbench SCRIPT help` loads (compiles and runs the top level of) a Lua script and
# lists its options; a syntax error or a failed require() is one `FATAL: file:line: ...`.
LUA_CHECK_TIMEOUT_S = 20
_FATAL_RE = re.compile(r"^FATAL: (.*)$", re.MULTILINE)
NO_HELP = "does not implement the 'help' command"


def check_loads(workload: Workload, where: str = "matrix") -> None:
    """One-line ConfigError, naming the file and line, if the workload's Lua script does
    not load in sysbench. Built-in scripts and an absent sysbench (the run stage says
    how to install it) pass."""
    if not workload.script.endswith(".lua"):
        return
    path = Path(workload.script_path())
    if not path.is_file():
        raise ConfigError(f"{where}: workload {workload.name}: no Lua file {path}")
    problem = _lua_problem(str(path), path.stat().st_mtime_ns)
    if problem:
        raise ConfigError(f"{where}: workload {workload.name}: Lua script does not load: {problem}")


@cache
def _lua_problem(path: str, mtime_ns: int) -> str | None:
    """sysbench's complaint about loading the script (None: it loads); cached per version
    of the file."""
    binary = shutil.which("sysbench")
    if binary is None:
        return None
    try:
        out = subprocess.run(
            [binary, path, "help"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=LUA_CHECK_TIMEOUT_S,
            check=False,
            cwd=Path(path).parent,
        )
    except subprocess.TimeoutExpired:
        return f"{path}: `sysbench {path} help` did not finish in {LUA_CHECK_TIMEOUT_S} s"
    text = out.stdout + out.stderr
    if out.returncode == 0 or NO_HELP in text:  # loaded; a script without options has no help
        return None
    m = _FATAL_RE.search(text)
    first = m.group(1) if m else (text.strip().splitlines() or ["no output"])[-1]
    return f"{first.strip()} (sysbench exit {out.returncode})"


def run_order(names: list[str]) -> list[str]:
    """Read-only workloads first, then writers, each keeping the matrix's order."""
    return sorted(names, key=lambda n: get(n).writes)
