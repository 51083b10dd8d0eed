"""`perftrack explain A B`: which changed settings account for B's regression, by experiment.

1. Both servers are started once (no load) to read their effective variables; the
   differing ones B accepts at A's value are the candidates (`candidates.select`).
2. B is started with all candidates at A's values; if it refuses, the group is halved
   until the refused settings are found (each a start only, ~1 s): they are skipped with
   the server's reason and the search goes on without them.
3. Stage 1 runs interleaved rounds of A, B and B+all (the order rotates every round). The
   gap (B against A) and every group (B+g against B) are decided with the sequential
   machinery of `conclude` at n = 4 and 6 rounds, the 1% false-alarm budget split over
   the looks and the tests of the stage (Bonferroni). If B is not slower than A: nothing
   to explain. If the gap is still undecided (its looks, or the budget, ran out): nothing
   to explain either (`no_gap`), and no explanation. If B+all is not faster than B: the
   change is in the code.
4. Each later stage halves every group that moved and runs rounds of B and the halves; a
   moved group whose halves both stay flat is an inseparable group. The search stops at
   single settings or when the next round would not fit the budget.

Rounds are run directories under `RUNS/explain/` of the normal runner, not ingested into
the results DB: B+g arms are not releases, and the site must never show them as such. The
first stage's gap B/A is a paired measurement of the pair on the cell: `store_gap` stores
it (store/remeasures.py) under the series key of the A and B records, where it settles the
alert of that pair, cell and hardware key (docs/alerts.md).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from perftrack.analysis import stats
from perftrack.analysis.candidates import Candidate, select
from perftrack.core.errors import ConfigError, ServerError
from perftrack.experiments import conclude
from perftrack.experiments import explanation as ex
from perftrack.planning import cells, matrix
from perftrack.run import lifetime, runner
from perftrack.run.server import Server
from perftrack.servers import options, profiles, providers, rules
from perftrack.servers.catalog import Catalog, Entry
from perftrack.store import remeasures

STAGE_POINTS = conclude.look_points(9)  # decide each stage at n = 4, 6 and 9 rounds
# From this look on, a still-inconclusive group whose ratio is not even half-way (on the
# log scale) to its noise band stops as `noise`: a gain beyond the band by the last look
# is then unlikely, and the stage's rounds cost every arm's time. Not in the first stage:
# its one group (all of A's settings) decides whether anything is explained at all.
FUTILE_FROM_LOOK = 2
SHARE_ROUNDS = 6  # rounds of the last stage (A, B and what was found): the shares
MAX_FAILED_B = 2  # consecutive rounds without a value for plain B: stop, say why
THROUGHPUT = ("tps", "qps")

Arm = tuple[str, tuple[Candidate, ...] | None]  # label ("A", "B", "g1", …) and its settings
RoundFn = Callable[[list[Arm]], dict[str, float | None]]
StartFn = Callable[[tuple[Candidate, ...]], str | None]


def excludes_regression(ci_low: float, min_effect: float) -> bool:
    """Whether a throughput ratio B/A whose interval starts at ``ci_low`` rules out a
    regression of ``min_effect`` (5%: B at 0.95 of A or below). Only then is there nothing
    to explain: a gap whose interval merely fits inside the noise band, or reaches both
    sides of 1, may still hide the regression asked about."""
    return ci_low > 1 - min_effect


def no_gap(result: ex.Explanation, req: conclude.Request) -> str | None:
    """Why the first stage leaves no gap to explain although it could not rule a regression
    out (one line), or None when B/A is a decided regression. A gap that is still
    `inconclusive` after every look `compare --until-conclusive` would take (or when the
    budget ended) is not a gap: shares of it would divide by noise, and "the change is in
    the code" would be said of a change never shown to exist."""
    gap = result.gap
    if gap is not None and gap.verdict == "regression":
        return None
    rounds = f"after {result.rounds} round(s) of A, B and B with A's settings"
    if gap is None:
        return (
            f"no gap to explain: {result.b} / {result.a} has no paired value {rounds}; "
            "check the run directory's records for failed cells"
        )
    measured = _measured(f"{result.b} / {result.a}", gap)
    if result.stop.startswith("budget"):
        return (
            f"the gap did not settle within the budget: {measured} {rounds}; nothing is "
            "explained: raise --budget (the rounds are in the run directory)"
        )
    return (
        f"the gap did not settle: {measured} {rounds}, every look "
        f"compare --until-conclusive would take at --min-effect {req.min_effect:.0%}; "
        "the cell's throughput moves too much from round to round to attribute a "
        "regression to settings (longer --duration or --warmup may steady it)"
    )


