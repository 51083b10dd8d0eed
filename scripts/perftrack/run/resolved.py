"""A group of cells resolved once before it runs: each cell's workload, the group's
install and server options. The run stage carries this form instead of looking the
workload up again at every step (record, template, load, measure, tool version)."""

from __future__ import annotations

from dataclasses import dataclass

from perftrack.core.cell import OPTIONAL_IDENTITY_FIELDS
from perftrack.drivers import sysbench
from perftrack.planning import cells as plan
from perftrack.planning import workloads
from perftrack.run.server import BENCH_DB, BENCH_USER, Server
from perftrack.servers.install import Install


@dataclass(frozen=True)
class ResolvedCell:
    cell: plan.Cell
    workload: workloads.Workload

    @property
    def reads_dataset(self) -> bool:
        """Whether the workload reads a prepared sysbench dataset (slap makes its own)."""
        return self.workload.tool == "sysbench"

    @property
    def has_axes(self) -> bool:
        """Whether the cell sets any configuration axis of configs/axes.yaml."""
        return any(getattr(self.cell, k, None) is not None for k in OPTIONAL_IDENTITY_FIELDS)


def resolve(cells: list[plan.Cell]) -> list[ResolvedCell]:
    """Each cell with its workload (an unknown workload raises ConfigError here, once)."""
    return [ResolvedCell(c, workloads.get(c.workload)) for c in cells]


@dataclass(frozen=True)
class ResolvedGroup:
    """Cells sharing one server start, with the server they run on and its options."""

    cells: list[ResolvedCell]
    install: Install
    options: dict[str, str | None]

    @property
    def first(self) -> ResolvedCell:
        return self.cells[0]

    @property
    def dataset_cells(self) -> list[ResolvedCell]:
        """The cells whose workload reads a prepared sysbench dataset."""
        return [rc for rc in self.cells if rc.reads_dataset]


def target(srv: Server, cell: plan.Cell) -> sysbench.Endpoint:
    """Where the load tool connects for this cell: the started server's port, or its
    socket when the cell's connection is `socket`."""
    return sysbench.Endpoint(
        host="127.0.0.1",
        port=int(srv.port or 0),
        user=BENCH_USER,
        password=srv.password,
        db=BENCH_DB,
        socket=str(srv.socket_path) if cell.connection == "socket" else None,
    )
