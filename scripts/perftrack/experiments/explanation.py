"""The result of `perftrack explain`: groups tried, settings isolated, shares of the gap.

A group's *share* is the part of the A→B throughput gap that starting B with A's values
of the group's settings recovers: (B+g − B) / (A − B) = (r_g − 1) / (r_A − 1), where r_g
is the median over rounds of the paired ratio (B+g)/B (both arms ran in the same round)
and r_A the median paired ratio A/B of the first stage. Its 95% interval is a percentile
bootstrap over rounds (the two sets of rounds resampled independently when the group ran
in a later stage than the gap). Pure: no server, no DB.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perftrack.analysis import stats
from perftrack.analysis.candidates import KIND_LABELS, Candidate, Left

N_RESAMPLES = 2000
SEED = 20261125
# Group states after its stage: moved (recovers throughput beyond the noise), flat (the
# verdict said unchanged or worse), noise (not settled by the stage's last look),
# untested (the budget ended first), refused (B does not start with it).
# together: the isolated groups set at once, in the last stage (their joint share).
MOVED, FLAT, NOISE, UNTESTED, TOGETHER = "moved", "flat", "noise", "untested", "together"
# An undecided all-settings group still says "mostly in the code" when its share's 95%
# interval stays below this part of the gap (explain refuses the rest as undecided).
MOSTLY_IN_CODE = 0.5


@dataclass(kw_only=True)
class Group:
    """A set of candidates set together on B, and what its stage found."""

    label: str
    members: tuple[Candidate, ...]
    stage: int
    parent: str | None = None
    state: str = UNTESTED
    comparison: stats.Comparison | None = None  # B+g against B (conclude.decide)
    ratios: list[float] = field(default_factory=list)  # paired (B+g)/B per round
    share: float | None = None
    share_low: float | None = None
    share_high: float | None = None

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.members]


@dataclass(kw_only=True)
class Explanation:
    a: str
    b: str
    cell: dict[str, object]
    candidates: list[Candidate]
    left: list[Left]
    refused: list[tuple[Candidate, str]] = field(default_factory=list)
    gap: stats.Comparison | None = None  # B against A in the first stage
    gap_ratios: list[float] = field(default_factory=list)  # paired A/B per round
    groups: list[Group] = field(default_factory=list)
    isolated: list[str] = field(default_factory=list)  # labels of isolated groups
    not_split: list[str] = field(default_factory=list)  # moved groups left whole: the budget,
    # or (these, also in not_split) halves the rounds could not decide, neither moved nor flat
    undecided_halves: list[str] = field(default_factory=list)
    together: str | None = None  # label of the isolated groups set at once (several found)
    # groups that moved in the search but whose share the last stage's own rounds could not
    # tell from zero: a false move of the search (noise) until measured again
    unconfirmed: list[str] = field(default_factory=list)
    stop: str = ""
    machine_s: float = 0.0
    rounds: int = 0
    run_ids: list[str] = field(default_factory=list)
    # the series key (store/remeasures.py) of the A and B records of the rounds: the cell
    # the gap was measured on; None if they disagree or there were none
    cell_key: dict[str, object] | None = None

    def group(self, label: str) -> Group:
        return next(g for g in self.groups if g.label == label)

    @property
    def all_group(self) -> Group | None:
        return self.groups[0] if self.groups else None

    @property
    def conclusion(self) -> str:
        """One sentence: what explains the gap."""
        whole = self.all_group
        if whole is None and self.candidates:
            return (
                "no candidate explains it: B refuses every differing setting at A's value; "
                "the change is in the code or in the settings skipped"
            )
        if whole is None:
            return (
                "no candidate explains it: no differing variable can be set on B (see the "
                "left-out list); the change is in the code or in what was left out"
            )
        if whole.state == UNTESTED:
            return "not tested: the budget ended before A's settings were tried on B"
        if whole.state == NOISE and mostly_in_code(whole):
            return (
                "no candidate explains most of it: the change is mostly in the code (B with "
                f"all {len(whole.members)} of A's settings recovers {_interval(whole)} of the "
                "gap; (B+g)/B itself undecided)"
            )
        if whole.state == NOISE:  # explain refuses it (settings_unsettled): never stored
            return (
                f"undecided: B with all {len(whole.members)} of A's settings recovers "
                f"{_interval(whole)} of the gap, not told apart from none or all of it"
            )
        if whole.state != MOVED:
            c = whole.comparison
            measured = (
                f": (B+g)/B {c.ratio:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}], {c.verdict}"
                if c is not None
                else ""
            )
            return (
                "no candidate explains it: the change is in the code (B with all "
                f"{len(whole.members)} of A's settings is not faster than B{measured})"
            )
        found = [self.group(lb) for lb in self.isolated]
        named = "; ".join(_group_text(g) for g in found) or (
            "none confirmed" if self.unconfirmed else "none isolated yet"
        )
        if self.together:
            t = self.group(self.together)
            named += f"; together {_interval(t)}"
        if whole.share_high is not None and whole.share_high < 1:
            head = (
                f"explains part of the gap, not all: A's settings recover {_interval(whole)}; "
                "the rest is in the code"
            )
        else:
            head = f"A's settings recover the gap ({_interval(whole)})"
        tail = ""
        best = self.group(self.together) if self.together else (found[0] if found else None)
        if (
            best is not None
            and best.share_high is not None
            and best.share_high < 1
            and not head.startswith("explains part")
        ):
            tail += "; the isolated settings explain part of the gap, not all"
        budget = [lb for lb in self.not_split if lb not in self.undecided_halves]
        if budget:
            tail += f"; not split further (budget): {', '.join(budget)}"
        undecided = [self.group(lb) for lb in self.not_split if lb in self.undecided_halves]
        if undecided:
            tail += "; not split further (its halves undecided): " + "; ".join(
                f"{_members(g)} recovers {_interval(g)}" for g in undecided
            )
        if self.unconfirmed:
            tail += "; moved in the search, not confirmed by the shares stage: " + "; ".join(
                _group_text(self.group(lb)) for lb in self.unconfirmed
            )
        return f"{head}; isolated: {named}{tail}"


def mostly_in_code(group: Group) -> bool:
    """The group's share of the gap is measured and its interval stays below
    MOSTLY_IN_CODE: whatever its (B+g)/B verdict, A's settings recover less than that."""
    return group.share_high is not None and group.share_high < MOSTLY_IN_CODE