def _measured(what: str, decided: stats.Comparison) -> str:
    """A decision as the refusals quote it: `what = ratio [low, high] (verdict, n=N)`."""
    d = decided
    return f"{what} = {d.ratio:.3f} [{d.ci_low:.3f}, {d.ci_high:.3f}] ({d.verdict}, n={d.n_b})"


def settings_unsettled(result: ex.Explanation) -> str | None:
    """Why a decided gap gets no explanation (one line), or None: B with all of A's
    settings (g1) was not decided against B by the first stage's last look (or the budget
    ended first), and its share's interval reaches half the gap (`ex.mostly_in_code`).
    "The change is in the code" needs g1 `unchanged` or slower, or a share whose interval
    stays below half: one that reaches further says nothing either way (measured: a share
    of -3% [-209%, 496%] was once reported as "in the code")."""
    whole = result.all_group
    if whole is None or whole.state != ex.NOISE or ex.mostly_in_code(whole):
        return None
    c = whole.comparison
    measured = _measured("(B+g1)/B", c) if c is not None else "(B+g1)/B has no paired value"
    share = (
        f", a share of the gap of {whole.share:.0%} [{whole.share_low:.0%}, {whole.share_high:.0%}]"
        if whole.share is not None and whole.share_low is not None and whole.share_high is not None
        else ""
    )
    why = (
        "the budget ended first: raise --budget"
        if result.stop.startswith("budget")
        else "the rounds move too much to tell; a longer --duration or --warmup may steady them"
    )
    return (
        f"A's settings did not settle: B with all {len(whole.members)} of them against B "
        f"{measured}{share}; nothing is explained: {why} (the rounds are in the run directory)"
    )


def first_stage_s(req: conclude.Request) -> float:
    """The least machine time of stage 1's first look: 4 rounds of A, B and B+all."""
    per_arm = req.warmup_s + req.duration_s + cells.CELL_OVERHEAD_ESTIMATE_S
    return STAGE_POINTS[0] * 3 * per_arm


def validate(req: conclude.Request, cat: Catalog) -> None:
    """Refuse bad input before anything starts (one-line ConfigError each)."""
    if req.a == req.b:
        raise ConfigError(f"explain a change between two servers, not {req.a!r} with itself")
    conclude.check_server_lifetime(req)
    cat.get(req.a)
    cat.get(req.b)
    if req.metric not in THROUGHPUT:
        raise ConfigError(
            f"explain measures shares of a throughput gap: --metric must be one of "
            f"{', '.join(THROUGHPUT)}, not {req.metric!r}"
        )
    if not req.budget_s > 0 or not math.isfinite(req.budget_s):
        raise ConfigError("--budget must be a positive number of minutes, e.g. --budget 20")
    need = first_stage_s(req)
    if req.budget_s < need:
        raise ConfigError(
            f"a budget of {req.budget_s / 60:.1f} min cannot fit one look of the first stage "
            f"({STAGE_POINTS[0]} rounds of A, B and B+all, ~{need / 60:.1f} min at "
            f"{req.duration_s} s per cell): raise --budget or lower --duration"
        )


def derived(entry_b: Entry, label: str, members: tuple[Candidate, ...]) -> Entry:
    """B with A's values of `members`: an in-memory catalog entry (never written)."""
    return dataclasses.replace(
        entry_b,
        id=f"{entry_b.id}+{label}",
        server_options=entry_b.server_options + tuple((c.option, c.a_value) for c in members),
        stand_in=(
            f"{entry_b.id} with {len(members)} of A's settings ({label}), by perftrack explain"
        ),
    )


