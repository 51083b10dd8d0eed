"""`perftrack plan`: fit a night's benchmarking into a time budget and split it into shards.

The unit of choice is a *slice*: one server's cells of one series (workload × threads ×
charset × profile × dataset × axes), all repeats. Each slice gets an estimated wall time
(the median of its past cells' finished_at - started_at in the DB; else the median of the
same workload/duration/dataset on any server; else warm-up + duration +
CELL_OVERHEAD_ESTIMATE_S) and a priority:

  0 control     the control server's first series on each runner class, every night
  1 new tag     a server with no results in the DB yet
  2 regression  a series with an open (unacknowledged) regression verdict
  3 rotation    tonight's part of the rotation: the other series split into R parts,
                part (days since 1970-01-01) mod R tonight, so R nights cover everything
  4 ahead       the following parts, filling what budget is left

Slices are taken in that order while they fit their runner class's capacity (its shards ×
the budget); the control slices always. The chosen slices are then packed into shards by
comparison group (planning/pairing.py: the slices the analysis compares with each other,
the servers of a version step and the values of an axis), each group whole on one shard
so a night's pairs are measured on one machine: largest first onto the least-loaded shard
of their class, or onto one that already starts the same server group while it stays
within its fair share. The rotation's parts are comparison groups too, so both sides of a
pair fall on the same night. A group bigger than the budget is split slice by slice and
the plan lists the pairs that split; whatever fits no shard is cut. Cut slices are listed
in the plan.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from perftrack.core.cell import OPTIONAL_IDENTITY_FIELDS
from perftrack.planning import cells as plan_mod
from perftrack.planning import pairing
from perftrack.planning.cells import Cell
from perftrack.planning.fleet import Fleet
from perftrack.planning.matrix import Matrix
from perftrack.planning.packing import (
    AHEAD,
    CONTROL,
    NEW_TAG,
    PRIORITIES,
    REGRESSION,
    ROTATION,
    Shard,
    Slice,
    fill,
    pack,
    rotation,
    shares,
)
from perftrack.store import store
from perftrack.store.queries.pastruns import OpenRegression
from perftrack.store.store import DURATION_KEY, SERIES_COLS, SIMILAR_KEY

SCHEMA = "perftrack.night-plan/1"
EPOCH = date(1970, 1, 1)
# A server start per group and round (the dataset template copied in) comes on top of the
# cells' own wall time, which is all the records measure; each cell of the start carries
# its share. Measured 2 s here (study 000 local: 2 x 10k rows); bigger templates copy for
# longer (docs/benchmarks.md: 1-3 s), so the estimate allows 5 s.
START_OVERHEAD_ESTIMATE_S = 5.0
# A verdict's series fields that a cell has too (runner class and hardware aside).
VERDICT_SERIES = tuple(c for c in SERIES_COLS if c not in ("hw_key", "runner_class"))


def slice_key(cell: Cell) -> tuple[Any, ...]:
    """A server's cells of one series: the cell identity without the repeat."""
    return (cell.server_id, *series_key(cell))


# A series as planning keys it (the rotation hashes these keys: keep their order).
SERIES_FIELDS = (
    "workload",
    "threads",
    "charset_axis",
    "collation",
    "profile",
    "tables",
    "table_size",
    "duration_s",
    "warmup_s",
    "connection",
    *OPTIONAL_IDENTITY_FIELDS,
)


def series_key(cell: Cell) -> tuple[Any, ...]:
    return tuple(getattr(cell, f) for f in SERIES_FIELDS)


# --- history from the DB ------------------------------------------------------------------
@dataclass(kw_only=True)
class History:
    """What the DB says about past runs (empty when there is no DB yet)."""

    exact: dict[tuple[Any, ...], float] = field(default_factory=dict)
    similar: dict[tuple[Any, ...], float] = field(default_factory=dict)
    servers_with_results: set[str] = field(default_factory=set)
    regressions: list[OpenRegression] = field(default_factory=list)
    source: str = "no DB"


