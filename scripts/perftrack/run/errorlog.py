"""A server's error log and output: its tail, its most telling line, and the causes
perftrack can name exactly (a missing shared library, a full disk)."""

from __future__ import annotations

import os
import re
from pathlib import Path

ERROR_LOG_TAIL_LINES = 30
# A server log is read whole to find a known cause, up to this much of its end (init logs
# are ~2 KB; the error log of a day-long run stays far below this).
CAUSE_SCAN_BYTES = 1 << 20
# The dynamic loader's message when a binary's library is absent (glibc ld.so).
MISSING_LIBRARY_RE = re.compile(r"error while loading shared libraries: ([^:\s]+)")
# ENOSPC as servers report it: MariaDB "failed with error 28", Aria "Errcode: 28", MySQL
# "OS errno 28" / "operating system error number 28", InnoDB "out of disk space", libc
# "No space left on device", MyISAM/Aria "Disk is full writing …".
DISK_FULL_RE = re.compile(
    r"No space left on device|Disk (?:is )?full|out of disk space|\bENOSPC\b"
    r"|\b(?:error|errno|errcode|error number)[:\s]+28\b",
    re.IGNORECASE,
)


def tail(path: Path, lines: int = ERROR_LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def tail_bytes(path: Path, limit: int = CAUSE_SCAN_BYTES) -> str:
    """The last `limit` bytes of a file as text ("" if it cannot be read)."""
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, path.stat().st_size - limit))
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def mount_point(path: Path) -> Path:
    """The mount point of the filesystem holding `path` (which may no longer exist)."""
    p = Path(os.path.abspath(path))
    while p != p.parent and not os.path.ismount(p):
        p = p.parent
    return p


def disk_full(where: Path) -> str:
    return (
        f"disk full on {mount_point(where)} (server directory {where}): free space there "
        "or give perftrack a work directory on a larger disk"
    )


def known_cause(text: str, where: Path) -> str | None:
    """A cause perftrack can name exactly, found anywhere in a server's output, or None."""
    m = MISSING_LIBRARY_RE.search(text)
    if m:
        return (
            f"missing shared library {m.group(1)}: install the package that provides it "
            "or put it in the server's library directory"
        )
    if DISK_FULL_RE.search(text):
        return disk_full(where)
    return None


def last_error_line(log_tail: str) -> str:
    """The most telling line of an error log tail, for one-line messages."""
    lines = [ln.strip() for ln in log_tail.splitlines() if ln.strip()]
    for marker in ("[ERROR]", "error while loading shared libraries", "Error", "error"):
        hits = [ln for ln in lines if marker in ln]
        if hits:
            # the first ERROR usually names the cause; later ones say "Aborting"
            first = [h for h in hits if "Aborting" not in h and "Unknown/unsupported" not in h]
            return (first or hits)[0][:300]
    return lines[-1][:300] if lines else "(empty error log)"
