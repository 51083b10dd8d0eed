"""sysbench driver: build the commands, run them bounded in time, parse the output."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from perftrack.core.errors import EnvironmentProblem, ParseError
from perftrack.drivers.sysbench_output import parse_output

# Every measured run reports each second: the per-interval series is what the stats use.
REPORT_INTERVAL_S = 1
PERCENTILE = 95
# Fixed seed: every server sees the same key sequence (run discipline of issue 5).
RAND_SEED = 1
# Wall-clock bound for one sysbench process beyond its own --time: connection setup,
# final report, and a slow server's last transactions. Past it the process is killed.
GRACE_S = 60
PREPARE_TIMEOUT_S = 1800
INSTALL_HINT = "sysbench is not installed: run `apt-get install sysbench` (or `make setup`)"


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    host: str
    port: int
    user: str
    password: str
    db: str
    socket: str | None = None  # connection over the unix socket instead of TCP


@cache
def binary() -> str:
    path = shutil.which("sysbench")
    if path is None:
        raise EnvironmentProblem(INSTALL_HINT)
    return path


@cache
def version() -> str:
    out = subprocess.run([binary(), "--version"], capture_output=True, text=True, check=False)
    m = re.search(r"sysbench\s+(\S+)", out.stdout)
    return m.group(1) if m else "unknown"


def command(
    script: str,
    action: str,
    target: Endpoint,
    *,
    tables: int,
    table_size: int,
    threads: int = 1,
    time_s: int | None = None,
    options: tuple[str, ...] = (),
) -> list[str]:
    cmd = [
        binary(),
        script,
        "--db-driver=mysql",
        f"--mysql-user={target.user}",
        f"--mysql-password={target.password}",
        f"--mysql-db={target.db}",
        f"--tables={tables}",
        f"--table-size={table_size}",
        f"--threads={threads}",
    ]
    if target.socket:
        cmd.append(f"--mysql-socket={target.socket}")
    else:
        cmd += [f"--mysql-host={target.host}", f"--mysql-port={target.port}"]
    if action == "run":
        cmd += [
            f"--time={time_s}",
            "--events=0",
            f"--report-interval={REPORT_INTERVAL_S}",
            f"--percentile={PERCENTILE}",
            f"--rand-seed={RAND_SEED}",
        ]
    cmd += list(options)  # the workload's (or the cell's) own options, e.g. --distinct-ranges=1
    cmd.append(action)
    return cmd


def redact(cmd: list[str]) -> list[str]:
    return [re.sub(r"^(--mysql-password=).*", r"\1***", c) for c in cmd]


@dataclass
class ToolOutcome:
    text: str
    returncode: int | None  # None: killed after the wall-clock bound
    timed_out: bool
    bound_s: float


PASSWORD_OPTION = "--mysql-password="


@contextlib.contextmanager
def private_options(
    cmd: list[str], option: str, file_text: Callable[[str], str], file_option: str
) -> Iterator[list[str]]:
    """``cmd`` with ``option``VALUE (a password) moved into a file only this user can read,
    named by ``file_option``PATH: a command line is world-readable (/proc/PID/cmdline, ps),
    a 0600 file is not. The file is removed when the tool has run."""
    secret = [a for a in cmd if a.startswith(option)]
    if not secret:
        yield cmd
        return
    fd, name = tempfile.mkstemp(prefix="perftrack-", suffix=".cnf")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(file_text(secret[-1][len(option) :]))
        rest = [a for a in cmd[1:] if not a.startswith(option)]
        yield [cmd[0], f"{file_option}{name}", *rest]
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def execute(cmd: list[str], bound_s: float, log: Path | None = None) -> ToolOutcome:
    """Run a sysbench command, killing its process group if it passes `bound_s`. The
    password goes to sysbench in a private --config-file, never on its command line."""
    with private_options(
        cmd, PASSWORD_OPTION, lambda pw: f"mysql-password={pw}\n", "--config-file="
    ) as argv:
        return _execute(argv, bound_s, log)


def _execute(cmd: list[str], bound_s: float, log: Path | None) -> ToolOutcome:
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=bound_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, _ = proc.communicate()
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    text = out.decode(errors="replace")
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(text)
    return ToolOutcome(text, None if timed_out else proc.returncode, timed_out, bound_s)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def prepare(
    script: str,
    target: Endpoint,
    *,
    tables: int,
    table_size: int,
    log: Path | None = None,
    options: tuple[str, ...] = (),
) -> ToolOutcome:
    threads = min(tables, os.cpu_count() or 1)
    cmd = command(
        script,
        "prepare",
        target,
        tables=tables,
        table_size=table_size,
        threads=threads,
        options=options,
    )
    return execute(cmd, PREPARE_TIMEOUT_S, log)


def run_sysbench(
    script: str,
    target: Endpoint,
    *,
    tables: int,
    table_size: int,
    threads: int,
    time_s: int,
    log: Path | None = None,
    grace_s: float = GRACE_S,
    options: tuple[str, ...] = (),
) -> tuple[dict[str, Any], list[str]]:
    """Run one measurement; returns (parsed result, redacted command).

    The parsed dict has status "ok" or "failed" with a reason; a run still going
    `grace_s` after its `--time` is killed and "failed" naming the bound.
    """
    cmd = command(
        script,
        "run",
        target,
        tables=tables,
        table_size=table_size,
        threads=threads,
        time_s=time_s,
        options=options,
    )
    outcome = execute(cmd, time_s + grace_s, log)
    if outcome.timed_out:
        return (
            {
                "status": "failed",
                "reason": f"sysbench hung: no result within "
                f"{outcome.bound_s:.0f} s (--time={time_s}); killed",
            },
            redact(cmd),
        )
    try:
        parsed = parse_output(outcome.text, source="sysbench run")
    except ParseError as exc:
        if outcome.returncode == 0:
            raise
        return (
            {
                "status": "failed",
                "reason": f"sysbench {_exit(outcome.returncode)} without a readable result ({exc})",
            },
            redact(cmd),
        )
    if parsed.get("status") == "ok" and outcome.returncode != 0:
        parsed = {**parsed, "status": "failed", "reason": f"sysbench {_exit(outcome.returncode)}"}
    return parsed, redact(cmd)


def _exit(code: int | None) -> str:
    if code is not None and code < 0:
        return f"was killed by {signal.Signals(-code).name}"
    if code is not None and code > 128:
        return f"died with signal {code - 128} (exit {code})"
    return f"exited with code {code}"
