"""`perftrack advise --from VERSION`: the upgrade advisor over the measured pairs."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from perftrack.analysis import advise as advise_mod
from perftrack.analysis import cellfilter, compare
from perftrack.cli.app import METRIC_HELP, DbOpt, emit, out, print_json
from perftrack.core import paths
from perftrack.core.errors import ConfigError

SHOWN_SETTINGS = 6  # changed settings per release in the table (--json has them all)


def _fmt_est(estimate: advise_mod.Estimate | None) -> str:
    """A change in percent with its interval and verdict (the verdict reads the metric's
    direction: for p95 a rise is the regression)."""
    if estimate is None:
        return "—"
    low, high = estimate.ci_low - 1, estimate.ci_high - 1
    return f"{estimate.ratio - 1:+.1%} [{low:+.1%}, {high:+.1%}] {estimate.verdict}"


def _settings(changes: dict[str, list[list[Any]]]) -> str:
    """The changed defaults first (SHOWN_SETTINGS of them), then counts of the rest."""
    both = [(k, vs) for k, vs in changes.items() if all(None not in v for v in vs)]
    text = ", ".join(
        f"{k}: " + " / ".join(f"{v[0]} → {v[1]}" for v in vs) for k, vs in both[:SHOWN_SETTINGS]
    )
    new = sum(1 for vs in changes.values() if any(v[0] is None for v in vs))
    gone = sum(1 for vs in changes.values() if any(v[1] is None for v in vs))
    rest = [f"+{len(both) - SHOWN_SETTINGS} more changed"] if len(both) > SHOWN_SETTINGS else []
    rest += [f"{new} new"] if new else []
    rest += [f"{gone} removed"] if gone else []
    return text + (f" ({', '.join(rest)}; --json lists all)" if rest else "")


def advise_cmd(
    base: Annotated[
        str, typer.Option("--from", help="your release: a server id or version with results")
    ],
    db: DbOpt = paths.DEFAULT_DB,
    metric: Annotated[str, typer.Option(help=METRIC_HELP)] = "tps",
    workload: Annotated[str | None, typer.Option(help="only this workload")] = None,
    threads: Annotated[int | None, typer.Option(help="only this thread count")] = None,
    charset: Annotated[
        str | None, typer.Option(help="only this charset (latin1, utf8mb4) or collation")
    ] = None,
    profile: Annotated[str | None, typer.Option(help="only this profile")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """For each newer release: the expected change of throughput and p95 against yours,
    with intervals (chained over measured pairs where needed), and the settings whose
    defaults changed on the way."""
    from perftrack.analysis import detect
    from perftrack.store import store

    if metric not in compare.METRICS:
        raise ConfigError(f"unknown metric '{metric}'; known: {', '.join(compare.METRICS)}")
    want = {"workload": workload, "threads": threads, "charset": charset, "profile": profile}
    with store.open_db(db, write=False) as st:
        ts = compare.tables(st, metric=metric, noise=st.noise_cv())
        kept = cellfilter.select(ts, want, str(db))
        advice = advise_mod.advise(kept, base, metric, detect.variables_diff_of(st))
    if as_json:
        steps = [dataclasses.asdict(s) for s in advise_mod.release_steps(advice)]
        body = {"metric": metric, "series": advise_mod.to_json(advice, metric), "steps": steps}
        print_json("advise", body)
        return
    for a in advice:
        s = a.shape
        title = (
            f"from {a.base} · {s['workload']} · threads={s['threads']} · {s['collation']} · "
            f"profile={s['profile']} · {s['tables']}x{s['table_size']} rows · {s['connection']}"
        )
        tab = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
        for col in ("release", metric, "p95", "measured"):
            tab.add_column(col, no_wrap=True)
        for t in a.targets:
            how = "directly" if t.direct else f"chained via {', '.join(t.via)}"
            tab.add_row(
                t.server, _fmt_est(t.throughput), _fmt_est(t.p95), f"{how} ({t.series} series)"
            )
        emit("")
        out.print(tab)
        if not a.targets:
            emit("  no newer release measured in this series shape")
        for sid in a.unreachable:
            emit(f"  {sid}: no path of measurements from {a.base} (not compared)")
    steps = [st for st in advise_mod.release_steps(advice) if st.changes]
    if steps:
        emit("")
        emit("settings changed, once per release step (values that mean the same left out):")
    for st in steps:
        emit(f"  {st.a} → {st.b}: {_settings(st.changes)}")
