"""Shared fixtures. Integration tests start real servers from the real catalog; downloads
go to the normal perftrack cache (~/.cache/perftrack or $PERFTRACK_CACHE) and are reused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """A private copy of configs/ a test may add profiles or matrices to."""
    d = tmp_path / "configs"
    shutil.copytree(CONFIGS, d)
    return d


def processes_mentioning(text: str) -> list[str]:
    """Live processes whose command line contains `text` (leak checks)."""
    out = subprocess.run(["pgrep", "-a", "-f", text], capture_output=True, text=True, check=False)
    return [
        ln
        for ln in out.stdout.splitlines()
        if "pgrep" not in ln and str(os.getpid()) != ln.split()[0]
    ]


@pytest.fixture
def workroot(tmp_path: Path):
    """Directory for server datadirs; after the test nothing may run from it or remain."""
    root = tmp_path / "w"
    root.mkdir()
    yield root
    assert processes_mentioning(str(root)) == [], "a server or sysbench process leaked"
    assert list(root.iterdir()) == [], "a server directory was left behind"
