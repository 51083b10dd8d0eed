"""Which slices of a night are compared with each other, so sharding keeps them on one
runner (issue #37: a night's comparisons are paired within one machine).

Two slices are compared when the analysis compares them, by its own definitions, never
a copy here:
  version step  one series, two servers: `compare.version_steps` (each version against its
                predecessor of the same product), as detect's verdicts and `compare` do
  axis pair     one server, two values of a configuration axis, every other series column
                equal: `axis.AXES` and `axis.fixed_columns`, as `compare --axis` does
A series never crosses runner classes (the analysis keys series by hardware and runner
class), so neither does a pair. The connected sets of pairs are the night's *comparison
groups*: packing.py puts each on one shard.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from perftrack.analysis import axis as axis_mod
from perftrack.analysis import compare
from perftrack.planning.cells import Cell
from perftrack.planning.packing import Shard, Slice

# The analysis series' columns a plan knows only as the slice's runner class: one class
# is one kind of hardware (planning/fleet.py).
HARDWARE = ("hw_key", "runner_class")
SERIES = tuple(c for c in compare.GROUP_COLS if c not in HARDWARE)
RULE = (
    "each comparison group (the servers of a version step, the values of an axis) runs on one shard"
)

ServerInfo = Callable[[str], tuple[str, str]]  # server id -> (product, version)


@dataclass(frozen=True)
class Pair:
    a: Slice
    b: Slice
    kind: str  # "version step" or "<axis> axis"

    def describe(self) -> str:
        ca, cb = self.a.cells[0][1], self.b.cells[0][1]
        where = f"{ca.workload} t={ca.threads} {ca.collation} {ca.profile}"
        if self.kind == "version step":
            return f"{self.kind} {ca.server_id} -> {cb.server_id} ({where})"
        return (
            f"{self.kind} {ca.server_id} {_label(self.a)} vs {_label(self.b)} "
            f"({ca.workload} t={ca.threads})"
        )


def _label(series_slice: Slice) -> str:
    c = series_slice.cells[0][1]
    return f"{c.collation}/{c.profile}"


def series_of(series_slice: Slice, cols: tuple[str, ...] = SERIES) -> tuple[Any, ...]:
    """The slice's series as the analysis keys it (its runner class for the hardware)."""
    c = series_slice.cells[0][1]
    return (series_slice.runner_class, *(getattr(c, k) for k in cols))


def pairs(slices: Iterable[Slice], info: ServerInfo) -> list[Pair]:
    """Every pair of slices the analysis compares."""
    slices = list(slices)
    out: list[Pair] = []
    by_series: dict[tuple[Any, ...], list[Slice]] = defaultdict(list)
    for s in slices:
        by_series[series_of(s)].append(s)
    for members in by_series.values():
        for a, b in compare.version_steps(members, lambda s: info(s.server_id)):
            out.append(Pair(a, b, "version step"))
    for name, cols in axis_mod.AXES.items():
        fixed = tuple(c for c in axis_mod.fixed_columns(name) if c not in HARDWARE)
        by_rest: dict[tuple[Any, ...], list[Slice]] = defaultdict(list)
        for s in slices:
            by_rest[(s.server_id, *series_of(s, fixed))].append(s)
        for members in by_rest.values():
            for a, b in itertools.combinations(members, 2):
                if series_of(a, cols) != series_of(b, cols):
                    out.append(Pair(a, b, f"{name} axis"))
    return out


def groups(slices: list[Slice], info: ServerInfo) -> dict[int, int]:
    """id(slice) -> its comparison group: the index of the group's first slice in
    `slices` (union of every pair; a slice compared with nothing is its own group)."""
    parent = {id(s): id(s) for s in slices}

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs(slices, info):
        ra, rb = root(id(p.a)), root(id(p.b))
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    first: dict[int, int] = {}
    out: dict[int, int] = {}
    for i, s in enumerate(slices):
        out[id(s)] = first.setdefault(root(id(s)), i)
    return out


def split(shards: list[Shard], info: ServerInfo) -> list[Pair]:
    """The pairs of a plan whose two sides are on different shards."""
    home = {id(s): id(sh) for sh in shards for s in sh.slices}
    everything = [s for sh in shards for s in sh.slices]
    return [p for p in pairs(everything, info) if home[id(p.a)] != home[id(p.b)]]


def split_in_file(data: dict[str, Any], info: ServerInfo) -> list[Pair]:
    """The split pairs of a night plan file's shards (nightplan.read's dict): the check of
    a written plan, independent of how it was packed."""
    shards: list[Shard] = []
    for entry in data.get("shards", []):
        sh = Shard(int(entry["shard"]), str(entry["runner_class"]))
        by_key: dict[tuple[Any, ...], Slice] = {}
        for i, raw in enumerate(entry["cells"]):
            c = Cell.from_dict(raw)
            probe = Slice(key=(c.server_id,), runner_class=sh.runner_class, cells=[(i, c)])
            key = (c.server_id, *series_of(probe), c.charset_axis, c.warmup_s)
            by_key.setdefault(
                key, Slice(key=key, runner_class=sh.runner_class, cells=[])
            ).cells.append((i, c))
        sh.slices = list(by_key.values())
        shards.append(sh)
    return split(shards, info)