@dataclass(kw_only=True)
class Search:
    """The group-testing search, over any round and start function (real or not)."""

    req: conclude.Request
    result: ex.Explanation
    run_round: RoundFn
    starts: StartFn
    emit: Callable[[str], None]
    clock: Callable[[], float] = time.monotonic
    per_arm_s: float = 0.0
    started: float = 0.0

    def first_stage(self) -> ex.Group | None:
        """Stage 1: A, B and B with every usable candidate (g1), until the gap and g1 are
        decided; None (and `stop` says why) when B accepts no candidate."""
        e = self.result
        self.started = self.clock()
        self.per_arm_s = self.req.warmup_s + self.req.duration_s + cells.CELL_OVERHEAD_ESTIMATE_S
        usable = self._without_refused(tuple(e.candidates))
        if not usable:
            e.stop = "no candidate B accepts at A's value"
            return None
        top = ex.Group(label="g1", members=usable, stage=1)
        e.groups.append(top)
        self.emit(f"stage 1: A, B and B with all {len(usable)} of A's settings (g1)")
        self._stage(1, [top], with_gap=True)
        return top

    def run(self) -> ex.Explanation:
        e = self.result
        top = self.first_stage()
        if top is None:
            return self._done()
        gap = e.gap
        if gap is not None and excludes_regression(gap.ci_low, self.req.min_effect):
            raise ConfigError(
                f"no regression to explain: {e.b} / {e.a} = {gap.ratio:.3f} "
                f"[{gap.ci_low:.3f}, {gap.ci_high:.3f}] on this cell excludes a regression of "
                f"{self.req.min_effect:.0%} (--min-effect)"
            )
        unsettled = no_gap(e, self.req) or settings_unsettled(e)
        if unsettled:
            raise ConfigError(unsettled)
        frontier = [top] if top.state == ex.MOVED else []
        stage = 1
        while frontier:
            e.isolated += [g.label for g in frontier if len(g.members) == 1]
            parents = [g for g in frontier if len(g.members) > 1]
            if not parents:
                break
            if e.stop:  # the budget ended: moved groups stay whole
                e.not_split += [g.label for g in parents]
                break
            stage += 1
            kids = []
            for p in parents:
                half = (len(p.members) + 1) // 2
                for part in (p.members[:half], p.members[half:]):
                    kids.append(
                        ex.Group(
                            label=f"g{len(e.groups) + 1}", members=part, stage=stage, parent=p.label
                        )
                    )
                    e.groups.append(kids[-1])
            self.emit(f"stage {stage}: B and {', '.join(_describe(k) for k in kids)}")
            self._stage(stage, kids, with_gap=False)
            frontier = []
            for p in parents:
                mine = [k for k in kids if k.parent == p.label]
                if any(k.state == ex.UNTESTED for k in mine):
                    e.not_split.append(p.label)
                elif all(k.state == ex.FLAT for k in mine):
                    e.isolated.append(p.label)  # only together: inseparable
                elif not any(k.state == ex.MOVED for k in mine):
                    # a half undecided (noise): not shown inseparable, left whole
                    e.not_split.append(p.label)
                    e.undecided_halves.append(p.label)
                else:
                    frontier += [k for k in mine if k.state == ex.MOVED]
        if (e.isolated or e.not_split) and not e.stop:
            self._shares(stage + 1)
        e.stop = e.stop or "every moving group split to single settings or inseparable groups"
        return self._done()

    def _done(self) -> ex.Explanation:
        self.result.machine_s = self.clock() - self.started
        return self.result

    # refused at startup ----------------------------------------------------------------
    def _without_refused(self, cands: tuple[Candidate, ...]) -> tuple[Candidate, ...]:
        """`cands` minus those B will not start with (found by halving; each a start)."""
        if not cands:
            return cands
        reason = self.starts(cands)
        if reason is None:
            return cands
        if len(cands) == 1:
            self.emit(f"skipped: {cands[0].setting}: B refuses it at startup: {reason}")
            self.result.refused.append((cands[0], reason))
            return ()
        half = (len(cands) + 1) // 2
        return self._without_refused(cands[:half]) + self._without_refused(cands[half:])

    # one stage: rounds until its groups are decided ----------------------------------
    def _stage(self, number: int, groups: list[ex.Group], *, with_gap: bool) -> None:
        """Rounds until the stage's groups are decided (at STAGE_POINTS) and, with the gap,
        until the gap B/A is decided by `compare --until-conclusive`'s own rule: its look
        points, its number of looks for this budget and `conclude.decide` (one answer per
        cell). Once the groups are decided, the gap's further rounds run A and B only."""
        e = self.result
        base: list[Arm] = [("B", None), ("A", None)] if with_gap else [("B", None)]
        arms: list[Arm] = base + [(g.label, g.members) for g in groups]
        looks = len(STAGE_POINTS) * len(groups)
        gap_points = conclude.look_points(10**9)[: self.req.planned_looks()]
        gap_looks = conclude.SIDES * self.req.planned_looks()
        rounds: list[dict[str, float | None]] = []
        pending = {g.label for g in groups}
        gap_pending, looked, gap_looked = with_gap, 0, 0
        while pending or gap_pending:
            values = self._round(number, arms if pending else base, rounds)
            if values is None:
                for g in groups:
                    if g.label in pending:
                        g.state = ex.NOISE if looked else ex.UNTESTED
                break
            b = [v for r in rounds if (v := r.get("B")) is not None]
            if gap_pending and len(b) >= gap_points[gap_looked]:
                gap_looked += 1
                pa, pb = _pairs(rounds, "A", "B")
                e.gap = conclude.decide(
                    pa, pb, cv=None, looks=gap_looks, min_effect=self.req.min_effect, paired=True
                )
                gap_pending = gap_looked < len(gap_points) and (
                    e.gap is None or e.gap.verdict == "inconclusive"
                )
                if not pending:
                    self.emit(self._look_line(number, f"gap {gap_looked}", len(b), []))
            if not pending or looked >= len(STAGE_POINTS) or len(b) < STAGE_POINTS[looked]:
                continue
            looked += 1
            last = looked == len(STAGE_POINTS)
            for g in groups:
                if g.label not in pending:
                    continue
                pb, pg = _pairs(rounds, "B", g.label)
                g.comparison = conclude.decide(
                    pb, pg, cv=None, looks=looks, min_effect=self.req.min_effect, paired=True
                )
                verdict = g.comparison.verdict if g.comparison else "inconclusive"
                if verdict == "improvement":
                    g.state = ex.MOVED
                elif verdict in ("unchanged", "regression"):
                    g.state = ex.FLAT
                elif last or (
                    not with_gap
                    and looked >= FUTILE_FROM_LOOK
                    and _futile(g.comparison, e.group(g.parent).comparison if g.parent else None)
                ):  # the first stage's g1 (all of A's settings) gets every look
                    g.state = ex.NOISE
                if g.state != ex.UNTESTED:
                    pending.discard(g.label)
            self.emit(self._look_line(number, str(looked), len(b), groups))
        for g in groups:
            g.ratios = ex.paired_ratios(rounds, g.label, "B")
        if with_gap:
            e.gap_ratios = ex.paired_ratios(rounds, "A", "B")
            _set_shares(groups, rounds)

    def _round(
        self, stage: int, arms: list[Arm], rounds: list[dict[str, float | None]]
    ) -> dict[str, float | None] | None:
        """One more round of `arms` (order rotated), appended to `rounds`; None if the
        budget has no room for it (and `stop` says so)."""
        e = self.result
        if self.clock() - self.started + self.per_arm_s * len(arms) > self.req.budget_s:
            e.stop = (
                f"budget: the next round of stage {stage} (~{self.per_arm_s * len(arms):.0f}"
                f" s) would end after the {self.req.budget_s / 60:.1f} min budget"
            )
            return None
        k = e.rounds % len(arms)
        t0 = self.clock()
        values = self.run_round(arms[k:] + arms[:k])
        self.per_arm_s = max(self.per_arm_s, (self.clock() - t0) / len(arms))
        e.rounds += 1
        rounds.append(values)
        tail = [r.get("B") for r in rounds[-MAX_FAILED_B:]]
        if len(tail) == MAX_FAILED_B and all(v is None for v in tail):
            raise ServerError(
                f"plain B ({e.b}) gave no value in {MAX_FAILED_B} rounds in a row: fix the "
                "server or the cell first (the rounds so far are in the run directory)"
            )
        return values

    # the last stage: shares of what was found, A and B in the same rounds ------------
    def _shares(self, number: int) -> None:
        """Rounds of A, B, each isolated group and (several) all of them together: the
        shares of the gap, paired within rounds (the search's stages ran no A)."""
        e = self.result
        found = [e.group(lb) for lb in [*e.isolated, *e.not_split]]
        if len(found) > 1:
            members = tuple(c for g in found for c in g.members)
            together = ex.Group(
                label=f"g{len(e.groups) + 1}", members=members, stage=number, state=ex.TOGETHER
            )
            e.groups.append(together)
            e.together = together.label
            found.append(together)
        arms: list[Arm] = [("B", None), ("A", None)] + [(g.label, g.members) for g in found]
        self.emit(f"stage {number} (shares): A, B and {', '.join(g.label for g in found)}")
        rounds: list[dict[str, float | None]] = []
        while len(rounds) < SHARE_ROUNDS and self._round(number, arms, rounds):
            pass
        for g in found:
            if g.state == ex.TOGETHER:
                g.ratios = ex.paired_ratios(rounds, g.label, "B")
        _set_shares(found, rounds)
        flat = set()
        for g in found:
            if g.state == ex.TOGETHER:
                continue
            pb, pg = _pairs(rounds, "B", g.label)
            again = conclude.decide(
                pb, pg, cv=None, looks=1, min_effect=self.req.min_effect, paired=True
            )
            # not reproduced: not an improvement, and its estimate inside the noise band
            if (
                again is not None
                and again.verdict != "improvement"
                and again.ratio <= 1 / (1 - again.threshold)
            ):
                flat.add(g.label)
        ex.unconfirm(e, flat)

    def _look_line(self, stage: int, look: str, cells_run: int, groups: list[ex.Group]) -> str:
        parts = []
        gap = self.result.gap
        if stage == 1 and gap is not None:
            parts.append(
                f"gap B/A {gap.ratio:.3f} [{gap.ci_low:.3f}, {gap.ci_high:.3f}] ({gap.verdict})"
            )
        for g in groups:
            c = g.comparison
            ratio = f"{c.ratio:.3f}" if c else "—"
            parts.append(f"{g.label} (B+g)/B {ratio} ({c.verdict if c else 'too few'})")
        spent = (self.clock() - self.started) / 60
        return f"  stage {stage} look {look} (n={cells_run}): {'; '.join(parts)}; {spent:.1f} min"


