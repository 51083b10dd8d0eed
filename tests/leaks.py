"""Leak checks shared by the tests: processes a test started must be gone after it."""

from __future__ import annotations

import os
import subprocess


def processes_mentioning(text: str) -> list[str]:
    """Live processes whose command line contains `text` (leak checks)."""
    out = subprocess.run(["pgrep", "-a", "-f", text], capture_output=True, text=True, check=False)
    return [
        ln
        for ln in out.stdout.splitlines()
        if "pgrep" not in ln and str(os.getpid()) != ln.split()[0]
    ]


class ToolCommandLines:
    """The command lines of the load tools (sysbench, mariadb-slap) that run while this
    context is open, as any user of the machine sees them (/proc/PID/cmdline): a password
    there is readable by every process on the host."""

    TOOLS = ("sysbench", "mariadb-slap", "mysqlslap")

    def __init__(self, poll_s: float = 0.02) -> None:
        import threading

        self.poll_s = poll_s
        self.seen: dict[int, list[str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            for name in os.listdir("/proc"):
                if not name.isdigit() or int(name) in self.seen:
                    continue
                try:
                    with open(f"/proc/{name}/cmdline", "rb") as fh:
                        argv = [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
                except OSError:
                    continue
                if argv and os.path.basename(argv[0]) in self.TOOLS:
                    self.seen[int(name)] = argv
            self._stop.wait(self.poll_s)

    def __enter__(self) -> ToolCommandLines:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def with_password(self) -> list[list[str]]:
        return [a for a in self.seen.values() if any("password" in x for x in a)]
