"""Hardware counters of the server's process from `perf stat` (instructions, cycles), where
the host allows them; otherwise a reason, never a guess."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from perftrack.run.targets import read_file

# Hardware events asked of perf; software ones (task-clock) work on every VM and are not
# what issue #9 is after: CPU time comes from /proc already.
HW_EVENTS = ("instructions", "cycles")
PERF_TIMEOUT_S = 10.0  # perf stat attaching / printing its counts: well under a second
PERF_HINT = "perf is not installed (apt-get install linux-perf, or `make setup`)"


# === perf stat ==========================================================================


def _parse_perf_csv(text: str) -> dict[str, float | str]:
    """`perf stat -x,` lines -> {event: count, or the reason perf gave ("not supported")}."""
    out: dict[str, float | str] = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) < 3 or line.startswith("#"):
            continue
        value, event = parts[0].strip(), parts[2].strip()
        event = event.split(":")[0].split("/")[0] or event
        if not event:
            continue
        if value.startswith("<"):
            out[event] = value.strip("<>")
        else:
            with contextlib.suppress(ValueError):
                out[event] = float(value)
    return out


@cache
def perf_hardware() -> str | None:
    """None if `perf stat` counts instructions and cycles here; else why not."""
    perf = shutil.which("perf")
    if perf is None:
        return PERF_HINT
    try:
        res = subprocess.run(
            [perf, "stat", "-x,", "-e", ",".join(HW_EVENTS), "--", "true"],
            capture_output=True,
            text=True,
            timeout=PERF_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"perf stat did not run ({exc})"
    counts = _parse_perf_csv(res.stderr)
    bad = {e: counts.get(e, "no count") for e in HW_EVENTS if not isinstance(counts.get(e), float)}
    if res.returncode != 0 and not counts:
        first = (res.stderr.strip().splitlines() or ["no output"])[0]
        return f"perf stat failed: {first[:200]}"
    if bad:
        what = ", ".join(f"{e}: {v}" for e, v in bad.items())
        return f"perf stat cannot count hardware events on this machine ({what})"
    return None


class PerfStat:
    """`perf stat -p PID -e EVENTS` over a window (SIGINT ends it and prints the counts)."""

    def __init__(self, pid: int, events: tuple[str, ...] = HW_EVENTS) -> None:
        self.pid, self.events = pid, events
        self.proc: subprocess.Popen[bytes] | None = None
        fd, name = tempfile.mkstemp(prefix="perftrack-perf-", suffix=".csv")
        os.close(fd)
        self.out = Path(name)
        self.error: str | None = None

    def start(self) -> None:
        perf = shutil.which("perf")
        if perf is None:
            self.error = PERF_HINT
            return
        cmd = [perf, "stat", "-x,", "-e", ",".join(self.events), "-p", str(self.pid)]
        self.proc = subprocess.Popen(
            [*cmd, "-o", str(self.out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )

    def stop(self) -> dict[str, float | str]:
        try:
            if self.proc is None:
                return {}
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGINT)
            try:
                _, err = self.proc.communicate(timeout=PERF_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                _, err = self.proc.communicate()
                self.error = "perf stat did not stop; killed"
                return {}
            counts = _parse_perf_csv(read_file(self.out) or "")
            if not counts:
                first = (err.decode(errors="replace").strip().splitlines() or ["no output"])[0]
                self.error = f"perf stat -p {self.pid} gave no counts: {first[:200]}"
            return counts
        finally:
            self.out.unlink(missing_ok=True)