def _futile(comparison: stats.Comparison | None, parent: stats.Comparison | None = None) -> bool:
    """An inconclusive B+g against B not half-way (log scale) to the band, nor half-way to
    its parent group's move: not worth more rounds. A half carrying most of what its parent
    recovered is worth them, whatever its own band (measured: a half at 1.053 of a parent's
    1.064 was stopped, and the parent reported inseparable)."""
    if comparison is None:
        return True
    half = -math.log(1 - comparison.threshold) / 2
    if parent is not None and parent.ratio > 1:
        half = min(half, math.log(parent.ratio) / 2)
    return math.log(max(comparison.ratio, 1e-9)) <= half


def _set_shares(groups: list[ex.Group], rounds: list[dict[str, float | None]]) -> None:
    """Each group's share of the gap, from rounds that ran A, B and the group."""
    gap = ex.paired_ratios(rounds, "A", "B")
    for g in groups:
        got = ex.share(ex.paired_ratios(rounds, g.label, "B"), gap)
        if got is not None:
            g.share, g.share_low, g.share_high = got


def _short(reason: str) -> str:
    """The server's own words of a refusal: from its [ERROR], without the binary's path."""
    text = reason.split("[ERROR] ", 1)[-1]
    return re.sub(r"^/\S+: ", "", text)[:200]


