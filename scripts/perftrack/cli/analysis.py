"""`perftrack detect`, `compare` and `bisect`: statistics over the DB, and the experiments
that add rounds until a verdict settles."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from perftrack.analysis import compare
from perftrack.cli.app import METRIC_HELP, DbOpt, RunsOpt, emit, out, runner_class_of
from perftrack.core import paths
from perftrack.core.errors import ConfigError
from perftrack.drivers import sysbench
from perftrack.servers import catalog


def detect_into(db: Path, metric: str = "tps", *, strict: bool = False) -> None:
    """Detect into `db`. `strict` (`perftrack detect`): an annotation that matches nothing
    in this DB is an error; the demo's own small DB is not held to the repo's file."""
    from perftrack.analysis import annotations
    from perftrack.analysis import detect as detect_mod
    from perftrack.core import yamlfile
    from perftrack.store import store

    cfg = paths.config_dir()
    notes = annotations.load_file(cfg / "annotations.yaml")
    runners = yamlfile.load(cfg / "runners.yaml") if (cfg / "runners.yaml").is_file() else {}
    control = runners.get("control_server") if isinstance(runners, dict) else None
    with store.open_db(db, write=True) as st:
        s = detect_mod.run(
            st, notes.notes, control, metric, expire_days=notes.expire_days, strict=strict
        )
    emit(
        f"{db}: {s.noise} noise estimates, {s.verdicts} verdicts "
        f"({s.regressions} unacknowledged regressions, {s.acknowledged} acknowledged), "
        f"{s.change_points} change points over {s.series} series; "
        f"{s.alerts_new} new alert(s), {s.alerts_open} open (`perftrack alerts`)"
    )


def detect(
    db: DbOpt = paths.DEFAULT_DB,
    metric: Annotated[str, typer.Option(help=METRIC_HELP)] = "tps",
) -> None:
    """Recompute noise, verdicts and change points and store them in the DB."""
    if metric not in compare.METRICS:
        raise ConfigError(f"unknown metric '{metric}'; known: {', '.join(compare.METRICS)}")
    detect_into(db, metric, strict=True)


# compare / parse -------------------------------------------------------------------------
def _fmt(v: float | None, spec: str = ".0f") -> str:
    return "—" if v is None else format(v, spec)


def _fmt_metric(v: float | None) -> str:
    """A metric's median: whole numbers from 100 up, else two decimals (IPC, switches)."""
    return _fmt(v, ".0f" if v is None or abs(v) >= 100 else ".2f")


def print_tables(ts: list[compare.Table], metric: str) -> None:
    if not ts:
        emit("no results to compare")
        return
    unit = compare.METRICS[metric][2]
    for t in ts:
        k = t.key
        title = (
            f"{k['workload']} · threads={k['threads']} · {k['collation']} · "
            f"profile={k['profile']} · {k['tables']}x{k['table_size']} rows · "
            f"{k['duration_s']} s · {k['connection']} · runner {k['runner_class']} "
            f"({k['hw_key']})"
        )
        if t.noise_cv is not None:
            title += f" · A/A noise CV {t.noise_cv:.1%}"
        tab = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
        for col in (
            "server",
            "n",
            f"median {metric} ({unit})",
            "p95 lat (ms)",
            "vs previous",
            "95% CI",
            "p",
            "threshold",
            "verdict",
        ):
            tab.add_column(col, justify="left" if col in ("server", "verdict") else "right")
        for r in t.rows:
            c = r.vs_previous
            name = r.server_id + (" *" if r.stand_in else "")
            tab.add_row(
                name,
                str(len(r.values)),
                _fmt_metric(compare.median(r.values)),
                _fmt(compare.median(r.latency), ".2f"),
                f"{c.ratio:.3f}" if c else "—",
                f"[{c.ci_low:.3f}, {c.ci_high:.3f}]" if c else "—",
                f"{c.p_value:.3f}" if c else "—",
                f"±{c.threshold:.1%}" if c else "—",
                c.verdict if c else "—",
            )
        out.print(tab)
    if any(r.stand_in for t in ts for r in t.rows):
        emit("* a local stand-in (see `perftrack servers list`)")


# The cell of --until-conclusive rounds and bisect steps (one workload/threads/charset).
CellWorkload = Annotated[str, typer.Option("--workload", help="rounds: workload")]
CellThreads = Annotated[int, typer.Option("--threads", min=1, help="rounds: threads")]
CellCharset = Annotated[str, typer.Option("--charset", help="rounds: charset or collation")]
CellDuration = Annotated[int, typer.Option("--duration", min=1, help="rounds: seconds measured")]
CellWarmup = Annotated[int, typer.Option("--warmup", min=0, help="rounds: seconds of warm-up")]
CellTables = Annotated[int, typer.Option("--tables", min=1, help="rounds: sysbench tables")]
CellTableSize = Annotated[int, typer.Option("--table-size", min=1, help="rounds: rows per table")]
CellProfile = Annotated[str, typer.Option("--profile", help="rounds: profile")]
RunnerClassOpt = Annotated[str | None, typer.Option("--runner-class", help="runner class label")]
MinEffectOpt = Annotated[
    float, typer.Option("--min-effect", help="percent: 'unchanged' rules out a change this big")
]


