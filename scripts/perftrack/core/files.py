"""Files made safely: replacing one atomically (write a temporary file beside it, check
it, rename it over), syncing a file or directory to disk, and a file's SHA-256 (read
again only when the file changed: `KnownHashes`).

A reader sees the old file or the new one, never half of it; on any error (including a
failed check) the temporary file is removed and the original is untouched.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def replace_text(path: Path, text: str, check: Callable[[Path], None] | None = None) -> None:
    """Replace ``path``'s content with ``text`` (same mode); ``check(tmp)`` may raise to
    refuse the new content before it replaces the old."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        if check is not None:
            check(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


HASH_CHUNK_BYTES = 1 << 20


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's contents, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


class KnownHashes:
    """sha256 of files, remembered in a JSON file beside them with each file's identity
    (device, inode, size, mtime and ctime in ns), as git's index remembers its files: a
    file written since has another ctime (no call but a clock change sets it), so it is
    read again; an unchanged one is not. The memory is saved only where `memo`'s directory
    already exists (the caller's cache), atomically; unreadable, it is forgotten."""

    def __init__(self, memo: Path | None) -> None:
        self.memo = memo  # None: remember within this object only
        self._changed = False
        self._known: dict[str, list[Any]] = {}
        if memo is not None:
            try:
                known = json.loads(memo.read_text(encoding="utf-8"))
                self._known = known if isinstance(known, dict) else {}
            except (OSError, ValueError, UnicodeError):
                pass

    @staticmethod
    def _identity(stat: os.stat_result) -> list[int]:
        return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]

    def sha256(self, path: Path) -> str:
        """`sha256_file(path)`, read only if the file is not the one remembered."""
        key = os.path.abspath(path)  # no symlink resolved: a key, not an identity
        before = self._identity(path.stat())
        entry = self._known.get(key)
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == before:
            return str(entry[1])
        sha = sha256_file(path)
        if self._identity(path.stat()) == before:  # not written while it was read
            self._known[key] = [before, sha]
            self._changed = True
        return sha

    def save(self) -> None:
        """Write the memory if it learned something and its directory exists; never fails
        (it only saves reading again)."""
        if self.memo is None or not self._changed or not self.memo.parent.is_dir():
            return
        tmp = self.memo.with_name(f".{self.memo.name}.writing-{os.getpid()}")
        try:
            tmp.write_text(json.dumps(self._known, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.memo)
            self._changed = False
        except OSError:
            tmp.unlink(missing_ok=True)


def fsync_path(path: Path, *, directory: bool = False) -> None:
    """fsync a file, or with `directory` a directory (so a rename in it is durable)."""
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