def unconfirm(result: Explanation, flat: set[str]) -> None:
    """Move out of `isolated` / `not_split` the groups the last stage did not reproduce:
    measured again in its own rounds (A, B and the group in the same rounds), the group's
    (B+g)/B was not an improvement with its estimate inside the noise band (`flat`, decided
    by the caller with the verdict rule), or its share's interval reaches 0.
    A group with nothing measured (the budget ended) stays as it was."""
    for lb in [*result.isolated, *result.not_split]:
        g = result.group(lb)
        if lb in flat or (g.share_low is not None and g.share_low <= 0):
            result.unconfirmed.append(lb)
    result.isolated = [lb for lb in result.isolated if lb not in result.unconfirmed]
    result.not_split = [lb for lb in result.not_split if lb not in result.unconfirmed]


def _interval(group: Group) -> str:
    if group.share is None:
        return "— (share not measured: budget)"
    return f"{_pct(group.share)} [{_pct(group.share_low)}, {_pct(group.share_high)}]"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _members(group: Group) -> str:
    if len(group.members) == 1:
        return group.members[0].setting
    return "{" + ", ".join(c.setting for c in group.members) + "}"


def _group_text(group: Group) -> str:
    what = _members(group) + (" (inseparable)" if len(group.members) > 1 else "")
    return f"{what} recovers {_interval(group)}"


