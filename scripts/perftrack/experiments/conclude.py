"""Sequential verdicts: interleaved rounds of two arms until the verdict settles.

`perftrack compare A B --until-conclusive --budget MINUTES` runs rounds of one cell per
arm (A then B, then B then A, …; each a fresh server via the runner), ingests every round
into the DB, and recomputes the verdict of B against A from the rounds of this session.
The arms are two servers, or, with `--axis AXIS --values X Y`, one server with two values
of a configuration axis (charset, profile, durability, …; analysis/axis.py): the same
rounds, looks and verdict either way. It stops when the verdict is no longer
`inconclusive`, when the planned looks are used up, or when the next round would not fit
in the budget (estimated before each round from the slowest round so far, so a round is
never started that cannot finish).

Multiple looks (experiments/looks.py): looking after every round and stopping at the
first `regression` would raise the false-alarm rate with each look, so verdicts are only
*decided* at looks spaced geometrically, with the sequence's 1% false-alarm budget split
over the looks the budget allows. Rounds between looks print an interim ratio and
interval, but cannot end the sequence. See docs/statistics.md, "Sequential rounds".
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from perftrack.analysis import axis as axis_mod
from perftrack.analysis import compare, stats
from perftrack.core import paths
from perftrack.core.errors import ConfigError, ServerError
from perftrack.experiments.looks import (
    DEFAULT_MIN_EFFECT,
    FIRST_LOOK_N,
    decide,
    look_points,
    look_z,
)
from perftrack.planning import cells, matrix
from perftrack.run import lifetime, runner
from perftrack.servers import profiles
from perftrack.servers.catalog import Catalog
from perftrack.store import remeasures, store
from perftrack.store.queries.shapes import RunValueRow

MAX_FAILED_ROUNDS = 2  # consecutive rounds without a value for a side: stop, say why
# A look can false-alarm either way (regression or improvement): the sequence's 1% is
# split over its K looks and both directions, each look's bound at 1 - 0.01/(2K). One
# direction alone (1 - 0.01/K) let A/A sequences end as one or the other 1.4% of the
# time (docs/benchmarks.md, "Paired verdicts: power and false alarms").
SIDES = 2


@dataclass(frozen=True, kw_only=True)
class Request:
    """What to compare, on which cell shape, within which budget."""

    a: str
    b: str
    budget_s: float
    workload: str = "oltp_point_select"
    threads: int = 1
    charset: str = "latin1"
    duration_s: int = cells.ROUND_DURATION_S
    warmup_s: int = 1
    tables: int = 2
    table_size: int = 10_000
    profile: str = "default"
    # the charset axis's handshake (configs/axes.yaml: skip / client); None: not set
    handshake: str | None = None
    metric: str = "tps"
    runner_class: str = "local"
    # `unchanged` settles only when B is within ±min_effect of A (and within the noise band)
    min_effect: float = DEFAULT_MIN_EFFECT
    # An axis comparison: both arms are server `a` (== `b`), with values[0] and values[1]
    # of this axis (analysis/axis.py names); None: the arms are the servers a and b.
    axis: str | None = None
    values: tuple[str, ...] = ()
    # `run`: the arms' servers are started once and kept up for every round of the
    # sequence (each round is still one run, read back and verified); `group`: a fresh
    # server per arm and round (run/lifetime.py).
    server_lifetime: str = matrix.DEFAULT_SERVER_LIFETIME

    @property
    def arms(self) -> tuple[str, str]:
        """The two arms in words: server ids, or `server axis=value`."""
        if self.axis is None:
            return self.a, self.b
        return (f"{self.a} {self.axis}={self.values[0]}", f"{self.a} {self.axis}={self.values[1]}")

    def optimistic_round_s(self) -> float:
        """A lower bound of one round: two cells' warm-up and measurement, no overhead."""
        return 2.0 * (self.warmup_s + self.duration_s)

    def first_round_estimate_s(self) -> float:
        """Before any round has run: the runner's per-cell overhead estimate added."""
        return 2.0 * (self.warmup_s + self.duration_s + cells.CELL_OVERHEAD_ESTIMATE_S)

    def planned_looks(self) -> int:
        """K of the Bonferroni split: looks reachable if rounds took only their measured time."""
        return max(1, len(look_points(int(self.budget_s // self.optimistic_round_s()))))


@dataclass(kw_only=True)
class Round:
    number: int
    n_a: int
    n_b: int
    comparison: stats.Comparison | None
    look: int | None  # 1-based look number, None for an interim round
    round_s: float
    machine_s: float  # wall-clock since the first round started
    run_id: str

    @property
    def verdict(self) -> str:
        return self.comparison.verdict if self.comparison else "inconclusive"


@dataclass(kw_only=True)
class Sequence:
    request: Request
    looks_planned: int
    rounds: list[Round] = field(default_factory=list)
    stop: str = ""  # why the sequence ended
    # the stored paired A/A spread of the class and workload the bands come from (None:
    # none stored; the session's own spread with Student's t)
    aa_spread: float | None = None

    @property
    def verdict(self) -> str:
        """The verdict of the last look; `inconclusive` when no look settled it."""
        looks = [r for r in self.rounds if r.look is not None]
        return looks[-1].verdict if looks else "inconclusive"

    @property
    def machine_s(self) -> float:
        return self.rounds[-1].machine_s if self.rounds else 0.0

    @property
    def run_ids(self) -> list[str]:
        return [r.run_id for r in self.rounds]


def check_server_lifetime(req: Request) -> None:
    if req.server_lifetime not in matrix.SERVER_LIFETIMES:
        raise ConfigError(
            f"--server-lifetime must be {' or '.join(matrix.SERVER_LIFETIMES)}, "
            f"not {req.server_lifetime!r}"
        )


def validate(req: Request, cat: Catalog) -> None:
    """Refuse bad input before anything runs (one-line ConfigError each)."""
    check_server_lifetime(req)
    if req.axis is None and req.a == req.b:
        raise ConfigError(f"compare two different servers, not {req.a!r} with itself")
    cat.get(req.a)
    cat.get(req.b)
    if req.axis is not None:
        _validate_axis(req, cat)
    elif req.handshake is not None:
        cell_matrix(req, [req.a], "until-conclusive")  # refuses an unknown handshake
    if not req.budget_s > 0 or not math.isfinite(req.budget_s):
        raise ConfigError("--budget must be a positive number of minutes, e.g. --budget 10")
    if not stats.MIN_EFFECT <= req.min_effect < 1:
        raise ConfigError(
            f"--min-effect must be between {stats.MIN_EFFECT:.0%} and 99% (e.g. 10), "
            f"not {req.min_effect:.0%}"
        )
    if req.metric not in compare.METRICS:
        raise ConfigError(f"unknown metric '{req.metric}'; known: {', '.join(compare.METRICS)}")
    need = FIRST_LOOK_N * req.first_round_estimate_s()
    if req.budget_s < need:
        raise ConfigError(
            f"a budget of {req.budget_s / 60:.1f} min cannot fit the {FIRST_LOOK_N} rounds of "
            f"the first look (~{need / 60:.1f} min at {req.duration_s} s per cell): raise "
            "--budget or lower --duration"
        )


# An axis of analysis/axis.py -> the matrix key that lists its values in a round.
ROUND_AXIS_KEYS = {
    "charset": "charsets",
    "profile": "profile",
    "durability": "durabilities",
    "isolation": "isolations",
    "engine": "engines",
    "handshake": "handshakes",
    "dataset_size": "dataset_sizes",
}


def _validate_axis(req: Request, cat: Catalog) -> None:
    """One server, two values of an axis a round can set, both valid (the matrix says)."""
    name = axis_mod.canonical(req.axis or "")
    if name not in ROUND_AXIS_KEYS:
        raise ConfigError(
            f"--until-conclusive cannot vary {name} within a round; axes it can: "
            f"{', '.join(ROUND_AXIS_KEYS)} (dataset_size sizes the tables)"
        )
    if req.a != req.b or len(req.values) != 2 or req.values[0] == req.values[1]:
        raise ConfigError(f"an axis comparison runs two different {name} values on one server")
    cell_matrix(req, [req.a], "until-conclusive", list(req.values))  # refuses bad values
    if name == "profile":
        for v in req.values:
            profiles.read_profile(v, paths.config_dir())


def _round_matrix(req: Request, number: int) -> matrix.Matrix:
    first = number % 2 == 1  # alternate who goes first
    if req.axis is not None:
        values = list(req.values) if first else list(reversed(req.values))
        return cell_matrix(req, [req.a], "until-conclusive", values)
    return cell_matrix(req, [req.a, req.b] if first else [req.b, req.a], "until-conclusive")


def cell_matrix(
    req: Request, servers: list[str], name: str, values: list[str] | None = None
) -> matrix.Matrix:
    """One round: the request's cell on each of `servers`, in that order; in an axis
    comparison with the axis's `values` (in that order: the groups run in list order)."""
    # edge: a matrix spec, as the YAML files give it
    data: dict[str, Any] = {
        "name": name,
        "servers": servers,
        "workloads": [req.workload],
        "charsets": [req.charset],
        "threads": [req.threads],
        "repeats": 1,
        "duration_s": req.duration_s,
        "warmup_s": req.warmup_s,
        "tables": req.tables,
        "table_size": req.table_size,
        "profile": req.profile,
    }
    if req.handshake is not None:
        data["handshakes"] = [req.handshake]
    if req.axis is not None:
        key = ROUND_AXIS_KEYS[axis_mod.canonical(req.axis)]
        data[key] = list(values or req.values)
        if key == "dataset_sizes":
            del data["table_size"]  # sized by the plan from the buffer pool
    return matrix.from_dict(data, where=f"--{name}" if name == "until-conclusive" else name)


def arm_of(req: Request, arm: RunValueRow) -> int:
    """0 (A), 1 (B) or -1: which arm a result of the session's runs belongs to."""
    if req.axis is None:
        return (req.a, req.b).index(arm["server_id"]) if arm["server_id"] in (req.a, req.b) else -1
    if arm["server_id"] != req.a:
        return -1
    name = axis_mod.canonical(req.axis)
    own = axis_mod.value_of(name, arm)
    for i, v in enumerate(req.values):
        if own == v or (name == "charset" and arm["charset"] == v):
            return i
    return -1


def unsteady_lines(emit: Callable[[str], None], where: str) -> Callable[[str], None]:
    """The runner's lines a sequence shows: a window still warming up, measured again with
    its warm-up extended (run/steady.py; the round keeps the later value)."""

    def show(line: str) -> None:
        if "not steady" in line:
            emit(f"  {where}: {line.split(': ', 1)[-1]} (the round keeps the second value)")

    return show


def session_pairs(db: Path, run_ids: list[str], req: Request) -> tuple[list[float], list[float]]:
    """This session's values of the metric, read back from the DB, as pairs: (A_i, B_i) of
    each round (one run) where both arms have a value; a round with an arm missing (a
    failed cell) gives no pair."""
    col = compare.METRICS[req.metric][0]
    with store.open_db(db, write=False) as st:
        rows = st.run_values(run_ids, col)
    by_round: dict[str, dict[int, float]] = {rid: {} for rid in run_ids}
    for d in rows:
        if (arm := arm_of(req, d)) >= 0:
            by_round[d["run_id"]][arm] = float(d["value"])
    pairs = [(v[0], v[1]) for v in by_round.values() if 0 in v and 1 in v]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def stored_spread(db: Path, run_id: str, req: Request) -> float | None:
    """The paired A/A spread `detect` stored for the runner class and hardware of the
    session's first run, the request's workload and metric (None: none stored)."""
    with store.open_db(db, write=False) as st:
        hw = st.run_hardware(run_id)
        spreads = st.noise_spread()
    return spreads.get((hw[0], hw[1], req.workload, req.metric)) if hw else None


def run_rounds(
    req: Request,
    cat: Catalog,
    config_dir: Path,
    db: Path,
    out_dir: Path,
    emit: Callable[[str], None],
    *,
    workroot: Path | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Sequence:
    """Add interleaved rounds until the verdict settles, the looks or the budget end."""
    validate(req, cat)
    outcome = Sequence(request=req, looks_planned=req.planned_looks())
    points = look_points(10**9)
    z = look_z(SIDES * outcome.looks_planned)
    arm_a, arm_b = req.arms
    emit(
        f"until conclusive: {arm_b} against {arm_a}, {req.workload}, {req.threads} thread(s), "
        f"{req.duration_s} s per cell, budget {req.budget_s / 60:.1f} min; verdicts at "
        f"n = {', '.join(map(str, points[: outcome.looks_planned]))} per side "
        f"({outcome.looks_planned} looks, z = {z:.2f} each, or Student's t while the CV "
        f"comes from these rounds: ≤ {stats.FALSE_ALARM:.0%} false alarms either way); "
        f"unchanged = within ±{req.min_effect:.0%} and the noise band"
    )
    servers = lifetime.Servers(lifetime=req.server_lifetime, workroot=workroot)
    try:  # each round one run, on `servers`
        higher = compare.METRICS[req.metric][1]
        start = clock()
        slowest = req.first_round_estimate_s()
        looks_done, failed_rounds = 0, 0
        while True:
            spent = clock() - start
            if spent + slowest > req.budget_s:
                outcome.stop = (
                    f"budget: the next round (~{slowest:.0f} s) would end after the "
                    f"{req.budget_s / 60:.1f} min budget"
                )
                break
            number = len(outcome.rounds) + 1
            t0 = clock()
            rd = runner.create(_round_matrix(req, number), cat, out_dir, req.runner_class)
            summary = runner.Runner(
                rd=rd,
                catalog=cat,
                config_dir=config_dir,
                emit=unsteady_lines(emit, f"round {number}"),
                workroot=workroot,
                repeat_noisy=False,  # one value per server per round: no re-measure
                servers=servers,
            ).run()
            store.ingest_paths(db, [rd.path])
            round_s = clock() - t0
            # the round estimate for the budget: the slowest round so far, from the first
            # round that started no server when the servers are kept (the first starts them)
            first = 2 if servers.kept else 1
            slowest = round_s if number <= first else max(slowest, round_s)
            for line in summary.final_failed:
                emit(f"  round {number}: failed cell: {line}")
            a, b = session_pairs(db, [*outcome.run_ids, rd.run_id], req)
            if number == 1:
                outcome.aa_spread = stored_spread(db, rd.run_id, req)
                if outcome.aa_spread is not None:
                    emit(
                        f"noise bands from the stored paired A/A spread of this runner class, "
                        f"hardware and workload: {outcome.aa_spread:.1%} a round"
                    )
            failed_rounds = failed_rounds + 1 if summary.failed else 0
            if failed_rounds >= MAX_FAILED_ROUNDS:
                raise ServerError(
                    f"rounds {number - 1}-{number} failed (see above); fix the server or cell, "
                    f"the rounds so far are in {out_dir} and {db}"
                )
            n = min(len(a), len(b))
            look = None
            if looks_done < len(points) and n >= points[looks_done]:
                looks_done += 1
                look = looks_done
            c = decide(
                a,
                b,
                cv=None,
                looks=SIDES * outcome.looks_planned,  # the tests the 1% is split over
                higher_is_better=higher,
                min_effect=req.min_effect,
                paired=True,
                aa_spread=outcome.aa_spread,
            )
            r = Round(
                number=number,
                n_a=len(a),
                n_b=len(b),
                comparison=c,
                look=look,
                round_s=round_s,
                machine_s=clock() - start,
                run_id=rd.run_id,
            )
            outcome.rounds.append(r)
            emit(format_round(r, outcome.looks_planned))
            if look is not None and r.verdict != "inconclusive":
                outcome.stop = f"settled at look {look}"
                break
            if look is not None and look >= outcome.looks_planned:
                outcome.stop = f"all {outcome.looks_planned} planned looks used"
                break
    finally:
        servers.stop_all()  # kept servers: after the last round, or on any interruption
    stored = store_outcome(db, outcome)
    if stored:
        emit(stored)
    emit(format_outcome(outcome))  # the verdict: the sequence's last line
    return outcome


def store_outcome(db: Path, outcome: Sequence) -> str | None:
    """Store a server pair's outcome in the DB (store/remeasures.py), keyed by the cell
    its ingested rounds measured, so `detect` settles the pair's alert with it; a line
    saying so (None: an axis comparison, no round, or rounds of more than one cell)."""
    req = outcome.request
    if req.axis is not None or not outcome.rounds:
        return None
    looks = [r for r in outcome.rounds if r.look is not None]
    last = (looks or outcome.rounds)[-1]
    with store.open_db(db, write=False) as st:
        keys = remeasures.series_keys(st, outcome.run_ids)
    if len(keys) != 1:
        return None
    c = last.comparison
    remeasures.save(
        db,
        remeasures.Remeasure(
            source="until-conclusive",
            base_server=req.a,
            new_server=req.b,
            key=keys[0],
            metric=req.metric,
            n_base=last.n_a,
            n_new=last.n_b,
            ratio=c.ratio if c else None,
            ci_low=c.ci_low if c else None,
            ci_high=c.ci_high if c else None,
            p_value=c.p_value if c else None,
            threshold=c.threshold if c else None,
            verdict=outcome.verdict,
            run_ids=tuple(outcome.run_ids),
            measured_at=datetime.now(UTC).replace(tzinfo=None),
        ),
    )
    return (
        f"stored as a paired re-measurement of {req.b} against {req.a} on this cell and "
        f"hardware key {keys[0]['hw_key']} ({db}, table remeasures): the next `perftrack "
        "detect` settles the alert of this pair, cell and hardware key with it, if there is one"
    )


def format_round(one_round: Round, looks: int) -> str:
    c = one_round.comparison
    stage = f"look {one_round.look}/{looks}" if one_round.look is not None else "interim"
    if c is None:
        body = "too few values for a ratio"
    else:
        body = (
            f"ratio {c.ratio:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}] p={c.p_value:.3f} "
            f"threshold ±{c.threshold:.1%} -> {c.verdict}"
        )
    return (
        f"round {one_round.number}: n={one_round.n_a}+{one_round.n_b}: {body} ({stage}); "
        f"round {one_round.round_s:.0f} s, machine time {one_round.machine_s:.0f} s"
    )


def format_outcome(outcome: Sequence) -> str:
    looks = [r for r in outcome.rounds if r.look is not None]
    last = looks[-1] if looks else (outcome.rounds[-1] if outcome.rounds else None)
    c = last.comparison if last else None
    arm_a, arm_b = outcome.request.arms
    what = (
        f"{arm_b} / {arm_a} = {c.ratio:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}]" if c else "no ratio"
    )
    return (
        f"verdict: {outcome.verdict}: {what} after {len(outcome.rounds)} round(s), "
        f"{outcome.machine_s / 60:.1f} min machine time ({outcome.stop})"
    )


# edge: CLI --json out: compare --until-conclusive --json
def to_json(outcome: Sequence) -> dict[str, Any]:
    axis = (
        {"axis": outcome.request.axis, "values": list(outcome.request.values)}
        if outcome.request.axis
        else {}
    )
    return {
        "a": outcome.request.a,
        "b": outcome.request.b,
        **axis,
        "verdict": outcome.verdict,
        "stop": outcome.stop,
        "looks_planned": outcome.looks_planned,
        "aa_spread": outcome.aa_spread,
        "machine_s": outcome.machine_s,
        "rounds": [
            {
                "round": r.number,
                "n_a": r.n_a,
                "n_b": r.n_b,
                "look": r.look,
                "verdict": r.verdict,
                "ratio": r.comparison.ratio if r.comparison else None,
                "ci_low": r.comparison.ci_low if r.comparison else None,
                "ci_high": r.comparison.ci_high if r.comparison else None,
                "p_value": r.comparison.p_value if r.comparison else None,
                "threshold": r.comparison.threshold if r.comparison else None,
                "round_s": r.round_s,
                "machine_s": r.machine_s,
                "run_id": r.run_id,
            }
            for r in outcome.rounds
        ],
    }


def check_cli(
    servers: list[str], budget: float | None, until: bool, run_id: str | None, axis: bool = False
) -> tuple[str, str, float]:
    """A, B and the budget in minutes, from what `compare --until-conclusive` was given
    (`axis`: an axis comparison, whose arms are both the one server given)."""
    if not until:
        raise ConfigError("--budget goes with --until-conclusive")
    if run_id:
        raise ConfigError("--until-conclusive runs new rounds: it takes no --run")
    if axis and len(servers) != 1:
        raise ConfigError(
            "--until-conclusive --axis runs one server: "
            "perftrack compare SERVER --axis AXIS --values A B --until-conclusive --budget MINUTES"
        )
    if not axis and len(servers) != 2:
        raise ConfigError(
            "--until-conclusive compares exactly two servers: "
            "perftrack compare A B --until-conclusive --budget MINUTES"
        )
    if budget is None:
        raise ConfigError("--until-conclusive needs --budget MINUTES, e.g. --budget 10")
    return servers[0], servers[-1], budget
