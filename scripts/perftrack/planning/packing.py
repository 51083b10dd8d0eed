"""Packing a night's slices: into rotation parts that each fit the budget, and onto the
shards of each runner class (planning/schedule.py decides which slices are due).

A *slice* is one server's cells of one series, all repeats; a *shard* is one job's share
of the night. A *comparison group* (planning/pairing.py: the slices the analysis compares
with each other, version steps and axis values) goes whole onto one shard, so a night's
pairs are measured on one machine; within that, a shard that already starts the same
server group (one server × charset × profile × dataset) is preferred while it stays
within its fair share of the load.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from perftrack.planning.cells import Cell

PRIORITIES = ("control", "new tag", "regression", "rotation", "ahead")
CONTROL, NEW_TAG, REGRESSION, ROTATION, AHEAD = range(5)
MAX_ROTATION_NIGHTS = 366  # a rotation longer than a year is a budget mistake


@dataclass(kw_only=True)
class Slice:
    key: tuple[Any, ...]
    runner_class: str
    cells: list[tuple[int, Cell]]  # (order in the night, cell)
    estimate_s: float = 0.0
    priority: int = ROTATION
    reason: str = ""

    @property
    def server_id(self) -> str:
        return self.key[0]

    @property
    def pack(self) -> tuple[Any, ...]:
        return (self.runner_class, *self.cells[0][1].group_key())

    def describe(self) -> dict[str, Any]:
        c = self.cells[0][1]
        return {
            "server_id": c.server_id,
            "workload": c.workload,
            "threads": c.threads,
            "collation": c.collation,
            "profile": c.profile,
            "runner_class": self.runner_class,
            "cells": len(self.cells),
            "estimate_s": round(self.estimate_s, 1),
            "priority": PRIORITIES[self.priority],
            "reason": self.reason,
        }


@dataclass
class Shard:
    index: int
    runner_class: str
    slices: list[Slice] = field(default_factory=list)
    load_s: float = 0.0


def stable(key: tuple[Any, ...]) -> str:
    return hashlib.sha256(json.dumps(key, default=str).encode()).hexdigest()


def lpt(items: list[tuple[float, Any]], bins: int) -> list[list[Any]]:
    """Longest-processing-time first: items (size, x) into `bins` balanced bins."""
    out: list[list[Any]] = [[] for _ in range(bins)]
    loads = [0.0] * bins
    for size, x in sorted(items, key=lambda t: -t[0]):
        i = loads.index(min(loads))
        out[i].append(x)
        loads[i] += size
    return out


def shares(weights: dict[str, float], shard_count: int) -> dict[str, int]:
    """n shards over classes in proportion to their load, at least one each."""
    classes = sorted(weights)
    if shard_count < len(classes):
        raise ValueError(len(classes))
    total = sum(weights.values()) or 1.0
    share = {c: 1 + (shard_count - len(classes)) * weights[c] / total for c in classes}
    out = {c: math.floor(v) for c, v in share.items()}
    for c in sorted(classes, key=lambda c: out[c] - share[c])[: shard_count - sum(out.values())]:
        out[c] += 1
    return out


def rotation(
    series: dict[tuple[Any, ...], list[Slice]],
    capacity: dict[str, float],
    nights: int | None,
) -> tuple[int, dict[tuple[Any, ...], int]]:
    """(R, unit key -> part): parts balanced per class, the fewest R whose parts fit (a
    unit, one comparison group, larger than its class's capacity alone in its part)."""
    by_class: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for key in sorted(series, key=stable):
        by_class[key[0]].append(key)

    def size(key: tuple[Any, ...]) -> float:
        return sum(s.estimate_s for s in series[key])

    def split(shard_count: int) -> dict[tuple[Any, ...], int]:
        part: dict[tuple[Any, ...], int] = {}
        for keys in by_class.values():
            for i, bucket in enumerate(lpt([(size(k), k) for k in keys], shard_count)):
                part.update({k: i for k in bucket})
        return part

    if nights is not None:
        return nights, split(nights)
    r = 1
    for rc, keys in by_class.items():
        cap = capacity.get(rc, 0.0)
        need = sum(size(k) for k in keys)
        if cap > 0:
            r = max(r, math.ceil(need / cap))
    while r < MAX_ROTATION_NIGHTS:
        parts = split(r)
        loads: dict[tuple[str, int], float] = defaultdict(float)
        units: dict[tuple[str, int], int] = defaultdict(int)
        for k, p in parts.items():
            loads[(k[0], p)] += size(k)
            units[(k[0], p)] += 1
        # a unit larger than the capacity fits no part: alone in one, it is split there
        if all(v <= capacity.get(rc, 0.0) or units[(rc, p)] == 1 for (rc, p), v in loads.items()):
            return r, parts
        r += 1
    return r, split(r)


Groups = dict[int, int]  # id(slice) -> its comparison group (planning/pairing.py)


def _units(slices: list[Slice], group_of: Groups) -> list[list[Slice]]:
    """The slices by comparison group, in the order of each group's first slice."""
    units: dict[int, list[Slice]] = {}
    for s in slices:
        units.setdefault(group_of.get(id(s), id(s)), []).append(s)
    return list(units.values())


def series_units(slices: list[Slice]) -> list[list[Slice]]:
    """The slices by series (every server's slice of one series), in order: the unit a
    comparison group too large for one shard is split into."""
    units: dict[tuple[Any, ...], list[Slice]] = {}
    for s in slices:
        units.setdefault((s.runner_class, *s.key[1:]), []).append(s)
    return list(units.values())


def pack(
    chosen: list[Slice],
    per_class: dict[str, int],
    budget_s: float | None,
    cut: list[Slice],
    group_of: Groups,
) -> list[Shard]:
    """Comparison groups onto shards, each whole on one shard (the pairs a night compares
    stay on one machine): the control's groups first, then largest first, onto a shard
    already holding one of its server groups while that shard stays within the class's
    fair share (one server start serves more cells), else the least-loaded shard. A group
    that fits no shard under the budget is split by series (each onto a shard already
    holding part of its group if it fits, else the least-loaded one that fits), a series
    that fits none slice by slice; a slice that fits nowhere is cut (control slices
    never)."""
    cap = math.inf if budget_s is None else budget_s
    by_class: dict[str, list[Shard]] = {
        rc: [Shard(-1, rc) for _ in range(n)] for rc, n in sorted(per_class.items())
    }
    total: dict[str, float] = defaultdict(float)
    for s in chosen:
        total[s.runner_class] += s.estimate_s
    fair = {rc: total[rc] / len(shards) for rc, shards in by_class.items() if shards}
    units = _units(chosen, group_of)
    for members in sorted(
        units,
        key=lambda u: (
            all(s.priority != CONTROL for s in u),  # the control's group first: it runs
            -sum(s.estimate_s for s in u),
            stable([s.key for s in u]),
        ),
    ):
        rc = members[0].runner_class
        shards = by_class[rc]
        size = sum(s.estimate_s for s in members)
        packs = {s.pack for s in members}
        fits = [sh for sh in shards if sh.load_s + size <= cap]
        homes = [
            sh
            for sh in fits
            if sh.load_s + size <= fair[rc] and any(x.pack in packs for x in sh.slices)
        ]
        if homes or fits:
            target = min(homes or fits, key=lambda sh: sh.load_s)
            target.slices += members
            target.load_s += size
            continue
        placed: list[Shard] = []
        for series in sorted(
            series_units(members),
            key=lambda u: (min(s.priority for s in u), -sum(s.estimate_s for s in u)),
        ):
            size = sum(s.estimate_s for s in series)
            fits = [sh for sh in shards if sh.load_s + size <= cap]
            if fits:  # a series whole: its version steps stay on one machine
                home = [sh for sh in fits if sh in placed]
                sh = min(home or fits, key=lambda sh: sh.load_s)
                sh.slices += series
                sh.load_s += size
                placed.append(sh)
                continue
            for s in sorted(series, key=lambda s: (s.priority, s.cells[0][0])):
                fits = [sh for sh in shards if sh.load_s + s.estimate_s <= cap]
                if not fits and s.priority != CONTROL:
                    s.reason += "; fits no shard"
                    cut.append(s)
                    continue
                home = [sh for sh in fits if sh in placed]
                sh = home[0] if home else min(fits or shards, key=lambda sh: sh.load_s)
                sh.slices.append(s)
                sh.load_s += s.estimate_s
                placed.append(sh)
    return [sh for rc in sorted(by_class) for sh in by_class[rc]]


def fill(
    shards: list[Shard], ahead: list[Slice], budget_s: float | None, group_of: Groups
) -> list[Slice]:
    """Comparison groups of later rotation parts into the room left, each whole on one
    shard (the shard already holding slices of that group, else the least-loaded shard of
    the class that fits it; none that fits: left for its own night; a group larger than
    the budget goes by series); the slices taken, in order."""
    cap = math.inf if budget_s is None else budget_s
    taken: list[Slice] = []
    units: list[list[Slice]] = []
    for group in _units(ahead, group_of):  # one larger than a shard: by series, as pack
        big = sum(s.estimate_s for s in group) > cap
        units += series_units(group) if big else [group]
    for members in units:
        rc = members[0].runner_class
        size = sum(s.estimate_s for s in members)
        ours = group_of.get(id(members[0]))
        held = [sh for sh in shards if any(group_of.get(id(x)) == ours for x in sh.slices)]
        fits = [sh for sh in held or shards if sh.runner_class == rc and sh.load_s + size <= cap]
        if not fits:
            continue  # deferred to its own night rather than split from its group
        sh = min(fits, key=lambda sh: sh.load_s)
        sh.slices += members
        sh.load_s += size
        taken += members
    return taken
