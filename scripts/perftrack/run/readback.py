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

`verify` reads them all back for a started group and refuses a server that did not apply
the cell's collation or axes.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from perftrack.core.errors import EnvironmentProblem, ServerError
from perftrack.drivers import probe, sysbench
from perftrack.planning import axes, workloads
from perftrack.run.resolved import ResolvedCell, target
from perftrack.run.server import BENCH_DB, Server

# A dataset needs room for its datadir, plus the template it is copied from (reuse).
ROOM_FACTOR = 3


def connection(target: sysbench.Endpoint, log: Path | None = None) -> dict[str, str | None]:
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


def verify(srv: Server, cells: list[ResolvedCell], known: axes.Axes, logs: Path) -> dict[str, Any]:
    """The started group's effective settings, checked against its first dataset cell
    (else its first cell): collations, the client connection's charset, the dataset's
    size and the axes. A mismatch raises ServerError naming it."""
    sb = [rc for rc in cells if rc.reads_dataset]  # slap cells make their own data
    lead = sb[0] if sb else cells[0]
    first = lead.cell
    eff = srv.effective()
    want = first.collation
    got = {
        "collation_server": eff["collation_server"],
        "database_collation": eff["database_collation"],
    }
    if sb:
        got["table_collations"] = eff["table_collations"]
    bad = {k: v for k, v in got.items() if v != want}
    if bad:
        raise ServerError(
            f"effective collation differs from the cell's {want}: "
            + ", ".join(f"{k}={v}" for k, v in bad.items())
        )
    if sb or first.handshake is not None:  # the benchmark connection's charset
        eff.update(connection(target(srv, first), logs / f"{first.cell_id}.connection.txt"))
    if first.dataset_size is not None and sb:
        eff.update(dataset(srv, known))
    if lead.has_axes:
        eff.update(axes.durability_effective(srv.query(axes.read_back_sql())[0]))
        wrong = axes.mismatches(first, eff, known, tables=bool(sb))
        if wrong:
            raise ServerError("effective settings differ from the cell's axes: " + ", ".join(wrong))
    return eff
