"""Expand a matrix into cells, grouped and interleaved.

A *cell* is one measurement: server × workload × threads × collation × profile × dataset ×
repeat. Cells sharing a server, collation, profile and dataset within one round form a
*group*: one server start, one `prepare`, then the group's cells (read-only workloads
first). Within each round the servers are interleaved (A B C, then B C A, …) so drift on
the machine hits every version alike. A cell a server cannot run is kept, *skipped* with
the reason, never dropped.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from . import axes, rules, workloads
from .matrix import Matrix

CELL_ID_LEN = 16
IDENTITY = (
    "server_id",
    "workload",
    "threads",
    "collation",
    "profile",
    "tables",
    "table_size",
    "duration_s",
    "warmup_s",
    "repeat",
    "connection",
)
# Axes added after v1: part of a cell's identity only when set, so cells without them
# keep the ids they always had.
OPTIONAL_IDENTITY = ("engine", "isolation", "durability")


@dataclass(frozen=True)
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
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Cell:
        return cls(**d)


def cell_id(fields: dict[str, Any]) -> str:
    ident_fields = {k: fields[k] for k in IDENTITY}
    ident_fields.update({k: fields[k] for k in OPTIONAL_IDENTITY if fields.get(k) is not None})
    ident = json.dumps(ident_fields, sort_keys=True)
    return hashlib.sha256(ident.encode()).hexdigest()[:CELL_ID_LEN]


ServerInfo = Callable[[str], tuple[str, str]]  # server id -> (product, version)


def expand(m: Matrix, server_info: ServerInfo) -> list[Cell]:
    """All cells of the matrix in execution order."""
    cells: list[Cell] = []
    group = 0
    order = workloads.run_order(list(m.workloads))
    for rnd in range(1, m.repeats + 1):
        shift = (rnd - 1) % len(m.servers)
        servers = list(m.servers[shift:]) + list(m.servers[:shift])
        for axis, (profile, engine, isolation, durability) in itertools.product(
            m.charsets, _config_axes(m)
        ):
            for sid in servers:
                product, version = server_info(sid)
                rule = rules.rules_for(product, version)
                resolved = rules.resolve_collation(rule, axis)
                skip = resolved if isinstance(resolved, str) else None
                skip = skip or axes.skip_reason(rule, engine)
                charset, collation = (
                    (rules.charset_of(axis) if "_" in axis else axis, axis)
                    if isinstance(resolved, str)
                    else resolved
                )
                group += 1
                for wl in order:
                    for threads in m.threads:
                        f: dict[str, Any] = dict(
                            server_id=sid,
                            workload=wl,
                            threads=threads,
                            charset_axis=axis,
                            charset=charset,
                            collation=collation,
                            profile=profile,
                            tables=m.tables,
                            table_size=m.table_size,
                            duration_s=m.duration_s,
                            warmup_s=m.warmup_s,
                            repeat=rnd,
                            round=rnd,
                            connection=m.connection,
                            group=group,
                            skip=skip,
                            engine=engine,
                            isolation=isolation,
                            durability=durability,
                        )
                        cells.append(Cell(cell_id=cell_id(f), **f))
    return cells


def _config_axes(m: Matrix) -> list[tuple[str, str | None, str | None, str | None]]:
    """(profile, engine, isolation, durability) combinations; None = axis not set."""
    unset: tuple[None] = (None,)
    return list(
        itertools.product(
            m.profiles or (m.profile,),
            m.engines or unset,
            m.isolations or unset,
            m.durabilities or unset,
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
