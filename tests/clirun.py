"""Running the `perftrack` CLI in a subprocess, and checking its one-line errors (shared by
the CLI tests of every stage)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def perftrack(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from perftrack.cli import main; sys.exit(main())",
            *args,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=120,
    )


def assert_one_line_error(res, code: int, *needles: str) -> None:
    assert res.returncode == code, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in res.stderr
    for n in needles:
        assert n in lines[0]