def compare_cmd(
    servers: Annotated[
        list[str] | None, typer.Argument(help="server ids to compare (default: all in the DB/run)")
    ] = None,
    db: DbOpt = paths.DEFAULT_DB,
    run_id: Annotated[str | None, typer.Option("--run", help="only this run")] = None,
    metric: Annotated[str, typer.Option(help=METRIC_HELP)] = "tps",
    as_json: Annotated[bool, typer.Option("--json")] = False,
    until_conclusive: Annotated[
        bool,
        typer.Option(
            "--until-conclusive", help="A B: run interleaved rounds until the verdict settles"
        ),
    ] = False,
    budget: Annotated[
        float | None, typer.Option("--budget", help="--until-conclusive: wall-clock minutes")
    ] = None,
    workload: CellWorkload = "oltp_point_select",
    threads: CellThreads = 1,
    charset: CellCharset = "latin1",
    duration: CellDuration = 5,
    warmup: CellWarmup = 1,
    tables: CellTables = 2,
    table_size: CellTableSize = 10_000,
    profile: CellProfile = "default",
    runner_class: RunnerClassOpt = None,
    min_effect: MinEffectOpt = 10.0,
    out_dir: RunsOpt = paths.DEFAULT_RUNS,
) -> None:
    """Per workload/threads/charset: each version's median and ratio to the previous.

    With --until-conclusive --budget MINUTES and two servers A B: benchmark interleaved
    rounds of the cell given by --workload/--threads/… until B's verdict against A settles.
    """
    from perftrack.store import store

    if metric not in compare.METRICS:
        raise ConfigError(f"unknown metric '{metric}'; known: {', '.join(compare.METRICS)}")
    if until_conclusive or budget is not None:
        from perftrack.experiments import conclude

        a, b, minutes = conclude.check_cli(servers or [], budget, until_conclusive, run_id)
        req = _round_request(a, b, minutes * 60, locals())
        cat = catalog.load()
        conclude.validate(req, cat)
        sysbench.binary()
        say = (lambda m: print(m, file=sys.stderr)) if as_json else emit
        o = conclude.run(req, cat, paths.config_dir(), db, out_dir, say)
        if as_json:
            print(json.dumps(conclude.to_json(o), indent=1))
        return
    with store.open_db(db, write=False) as st:
        _check_servers_have_results(st, servers or [], run_id, db)
        ts = compare.tables(
            st,
            metric=metric,
            run_id=run_id,
            servers=servers or None,
            noise=st.noise_cv(),
        )
    if as_json:
        print(json.dumps(compare.to_json(ts, metric), indent=1))
    else:
        print_tables(ts, metric)


def _check_servers_have_results(st: Any, servers: list[str], run_id: str | None, db: Path) -> None:
    """A named server without results is a typo (or the wrong DB/run), never "no results"."""
    have = st.server_ids(run_id)
    missing = [s for s in servers if s not in have]
    if missing:
        where = f"run {run_id} of {db}" if run_id else str(db)
        raise ConfigError(
            f"no results for server {missing[0]!r} in {where}; servers with results: "
            f"{', '.join(have) or '(none)'}"
        )


def _round_request(a: str, b: str, seconds: float, opts: dict[str, Any]) -> Any:
    """The interleaved-rounds request of `compare --until-conclusive` and `bisect`, from
    the cell options both commands share (their `locals()`: the same option names)."""
    from perftrack.experiments import conclude

    return conclude.Request(
        a,
        b,
        seconds,
        workload=opts["workload"],
        threads=opts["threads"],
        charset=opts["charset"],
        duration_s=opts["duration"],
        warmup_s=opts["warmup"],
        tables=opts["tables"],
        table_size=opts["table_size"],
        profile=opts["profile"],
        metric=opts["metric"],
        runner_class=runner_class_of(opts["runner_class"]),
        min_effect=opts["min_effect"] / 100,
    )


def bisect_cmd(
    good: Annotated[str, typer.Argument(help="server id of the last release known good")],
    bad: Annotated[str, typer.Argument(help="server id of a release known bad (same product)")],
    step_budget: Annotated[
        float, typer.Option("--step-budget", help="wall-clock minutes per step")
    ] = 10.0,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the releases and the plan only")
    ] = False,
    db: DbOpt = paths.DEFAULT_DB,
    metric: Annotated[str, typer.Option(help=METRIC_HELP)] = "tps",
    workload: CellWorkload = "oltp_point_select",
    threads: CellThreads = 1,
    charset: CellCharset = "latin1",
    duration: CellDuration = 5,
    warmup: CellWarmup = 1,
    tables: CellTables = 2,
    table_size: CellTableSize = 10_000,
    profile: CellProfile = "default",
    runner_class: RunnerClassOpt = None,
    min_effect: MinEffectOpt = 10.0,
    out_dir: RunsOpt = paths.DEFAULT_RUNS,
) -> None:
    """Benchmark the catalog releases between GOOD and BAD, halving, to the first bad one."""
    from perftrack.experiments import bisect, conclude

    cat = catalog.load()
    rel = bisect.releases(cat, good, bad)
    req = _round_request(good, bad, step_budget * 60, locals())
    conclude.validate(req, cat)
    if dry_run:
        for line in bisect.plan_lines(rel, req.budget_s):
            emit(line)
        return
    sysbench.binary()
    res = bisect.bisect(cat, good, bad, req, paths.config_dir(), db, out_dir, emit)
    if not res.found:
        raise typer.Exit(1)