def _exact_key(cell: Cell) -> tuple[Any, ...]:
    """The key of the store's past durations (`Store.past_runs`): server and DURATION_KEY."""
    return (cell.server_id, *(getattr(cell, f) for f in DURATION_KEY))


def _similar_key(cell: Cell) -> tuple[Any, ...]:
    return tuple(getattr(cell, f) for f in SIMILAR_KEY)


def read_history(db: Path) -> History:
    """History from the results DB; an empty History when the file does not exist.

    Read-only and schema-tolerant (`store.open_for_planning`): a DB one migration behind
    (migrated later by the publish job) still plans."""
    if not db.exists():
        return History(source=f"no DB at {db}: default estimates")
    with store.open_for_planning(db) as st:
        past = st.past_runs(VERDICT_SERIES)
        source = f"{db} (schema v{st.schema_version})"
    return History(
        exact=past.durations,
        similar=past.similar,
        servers_with_results=past.servers_with_results,
        regressions=past.regressions,
        source=source,
    )


def estimate(cell: Cell, history: History) -> tuple[float, str]:
    """(seconds, where the figure comes from) for one cell."""
    if cell.skip:
        return 0.0, "skipped"
    if (secs := history.exact.get(_exact_key(cell))) is not None:
        return secs, "history"
    if (secs := history.similar.get(_similar_key(cell))) is not None:
        return secs, "similar"
    return cell.warmup_s + cell.duration_s + plan_mod.CELL_OVERHEAD_ESTIMATE_S, "default"


@dataclass(kw_only=True)
class NightPlan:
    matrix: Matrix
    night: date
    budget_minutes: int | None
    shards: list[Shard]
    cut: list[Slice]
    chosen: list[Slice]
    rotation_nights: int
    rotation_part: int
    estimate_all_s: float
    sources: dict[str, int]
    history_source: str
    notes: list[str]
    fleet: Fleet
    deferred_cells: int = 0  # later rotation parts not run tonight (by design, not cut)
    # server id -> its pin made while planning (servers/planpins.py PlanPin.to_dict)
    pins: dict[str, dict[str, str]] = field(default_factory=dict)
    comparison_groups: int = 0  # planning/pairing.py: each whole on one shard…
    split_pairs: list[str] = field(default_factory=list)  # …except these (the budget)

    @property
    def estimate_s(self) -> float:
        return sum(s.load_s for s in self.shards)

    def shard_cells(self, shard: Shard) -> list[Cell]:
        return [c for _, c in sorted(ic for s in shard.slices for ic in s.cells)]

    def to_dict(self) -> dict[str, Any]:
        counts = defaultdict(int)
        for s in self.chosen:
            counts[PRIORITIES[s.priority]] += len(s.cells)
        return {
            "schema": SCHEMA,
            "matrix": self.matrix.name,
            "matrix_spec": self.matrix.to_dict(),
            "night": self.night.isoformat(),
            "budget_minutes": self.budget_minutes,
            "estimate_s": round(self.estimate_s, 1),
            "estimate_all_s": round(self.estimate_all_s, 1),
            "rotation": {"nights": self.rotation_nights, "part": self.rotation_part},
            "control_server": self.fleet.control_server,
            "estimate_sources": dict(self.sources),
            "history": self.history_source,
            "cells_by_priority": dict(counts),
            "deferred_cells": self.deferred_cells,
            "notes": self.notes,
            "pins": self.pins,
            "pairing": {
                "rule": pairing.RULE,
                "comparison_groups": self.comparison_groups,
                "split_pairs": self.split_pairs,
            },
            "shards": [
                {
                    "shard": sh.index,
                    "runner_class": sh.runner_class,
                    "runs_on": self.fleet.labels(sh.runner_class),
                    "estimate_s": round(sh.load_s, 1),
                    "cells": [c.to_dict() for c in self.shard_cells(sh)],
                }
                for sh in self.shards
            ],
            "cut": [s.describe() for s in self.cut],
        }

    def job_matrix(self) -> dict[str, Any]:
        """The GitHub Actions job matrix: one job per shard."""
        return {
            "include": [
                {
                    "shard": sh.index,
                    "runner_class": sh.runner_class,
                    "runs_on": self.fleet.labels(sh.runner_class),
                }
                for sh in self.shards
            ]
        }


