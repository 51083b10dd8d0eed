"""Workflow inputs for `perftrack plan --dispatch`, and the files GitHub Actions reads back.

A `workflow_dispatch` run passes its inputs through the environment (PT_MATRIX,
PT_VERSIONS, …), never through `${{ }}` in a shell line. Every value is checked here
against a strict alphabet and known names before it reaches the matrix; a bad one stops
the plan with one line that names the input and says what to give instead. Nothing here
builds a shell command from a value.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perftrack.core.errors import ConfigError, PerftrackError
from perftrack.planning import matrix, workloads
from perftrack.servers import catalog as catalog_mod
from perftrack.servers import profiles

# Inputs: name -> what it overrides in the matrix ("" = not a matrix key).
LIST_INPUTS = {
    "PT_VERSIONS": "servers",
    "PT_WORKLOADS": "workloads",
    "PT_CHARSETS": "charsets",
    "PT_THREADS": "threads",
    "PT_PROFILE": "profile",
}
INT_INPUTS = {
    "PT_REPEATS": "repeats",
    "PT_DURATION": "duration_s",
    "PT_BUDGET_MINUTES": "",
    "PT_SHARDS": "",
}
DEFAULT_MATRIX = "nightly"
MAX_INPUT_CHARS = 1000  # a dispatch form field longer than this is not a list of names
MAX_ITEMS = 64
BUDGET_LIMITS = (1, 7 * 24 * 60)  # minutes: one week at most
SHARD_LIMITS = (1, 256)
ITEM_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}\Z")
INT_RE = re.compile(r"^[0-9]{1,9}\Z")
CHARSETS = ("latin1", "utf8mb4")
SHOWN_CHARS = 40  # of a bad value, in the message


@dataclass(frozen=True)
class Inputs:
    matrix: matrix.Matrix
    budget_minutes: int | None
    shards: int | None


def shown(value: str) -> str:
    """A bad value for a one-line message: truncated, control characters escaped."""
    v = value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + "…"
    return "'" + v.encode("unicode_escape").decode("ascii").replace("'", "\\'") + "'"


def _items(name: str, raw: str, *, names: bool = True) -> list[str] | None:
    """A comma-separated input as a list; None when empty (the matrix's value). `names`:
    each item is a name (ITEM_RE); else the caller checks each (numbers: `_int`)."""
    if len(raw) > MAX_INPUT_CHARS:
        raise ConfigError(f"{name}: longer than {MAX_INPUT_CHARS} characters")
    if "${{" in raw:
        raise ConfigError(f"{name}: {shown(raw)} looks like an expression; give plain names")
    if not raw.strip():
        return None
    items = [i.strip() for i in raw.split(",")]
    if any(not i for i in items):
        raise ConfigError(f"{name}: {shown(raw)} has an empty item; separate names by one comma")
    if len(items) > MAX_ITEMS:
        raise ConfigError(f"{name}: more than {MAX_ITEMS} items")
    for i in items if names else ():
        if ITEM_RE.match(i):
            continue
        if ITEM_RE.match("a" + i[1:]):  # only its first character is wrong
            raise ConfigError(f"{name}: {shown(i)} must start with a letter or a digit")
        raise ConfigError(
            f"{name}: {shown(i)} has characters other than letters, digits, '.', '_', '+', '-'"
        )
    if len(set(items)) != len(items):
        raise ConfigError(f"{name}: {shown(raw)} lists a value twice")
    return items


def _int(name: str, raw: str, lo: int, hi: int) -> int:
    if not INT_RE.match(raw) or not lo <= int(raw) <= hi:
        raise ConfigError(f"{name}: {shown(raw)} must be a whole number from {lo} to {hi}")
    return int(raw)


def _env(env: dict[str, str], name: str) -> str:
    return env.get(name, "") or ""


def from_env(
    env: dict[str, str], cat: catalog_mod.Catalog, config_dir: Path, default_matrix: str | None
) -> Inputs:
    """The dispatch inputs as a matrix (the named matrix with the inputs' overrides)."""
    raw_matrix = _env(env, "PT_MATRIX").strip()
    names = _items("PT_MATRIX", raw_matrix) if raw_matrix else None
    if names and len(names) != 1:
        raise ConfigError("PT_MATRIX: give one matrix name")
    name = names[0] if names else (default_matrix or DEFAULT_MATRIX)
    if not ITEM_RE.match(name) or not (config_dir / "matrices" / f"{name}.yaml").is_file():
        known = sorted(p.stem for p in (config_dir / "matrices").glob("*.yaml"))
        raise ConfigError(f"PT_MATRIX: no matrix {shown(name)}; known: {', '.join(known)}")
    data: dict[str, Any] = matrix.read_matrix(config_dir / "matrices" / f"{name}.yaml").to_dict()
    for var, key in LIST_INPUTS.items():
        items = _items(var, _env(env, var), names=var != "PT_THREADS")
        if items is None:
            continue
        if var == "PT_THREADS":
            lo, hi = matrix.LIMITS["threads"]
            data[key] = [_int(var, i, lo, hi) for i in items]
            continue
        for i in items:
            _check_name(var, i, cat, config_dir)
        data[key] = items if var != "PT_PROFILE" or len(items) > 1 else items[0]
    extra: dict[str, int | None] = {"PT_BUDGET_MINUTES": None, "PT_SHARDS": None}
    for var, key in INT_INPUTS.items():
        raw = _env(env, var).strip()
        if not raw:
            continue
        if key:
            data[key] = _int(var, raw, *matrix.LIMITS[key])
        else:
            extra[var] = _int(var, raw, *(BUDGET_LIMITS if "BUDGET" in var else SHARD_LIMITS))
    m = matrix.from_dict(data, where=f"matrix {name} with the dispatch inputs")
    return Inputs(m, extra["PT_BUDGET_MINUTES"], extra["PT_SHARDS"])


def _check_name(var: str, item: str, cat: catalog_mod.Catalog, config_dir: Path) -> None:
    try:
        if var == "PT_VERSIONS":
            cat.get(item)
        elif var == "PT_WORKLOADS":
            workloads.get(item)
        elif var == "PT_PROFILE":
            profiles.read_profile(item, config_dir)
        elif var == "PT_CHARSETS" and item.split("_", 1)[0] not in CHARSETS:
            raise ConfigError(f"{shown(item)} is not latin1, utf8mb4 or one of their collations")
    except ConfigError as exc:
        raise ConfigError(f"{var}: {exc}") from None


# --- GitHub Actions files ------------------------------------------------------------------
def _append(path_var: str, text: str, env: dict[str, str]) -> None:
    target = env.get(path_var)
    if not target:
        raise ConfigError(f"{path_var} is not set: --github-output runs inside GitHub Actions")
    try:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise ConfigError(f"{path_var}={target}: cannot append ({exc.strerror})") from None


def write_outputs(
    job_matrix: dict[str, Any], env: dict[str, str] | None = None, pinned: tuple[str, ...] = ()
) -> None:
    """`matrix=<compact JSON>`, `shards=N`, and the servers pinned while planning
    (`pinned=ID ID…`, `pin_count=N`) appended to $GITHUB_OUTPUT."""
    env = dict(os.environ) if env is None else env
    compact = json.dumps(job_matrix, separators=(",", ":"), sort_keys=True)
    text = f"matrix={compact}\nshards={len(job_matrix['include'])}\n"
    text += f"pinned={' '.join(pinned)}\npin_count={len(pinned)}\n"
    _append("GITHUB_OUTPUT", text, env)


def markdown_text(text: str) -> str:
    """Plain text safe inside Markdown/HTML: no tags, links or formatting from a value."""
    marked = re.sub(r"([\\`*_{}\[\]()#+\-.!|~])", r"\\\1", text)
    return html.escape(marked, quote=False)


def summary(text: str, env: dict[str, str] | None = None) -> None:
    """Append Markdown to $GITHUB_STEP_SUMMARY when it is set (quietly nothing otherwise)."""
    env = dict(os.environ) if env is None else env
    if env.get("GITHUB_STEP_SUMMARY"):
        with contextlib.suppress(PerftrackError):
            _append("GITHUB_STEP_SUMMARY", text, env)


def error_summary(exc: PerftrackError, env: dict[str, str] | None = None) -> None:
    msg = " ".join(str(exc).split())
    summary(f"### perftrack plan failed\n\n{markdown_text('error: ' + msg)}\n", env)
