"""A directory's owner lock: who is using a server or run directory right now.

The process that uses a directory (a running perftrack: a server's `pt-*` directory, a
run directory) holds an exclusive `flock` on the file `.perftrack.lock` inside it for as
long as it uses it. The kernel drops the lock when that process dies, however it dies
(SIGKILL, OOM, a power cut's reboot), and children do not inherit it (perftrack starts
them with close_fds), so a directory whose lock can be taken has no live owner:
`perftrack runner sweep` and `perftrack runner salvage` rely on exactly that.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

LOCK_NAME = ".perftrack.lock"
SERVER_DIR_PREFIX = "pt-"  # mkdtemp prefix of a server's directory (run/server.py)

HELD = "held"  # a live process owns the directory
FREE = "free"  # the lock file is there and nobody holds it: the owner is gone
NO_LOCK = "no-lock"  # no lock file: not (yet) perftrack's, or made by an older perftrack
UNKNOWN = "unknown"  # the lock file cannot be opened (another user's directory)


def hold(directory: Path) -> int:
    """Take the owner lock of `directory`; the open descriptor (keep it, `release` it).

    Raises BlockingIOError if another process holds it."""
    fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:  # an empty file: writing anything could fail on a full disk
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BaseException:
        os.close(fd)
        raise
    return fd


def release(descriptor: int | None) -> None:
    """Drop a lock taken with `hold` (closing the descriptor drops it)."""
    if descriptor is not None:
        with contextlib.suppress(OSError):
            os.close(descriptor)


def state(directory: Path) -> str:
    """HELD, FREE, NO_LOCK or UNKNOWN for `directory` (see the module's docstring)."""
    path = directory / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return NO_LOCK
    except OSError:
        return UNKNOWN
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return HELD
    except OSError:
        return UNKNOWN
    finally:
        os.close(fd)  # also drops the lock this probe may have taken
    return FREE


@contextlib.contextmanager
def claimed(directory: Path) -> Iterator[bool]:
    """Hold the lock of a directory whose owner is gone while it is cleaned up; yields
    False (and holds nothing) if someone else holds it."""
    try:
        fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
