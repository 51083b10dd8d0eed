"""A run directory (`runs/<run_id>/`): its plan, status, records and logs.

- `plan.json`: the matrix and every cell, in order (written once)
- `run.json`: status (running | complete | interrupted), counts, times
- `records/`: one validated run record per cell attempt (`<cell_id>.<attempt>.json`)
- `logs/`: raw sysbench output and server error logs (artifacts, not DB)
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perftrack import __version__
from perftrack.core import files, record, recordsig
from perftrack.core.errors import ConfigError
from perftrack.planning import cells as plan
from perftrack.planning.matrix import Matrix
from perftrack.servers.catalog import Catalog

RUN_STATUSES = ("running", "complete", "interrupted")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def _write_json(path: Path, data: Any) -> None:
    files.replace_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


@dataclass
class RunDir:
    path: Path

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def records(self) -> Path:
        return self.path / "records"

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    def plan(self) -> dict[str, Any]:
        try:
            return json.loads((self.path / "plan.json").read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{self.path}: not a perftrack run directory ({exc})") from None

    def cells(self) -> list[plan.Cell]:
        return [plan.Cell.from_dict(c) for c in self.plan()["cells"]]

    def status(self) -> dict[str, Any]:
        try:
            return json.loads((self.path / "run.json").read_text())
        except (OSError, json.JSONDecodeError):
            return {}

    def set_status(self, status: str, **extra: Any) -> None:
        data = {**self.status(), "run_id": self.run_id, "status": status, **extra}
        _write_json(self.path / "run.json", data)

    def attempts(self) -> dict[str, list[dict[str, Any]]]:
        """Records already written, by cell id, in attempt order."""
        out: dict[str, list[dict[str, Any]]] = {}
        if self.records.is_dir():
            for p in record.find([self.records]):
                rec = record.read(p)
                out.setdefault(rec["cell_id"], []).append(rec)
        for recs in out.values():
            recs.sort(key=lambda r: r["attempt"])
        return out


def deciding(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """The attempt that decides a cell's outcome: the latest, except that a failed
    re-measure of a noisy window (host.repeat_of) leaves the ok attempt before it."""
    for rec in reversed(recs):
        if not (rec["status"] == "failed" and (rec.get("host") or {}).get("repeat_of")):
            return rec
    return recs[-1]


def max_attempt() -> int:
    """The run-record schema's bound on `attempt`."""
    return int(record.schema()["properties"]["attempt"]["maximum"])


def create(matrix: Matrix, catalog: Catalog, out_dir: Path, runner_class: str) -> RunDir:
    """Plan the matrix and create its run directory (nothing runs yet)."""
    return create_from_cells(
        plan.expand_catalog(matrix, catalog), matrix.to_dict(), out_dir, runner_class
    )


def create_from_cells(
    cells: list[plan.Cell],
    matrix_spec: dict[str, Any],
    out_dir: Path,
    runner_class: str,
    **extra: Any,
) -> RunDir:
    """A run directory for cells planned elsewhere (a night plan's shard); `extra` keys
    (night_plan, reuse_datasets) are kept in plan.json for `--resume`."""
    rd = RunDir(out_dir / new_run_id())
    rd.path.mkdir(parents=True)
    _write_json(
        rd.path / "plan.json",
        {
            "run_id": rd.run_id,
            "matrix": matrix_spec,
            "runner_class": runner_class,
            "perftrack_version": __version__,
            "created_at": now(),
            "cells": [c.to_dict() for c in cells],
            **extra,
        },
    )
    recordsig.sign(rd.path / "plan.json")  # a bench host resumes only a plan its night wrote
    rd.set_status("running", created_at=now())
    return rd


def open_run(out_dir: Path, run_id: str) -> RunDir:
    if not record.ID_RE.fullmatch(run_id):
        raise ConfigError(f"{run_id!r} is not a run id")
    rd = RunDir(out_dir / run_id)
    if not (rd.path / "plan.json").is_file():
        known = (
            sorted(p.parent.name for p in out_dir.glob("*/plan.json")) if out_dir.is_dir() else []
        )
        raise ConfigError(
            f"no run '{run_id}' in {out_dir}; runs there: "
            f"{', '.join(p.split('/')[0] for p in known) or 'none'}"
        )
    return rd