def _describe(group: ex.Group) -> str:
    if len(group.members) == 1:
        return f"{group.label} ({group.members[0].setting})"
    return f"{group.label} ({len(group.members)} settings)"


@dataclass(kw_only=True)
class Lab:
    """Real servers: variables, start checks and rounds through the runner."""

    req: conclude.Request
    cat: Catalog
    config_dir: Path
    out_dir: Path
    workroot: Path | None = None
    # the rounds' servers (`req.server_lifetime`): with `run`, each arm's server is started
    # at its first round and kept for the rest of its stage; a stage's new arms stop them
    servers: lifetime.Servers | None = None
    emit: Callable[[str], None] = lambda _line: None  # the runner lines a round shows
    _arms: frozenset[str] = frozenset()
    # the series keys of the A and B records (remeasures.key_of_record), as JSON
    keys: set[str] = dataclasses.field(default_factory=set)

    def _options(self, entry: Entry) -> dict[str, str | None]:
        rule = rules.rules_for(entry.product, entry.version)
        return options.translate_options(
            rule, {**entry.options, **profiles.read_profile(self.req.profile, self.config_dir)}
        )

    def variables(self, server_id: str) -> dict[str, str | None]:
        """The effective variables of a plain start (no load) of a catalog server."""
        entry = self.cat.get(server_id)
        with Server(
            install=providers.fetch(entry), options=self._options(entry), workroot=self.workroot
        ) as srv:
            return dict(srv.variables)

    def starts(self, members: tuple[Candidate, ...]) -> str | None:
        """None if B starts with A's values of `members`, else the server's reason."""
        entry = derived(self.cat.get(self.req.b), "check", members)
        try:
            with Server(
                install=providers.fetch(entry), options=self._options(entry), workroot=self.workroot
            ):
                return None
        except ServerError as exc:
            return _short(str(exc))

    def round(self, arms: list[Arm], run_ids: list[str]) -> dict[str, float | None]:
        """One round: each arm in this order, on its kept server or a fresh one; the
        metric per arm label."""
        b = self.cat.get(self.req.b)
        ids: dict[str, str] = {}
        extra: list[Entry] = []
        for label, members in arms:
            if label in ("A", "B"):
                ids[self.req.a if label == "A" else self.req.b] = label
            else:
                extra.append(derived(b, label, members or ()))
                ids[extra[-1].id] = label
        cat = Catalog(self.cat.path, (*self.cat.entries, *extra))
        if self.servers is None:
            self.servers = lifetime.Servers(
                lifetime=self.req.server_lifetime, workroot=self.workroot
            )
        if frozenset(ids) != self._arms:  # a new stage: its arms' servers only
            self.servers.stop_all()
            self._arms = frozenset(ids)
        rd = runner.create(_matrix(self.req, list(ids)), cat, self.out_dir, self.req.runner_class)
        run_ids.append(rd.run_id)
        runner.Runner(
            rd=rd,
            catalog=cat,
            config_dir=self.config_dir,
            emit=conclude.unsteady_lines(self.emit, f"round {len(run_ids)}"),
            workroot=self.workroot,
            repeat_noisy=False,
            servers=self.servers,
        ).run()  # a failed cell (a port race, say) is retried once at the round's end
        out: dict[str, float | None] = dict.fromkeys(ids.values())
        for recs in rd.attempts().values():
            rec = recs[-1]
            label = ids.get(rec["server"]["id"])
            if label and rec["status"] == "ok" and rec.get("result"):
                out[label] = rec["result"].get(self.req.metric)
                if label in ("A", "B"):
                    self.keys.add(json.dumps(remeasures.key_of_record(rec), sort_keys=True))
        return out


