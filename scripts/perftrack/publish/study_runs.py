"""Which runs and records a study's report reads: one run per part of a scale (the given
ones, else the newest complete), their records' latest attempts, or the results DB's
records of the cells the study plans (publish/study_report.py renders them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perftrack.core.errors import ConfigError
from perftrack.planning.matrix import Matrix
from perftrack.planning.study import Study
from perftrack.planning.workloads import PREPOST_WORKLOAD


def read_records(run_dirs: Path | list[Path]) -> list[dict[str, Any]]:
    """The latest attempt of every cell of the runs (a study's parts are one run each)."""
    from perftrack.core import record  # records only: a report needs no server, driver or DB

    dirs = [run_dirs] if isinstance(run_dirs, Path) else run_dirs
    recs: list[dict[str, Any]] = []
    latest: dict[str, dict[str, Any]] = {}
    for p in record.find([d / "records" for d in dirs]):
        rec = record.read(p)
        if rec["cell_id"] not in latest or rec["attempt"] > latest[rec["cell_id"]]["attempt"]:
            latest[rec["cell_id"]] = rec
    recs.extend(latest.values())
    return recs


def of_study(st: Study, scale: str, cell: dict[str, Any]) -> bool:
    """A cell one of the scale's matrices plans (the servers' other runs in the DB, the
    nightly's or another study's, have other workloads, threads, lengths or profiles)."""
    return _planned(st.matrices(scale), cell)


def _planned(matrices: list[Matrix], cell: dict[str, Any]) -> bool:
    for m in matrices:
        workloads = set(m.workloads) | ({PREPOST_WORKLOAD} if m.prepost else set())
        if (
            cell["workload"] in workloads
            and cell["threads"] in m.threads
            and cell["profile"] in (m.profiles or (m.profile,))
            and cell["duration_s"] == m.duration_s
            and cell["tables"] == m.tables
        ):
            return True
    return False


def db_records(st: Study, scale: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records (from the DB's `cell_records`) of the cells this study plans at this scale."""
    matrices = st.matrices(scale)  # read once: building them parses YAML files
    return [r for r in records if _planned(matrices, r["cell"])]


def find_runs(st: Study, scale: str, runs_dir: Path, run_ids: list[str]) -> list[Path]:
    """One run per part of the scale: the given ones (in part order), else the newest."""
    parts = st.parts(scale)
    if run_ids and len(run_ids) != len(parts):
        raise ConfigError(
            f"study {st.name} scale {scale} has {len(parts)} part(s) "
            f"({', '.join(p or 'one matrix' for p in parts)}): give one --run per part"
        )
    ids: list[str | None] = list(run_ids) if run_ids else [None] * len(parts)
    return [find_run(st, scale, runs_dir, rid, part) for rid, part in zip(ids, parts, strict=True)]


def find_run(st: Study, scale: str, runs_dir: Path, run_id: str | None, part: str = "") -> Path:
    """The given run, or the newest complete run of the study at this scale (the newest
    unfinished one if none is complete)."""
    want = st.matrix_name(scale, part)
    if run_id:
        path = runs_dir / run_id
        if not (path / "plan.json").is_file():
            raise ConfigError(f"no run '{run_id}' in {runs_dir}")
        if _matrix_name(path) != want:
            raise ConfigError(f"run {run_id} is not a run of {want}")
        return path
    runs = sorted(runs_dir.glob("*/plan.json")) if runs_dir.is_dir() else []
    found = [p.parent for p in runs if _matrix_name(p.parent) == want]
    if not found:
        raise ConfigError(
            f"no run of {want} in {runs_dir}: "
            f"run `perftrack study run {st.name} --scale {scale}` first"
        )
    complete = [p for p in found if run_status(p) == "complete"]
    return (complete or found)[-1]  # run ids start with their UTC start time


def _matrix_name(run_dir: Path) -> str | None:
    try:
        return str(json.loads((run_dir / "plan.json").read_text())["matrix"]["name"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def run_status(run_dir: Path) -> str:
    try:
        return str(json.loads((run_dir / "run.json").read_text())["status"])
    except (OSError, ValueError, KeyError, TypeError):
        return "unknown"
