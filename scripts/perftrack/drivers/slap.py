"""mysqlslap / mariadb-slap driver: auto-generated read, write and mixed loads.

The tool runs a fixed number of queries (not a time) `--iterations` times per
concurrency value and prints, per concurrency, the average/minimum/maximum seconds to
run them all. The driver turns that into perftrack's result shape: queries/s (= clients
x queries per client / average seconds), the same as tps (every auto-generated
statement is its own autocommit transaction), and the mean per-query latency.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from perftrack.core.errors import EnvironmentProblem, ParseError
from perftrack.drivers.sysbench import Endpoint, execute, private_options

# mariadb-slap is the MariaDB client's name; mysqlslap the MySQL one (same options/output).
BINARIES = ("mariadb-slap", "mysqlslap")
LOAD_TYPES = ("read", "write", "mixed", "update", "key")
INSTALL_HINT = (
    "mariadb-slap is not installed: run `apt-get install mariadb-client` (or `make setup`)"
)
# Wall-clock bound of one slap process; its work is a query count, not a time.
# Ten minutes covers the article 001 loads (tens of thousands of queries) many times over.
BOUND_S = 600

_BLOCK = re.compile(
    r"Benchmark\s*\n"
    r"(?:\s*Running for engine (?P<engine>\S+)\s*\n)?"
    r"\s*Average number of seconds to run all queries: (?P<avg>[0-9.]+) seconds\s*\n"
    r"\s*Minimum number of seconds to run all queries: (?P<min>[0-9.]+) seconds\s*\n"
    r"\s*Maximum number of seconds to run all queries: (?P<max>[0-9.]+) seconds\s*\n"
    r"\s*Number of clients running queries: (?P<clients>\d+)\s*\n"
    r"\s*Average number of queries per client: (?P<per_client>\d+)"
)
_ERROR = re.compile(r"^(?:mariadb-slap|mysqlslap): (.+)$", re.MULTILINE)


@dataclass(frozen=True, kw_only=True)
class Block:
    """One concurrency value's summary."""

    engine: str | None
    seconds_avg: float
    seconds_min: float
    seconds_max: float
    clients: int
    queries_per_client: int

    @property
    def queries(self) -> int:
        return self.clients * self.queries_per_client

    def qps(self) -> float:
        return self.queries / self.seconds_avg if self.seconds_avg > 0 else 0.0


@cache
def binary() -> str:
    for name in BINARIES:
        path = shutil.which(name)
        if path:
            return path
    raise EnvironmentProblem(INSTALL_HINT)


@cache
def version() -> str:
    out = subprocess.run([binary(), "--version"], capture_output=True, text=True, check=False)
    m = re.search(r"Ver\s+(\S+)(?:\s+Distrib\s+(\S+?),)?", out.stdout)
    if not m:
        return "unknown"
    return f"{m.group(1)} ({m.group(2)})" if m.group(2) else m.group(1)


def command(
    target: Endpoint,
    *,
    load: str,
    concurrency: list[int],
    engine: str | None = None,
    options: tuple[str, ...] = (),
) -> list[str]:
    if load not in LOAD_TYPES:
        raise ParseError(f"slap load '{load}' is not one of {', '.join(LOAD_TYPES)}")
    cmd = [
        binary(),
        f"--user={target.user}",
        f"--password={target.password}",
        "--auto-generate-sql",
        f"--auto-generate-sql-load-type={load}",
        "--concurrency=" + ",".join(str(c) for c in concurrency),
    ]
    if target.socket:
        cmd += [f"--socket={target.socket}", "--protocol=socket"]
    else:
        cmd += [f"--host={target.host}", f"--port={target.port}", "--protocol=tcp"]
    if engine:
        cmd.append(f"--engine={engine}")
    cmd += list(options)  # the workload's --iterations=N, --number-of-queries=N, ...
    return cmd


def redact(cmd: list[str]) -> list[str]:
    return [re.sub(r"^(--password=).*", r"\1***", c) for c in cmd]


def parse_output(text: str, source: str = "slap output") -> list[Block]:
    """Every summary block, in order; ParseError naming the tool's error if none."""
    blocks = [
        Block(
            engine=m.group("engine"),
            seconds_avg=float(m.group("avg")),
            seconds_min=float(m.group("min")),
            seconds_max=float(m.group("max")),
            clients=int(m.group("clients")),
            queries_per_client=int(m.group("per_client")),
        )
        for m in _BLOCK.finditer(text)
    ]
    if not blocks:
        err = _ERROR.search(text)
        detail = err.group(1).strip() if err else (text.strip().splitlines() or ["no output"])[-1]
        raise ParseError(f"{source}: no benchmark summary ({detail[:300]})")
    return blocks


def result_of(block: Block) -> dict[str, Any]:
    """perftrack's result shape for one concurrency value (schema fields + seconds)."""
    qps = block.qps()
    per_query_ms = block.seconds_avg * 1000 / block.queries_per_client if block.queries else 0.0
    return {
        "status": "ok",
        "tps": qps,
        "qps": qps,
        "latency_avg_ms": per_query_ms,
        "latency_pct_ms": None,
        "latency_pct": None,
        "latency_max_ms": None,
        "errors_per_s": 0.0,
        "reconnects_per_s": 0.0,
        "total_time_s": block.seconds_avg,
        "threads": block.clients,
        "events": block.queries,
        "intervals": [],
        "seconds_avg": block.seconds_avg,
        "seconds_min": block.seconds_min,
        "seconds_max": block.seconds_max,
        "engine": block.engine,
    }


def run_slap(
    target: Endpoint,
    *,
    load: str,
    threads: int,
    engine: str | None = None,
    options: tuple[str, ...] = (),
    log: Path | None = None,
    bound_s: float = BOUND_S,
) -> tuple[dict[str, Any], list[str]]:
    """One cell: one concurrency value; returns (parsed result, redacted command)."""
    cmd = command(target, load=load, concurrency=[threads], engine=engine, options=options)
    # the password in a private option file (first option), never on the command line
    with private_options(
        cmd, "--password=", lambda pw: f"[client]\npassword={pw}\n", "--defaults-extra-file="
    ) as argv:
        outcome = execute(argv, bound_s, log)
    if outcome.timed_out:
        return {"status": "failed", "reason": f"slap hung: killed after {bound_s:.0f} s"}, redact(
            cmd
        )
    try:
        (block, *_rest) = parse_output(outcome.text, source="slap run")
    except ParseError as exc:
        return {"status": "failed", "reason": f"{exc} (exit {outcome.returncode})"}, redact(cmd)
    if outcome.returncode != 0:
        return {"status": "failed", "reason": f"slap exited with {outcome.returncode}"}, redact(cmd)
    if engine and (block.engine or "").lower() != engine.lower():
        return {
            "status": "failed",
            "reason": f"slap ran engine {block.engine} instead of the cell's {engine}",
        }, redact(cmd)
    return result_of(block), redact(cmd)