def _median_ratio(num: np.ndarray, den: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(num / den, axis=axis)


def paired_ratios(rounds: list[dict[str, float | None]], arm: str, base: str) -> list[float]:
    """arm/base per round, for the rounds where both have a value."""
    out = []
    for r in rounds:
        x, y = r.get(arm), r.get(base)
        if x is not None and y is not None and y > 0:
            out.append(x / y)
    return out


def share(group_ratios: list[float], gap_ratios: list[float]) -> tuple[float, float, float] | None:
    """(share, low, high) of the gap a group recovers; None without two rounds of each."""
    if len(group_ratios) < stats.MIN_SAMPLES or len(gap_ratios) < stats.MIN_SAMPLES:
        return None
    g, q = np.asarray(group_ratios), np.asarray(gap_ratios)
    gap = float(np.median(q)) - 1
    if gap <= 0:
        return None
    point = (float(np.median(g)) - 1) / gap
    rng = np.random.default_rng(SEED)
    gi = rng.integers(0, len(g), size=(N_RESAMPLES, len(g)))
    qi = rng.integers(0, len(q), size=(N_RESAMPLES, len(q)))
    num = np.median(g[gi], axis=1) - 1
    den = np.median(q[qi], axis=1) - 1
    ok = den > 0
    boots = num[ok] / den[ok]
    if len(boots) == 0:
        return point, point, point
    low, high = np.percentile(boots, [2.5, 97.5])
    return point, float(low), float(high)


def table_lines(result: Explanation) -> list[str]:
    """The terminal report: the gap, each group tried, the conclusion, what was left out."""
    lines = []
    if result.gap is not None:
        lines.append(
            f"gap: {result.b} / {result.a} = {result.gap.ratio:.3f} "
            f"[{result.gap.ci_low:.3f}, {result.gap.ci_high:.3f}] "
            f"({result.gap.verdict}); paired A/B median {np.median(result.gap_ratios):.2f}x"
            if result.gap_ratios
            else f"gap: {result.b} / {result.a} = {result.gap.ratio:.3f} ({result.gap.verdict})"
        )
    lines.append(f"{'group':<6} {'stage':>5} {'n':>3} {'(B+g)/B':>8} {'share':>6} "
                 f"{'95% interval':>15}  {'result':<9} settings")  # fmt: skip
    for g in result.groups:
        ratio = f"{np.median(g.ratios):.2f}" if g.ratios else "—"
        interval = (
            f"[{_pct(g.share_low)}, {_pct(g.share_high)}]" if g.share_low is not None else "—"
        )
        mark = " *" if g.label in result.isolated else " ?" if g.label in result.unconfirmed else ""
        settings = ", ".join(c.setting for c in g.members)
        if len(settings) > 70:
            settings = f"{len(g.members)} settings: {settings[:60]}…"
        lines.append(
            f"{g.label + mark:<6} {g.stage:>5} {len(g.ratios):>3} {ratio:>8} "
            f"{_pct(g.share):>6} {interval:>15}  {g.state:<9} {settings}"
        )
    lines.append(
        "* isolated" + ("; ? moved in the search, not confirmed" if result.unconfirmed else "")
    )
    for c, reason in result.refused:
        lines.append(f"skipped: {c.setting}: B refuses it at startup: {reason}")
    lines.extend(left_out_lines(result.left))
    lines.append(
        f"{len(result.candidates)} candidate(s), {result.rounds} round(s), "
        f"{result.machine_s / 60:.1f} min machine time ({result.stop})"
    )
    lines.append(f"explanation: {result.conclusion}")
    return lines


def left_out_lines(left: list[Left], width: int = 72) -> list[str]:
    """What was left out, one line per kind, largest first, with the names that fit in
    `width` characters."""
    if not left:
        return []
    by_kind: dict[str, list[str]] = {}
    for lf in left:
        by_kind.setdefault(lf.kind, []).append(lf.name)
    out = [f"left out {len(left)} differing variable(s) (--json gives each one's reason):"]
    for kind, members in sorted(by_kind.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown: list[str] = []
        for name in members:
            if shown and len(", ".join([*shown, name])) > width:
                break
            shown.append(name)
        more = len(members) - len(shown)
        names = ", ".join(shown) + (f" and {more} more" if more else "")
        out.append(f"  {len(members):>3} {KIND_LABELS.get(kind, kind)}: {names}")
    return out


# edge: CLI --json out: explain --json
def _cand(candidate: Candidate) -> dict[str, Any]:
    return {
        "name": candidate.name,
        "option": candidate.option,
        "a_value": candidate.a_value,
        "b_value": candidate.b_value,
    }


# edge: CLI --json out: explain --json
def to_json(result: Explanation) -> dict[str, Any]:
    gap = result.gap
    return {
        "a": result.a,
        "b": result.b,
        "cell": result.cell,
        "conclusion": result.conclusion,
        "gap": None
        if gap is None
        else {
            "ratio": gap.ratio,
            "ci_low": gap.ci_low,
            "ci_high": gap.ci_high,
            "verdict": gap.verdict,
            "paired_ratios": result.gap_ratios,
        },
        "candidates": [_cand(c) for c in result.candidates],
        "left_out": [
            {
                "name": x.name,
                "a_value": x.a_value,
                "b_value": x.b_value,
                "kind": x.kind,
                "reason": x.reason,
            }
            for x in result.left
        ],
        "refused": [{**_cand(c), "reason": r} for c, r in result.refused],
        "groups": [
            {
                "label": g.label,
                "stage": g.stage,
                "parent": g.parent,
                "state": g.state,
                "isolated": g.label in result.isolated,
                "settings": [_cand(c) for c in g.members],
                "paired_ratios": g.ratios,
                "share": g.share,
                "share_low": g.share_low,
                "share_high": g.share_high,
                "verdict": g.comparison.verdict if g.comparison else None,
            }
            for g in result.groups
        ],
        "isolated": result.isolated,
        "not_split": result.not_split,
        "undecided_halves": result.undecided_halves,
        "unconfirmed": result.unconfirmed,
        "together": result.together,
        "stop": result.stop,
        "rounds": result.rounds,
        "machine_s": result.machine_s,
        "run_ids": result.run_ids,
    }


def profile_fragment(result: Explanation) -> str:
    """A my.cnf fragment (configs/profiles/ format): the isolated settings at A's values."""
    lines = [
        f"# Profile: {result.b} with {result.a}'s values of the settings "
        "`perftrack explain` isolated",
        f"# ({result.conclusion[:200]}).",
        f"# Cell: {', '.join(f'{k}={v}' for k, v in result.cell.items())}",
        "[mysqld]",
    ]
    for label in [*result.isolated, *result.not_split]:
        g = result.group(label)
        lines.append(f"# {label}: share of the gap {_pct(g.share)}")
        lines += [c.setting for c in g.members]
    return "\n".join(lines) + "\n"
