"""The store's lock: one file beside the DB, flock'ed by every perftrack process that opens
it (write: exclusive, read: shared), with the holder's pid for the "locked by" message."""

from __future__ import annotations

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
    cleared on release so a stale one is never reported. A reader never creates the lock
    file (a read-only command leaves nothing beside a DB it was pointed at): where there
    is none yet it takes its shared lock on the DB file itself, which a writer locks too
    (after the lock file, so a reader that finds the lock file never waits on the DB file).
    """

    def __init__(self, path: Path, *, exclusive: bool) -> None:
        self.path = path
        self.exclusive = exclusive
        self.fds: list[int] = []

    def acquire(self, db_path: Path, timeout_s: float) -> None:
        deadline = time.monotonic() + max(timeout_s, 0.0)
        try:
            if self.exclusive:
                fd = self._open_for_writer()
                self._flock(fd, db_path, deadline, names_holder=True)
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                db_fd = _open_readonly(db_path)
                if db_fd is not None:  # readers that found no lock file hold this one
                    self._flock(db_fd, db_path, deadline, names_holder=False)
                return
            shared = _open_readonly(self.path)
            if shared is not None:
                self._flock(shared, db_path, deadline, names_holder=True)
                return
            shared = _open_readonly(db_path)  # no lock file (no writer yet): the DB file's own
            if shared is not None:
                self._flock(shared, db_path, deadline, names_holder=False)
        except BaseException:
            self.release()
            raise

    def _flock(
        self, descriptor: int, db_path: Path, deadline: float, *, names_holder: bool
    ) -> None:
        """Lock `descriptor` by the deadline (then kept in self.fds until release), or close it
        and refuse; `names_holder`: `descriptor` is the lock file, whose pid the refusal names."""
        mode = fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH
        while True:
            try:
                fcntl.flock(descriptor, mode | fcntl.LOCK_NB)
                self.fds.append(descriptor)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_pid(descriptor) if names_holder else None
                    os.close(descriptor)
                    raise DatabaseError(_locked_message(db_path, holder)) from None
                time.sleep(LOCK_POLL_S)

    def release(self) -> None:
        fds, self.fds = self.fds, []
        for i, fd in enumerate(fds):
            try:
                if self.exclusive and i == 0:
                    os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def _open_for_writer(self) -> int:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise DatabaseError(f"cannot create lock file {self.path} ({exc.strerror})") from None


def _open_readonly(path: Path) -> int | None:
    """`path` opened for reading (enough for flock), or None when it cannot be."""
    try:
        return os.open(path, os.O_RDONLY)
    except OSError:
        return None


def _read_pid(descriptor: int) -> int | None:
    try:
        text = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _locked_message(db_path: Path, pid: int | None) -> str:
    who = f" (pid {pid})" if pid is not None else ""
    return f"{db_path} is locked by another perftrack process{who}; retry when it finishes"
