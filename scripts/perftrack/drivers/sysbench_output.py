"""Parse saved sysbench 1.0.x output (``prepare``, ``run``, ``cleanup`` of the oltp_* tests).

`parse_output` returns a JSON-serialisable dict and never guesses: text that is not sysbench
output raises `ParseError`; sysbench output of a run that failed or was cut short comes back
with ``status: "failed"`` and a one-line ``reason``, plus whatever was printed before the end.
"""

from __future__ import annotations

import math
import re
from typing import Any

from perftrack.core.errors import ParseError

SUPPORTED_MAJOR_MINOR = "1.0"
HEADER_SEARCH_LINES = 20  # "WARNING: --max-time is deprecated" lines may precede the header
MAX_REASON_CHARS = 300

_NUM = r"[-+]?(?:\d+(?:\.\d+)?|inf|nan)"  # sysbench prints inf/-nan when dividing by 0 s
_INT = r"\d{1,30}"  # bounded: int() refuses strings of more than 4300 digits

HEADER_RE = re.compile(r"^sysbench (?P<version>\d+\.\d+\.\d+)\S* \(using .+\)$")
RUN_START_RE = re.compile(r"^Running the test with following options:$")
THREADS_RE = re.compile(rf"^Number of threads: (?P<n>{_INT})$")
CREATE_TABLE_RE = re.compile(r"^Creating table '(?P<table>[^']+)'\.\.\.$")
INSERT_RE = re.compile(r"^Inserting \d+ records into '(?P<table>[^']+)'$")
DROP_TABLE_RE = re.compile(r"^Dropping table '(?P<table>[^']+)'\.\.\.$")
FATAL_RE = re.compile(r"^FATAL: (?P<msg>.*)$")
WARNING_RE = re.compile(r"^WARNING: (?P<msg>.*)$")
QUERY_SUFFIX_RE = re.compile(r"\s+for query '.*$")
ERRNO_RE = re.compile(r"(?:returned error|errno =|error) (?P<code>\d{4,5})\b")
INTERVAL_RE = re.compile(
    rf"^\[ (?P<t>{_NUM})s \] thds: (?P<threads>{_INT}) tps: (?P<tps>{_NUM}) qps: (?P<qps>{_NUM}) "
    rf"\(r/w/o: {_NUM}/{_NUM}/{_NUM}\) lat \(ms,(?P<pct>\d+)%\): (?P<lat>{_NUM}) "
    rf"err/s:? (?P<err>{_NUM}) reconn/s: (?P<reconn>{_NUM})$"
)
QUEUE_RE = re.compile(
    rf"^\[ (?P<t>{_NUM})s \] queue length: (?P<queue>{_INT}), concurrency: (?P<conc>{_INT})$"
)
HISTOGRAM_TITLE = "Latency histogram (values are in milliseconds)"
HISTOGRAM_ROW_RE = re.compile(rf"^\s*(?P<value>{_NUM}) \|\**\s+(?P<count>{_INT})$")
SECTION_RE = re.compile(r"^(?P<name>[A-Z][A-Za-z ()]+):$")
KEY_VALUE_RE = re.compile(r"^\s+(?P<key>[a-z0-9][a-z0-9 ]*?):\s+(?P<value>\S.*)$")
COUNT_RATE_RE = re.compile(rf"^(?P<count>{_INT})\s+\((?P<rate>{_NUM}) per sec\.\)$")
SECONDS_RE = re.compile(rf"^(?P<s>{_NUM})s$")
INT_RE = re.compile(rf"^{_INT}$")
FLOAT_RE = re.compile(rf"^{_NUM}$")
PERCENTILE_KEY_RE = re.compile(r"^(?P<pct>\d+)th percentile$")
PERCENTILE_DISABLED = ("percentile stats", "disabled")

# MySQL client error codes: connection lost mid-run / server not reachable at all.
CONNECTION_LOST_CODES = frozenset({2006, 2013, 2055})
CONNECT_FAILED_CODES = frozenset({2002, 2003, 2005})
CONNECT_FAILED_TEXT = "unable to connect to"

