"""Replacing a file atomically: write a temporary file beside it, check it, rename it over.

A reader sees the old file or the new one, never half of it; on any error (including a
failed check) the temporary file is removed and the original is untouched.
"""

from __future__ import annotations

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
