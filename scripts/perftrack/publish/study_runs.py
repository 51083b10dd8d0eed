"""Which runs and records a study's report reads: one run per part of a scale (the given
ones, else the newest complete), their records' latest attempts, or the results DB's
records of the cells the study plans (publish/study_report.py renders them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perftrack.core.errors import ConfigError
from perftrack.planning.matrix import Matrix
from perftrack.planning.study import Study
from perftrack.planning.workloads import PREPOST_WORKLOAD

if TYPE_CHECKING:
    from perftrack.store.store import Store


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


def of_study(study: Study, scale: str, cell: dict[str, Any]) -> bool:
    """A cell one of the scale's matrices plans (the servers' other runs in the DB, the
    nightly's or another study's, have other workloads, threads, lengths or profiles)."""
    return _planned(planned_cells(study.matrices(scale)), cell)


def planned_cells(matrices: list[Matrix]) -> list[dict[str, tuple[Any, ...]]]:
    """The one definition of the cells the matrices plan, as one set per matrix of the
    values each field may take: its workloads (with the pre/post workload), threads,
    profiles, duration and tables. `_planned` tests a cell against them in Python,
    `Store.cell_records` in SQL (a test keeps the two in agreement)."""
    return [
        {
            "workload": (*m.workloads, *((PREPOST_WORKLOAD,) if m.prepost else ())),
            "threads": m.threads,
            "profile": m.profiles or (m.profile,),
            "duration_s": (m.duration_s,),
            "tables": (m.tables,),
        }
        for m in matrices
    ]


def _planned(cell_sets: list[dict[str, tuple[Any, ...]]], cell: dict[str, Any]) -> bool:
    return any(all(cell[k] in values for k, values in s.items()) for s in cell_sets)


def db_records(study: Study, scale: str, db: Store) -> list[dict[str, Any]]:
    """The DB's records (latest attempts) of the cells this study plans at this scale, on
    the scale's servers: the filter runs in the query, not on every record of the servers."""
    return db.cell_records(study.servers(scale), planned_cells(study.matrices(scale)))


def find_runs(study: Study, scale: str, runs_dir: Path, run_ids: list[str]) -> list[Path]:
    """One run per part of the scale: the given ones (in part order), else the newest."""
    parts = study.parts(scale)
    if run_ids and len(run_ids) != len(parts):
        raise ConfigError(
            f"study {study.name} scale {scale} has {len(parts)} part(s) "
            f"({', '.join(p or 'one matrix' for p in parts)}): give one --run per part"
        )
    ids: list[str | None] = list(run_ids) if run_ids else [None] * len(parts)
    return [
        find_run(study, scale, runs_dir, rid, part) for rid, part in zip(ids, parts, strict=True)
    ]


def find_run(study: Study, scale: str, runs_dir: Path, run_id: str | None, part: str = "") -> Path:
    """The given run, or the newest complete run of the study at this scale (the newest
    unfinished one if none is complete)."""
    want = study.matrix_name(scale, part)
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
            f"run `perftrack study run {study.name} --scale {scale}` first"
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