def _matrix(req: conclude.Request, servers: list[str]) -> matrix.Matrix:
    return conclude.cell_matrix(req, servers, "explain")


def _pairs(
    rounds: list[dict[str, float | None]], arm_x: str, arm_y: str
) -> tuple[list[float], list[float]]:
    """The values of arms x and y of the rounds where both have one: pairs, since the arms
    of one round ran minutes apart on one machine (conclude.decide(paired=True))."""
    both = [
        (vx, vy)
        for r in rounds
        if (vx := r.get(arm_x)) is not None and (vy := r.get(arm_y)) is not None
    ]
    return [p[0] for p in both], [p[1] for p in both]


def cell_of(req: conclude.Request) -> dict[str, object]:
    return {
        "workload": req.workload,
        "threads": req.threads,
        "charset": req.charset,
        "duration_s": req.duration_s,
        "tables": req.tables,
        "table_size": req.table_size,
        "profile": req.profile,
        "metric": req.metric,
    }


def explain(
    req: conclude.Request,
    cat: Catalog,
    config_dir: Path,
    out_dir: Path,
    emit: Callable[[str], None],
    *,
    workroot: Path | None = None,
    on_gap: Callable[[ex.Explanation], None] | None = None,
) -> ex.Explanation:
    """`perftrack explain A B` on real servers. `on_gap`: called with the result once the
    search ends, or the first stage's gap refused it (`store_gap` stores it)."""
    return _on_real_servers(req, cat, config_dir, out_dir, emit, workroot, Search.run, on_gap)


