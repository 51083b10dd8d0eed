"""Run records: one JSON file per cell attempt, validated against the repo's JSON Schema.

The record is the contract between benchmark jobs and the single ingest/publish job
(`schemas/run-record.v1.json`). Records are written atomically (temp file + rename), so a
reader never sees half a record.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from .errors import RecordError

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
)
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
INTERVAL_FIELDS = ("t", "tps", "qps", "lat_pct_ms", "err_per_s", "reconn_per_s", "threads")
# File names `write` produces: <cell_id>.<attempt>.json (plan.json, run.json are not records).
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$")  # the schema's $defs/id
RECORD_NAME = re.compile(r"^[0-9a-f]{16}\.[0-9]+\.json$")


@cache
def schema() -> dict[str, Any]:
    text = resources.files("perftrack").joinpath("schemas", SCHEMA_FILE).read_text()
    return json.loads(text)


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(
        schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def record_id(run_id: str, cell_id: str, attempt: int) -> str:
    return f"{run_id}:{cell_id}:{attempt}"


def validate(record: Any, where: str = "record") -> dict[str, Any]:
    """Return the record if valid; else raise RecordError naming the first bad field."""
    errors = sorted(_validator().iter_errors(record), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        path = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        msg = err.message if len(err.message) < 200 else err.message[:200] + "…"
        raise RecordError(f"{where}: field '{path}' is invalid: {msg}; fix or remove that file")
    if record["record_id"] != record_id(record["run_id"], record["cell_id"], record["attempt"]):
        raise RecordError(f"{where}: field 'record_id' does not match run_id:cell_id:attempt")
    return record


def write(record: dict[str, Any], directory: Path) -> Path:
    """Validate and write atomically as DIR/<cell_id>.<attempt>.json; return the path."""
    validate(record)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{record['cell_id']}.{record['attempt']}.json"
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(record, fh, indent=1, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read(path: Path) -> dict[str, Any]:
    """Read and validate one record file."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise RecordError(f"{path}: cannot read ({exc.strerror})") from None
    if size > MAX_RECORD_BYTES:
        raise RecordError(f"{path}: {size} bytes is larger than a run record can be")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
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
