"""The PR check: which servers a catalog change adds, what to benchmark, and the verdicts.

`diff` compares the catalog of a pull request's base (a git ref) with the working tree's
and pairs every added (or changed) server with its predecessor: the entry of the same product with
the highest lower version, preferring the same provider (so ``mysql-9.1.0`` from docker
is compared with ``mysql-8.4.3`` from docker, not with a Debian sid chroot).

`pr_matrix` turns ``configs/matrices/pr.yaml`` into the matrix of those servers;
`report` reads the PR run from a scratch DB and writes the markdown verdict table, a PNG
chart and a JSON summary. A regression that ``configs/annotations.yaml`` acknowledges (or
marks a false positive) is shown but not counted, and so is one the results DB already
holds as an alert (reported by a nightly or an earlier check: analysis/alerts.py): only a
new alert fails the check, so a change is reported once.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from perftrack.analysis import alerts, compare, stats
from perftrack.analysis import annotations as acks  # not `annotations`: the __future__ name
from perftrack.core import git
from perftrack.core.errors import ConfigError, EnvironmentProblem
from perftrack.planning import matrix
from perftrack.servers import catalog, rules
from perftrack.store import explanations, store

GIT_REF_RE = re.compile(r"^(?!-)(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._/^~-]{0,199}\Z")
PR_MATRIX = "pr"
METRIC = "tps"
MAX_PAIRS = 10  # a PR adding more servers than this is benchmarked in parts


@dataclass(frozen=True)
class Pair:
    new: str
    previous: str | None


# --- diff ----------------------------------------------------------------------------------


def base_catalog(ref: str, head_path: Path) -> catalog.Catalog:
    """The catalog file at ``head_path`` as it was at git ``ref``."""
    if not GIT_REF_RE.match(ref):
        raise ConfigError(f"{ref!r} is not a git ref or commit: e.g. origin/main or a SHA")
    repo = head_path.resolve().parent
    top = git.toplevel(repo)
    if top is None:
        raise ConfigError(f"{head_path} is not in a git checkout: cannot read {ref}")
    try:
        rel = head_path.resolve().relative_to(top).as_posix()
    except ValueError:
        raise ConfigError(f"{head_path} is outside its git checkout") from None
    shown = git.run_git(top, "show", f"{ref}:{rel}", timeout=60)
    if shown.returncode != 0:
        reason = (shown.stderr.strip().splitlines() or ["unknown"])[-1]
        raise ConfigError(
            f"cannot read {rel} at {ref}: {reason} (fetch the base commit: "
            "actions/checkout with fetch-depth: 0)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / catalog.CATALOG_FILENAME
        path.write_text(shown.stdout, encoding="utf-8")
        try:
            return catalog.read_catalog(path)
        except ConfigError as err:
            raise ConfigError(f"the catalog at {ref} is invalid: {err}") from None


def predecessor(head: catalog.Catalog, entry: catalog.Entry) -> str | None:
    """The entry of the same product with the highest lower version (same provider first)."""
    v = rules.parse_version(entry.version)
    lower = [e for e in head if e.product == entry.product and rules.parse_version(e.version) < v]
    same = [e for e in lower if e.provider == entry.provider]
    pool = same or lower
    if not pool:
        return None
    return max(pool, key=lambda e: rules.parse_version(e.version)).id


def added_pairs(base: catalog.Catalog, head: catalog.Catalog) -> list[Pair]:
    """Every server in ``head`` but not in ``base``, or in both with other values (a
    changed entry is a new server under an old name), with its predecessor in ``head``."""
    return [
        Pair(e.id, predecessor(head, e)) for e in head if e.id not in base or base.get(e.id) != e
    ]


def pr_matrix(pairs: list[Pair], head: catalog.Catalog, name: str = PR_MATRIX) -> dict[str, Any]:
    """The PR matrix (configs/matrices/pr.yaml) with the servers of the benchmarkable pairs."""
    runnable = [p for p in pairs if p.previous is not None]
    if len(runnable) > MAX_PAIRS:
        raise ConfigError(
            f"the PR adds {len(runnable)} servers with a predecessor; at most {MAX_PAIRS} are "
            "benchmarked in one check: split the PR"
        )
    ids = {s for p in runnable for s in (p.new, p.previous) if s is not None}
    ordered = sorted(
        ids, key=lambda i: (head.get(i).product, rules.parse_version(head.get(i).version), i)
    )
    base = matrix.read_matrix(_matrix_path(name))
    spec = base.to_dict()
    spec["servers"] = ordered
    spec["name"] = base.name
    matrix.from_dict(spec, where=f"{name} matrix with the PR's servers")
    return spec


def _matrix_path(name: str) -> Path:
    from perftrack.core import paths

    return paths.matrix_path(name)


def write_matrix(spec: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        "# written by `perftrack tags diff`: the PR matrix with the PR's servers\n"
        + yaml.safe_dump(spec, sort_keys=False),
        encoding="utf-8",
    )


def pairs_json(pairs: list[Pair]) -> str:
    return json.dumps([{"new": p.new, "previous": p.previous} for p in pairs])


def read_pairs(path: Path) -> list[Pair]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ConfigError(f"cannot read the pairs file {path}: {err}") from None
    if not isinstance(data, list):
        raise ConfigError(f"{path}: expected a JSON list of {{new, previous}}")
    pairs = []
    for item in data:
        new = item.get("new") if isinstance(item, dict) else None
        prev = item.get("previous") if isinstance(item, dict) else None
        if not (
            isinstance(new, str)
            and catalog.ID_RE.match(new)
            and (prev is None or (isinstance(prev, str) and catalog.ID_RE.match(prev)))
        ):
            raise ConfigError(f"{path}: each item must be {{new: ID, previous: ID or null}}")
        pairs.append(Pair(new, prev))
    return pairs


# --- report --------------------------------------------------------------------------------


@dataclass(kw_only=True)
class Line:
    new: str
    previous: str
    group: dict[str, Any]
    # geometric means of the values the ratio came from (ratio == mean_new / mean_previous)
    mean_new: float
    mean_previous: float
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    threshold: float
    verdict: str
    acknowledged: str | None = None
    # a regression's alert (analysis/alerts.py): new, acknowledged, false_positive, or the
    # state of the alert the DB already holds (then `reported` is when it was first seen)
    state: str | None = None
    reported: str | None = None
    # the held alert's paired re-measurement, in words (alerts.evidence), if it has one
    remeasured: str | None = None
    n: tuple[int, int] = (0, 0)  # values per side: previous, new
    paired: bool = False
    rounds_needed: int | None = None  # inconclusive: rounds per side that would decide

    @property
    def is_new_alert(self) -> bool:
        return self.verdict == "regression" and self.state == "new" and self.reported is None


@dataclass
class PrReport:
    lines: list[Line] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)  # servers without a predecessor / data
    # `perftrack explain` results stored for a regressed pair: "new vs previous, cell: text"
    explained: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[Line]:
        """The new alerts: what fails the check."""
        return [x for x in self.lines if x.is_new_alert]

    @property
    def acknowledged(self) -> list[Line]:
        return [x for x in self.lines if x.verdict == "regression" and x.acknowledged]

    @property
    def reported_before(self) -> list[Line]:
        """Regressions the DB already holds as alerts (not acknowledged): not re-reported."""
        return [
            x
            for x in self.lines
            if x.verdict == "regression" and not x.acknowledged and x.reported is not None
        ]


def _alert_state(
    results: store.Store, notes: list[acks.Annotation], key: dict[str, Any], pair: Pair
) -> tuple[str, str | None, str | None]:
    """A regression's alert state, when it was first reported (None: not before) and its
    paired re-measurement in words (None: none)."""
    subject = {**key, "base_server": pair.previous, "new_server": pair.new}
    note = acks.matching(notes, subject)
    if note is not None:
        return note.state, None, None
    aid = alerts.verdict_alert_id(
        [key[c] for c in store.SERIES_COLS], METRIC, str(pair.previous), pair.new
    )
    known = results.alerts_by_id([aid], METRIC).get(aid)
    if known is None:
        return "new", None, None
    (both,) = alerts.evidence_of(results, [known], METRIC)
    return known["state"], str(known["first_seen_at"])[:10], both["paired"]


def run_ids(runs_dir: Path) -> list[str]:
    if not runs_dir.is_dir():
        raise ConfigError(f"{runs_dir}: no such directory of runs")
    return sorted(p.name for p in runs_dir.iterdir() if (p / "records").is_dir())


def build_report(
    db: Path, runs: list[str], pairs: list[Pair], notes: list[acks.Annotation]
) -> PrReport:
    """Every pair's verdicts from the PR's runs (interleaved repeats, same run only)."""
    rep = PrReport()
    if not any(p.previous for p in pairs):  # nothing was benchmarked: no DB needed
        rep.not_run = [f"{p.new}: no earlier version of its product to compare with" for p in pairs]
        return rep
    with store.open_db(db, write=False) as st:
        noise = st.noise_cv()
        for pair in pairs:
            if pair.previous is None:
                rep.not_run.append(f"{pair.new}: no earlier version of its product to compare with")
                continue
            found = False
            for rid in runs:
                for t in compare.tables(
                    st,
                    metric=METRIC,
                    run_id=rid,
                    servers=[pair.previous, pair.new],
                    noise=noise,
                ):
                    for row in t.rows:
                        c = row.vs_previous
                        if row.server_id != pair.new or row.previous != pair.previous or not c:
                            continue
                        subject = {**t.key, "base_server": pair.previous, "new_server": pair.new}
                        state, reported, remeasured = (
                            _alert_state(st, notes, t.key, pair)
                            if c.verdict == "regression"
                            else (None, None, None)
                        )
                        rep.lines.append(
                            Line(
                                new=pair.new,
                                previous=pair.previous,
                                group=dict(t.key),
                                mean_new=c.mean_b,
                                mean_previous=c.mean_a,
                                ratio=c.ratio,
                                ci_low=c.ci_low,
                                ci_high=c.ci_high,
                                p_value=c.p_value,
                                threshold=c.threshold,
                                verdict=c.verdict,
                                acknowledged=acks.acknowledged(notes, subject),
                                state=state,
                                reported=reported,
                                n=(c.n_a, c.n_b),
                                paired=c.paired,
                                rounds_needed=c.rounds_needed,
                                remeasured=remeasured,
                            )
                        )
                        found = True
            if not found:
                rep.not_run.append(f"{pair.new} vs {pair.previous}: no comparable results")
            for x in explanations.latest(st, pair.previous, pair.new):
                rep.explained.append(
                    f"{pair.new} vs {pair.previous}, {x['workload']} × {x['threads']} thread(s): "
                    f"{x['conclusion']}"
                )
    return rep


VERDICT_MARK = {"regression": "🔴", "improvement": "🟢", "unchanged": "⚪", "inconclusive": "🟡"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rep: PrReport, chart_link: str | None = None) -> str:
    unit = compare.METRICS[METRIC][2]
    out = ["### perftrack: new versions vs their predecessors", ""]
    if not rep.lines and not rep.not_run:
        out.append("This change adds no servers to `configs/versions.yaml`: nothing to compare.")
    if rep.lines:
        out += [
            f"| new | vs | workload | threads | collation | {unit} vs → new (geometric means) "
            "| n vs / new | ratio | 95% CI | p | threshold | verdict |",
            "|---|---|---|--:|---|--:|--:|--:|--:|--:|--:|---|",
        ]
        for x in rep.lines:
            g = x.group
            verdict = _verdict_text(x)
            out.append(
                "| "
                + " | ".join(
                    _cell(str(v))
                    for v in (
                        x.new,
                        x.previous,
                        g["workload"],
                        g["threads"],
                        g["collation"],
                        f"{x.mean_previous:.0f} → {x.mean_new:.0f}",
                        f"{x.n[0]} / {x.n[1]}" + (" paired" if x.paired else ""),
                        f"{x.ratio:.3f}",
                        f"[{x.ci_low:.3f}, {x.ci_high:.3f}]",
                        f"{x.p_value:.3f}",
                        f"±{x.threshold:.1%}",
                        verdict,
                    )
                )
                + " |"
            )
        g = rep.lines[0].group
        out += [
            "",
            f"Runner class `{g['runner_class']}` ({g['hw_key']}), {g['tables']}×"
            f"{g['table_size']} rows, {g['duration_s']} s per cell, interleaved repeats; "
            "ratio = new / previous geometric mean (of the per-round ratios where both ran in "
            "the same rounds: paired), thresholds from the measured A/A noise.",
        ]
    for note in rep.not_run:
        out.append(f"- not compared: {note}")
    for text in rep.explained:
        out.append(f"- explained (`perftrack explain`): {_cell(text)}")
    out.append("")
    n = len(rep.regressions)
    acked, before = len(rep.acknowledged), len(rep.reported_before)
    notes = [f"{acked} acknowledged"] if acked else []
    notes += [f"{before} reported before"] if before else []
    extra = f" ({', '.join(notes)})" if notes else ""
    if n:
        out.append(
            f"**Result: {n} unacknowledged regression(s)**{extra} — the check fails. "
            "If the change is expected, acknowledge it in `configs/annotations.yaml` "
            "(`state: false_positive` if it is not a change at all)."
        )
    else:
        out.append(f"**Result: no unacknowledged regression**{extra}.")
    if chart_link:
        out += ["", f"Chart: {chart_link}"]
    return "\n".join(out) + "\n"


def _verdict_text(line: Line) -> str:
    """The verdict cell: a regression says what its alert is, so it is reported once."""
    text = f"{VERDICT_MARK.get(line.verdict, '')} {line.verdict}"
    if line.verdict == "inconclusive":
        return f"{text} ({stats.undecided_note(line.rounds_needed)})"
    if line.verdict != "regression":
        return text
    if line.state == "false_positive":
        return f"{line.verdict} (false positive: {line.acknowledged})"
    if line.acknowledged:
        return f"{text} (acknowledged: {line.acknowledged})"
    if line.reported is not None:
        again = f"; {line.remeasured}" if line.remeasured else ""
        return f"{line.verdict} (reported before, {line.reported}; alert {line.state}{again})"
    return f"{text} (new)"


def summary_json(rep: PrReport) -> dict[str, Any]:
    return {
        "schema": "perftrack.pr_check.v1",  # as every --json output (cli/app.py)
        "regressions": len(rep.regressions),
        "acknowledged": len(rep.acknowledged),
        "reported_before": len(rep.reported_before),
        "lines": [
            {**x.__dict__, "group": {k: str(v) for k, v in x.group.items()}} for x in rep.lines
        ],
        "not_run": rep.not_run,
    }


def chart(rep: PrReport, out: Path) -> None:
    """A PNG: ratio new/previous with its 95% interval per cell, coloured by verdict."""
    if not rep.lines:
        raise ConfigError("nothing to chart: the PR run has no comparable results")
    try:
        import vl_convert
    except ImportError:
        raise EnvironmentProblem(
            "vl-convert-python is not installed: run `pip install -e .` in the checkout"
        ) from None
    rows = [
        {
            "pair": f"{x.new} vs {x.previous}",
            "cell": f"{x.group['workload']} · {x.group['collation']} · {x.group['threads']} thr",
            "ratio": x.ratio,
            "lo": x.ci_low,
            "hi": x.ci_high,
            "verdict": x.verdict + (" (ack)" if x.acknowledged else ""),
        }
        for x in rep.lines
    ]
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "data": {"values": rows},
        "facet": {"row": {"field": "pair", "title": None}},
        "spec": {
            "width": 560,
            "layer": [
                {"mark": {"type": "rule", "strokeDash": [4, 4]}, "encoding": {"x": {"datum": 1}}},
                {
                    "mark": "rule",
                    "encoding": {
                        "y": {"field": "cell", "title": None},
                        "x": {
                            "field": "lo",
                            "type": "quantitative",
                            "title": "ratio new / previous (95% CI)",
                            "scale": {"zero": False},
                        },
                        "x2": {"field": "hi"},
                    },
                },
                {
                    "mark": {"type": "point", "filled": True, "size": 80},
                    "encoding": {
                        "y": {"field": "cell"},
                        "x": {"field": "ratio", "type": "quantitative"},
                        "color": {"field": "verdict", "type": "nominal"},
                    },
                },
            ],
        },
    }
    png = vl_convert.vegalite_to_png(spec, scale=2.0)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_bytes(png)
    tmp.replace(out)