ServerInfo = Callable[[str], tuple[str, str]]


def _cells(matrix: Matrix, info: ServerInfo, control: str | None) -> tuple[list[Cell], list[str]]:
    """The matrix's cells, plus the control server's when the matrix lacks it."""
    cells = plan_mod.expand(matrix, info)
    notes: list[str] = []
    if control and control not in matrix.servers:
        extra = plan_mod.expand(dataclasses.replace(matrix, servers=(control,)), info)
        offset = max((c.group for c in cells), default=0)
        cells += [dataclasses.replace(c, group=c.group + offset) for c in extra]
        notes.append(f"control server {control} is not in the matrix: its control cells added")
    # interleave by round, keeping the matrix's order within a round
    order = sorted(range(len(cells)), key=lambda i: (cells[i].round, i))
    return [cells[i] for i in order], notes


def _matches_regression(series_slice: Slice, history: History) -> bool:
    c = series_slice.cells[0][1]
    for base, new, fields in history.regressions:
        if c.server_id in (base, new) and all(getattr(c, k) == v for k, v in fields.items()):
            return True
    return False


def make_schedule(
    matrix: Matrix,
    info: ServerInfo,
    fleet: Fleet,
    history: History,
    *,
    night: date,
    budget_minutes: int | None,
    shards: int,
    rotation_nights: int | None = None,
) -> NightPlan:
    cells, notes = _cells(matrix, info, fleet.control_server)
    sources: dict[str, int] = defaultdict(int)
    slices: dict[tuple[Any, ...], Slice] = {}
    cells_per_start = Counter((c.group_key(), c.repeat) for c in cells)
    for i, c in enumerate(cells):
        secs, src = estimate(c, history)
        if src in ("history", "similar"):  # records time cells, not the server starts
            secs += START_OVERHEAD_ESTIMATE_S / cells_per_start[(c.group_key(), c.repeat)]
        sources[src] += 1
        rc = fleet.class_of(c)
        s = slices.setdefault(
            (rc, *slice_key(c)), Slice(key=slice_key(c), runner_class=rc, cells=[])
        )
        s.cells.append((i, c))
        s.estimate_s += secs
    all_slices = list(slices.values())
    estimate_all = sum(s.estimate_s for s in all_slices)

    # shards per class, in proportion to each class's share of the whole matrix
    weights: dict[str, float] = defaultdict(float)
    for s in all_slices:
        weights[s.runner_class] += s.estimate_s
    try:
        per_class = shares(dict(weights), shards)
    except ValueError:
        from perftrack.core.errors import ConfigError

        raise ConfigError(
            f"{shards} shard(s) cannot cover {len(weights)} runner classes "
            f"({', '.join(sorted(weights))}): give --shards {len(weights)} or more"
        ) from None
    budget_s = None if budget_minutes is None else budget_minutes * 60.0
    capacity = {rc: math.inf if budget_s is None else n * budget_s for rc, n in per_class.items()}

    # priorities: control, new tags, open regressions
    control = fleet.control_server
    first_series: dict[str, tuple[Any, ...]] = {}
    for s in all_slices:  # in night order: the first series each class runs
        if s.server_id == control:
            first_series.setdefault(s.runner_class, s.key)
    for s in all_slices:
        if control and first_series.get(s.runner_class) == s.key:
            s.priority, s.reason = CONTROL, f"control server {control}"
        elif history.servers_with_results and s.server_id not in history.servers_with_results:
            s.priority, s.reason = NEW_TAG, f"{s.server_id} has no results yet"
        elif _matches_regression(s, history):
            s.priority, s.reason = REGRESSION, "open regression verdict"

    # rotation over the rest, sized to the capacity left after the control slices
    fixed: dict[str, float] = defaultdict(float)
    for s in all_slices:
        if s.priority == CONTROL:
            fixed[s.runner_class] += s.estimate_s
    left = {rc: capacity[rc] - fixed[rc] for rc in capacity}
    # the rotation's unit is a comparison group: both sides of a pair fall on one night
    # (one larger than a shard's budget is split by series anyway: those are its units)
    group_of = pairing.groups(all_slices, info)
    group_s: dict[int, float] = defaultdict(float)
    for s in all_slices:
        if s.priority != CONTROL:
            group_s[group_of[id(s)]] += s.estimate_s
    rot_series: dict[tuple[Any, ...], list[Slice]] = defaultdict(list)
    for s in all_slices:
        if s.priority == CONTROL:
            continue
        if budget_s is not None and group_s[group_of[id(s)]] > budget_s:
            rot_series[(s.runner_class, *s.key[1:])].append(s)
        else:
            first = all_slices[group_of[id(s)]]  # names the group: server and series
            rot_series[(s.runner_class, *first.key)].append(s)
    r, parts = rotation(rot_series, left, rotation_nights)
    tonight = (night - EPOCH).days % r
    rank: dict[int, tuple[int, int]] = {}
    for key, members in rot_series.items():
        ahead = (parts[key] - tonight) % r
        for s in members:
            if s.priority >= ROTATION:
                s.priority = ROTATION if ahead == 0 else AHEAD
                s.reason = f"rotation part {parts[key] + 1} of {r}" + (
                    "" if ahead == 0 else f" (due in {ahead} night(s))"
                )
            rank[id(s)] = (ahead, 0)

    ordered = sorted(
        all_slices,
        key=lambda s: (s.priority, rank.get(id(s), (0, 0)), s.cells[0][0]),
    )

    # choose what is due tonight, in priority order, while the class has capacity
    used: dict[str, float] = defaultdict(float)
    wanted: list[Slice] = []
    cut: list[Slice] = []
    for s in ordered:
        if s.priority == AHEAD:
            continue
        if s.priority == CONTROL or used[s.runner_class] + s.estimate_s <= capacity[s.runner_class]:
            used[s.runner_class] += s.estimate_s
            wanted.append(s)
        else:
            s.reason += "; over the budget"
            cut.append(s)
    if budget_s is not None and any(fixed[rc] > capacity[rc] for rc in fixed):
        notes.append("the control cells alone exceed the budget: they run anyway")

    out_shards = pack(wanted, per_class, budget_s, cut, group_of)
    # then later rotation parts fill the room left, next part first (never "cut")
    ahead = [s for s in ordered if s.priority == AHEAD]
    taken = fill(out_shards, ahead, budget_s, group_of)
    gone = {id(s) for s in cut}
    chosen = [s for s in wanted if id(s) not in gone] + taken
    taken_ids = {id(s) for s in taken}
    deferred = [s for s in ahead if id(s) not in taken_ids]
    out_shards = [sh for sh in out_shards if sh.slices]
    for i, sh in enumerate(out_shards):
        sh.index = i
    split = [p.describe() for p in pairing.split(out_shards, info)]
    if split:
        notes.append(
            f"{len(split)} pair(s) split across shards: their comparison group fit no "
            "shard whole under the budget (pairing.split_pairs in the plan file)"
        )
    if out_shards and len(out_shards) < shards:
        notes.append(f"{shards - len(out_shards)} shard(s) left empty and dropped")
    if budget_s is None:
        notes.append("no budget: the whole matrix runs")
    return NightPlan(
        matrix=matrix,
        night=night,
        budget_minutes=budget_minutes,
        shards=out_shards,
        cut=sorted(cut, key=lambda s: (s.priority, s.cells[0][0])),
        chosen=chosen,
        rotation_nights=r,
        rotation_part=tonight + 1,
        estimate_all_s=estimate_all,
        sources=dict(sources),
        history_source=history.source,
        notes=notes,
        fleet=fleet,
        deferred_cells=sum(len(s.cells) for s in deferred),
        comparison_groups=len({group_of[id(s)] for s in chosen}),
        split_pairs=split,
    )
