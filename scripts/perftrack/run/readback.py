"""Read-back of the connection charset and the dataset size, and the room a dataset needs.

The runner stores these in the record's `effective` (beside the collations and the
durability settings) and `axes.mismatches` compares them with the cell:

- `character_set_client`, `character_set_connection`, `character_set_results`,
  `collation_connection`: what a connection of the benchmark client itself gets
  (drivers/probe.py), for every group that runs sysbench; the handshake axis's `skip`
  requires them to equal the cell's charset and collation.
- `dataset_bytes` (data + index of the benchmark tables after ANALYZE TABLE),
  `innodb_buffer_pool_size` (effective) and `dataset_size` (which side of the buffer pool
  the measured bytes are on), for cells with the dataset_size axis.
- `phase` (pre / post) of a prepost pass: the state of the data the cell measured.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from perftrack.core.errors import EnvironmentProblem
from perftrack.drivers import probe, sysbench
from perftrack.planning import axes, workloads
from perftrack.run.server import BENCH_DB, Server

# A dataset needs room for its datadir, plus the template it is copied from (reuse).
ROOM_FACTOR = 3


def connection(target: sysbench.Target, log: Path | None = None) -> dict[str, str | None]:
    return dict(probe.connection_charset(target, log))


def dataset(srv: Server, known: axes.Axes) -> dict[str, str | None]:
    """Measured size of the benchmark tables against the effective buffer pool."""
    names = [
        str(r[0])
        for r in srv.query(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s",
            (BENCH_DB,),
        )
    ]
    for name in names:  # fresh statistics: data_length lags a bulk load otherwise
        srv.query(f"ANALYZE TABLE `{BENCH_DB}`.`{name}`")
    row = srv.query(
        "SELECT COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) FROM information_schema.TABLES "
        "WHERE TABLE_SCHEMA = %s",
        (BENCH_DB,),
    )[0]
    data = int(row[0])
    pool = int(srv.query("SELECT @@innodb_buffer_pool_size")[0][0])
    return {
        "dataset_bytes": str(data),
        "innodb_buffer_pool_size": str(pool),
        "dataset_size": axes.dataset_class(data, pool, known),
    }


def estimated_bytes(cell: Any) -> int:
    ds = workloads.get(cell.workload).dataset
    return cell.tables * cell.table_size * axes.ROW_BYTES.get(ds, axes.ROW_BYTES["oltp"])


def check_room(cell: Any, workroot: Path | None) -> None:
    """One-line error if the disk under the datadirs cannot hold a sized dataset."""
    if cell.dataset_size is None:
        return
    root = workroot or Path(tempfile.gettempdir())
    need = ROOM_FACTOR * estimated_bytes(cell)
    free = shutil.disk_usage(root if root.exists() else root.parent).free
    if free < need:
        raise EnvironmentProblem(
            f"the {cell.dataset_size} dataset ({cell.tables} x {cell.table_size} rows, "
            f"~{estimated_bytes(cell) >> 20} MiB) needs ~{need >> 20} MiB free under {root}, "
            f"which has {free >> 20} MiB: free space or use a smaller buffer pool"
        )


def with_phase(cell: Any, effective: dict[str, Any] | None) -> dict[str, Any]:
    """The cell's effective settings, plus its prepost phase when it has one."""
    eff = dict(effective or {})
    if getattr(cell, "phase", None) is not None and effective is not None:
        eff["phase"] = cell.phase
    return eff
