"""GitHub Actions step outputs: ``key=value`` lines appended to ``$GITHUB_OUTPUT``'s file.

One writer for every command that has a ``--github-output FILE`` option. A value may not
span lines (it would forge another output); a file that cannot be written is a one-line
`ConfigError`.
"""

from __future__ import annotations

from pathlib import Path

from perftrack.core.errors import ConfigError


def append(path: Path | None, values: dict[str, str]) -> None:
    """Append ``key=value`` per item to ``path`` (nothing when ``path`` is None)."""
    if path is None:
        return
    for key, value in values.items():
        if "\n" in value or "\r" in value:
            raise ConfigError(f"output {key} would span lines")
    try:
        with path.open("a", encoding="utf-8") as f:
            f.writelines(f"{k}={v}\n" for k, v in values.items())
    except OSError as err:
        raise ConfigError(f"cannot write the GitHub output file {path}: {err.strerror}") from None
