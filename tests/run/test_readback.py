"""readback.py: the room a sized dataset needs, and the phase in `effective` (no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perftrack.core.errors import EnvironmentProblem
from perftrack.planning import cells as plan
from perftrack.planning import matrix
from perftrack.run import readback

INFO = {"m": ("mariadb", "10.11.19")}


def cells(**kw) -> list[plan.Cell]:
    base = {"name": "t", "servers": ["m"], "workloads": ["oltp_read_write"]}
    base |= {"charsets": ["latin1"], "threads": [1], "repeats": 1}
    return plan.expand(matrix.from_dict({**base, **kw}), INFO.__getitem__)


def test_a_dataset_the_disk_cannot_hold_is_a_one_line_error(tmp_path: Path) -> None:
    (big,) = [c for c in cells(dataset_sizes=["large"], tables=1) if c.phase is None]
    huge = plan.Cell.from_dict({**big.to_dict(), "table_size": 900_000_000})  # ~218 GB
    with pytest.raises(EnvironmentProblem, match=r"large dataset .* needs ~\d+ MiB free") as e:
        readback.check_room(huge, tmp_path)
    assert "\n" not in str(e.value)
    readback.check_room(big, tmp_path)  # 384 MiB of rows: fits
    readback.check_room(cells()[0], tmp_path)  # no dataset_size: nothing to check


def test_phase_joins_the_effective_settings_only_for_pre_post_cells() -> None:
    by_phase = {c.phase: c for c in cells(prepost=True)}
    assert readback.with_phase(by_phase["post"], {"a": "1"}) == {"a": "1", "phase": "post"}
    assert readback.with_phase(by_phase[None], {"a": "1"}) == {"a": "1"}
    assert readback.with_phase(by_phase["pre"], None) == {}, "skipped cells read nothing back"
