"""Shared fixtures. Integration tests start real servers from the real catalog; downloads
go to the normal perftrack cache (~/.cache/perftrack or $PERFTRACK_CACHE) and are reused.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from leaks import processes_mentioning

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """A private copy of configs/ a test may add profiles or matrices to."""
    d = tmp_path / "configs"
    shutil.copytree(CONFIGS, d)
    return d


@pytest.fixture
def configs(config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`config_dir`, made the configs every perftrack command of the test reads."""
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(config_dir))
    return config_dir


@pytest.fixture
def workroot(tmp_path: Path):
    """Directory for server datadirs; after the test nothing may run from it or remain."""
    root = tmp_path / "w"
    root.mkdir()
    yield root
    assert processes_mentioning(str(root)) == [], "a server or sysbench process leaked"
    assert list(root.iterdir()) == [], "a server directory was left behind"
