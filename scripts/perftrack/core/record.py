"""Run records: one JSON file per cell attempt, validated against the repo's JSON Schema.

The record is the contract between benchmark jobs and the single ingest/publish job
(`schemas/run-record.v1.json`). Records are written atomically (temp file + rename), so a
reader never sees half a record.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from perftrack.core import fastcheck, files, recordsig
from perftrack.core.errors import RecordError

SCHEMA_ID = "perftrack.run-record/1"
SCHEMA_FILE = "run-record.v1.json"
# A record larger than this is refused before parsing: real ones are a few hundred KB
# at most (SHOW GLOBAL VARIABLES is ~60 KB; a 1-hour run has 3600 intervals).
MAX_RECORD_BYTES = 8 * 1024 * 1024
# Field lists of the contract, in schema order, for code that copies them (runner, store).
CELL_FIELDS = (
    "workload",
    "threads",
    "charset",
    "collation",
    "profile",
    "tables",
    "table_size",
    "duration_s",
    "warmup_s",
    "repeat",
    "round",
    "connection",
    # optional (added after v1: absent in older records, null when the axis is not set)
    "engine",
    "isolation",
    "durability",
    "handshake",
    "dataset_size",
    "phase",
)
OPTIONAL_CELL_FIELDS = ("engine", "isolation", "durability", "handshake", "dataset_size", "phase")
RESULT_FIELDS = (
    "tps",
    "qps",
    "latency_avg_ms",
    "latency_pct_ms",
    "latency_pct",
    "latency_max_ms",
    "errors_per_s",
    "reconnects_per_s",
    "total_time_s",
    "threads",
    "events",
)
# Cost per operation (issue #9, sampler.py): optional `result` fields, absent in records
# older than them, null when a counter could not be read (the reason is in
# `cost.unavailable`, never a zero).
COST_FIELDS = (
    "cpu_us_per_txn",
    "cpu_user_us_per_txn",
    "cpu_sys_us_per_txn",
    "cpu_us_per_query",
    "ctx_vol_per_txn",
    "ctx_invol_per_txn",
    "read_bytes_per_txn",
    "write_bytes_per_txn",
    "peak_rss_bytes",
    "instructions_per_txn",
    "cycles_per_txn",
    "ipc",
)
# Host signals over the same window (optional top-level `host` object of a record).
HOST_FIELDS = ("steal_pct", "iowait_pct", "foreign_cpu_pct", "cpu_mhz", "noisy", "noisy_reason")
INTERVAL_FIELDS = ("t", "tps", "qps", "lat_pct_ms", "err_per_s", "reconn_per_s", "threads")
# File names `write` produces: <cell_id>.<attempt>.json (plan.json, run.json are not records).
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}\Z")  # the schema's $defs/id
RECORD_NAME = re.compile(r"^[0-9a-f]{16}\.[0-9]+\.json$")


@cache
def schema() -> dict[str, Any]:
    text = resources.files("perftrack.core").joinpath("schemas", SCHEMA_FILE).read_text()
    return json.loads(text)


def _pattern(validator: Any, pattern: str, instance: Any, _schema: Any) -> Iterator[Any]:
    """`pattern` as JSON Schema (ECMA-262) means it: `$` is the end of the string
    (fastcheck.strict_pattern)."""
    if not validator.is_type(instance, "string"):
        return
    if fastcheck.strict_pattern(pattern).search(instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})


@cache
def _validator() -> Any:
    return _Validator(schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def _non_finite(value: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """The path of the first NaN or infinity in `value` (JSON has neither), else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return path
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for k, v in items:
        found = _non_finite(v, (*path, k))
        if found is not None:
            return found
    return None


def _all_finite(value: Any) -> bool:
    """True when `value` holds no NaN or infinity: json's C encoder refuses them
    (allow_nan=False), ~10x faster than walking a record of 650 variables in Python;
    _non_finite then finds the path of the first one for the message."""
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError):  # not finite, or not JSON at all: walk it
        return False
    return True


def _field(path: Any) -> str:
    """A record path for a one-line message (keys may hold any character)."""
    parts = [str(p).encode("unicode_escape").decode("ascii") for p in path]
    return "/".join(parts) or "(top level)"


def record_id(run_id: str, cell_id: str, attempt: int) -> str:
    return f"{run_id}:{cell_id}:{attempt}"


# --- the fast path ---------------------------------------------------------------------
# jsonschema spends ~0.5-1 ms on a record with 650 variables and 60 intervals; a night's
# ingest reads ~4,000 records. The schema compiled by fastcheck answers "valid and finite"
# for the usual record in a few tens of µs; when it cannot say so, the record goes through
# jsonschema (and the finiteness walk), so every verdict and message is jsonschema's.


@cache
def _fast() -> fastcheck.Check | None:
    return fastcheck.compile_check(schema(), _validator().format_checker.conforms)


def validate(record: Any, where: str = "record") -> dict[str, Any]:
    """Return the record if valid; else raise RecordError naming the first bad field."""
    fast = _fast()
    if fast is not None and fast(record):
        _check_record_id(record, where)
        return record
    errors = sorted(_validator().iter_errors(record), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        path = _field(err.absolute_path)
        msg = " ".join(err.message.split())
        msg = msg if len(msg) < 200 else msg[:200] + "…"
        raise RecordError(f"{where}: field '{path}' is invalid: {msg}; fix or remove that file")
    bad = None if _all_finite(record) else _non_finite(record)
    if bad is not None:
        raise RecordError(f"{where}: field '{_field(bad)}' is invalid: not a finite number")
    _check_record_id(record, where)
    return record


def _check_record_id(record: dict[str, Any], where: str) -> None:
    if record["record_id"] != record_id(record["run_id"], record["cell_id"], record["attempt"]):
        raise RecordError(f"{where}: field 'record_id' does not match run_id:cell_id:attempt")


def write(record: dict[str, Any], directory: Path) -> Path:
    """Validate and write atomically as DIR/<cell_id>.<attempt>.json; return the path."""
    validate(record)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{record['cell_id']}.{record['attempt']}.json"
    files.replace_text(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    recordsig.sign(path)  # on a bench host: signed for this job's night (core/recordsig.py)
    return path


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read(path: Path) -> dict[str, Any]:
    """Read and validate one record file."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise RecordError(f"{path}: cannot read ({exc.strerror})") from None
    if size > MAX_RECORD_BYTES:
        raise RecordError(f"{path}: {size} bytes is larger than a run record can be")
    try:
        data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
        raise RecordError(f"{path}: not a JSON run record ({exc})") from None
    return validate(data, where=str(path))


def find(paths: Iterable[Path]) -> Iterator[Path]:
    """Record files under the given files/directories, in a stable order."""
    for p in paths:
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*.json") if RECORD_NAME.match(q.name))
        elif p.exists():
            yield p
        else:
            raise RecordError(f"{p}: no such file or directory")
