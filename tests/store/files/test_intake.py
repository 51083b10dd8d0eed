"""Record files read on every core (store/files/intake.py): the same list as one process reads,
and the same first error. Records are synthetic fixtures, read by real forked workers."""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from fixtures.records.synthetic import make_record
from perftrack.core import record
from perftrack.core.errors import RecordError
from perftrack.store.files import intake


@pytest.fixture
def night(tmp_path: Path) -> Path:
    """12 record files of two servers' variable sets (enough for 3 workers at 4 a slice)."""
    d = tmp_path / "night"
    for cell in range(12):
        rec = make_record(run_id="synthetic-run-7", cell=cell, instance=cell % 2, tps=900 + cell)
        record.write(rec, d)
    return d


def _one_process(monkeypatch: pytest.MonkeyPatch, paths: list[Path]) -> list:
    monkeypatch.setattr(intake, "PARALLEL_FROM", 10**9)
    return intake.read_prepared(paths)


def test_workers_prepare_the_list_one_process_prepares(
    night: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools: list[int] = []

    def pool(max_workers: int, **kw: object) -> ProcessPoolExecutor:
        pools.append(max_workers)
        return ProcessPoolExecutor(max_workers, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(intake, "ProcessPoolExecutor", pool)
    monkeypatch.setattr(intake.os, "cpu_count", lambda: 3)
    monkeypatch.setattr(intake, "PARALLEL_FROM", 4)  # 3 workers of 4 files each
    forked = intake.read_prepared([night])
    assert pools == [3]
    assert len(forked) == 12
    assert forked[0].result[0] != forked[1].result[0]
    assert forked == _one_process(monkeypatch, [night])
    assert [p.record_id for p in forked] == sorted(p.record_id for p in forked)  # file order


def test_a_bad_file_in_a_worker_s_slice_is_the_same_one_line_error(
    night: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = sorted(night.rglob("*.json"))
    bad, worse = files[9], files[11]  # both in the last slice; the first of them is named
    for f, field in ((bad, "threads"), (worse, "workload")):
        data = json.loads(f.read_text())
        data["cell"][field] = "eight" if field == "threads" else 8
        f.write_text(json.dumps(data))
    monkeypatch.setattr(intake.os, "cpu_count", lambda: 3)
    monkeypatch.setattr(intake, "PARALLEL_FROM", 4)
    with pytest.raises(RecordError) as forked:
        intake.read_prepared([night])
    with pytest.raises(RecordError) as alone:
        _one_process(monkeypatch, [night])
    assert str(forked.value) == str(alone.value)
    assert str(bad) in str(forked.value) and "threads" in str(forked.value)
    assert "\n" not in str(forked.value)


def test_without_workers_one_process_reads_them(
    night: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_fork(*_a: object, **_k: object) -> None:
        raise OSError("fork refused (test)")

    monkeypatch.setattr(intake, "ProcessPoolExecutor", no_fork)
    monkeypatch.setattr(intake.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(intake, "PARALLEL_FROM", 4)
    got = intake.read_prepared([night])
    assert got == _one_process(monkeypatch, [night])
