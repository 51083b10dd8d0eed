"""Expand a matrix into cells, grouped and interleaved.

A *cell* is one measurement: server × workload × threads × collation × profile × dataset ×
repeat. Cells sharing a server, collation, profile and dataset within one round form a
*group*: one server start, one `prepare`, then the group's cells (read-only workloads
first). Within each round the servers are interleaved (A B C, then B C A, …) so drift on
the machine hits every version alike. A cell a server cannot run is kept, *skipped* with
the reason, never dropped.

With `prepost: true` a group that writes sysbench's oltp tables also gets an
`oltp_read_only` pass right before its writers (phase `pre`) and one right after them
(phase `post`): the same reads on the fresh and on the written dataset. With
`dataset_sizes`, each value sizes table_size against the buffer pool (axes.dataset_rows).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from perftrack.core import paths
from perftrack.core.cell import cell_id
from perftrack.planning import axes, workloads
from perftrack.planning.matrix import Matrix
from perftrack.servers import profiles, rules
from perftrack.servers.catalog import Catalog

# Before any cell has finished, a run's ETA (and a night plan without history) assumes this
# much fixed cost per cell on top of warm-up + duration (server start and prepare, shared
# by a group; measured ~3 s here).
# Seconds measured per cell of the rounds of compare --until-conclusive, bisect and
# explain (--duration). 10, not 5: on the quiet 2-core VM 10 s cells halved the per-round
# A/A spread (3.2% vs 5.9% at 5 s, 20 interleaved rounds, benchmarks/noise_fidelity.py),
# more than the sqrt(2) their doubled time costs, so a verdict settles in less machine
# time (docs/benchmarks.md, "Noise fidelity").
ROUND_DURATION_S = 10
# explain's rounds keep each arm's server up for its stage (`--server-lifetime run`): a
# round there runs 3-6 arms, so fresh servers cost more of its budget than in a two-arm
# compare, and kept servers were measured no noisier (1.02x plain sysbench's spread
# against 0.94x for fresh ones, benchmarks/noise_fidelity.py, docs/benchmarks.md).
EXPLAIN_SERVER_LIFETIME = "run"
CELL_OVERHEAD_ESTIMATE_S = 3.0
MAX_TABLE_SIZE = 1_000_000_000  # the run record's bound on table_size


@dataclass(frozen=True, kw_only=True)
class Cell:
    cell_id: str
    server_id: str
    workload: str
    threads: int
    charset_axis: str
    charset: str
    collation: str
    profile: str
    tables: int
    table_size: int
    duration_s: int
    warmup_s: int
    repeat: int
    round: int
    connection: str
    group: int
    skip: str | None = None
    engine: str | None = None  # configs/axes.yaml values; None = the server's default
    isolation: str | None = None
    durability: str | None = None
    handshake: str | None = None  # charset-axis modifier (skip / client)
    dataset_size: str | None = None  # small / large: table_size sized to the buffer pool
    phase: str | None = None  # pre / post: the read-only pass around a group's writes

    def group_key(self) -> tuple[Any, ...]:
        return (
            self.server_id,
            self.collation,
            self.profile,
            self.tables,
            self.table_size,
            self.connection,
            self.engine,
            self.isolation,
            self.durability,
            self.handshake,
            self.dataset_size,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, fields: dict[str, Any]) -> Cell:
        return cls(**fields)


ServerInfo = Callable[[str], tuple[str, str]]  # server id -> (product, version)
ServerSkip = Callable[[str], str | None]  # server id -> why none of its cells may run


def expand_catalog(matrix: Matrix, catalog: Catalog) -> list[Cell]:
    """`expand` with each server's product, version and skip reason from the catalog."""
    for sid in matrix.servers:
        catalog.get(sid)

    def info(sid: str) -> tuple[str, str]:
        e = catalog.get(sid)
        return e.product, e.version

    def skip(sid: str) -> str | None:
        return catalog.get(sid).skip_reason()

    return expand(matrix, info, skip)


