"""Packing a night's slices: into rotation parts that each fit the budget, and onto the
shards of each runner class (planning/schedule.py decides which slices are due).

A *slice* is one server's cells of one series, all repeats; a *shard* is one job's share
of the night. Server groups (one server × charset × profile × dataset) stay on one shard
when they fit, so a dataset is prepared once.
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


@dataclass
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


def shares(weights: dict[str, float], n: int) -> dict[str, int]:
    """n shards over classes in proportion to their load, at least one each."""
    classes = sorted(weights)
    if n < len(classes):
        raise ValueError(len(classes))
    total = sum(weights.values()) or 1.0
    share = {c: 1 + (n - len(classes)) * weights[c] / total for c in classes}
    out = {c: math.floor(v) for c, v in share.items()}
    for c in sorted(classes, key=lambda c: out[c] - share[c])[: n - sum(out.values())]:
        out[c] += 1
    return out


def rotation(
    series: dict[tuple[Any, ...], list[Slice]],
    capacity: dict[str, float],
    nights: int | None,
) -> tuple[int, dict[tuple[Any, ...], int]]:
    """(R, series key -> part): parts balanced per class, the fewest R whose parts fit."""
    by_class: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for key in sorted(series, key=stable):
        by_class[key[0]].append(key)

    def size(key: tuple[Any, ...]) -> float:
        return sum(s.estimate_s for s in series[key])

    def split(r: int) -> dict[tuple[Any, ...], int]:
        part: dict[tuple[Any, ...], int] = {}
        for keys in by_class.values():
            for i, bucket in enumerate(lpt([(size(k), k) for k in keys], r)):
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
        for k, p in parts.items():
            loads[(k[0], p)] += size(k)
        if all(v <= capacity.get(rc, 0.0) for (rc, _), v in loads.items()):
            return r, parts
        r += 1
    return r, split(r)


def pack(
    chosen: list[Slice], per_class: dict[str, int], budget_s: float | None, cut: list[Slice]
) -> list[Shard]:
    """Server groups onto shards: largest first, least-loaded shard of the class; a group
    that does not fit whole is split slice by slice; a slice that fits nowhere is cut."""
    cap = math.inf if budget_s is None else budget_s
    packs: dict[tuple[Any, ...], list[Slice]] = defaultdict(list)
    for s in chosen:
        packs[s.pack].append(s)
    by_class: dict[str, list[Shard]] = {
        rc: [Shard(-1, rc) for _ in range(n)] for rc, n in sorted(per_class.items())
    }
    for key, members in sorted(
        packs.items(), key=lambda kv: (-sum(s.estimate_s for s in kv[1]), stable(kv[0]))
    ):
        shards = by_class[key[0]]
        size = sum(s.estimate_s for s in members)
        target = min(shards, key=lambda sh: sh.load_s)
        if target.load_s + size <= cap:
            target.slices += members
            target.load_s += size
            continue
        for s in sorted(members, key=lambda s: (s.priority, s.cells[0][0])):
            fits = [sh for sh in shards if sh.load_s + s.estimate_s <= cap]
            if not fits and s.priority != CONTROL:
                s.reason += "; fits no shard"
                cut.append(s)
                continue
            home = [sh for sh in fits if any(x.pack == s.pack for x in sh.slices)]
            sh = home[0] if home else min(fits or shards, key=lambda sh: sh.load_s)
            sh.slices.append(s)
            sh.load_s += s.estimate_s
    return [sh for rc in sorted(by_class) for sh in by_class[rc]]


def fill(shards: list[Shard], ahead: list[Slice], budget_s: float | None) -> list[Slice]:
    """Slices of later rotation parts into the room left (home shard of their server
    group first, else the least-loaded shard of the class); the ones taken, in order."""
    cap = math.inf if budget_s is None else budget_s
    taken = []
    for s in ahead:
        fits = [
            sh
            for sh in shards
            if sh.runner_class == s.runner_class and sh.load_s + s.estimate_s <= cap
        ]
        if not fits:
            continue
        home = [sh for sh in fits if any(x.pack == s.pack for x in sh.slices)]
        sh = home[0] if home else min(fits, key=lambda sh: sh.load_s)
        sh.slices.append(s)
        sh.load_s += s.estimate_s
        taken.append(s)
    return taken