def first_stage(
    req: conclude.Request,
    cat: Catalog,
    config_dir: Path,
    out_dir: Path,
    emit: Callable[[str], None],
    *,
    workroot: Path | None = None,
) -> ex.Explanation:
    """Explain's first stage alone on real servers: its gap (B/A, `result.gap`) is the
    answer explain acts on, measured as the search measures it."""

    def stage_one(search: Search) -> ex.Explanation:
        search.first_stage()
        return search._done()

    return _on_real_servers(req, cat, config_dir, out_dir, emit, workroot, stage_one, None)


def _on_real_servers(
    req: conclude.Request,
    cat: Catalog,
    config_dir: Path,
    out_dir: Path,
    emit: Callable[[str], None],
    workroot: Path | None,
    how: Callable[[Search], ex.Explanation],
    on_gap: Callable[[ex.Explanation], None] | None,
) -> ex.Explanation:
    validate(req, cat)
    lab = Lab(
        req=req,
        cat=cat,
        config_dir=config_dir,
        out_dir=out_dir / "explain",
        workroot=workroot,
        emit=emit,
    )
    a_vars, b_vars = lab.variables(req.a), lab.variables(req.b)
    b = cat.get(req.b)
    cands, left = select(a_vars, b_vars, rules.rules_for(b.product, b.version))
    emit(
        f"explain: {req.b} against {req.a}: {len(cands) + len(left)} differing variables, "
        f"{len(cands)} candidate(s), {len(left)} left out; budget {req.budget_s / 60:.1f} min"
    )
    result = ex.Explanation(a=req.a, b=req.b, cell=cell_of(req), candidates=cands, left=left)
    search = Search(
        req=req,
        result=result,
        run_round=lambda arms: lab.round(arms, result.run_ids),
        starts=lab.starts,
        emit=emit,
    )
    try:
        try:
            done = how(search)
        except ConfigError:  # "no regression to explain": the first stage's gap still counts
            if result.gap is not None and on_gap is not None:
                result.cell_key = _one_key(lab)
                on_gap(result)
            raise
        done.cell_key = _one_key(lab)
        if on_gap is not None:
            on_gap(done)
        return done
    finally:
        if lab.servers is not None:
            lab.servers.stop_all()  # kept servers: after the search, or on any interruption


def _one_key(lab: Lab) -> dict[str, object] | None:
    """The one series key of the A and B records of the rounds, or None."""
    return json.loads(next(iter(lab.keys))) if len(lab.keys) == 1 else None


def store_gap(db: Path, result: ex.Explanation) -> str | None:
    """Store the first stage's gap B/A as a paired re-measurement of its cell (store/
    remeasures.py: what settles the alert of that pair, cell and hardware key); a line
    saying so, or None (no gap decided, or no single cell)."""
    if result.gap is None or result.cell_key is None:
        return None
    g = result.gap
    remeasures.save(
        db,
        remeasures.Remeasure(
            source="explain",
            base_server=result.a,
            new_server=result.b,
            key=result.cell_key,
            metric=str(result.cell["metric"]),
            n_base=g.n_a,
            n_new=g.n_b,
            ratio=g.ratio,
            ci_low=g.ci_low,
            ci_high=g.ci_high,
            p_value=g.p_value,
            threshold=g.threshold,
            verdict=g.verdict,
            run_ids=tuple(result.run_ids),
            measured_at=datetime.now(UTC).replace(tzinfo=None),
        ),
    )
    return (
        f"the gap {result.b} / {result.a} = {g.ratio:.3f} ({g.verdict}) is stored as a paired "
        f"re-measurement of hardware key {result.cell_key['hw_key']} ({db}, table remeasures)"
    )
