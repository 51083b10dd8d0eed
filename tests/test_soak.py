"""A short soak (~20 cells) through the same code as benchmarks/soak.py: real servers
restarted per group, injected server kills and a frozen server, every cell accounted for in
a real DuckDB file, no leaked processes, file descriptors or disk (integration)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SOAK_FILE = Path(__file__).resolve().parents[1] / "benchmarks" / "soak.py"


def load_soak():
    spec = importlib.util.spec_from_file_location("perftrack_soak_benchmark", SOAK_FILE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defined
    spec.loader.exec_module(module)
    return module


def test_short_soak_accounts_for_every_cell_and_leaks_nothing(
    tmp_path: Path, config_dir: Path
) -> None:
    soak = load_soak()
    rep = soak.soak(
        tmp_path,
        rounds=3,
        threads=[1, 2],
        charsets=["latin1", soak.SKIPPED_AXIS],
        kill_every=3,
        freeze_every=10,
        config_dir=config_dir,
    )
    assert rep.problems() == []
    assert rep.planned == 24 and rep.executed_cells == 12 and rep.groups == 6
    assert (rep.ok, rep.failed, rep.skipped) == (12, 0, 12), rep.final_failed
    assert rep.kills == 2 and rep.freezes == 1, "faults were injected"
    assert rep.attempts > rep.planned, "the faulted cells' failed attempts are stored too"
    # relative to before the soak: other tests in the same session may keep helpers alive
    assert rep.after.descendants <= rep.before.descendants and rep.after.work_bytes == 0
    assert list((tmp_path / "w").iterdir()) == [], "no server directory left"
