"""The store's lock: one file beside the DB, flock'ed by every perftrack process that opens
it (write: exclusive, read: shared), with the holder's pid for the "locked by" message."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from perftrack.core.errors import DatabaseError

# --- locking ---------------------------------------------------------------------------
# A nightly ingest of a few hundred records takes seconds; a minute covers a slow runner
# and still fails fast enough for an interactive user to notice.
LOCK_TIMEOUT_S = 60.0
# How often a waiting process retries the lock: short enough not to add noticeable delay,
# long enough not to spin (flock has no timed wait, so we poll).
LOCK_POLL_S = 0.05
LOCK_SUFFIX = ".lock"


def lock_path(db_path: Path) -> Path:
    """The lock file beside the DB: `data/results.duckdb.lock` (keep it out of git)."""
    return db_path.with_name(db_path.name + LOCK_SUFFIX)


# === the lock ==========================================================================


class Lock:
    """`flock` on `<db>.lock`: exclusive for writers, shared for readers, bounded wait.

    The exclusive holder writes its pid into the file so a waiter can name it; the pid is
    cleared on release so a stale one is never reported.
    """

    def __init__(self, path: Path, *, exclusive: bool) -> None:
        self.path = path
        self.exclusive = exclusive
        self.fd: int | None = None

    def acquire(self, db_path: Path, timeout_s: float) -> None:
        fd = self._open()
        if fd is None:  # read-only directory: nobody can write the DB here either
            return
        mode = fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH
        deadline = time.monotonic() + max(timeout_s, 0.0)
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_pid(fd)
                    os.close(fd)
                    raise DatabaseError(_locked_message(db_path, holder)) from None
                time.sleep(LOCK_POLL_S)
        self.fd = fd
        if self.exclusive:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        try:
            if self.exclusive:
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _open(self) -> int | None:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            if self.exclusive or exc.errno not in (errno.EACCES, errno.EROFS, errno.EPERM):
                raise DatabaseError(
                    f"cannot create lock file {self.path} ({exc.strerror})"
                ) from None
        try:
            return os.open(self.path, os.O_RDONLY)
        except OSError:
            return None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _locked_message(db_path: Path, pid: int | None) -> str:
    who = f" (pid {pid})" if pid is not None else ""
    return f"{db_path} is locked by another perftrack process{who}; retry when it finishes"