def expand(
    matrix: Matrix, server_info: ServerInfo, server_skip: ServerSkip | None = None
) -> list[Cell]:
    """All cells of the matrix in execution order; a server `server_skip` names a reason
    for (not yet pinned) or whose release perftrack cannot run has every cell skipped."""
    cells: list[Cell] = []
    group = 0
    order = _ordered(matrix)
    known = (
        axes.read_axes(paths.config_dir()) if matrix.handshakes or matrix.dataset_sizes else None
    )
    for rnd in range(1, matrix.repeats + 1):
        shift = (rnd - 1) % len(matrix.servers)
        servers = list(matrix.servers[shift:]) + list(matrix.servers[:shift])
        for axis, (profile, engine, isolation, durability, handshake, size) in itertools.product(
            matrix.charsets, _config_axes(matrix)
        ):
            for sid in servers:
                product, version = server_info(sid)
                rule = rules.rules_for(product, version)
                resolved = rules.resolve_collation(rule, axis)
                skip = rule.unsupported or (server_skip(sid) if server_skip else None)
                skip = skip or (resolved if isinstance(resolved, str) else None)
                skip_handshake = bool(known and handshake and known.handshakes[handshake])
                skip = skip or axes.skip_reason(rule, engine, skip_handshake)
                table_size = matrix.table_size
                if size is not None and known is not None:
                    table_size = _sized_rows(matrix, rule, profile, known.dataset_sizes[size])
                charset, collation = (
                    (rules.charset_of(axis) if "_" in axis else axis, axis)
                    if isinstance(resolved, str)
                    else resolved
                )
                group += 1
                for wl, phase in order:
                    for threads in matrix.threads:
                        f: dict[str, Any] = dict(
                            server_id=sid,
                            workload=wl,
                            threads=threads,
                            charset_axis=axis,
                            charset=charset,
                            collation=collation,
                            profile=profile,
                            tables=matrix.tables,
                            table_size=table_size,
                            duration_s=matrix.duration_s,
                            warmup_s=matrix.warmup_s,
                            repeat=rnd,
                            round=rnd,
                            connection=matrix.connection,
                            group=group,
                            skip=skip,
                            engine=engine,
                            isolation=isolation,
                            durability=durability,
                            handshake=handshake,
                            dataset_size=size,
                            phase=phase,
                        )
                        cells.append(Cell(cell_id=cell_id(f), **f))
    return cells


def _ordered(matrix: Matrix) -> list[tuple[str, str | None]]:
    """(workload, phase) in group order: reads, [pre pass], writers, [post pass]."""
    order = workloads.run_order(list(matrix.workloads))
    if not matrix.prepost:
        return [(w, None) for w in order]
    reads = [(w, None) for w in order if not workloads.get(w).writes]
    writes = [(w, None) for w in order if workloads.get(w).writes]
    return [
        *reads,
        (workloads.PREPOST_WORKLOAD, "pre"),
        *writes,
        (workloads.PREPOST_WORKLOAD, "post"),
    ]


def _sized_rows(matrix: Matrix, rule: rules.Rule, profile: str, factor: float) -> int:
    """table_size for a dataset_size value: factor x the buffer pool this cell will have."""
    pool = axes.buffer_pool_bytes(rule, profiles.read_profile(profile, paths.config_dir()))
    datasets = {
        workloads.get(w).dataset for w in matrix.workloads if workloads.get(w).tool != "slap"
    }
    dataset = next(iter(datasets)) if len(datasets) == 1 else workloads.DEFAULT_DATASET
    return min(axes.dataset_rows(factor, pool, matrix.tables, dataset), MAX_TABLE_SIZE)


AxisCombo = tuple[str, str | None, str | None, str | None, str | None, str | None]


def _config_axes(matrix: Matrix) -> list[AxisCombo]:
    """(profile, engine, isolation, durability, handshake, dataset size) combinations;
    None = axis not set."""
    unset: tuple[None] = (None,)
    return list(
        itertools.product(
            matrix.profiles or (matrix.profile,),
            matrix.engines or unset,
            matrix.isolations or unset,
            matrix.durabilities or unset,
            matrix.handshakes or unset,
            matrix.dataset_sizes or unset,
        )
    )


def groups(cells: list[Cell]) -> list[list[Cell]]:
    """Consecutive runs of cells that share one server start."""
    out: list[list[Cell]] = []
    for c in cells:
        if out and out[-1][0].group == c.group:
            out[-1].append(c)
        else:
            out.append([c])
    return out