NO_SUMMARY_REASON = "run ended without a summary (killed?)"
SUMMARY_KEYS = (
    "tps",
    "qps",
    "latency_avg_ms",
    "latency_pct_ms",
    "latency_pct",
    "latency_max_ms",
    "latency_min_ms",
    "errors_per_s",
    "reconnects_per_s",
    "total_time_s",
    "events",
    "reads",
    "writes",
    "other",
)


def _num(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


def _fatal_reason(fatal: list[str]) -> tuple[str, int | None]:
    """The one-line reason and MySQL error code for a list of FATAL messages."""
    codes = [int(m["code"]) if (m := ERRNO_RE.search(msg)) else None for msg in fatal]
    first_code = next((code for code in codes if code is not None), None)
    for msg, code in zip(fatal, codes, strict=True):
        if code in CONNECTION_LOST_CODES:
            return f"server connection lost: FATAL: {msg}", code
    for msg, code in zip(fatal, codes, strict=True):
        if code in CONNECT_FAILED_CODES or CONNECT_FAILED_TEXT in msg:
            return f"cannot connect to server: FATAL: {msg}", first_code
    return f"sysbench reported FATAL: {fatal[0]}", first_code


def _find_header(lines: list[str], source: str) -> tuple[int, str]:
    headers = [i for i, line in enumerate(lines) if HEADER_RE.match(line)]
    if not headers or headers[0] >= HEADER_SEARCH_LINES:
        raise ParseError(
            f"{source}: not sysbench output (expected a 'sysbench 1.0.x (using ...)' header "
            f"in the first {HEADER_SEARCH_LINES} lines)"
        )
    if len(headers) > 1:
        raise ParseError(
            f"{source}: holds {len(headers)} sysbench outputs (headers at lines "
            f"{headers[0] + 1} and {headers[1] + 1}); expected the output of one command"
        )
    match = HEADER_RE.match(lines[headers[0]])
    assert match is not None
    version = match["version"]
    if not version.startswith(SUPPORTED_MAJOR_MINOR + "."):
        raise ParseError(
            f"{source}: sysbench {version} output; perftrack reads sysbench "
            f"{SUPPORTED_MAJOR_MINOR}.x output only"
        )
    return headers[0], version


def _parse_summary(lines: list[str]) -> dict[str, Any]:
    """The run summary fields found (absent ones are left out), plus the histogram."""
    found: dict[str, Any] = {}
    histogram: list[list[float | int]] | None = None
    section = ""
    for line in lines:
        if line == HISTOGRAM_TITLE:
            section, histogram = "histogram", []
            continue
        if section == "histogram" and histogram is not None:
            if row := HISTOGRAM_ROW_RE.match(line):
                value = _num(row["value"])
                if value is not None:
                    histogram.append([value, int(row["count"])])
                continue
            if "distribution" in line:
                continue
        if head := SECTION_RE.match(line):
            section = head["name"]
            continue
        kv = KEY_VALUE_RE.match(line)
        if kv is None:
            continue
        key, value = kv["key"], kv["value"].strip()
        if section == "SQL statistics":
            if key in ("read", "write", "other") and INT_RE.match(value):
                found[{"read": "reads", "write": "writes"}.get(key, key)] = int(value)
            elif rate := COUNT_RATE_RE.match(value):
                name = {
                    "transactions": "tps",
                    "queries": "qps",
                    "ignored errors": "errors_per_s",
                    "reconnects": "reconnects_per_s",
                }.get(key)
                if name:
                    found[name] = _num(rate["rate"])
        elif section == "General statistics":
            if key == "total time" and (secs := SECONDS_RE.match(value)):
                found["total_time_s"] = _num(secs["s"])
            elif key == "total number of events" and INT_RE.match(value):
                found["events"] = int(value)
        elif section == "Latency (ms)":
            if (key, value) == PERCENTILE_DISABLED:
                found["latency_pct"], found["latency_pct_ms"] = 0.0, None
            elif not FLOAT_RE.match(value):
                continue
            elif pct := PERCENTILE_KEY_RE.match(key):
                found["latency_pct"], found["latency_pct_ms"] = float(pct["pct"]), _num(value)
            elif key in ("min", "avg", "max"):
                found[f"latency_{key}_ms"] = _num(value)
    found["histogram"] = histogram
    return found


def _parse_run(lines: list[str]) -> dict[str, Any]:
    threads: int | None = None
    intervals: list[dict[str, Any]] = []
    summary_at: int | None = None
    for i, line in enumerate(lines):
        if m := THREADS_RE.match(line):
            threads = int(m["n"])
        elif m := INTERVAL_RE.match(line):
            pct = int(m["pct"])
            intervals.append(
                {
                    "t": _num(m["t"]),
                    "threads": int(m["threads"]),
                    "tps": _num(m["tps"]),
                    "qps": _num(m["qps"]),
                    "lat_pct": float(pct),
                    "lat_pct_ms": _num(m["lat"]) if pct > 0 else None,
                    "err_per_s": _num(m["err"]),
                    "reconn_per_s": _num(m["reconn"]),
                    "queue_length": None,
                    "concurrency": None,
                }
            )
        elif (m := QUEUE_RE.match(line)) and intervals:
            intervals[-1]["queue_length"] = int(m["queue"])
            intervals[-1]["concurrency"] = int(m["conc"])
        elif line in ("SQL statistics:", HISTOGRAM_TITLE):
            summary_at = i
            break
    summary = _parse_summary(lines[summary_at:]) if summary_at is not None else {}
    result: dict[str, Any] = dict.fromkeys(SUMMARY_KEYS)
    if intervals:
        result["latency_pct"] = intervals[0]["lat_pct"]
    result.update(summary)
    result["threads"] = threads
    result["histogram"] = summary.get("histogram")
    result["intervals"] = intervals
    missing = [key for key in SUMMARY_KEYS if key not in summary]
    if summary_at is None:
        result["_incomplete"] = NO_SUMMARY_REASON
    elif missing:
        result["_incomplete"] = f"run summary is incomplete (truncated?): no {', '.join(missing)}"
    return result


def parse_output(text: str, source: str = "output") -> dict[str, Any]:
    """Parse the saved stdout+stderr of one ``sysbench ... prepare|run|cleanup`` command."""
    if not text.strip():
        raise ParseError(f"{source}: empty; expected sysbench output")
    if "\x00" in text:
        raise ParseError(f"{source}: binary data; expected sysbench text output")
    lines = [line.rstrip() for line in text.splitlines()]
    start, version = _find_header(lines, source)
    body = lines[start + 1 :]
    fatal = [QUERY_SUFFIX_RE.sub("", m["msg"]) for line in body if (m := FATAL_RE.match(line))]
    warnings = [m["msg"] for line in lines if (m := WARNING_RE.match(line))]

    result: dict[str, Any] = {"sysbench_version": version}
    if any(RUN_START_RE.match(line) for line in body):
        result["kind"] = "run"
        result.update(_parse_run(body))
    else:
        created = [m["table"] for line in body if (m := CREATE_TABLE_RE.match(line))]
        inserted = [m["table"] for line in body if (m := INSERT_RE.match(line))]
        dropped = [m["table"] for line in body if (m := DROP_TABLE_RE.match(line))]
        if created or inserted:
            result["kind"], result["tables"] = "prepare", list(dict.fromkeys(created + inserted))
        elif dropped:
            result["kind"], result["tables"] = "cleanup", dropped
        else:
            detail = f" (first FATAL: {fatal[0][:MAX_REASON_CHARS]})" if fatal else ""
            raise ParseError(
                f"{source}: sysbench output with no run, prepare or cleanup section "
                f"(expected 'Running the test...', 'Creating table' or 'Dropping table' "
                f"lines){detail}"
            )

    incomplete = result.pop("_incomplete", None)
    reason: str | None = None
    error_code: int | None = None
    if fatal:
        reason, error_code = _fatal_reason(fatal)
    elif incomplete:
        reason = incomplete
    result["status"] = "failed" if reason else "ok"
    result["reason"] = reason[:MAX_REASON_CHARS] if reason else None
    result["error_code"] = error_code
    result["fatal"] = fatal
    result["warnings"] = warnings
    return result
