"""Files made safely: replacing one atomically (write a temporary file beside it, check
it, rename it over), syncing a file or directory to disk, and a file's SHA-256.

A reader sees the old file or the new one, never half of it; on any error (including a
failed check) the temporary file is removed and the original is untouched.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


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


def fsync_path(path: Path, *, directory: bool = False) -> None:
    """fsync a file, or with `directory` a directory (so a rename in it is durable)."""
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
