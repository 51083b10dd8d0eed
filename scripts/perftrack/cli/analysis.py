"""`perftrack detect`, `compare` and `bisect`: statistics over the DB, and the experiments
that add rounds until a verdict settles."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from perftrack.analysis import cellfilter, compare, headline, stats
from perftrack.cli.app import (
    METRIC_HELP,
    DbOpt,
    RunsOpt,
    emit,
    out,
    print_json,
)
from perftrack.cli.celloptions import (
    ROUND_CELL,
    CellCharset,
    CellDuration,
    CellHandshake,
    CellProfile,
    CellTables,
    CellTableSize,
    CellThreads,
    CellWarmup,
    CellWorkload,
    FilterCharset,
    FilterDuration,
    FilterProfile,
    FilterTables,
    FilterTableSize,
    FilterThreads,
    FilterWarmup,
    FilterWorkload,
    MinEffectOpt,
    RunnerClassOpt,
    round_request,
)
from perftrack.core import paths
from perftrack.core.errors import ConfigError
from perftrack.core.record import OPTIONAL_CELL_FIELDS as AXIS_COLUMNS
from perftrack.drivers import sysbench
from perftrack.planning import matrix
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
    runners = yamlfile.read_yaml(cfg / "runners.yaml") if (cfg / "runners.yaml").is_file() else {}
    control = runners.get("control_server") if isinstance(runners, dict) else None
    with store.open_db(db, write=True) as st:
        s = detect_mod.detect_and_store(
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
def _fmt(value: float | None, spec: str = ".0f") -> str:
    return "—" if value is None else format(value, spec)


def _fmt_metric(value: float | None) -> str:
    """A metric's median: whole numbers from 100 up, else two decimals (IPC, switches)."""
    return _fmt(value, ".0f" if value is None or abs(value) >= 100 else ".2f")


def compare_json(tables: list[compare.Table], metric: str) -> dict[str, Any]:
    """`compare --json`: the headlines, then every group with its rows."""
    heads = headline.summarise(headline.changes_of(tables))
    return {
        "metric": metric,
        "headlines": [headline.to_json(h) for h in heads],
        "groups": compare.to_json(tables, metric),
    }


def print_headlines(tables: list[compare.Table]) -> None:
    """The summary the text opens with: one line per version or axis pair."""
    heads = headline.summarise(headline.changes_of(tables))
    for h in heads:
        emit(headline.line(h))
    if heads:
        emit("")


def print_tables(tables: list[compare.Table], metric: str) -> None:
    if not tables:
        emit("no results to compare")
        return
    unit = compare.METRICS[metric][2]
    for t in tables:
        tab = Table(title=_title(t), title_justify="left", box=box.SIMPLE_HEAD)
        vs = f"vs {t.rows[0].name}" if t.axis else "vs previous"
        for col in (
            t.axis or "server",
            "n",
            f"geometric mean ({unit}): {'previous' if not t.axis else t.rows[0].name} → this",
            "p95 lat (ms)",
            vs,
            "95% CI",
            "p",
            "threshold",
            "verdict",
        ):
            tab.add_column(col, justify="left" if col in ("server", "verdict") else "right")
        for r in t.rows:
            c = r.vs_previous
            tab.add_row(
                _row_name(r),
                f"{c.n_a}/{c.n_b}{' paired' if c.paired else ''}" if c else str(len(r.values)),
                _basis(c, r.values),
                _fmt(compare.median(r.latency), ".2f"),
                f"{c.ratio:.3f}" if c else "—",
                f"[{c.ci_low:.3f}, {c.ci_high:.3f}]" if c else "—",
                f"{c.p_value:.3f}" if c else "—",
                f"±{c.threshold:.1%}" if c else "—",
                verdict_text(c) if c else "—",
            )
        out.print(tab)


def _basis(comparison: stats.Comparison | None, values: list[float]) -> str:
    """The numbers a ratio is the ratio of: the geometric means of the values it came from
    (the shared rounds, when paired); a row without a ratio, its own."""
    if comparison is None:
        return _fmt_metric(compare.geometric_mean(values))
    return f"{_fmt_metric(comparison.mean_a)} → {_fmt_metric(comparison.mean_b)}"


def verdict_text(comparison: stats.Comparison) -> str:
    """A verdict, and when inconclusive how many rounds a side would decide it."""
    if comparison.verdict != "inconclusive":
        return comparison.verdict
    return f"inconclusive ({stats.undecided_note(comparison.rounds_needed)})"


def _title(table: compare.Table) -> str:
    """The series in words: its cell, the axes it sets, runner and noise; an axis
    comparison's leaves out the columns its axis varies and starts with the server."""
    k = table.key
    parts = [f"{k['server_id']}: {table.axis}"] if table.axis else []
    parts += [k["workload"], f"threads={k['threads']}"]
    if "collation" in k:
        parts.append(str(k["collation"]))
    if "profile" in k:
        parts.append(f"profile={k['profile']}")
    size = f"x{k['table_size']}" if "table_size" in k else ""
    parts += [f"{k['tables']}{size} rows", f"{k['duration_s']} s", str(k["connection"])]
    parts += [f"{a}={k[a]}" for a in AXIS_COLUMNS if k.get(a) is not None]
    parts.append(f"runner {k['runner_class']} ({k['hw_key']})")
    if table.noise_cv is not None:
        parts.append(f"A/A noise CV {table.noise_cv:.1%}")
    if table.aa_spread is not None:
        parts.append(f"paired A/A spread {table.aa_spread:.1%}")
    return " · ".join(parts)


def _row_name(row: compare.Row) -> str:
    """A server id, or an axis value with the column it set when that says more
    (`utf8mb4 (utf8mb4_general_ci)`)."""
    if row.label is None:
        return row.server_id
    shown = [str(v) for v in row.cell.values() if v is not None and str(v) != row.label]
    return f"{row.label} ({', '.join(shown)})" if shown else row.label


SHOWN_RUNS = 5  # run ids named when --run names none of them


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
    workload: FilterWorkload = None,
    threads: FilterThreads = None,
    charset: FilterCharset = None,
    duration: FilterDuration = None,
    warmup: FilterWarmup = None,
    tables: FilterTables = None,
    table_size: FilterTableSize = None,
    profile: FilterProfile = None,
    handshake: CellHandshake = None,
    runner_class: RunnerClassOpt = None,
    min_effect: MinEffectOpt = 10.0,
    out_dir: RunsOpt = paths.DEFAULT_RUNS,
    axis: Annotated[
        str | None,
        typer.Option(
            "--axis",
            help="compare two values of this axis on ONE server: charset (or collation), "
            "profile, durability, isolation, engine, handshake, dataset_size, table_size",
        ),
    ] = None,
    values: Annotated[
        tuple[str, str] | None,
        typer.Option("--values", help="--axis: the two values, A then B (B against A)"),
    ] = None,
    server_lifetime: Annotated[
        str | None,
        typer.Option(
            "--server-lifetime",
            help="--until-conclusive: run: each arm's server started once and kept up for "
            "every round; group: a fresh server per arm and round (default: "
            f"{matrix.DEFAULT_SERVER_LIFETIME})",
        ),
    ] = None,
) -> None:
    """Per workload/threads/charset: each version's median and ratio to the previous.

    With --axis AXIS --values A B and one server: B against A on that server, every other
    axis equal (`perftrack compare mariadb-10.11.18 --axis charset --values latin1 utf8mb4`).

    --workload/--threads/--charset/… keep only those cells. The text opens with one
    headline per version (or axis) pair: its verdicts counted, the geometric mean of its
    ratios and its largest resolved change.

    With --until-conclusive --budget MINUTES and two servers A B (or one server with
    --axis/--values): benchmark interleaved rounds of the cell given by
    --workload/--threads/… until B's verdict against A settles.
    """
    from perftrack.store import store

    given = {k: v for k, v in locals().items() if k in ROUND_CELL and v is not None}

    if metric not in compare.METRICS:
        raise ConfigError(f"unknown metric '{metric}'; known: {', '.join(compare.METRICS)}")
    if axis is not None or values is not None:
        _check_axis_cli(servers or [], axis, values)
    if server_lifetime is not None and not (until_conclusive or budget is not None):
        raise ConfigError("--server-lifetime goes with --until-conclusive (rounds it runs)")
    if until_conclusive or budget is not None:
        from perftrack.experiments import conclude

        a, b, minutes = conclude.check_cli(
            servers or [], budget, until_conclusive, run_id, axis is not None
        )
        req = round_request(a, b, minutes * 60, {**locals(), **ROUND_CELL, **given})
        cat = catalog.read_catalog()
        conclude.validate(req, cat)
        sysbench.binary()
        say = (lambda m: print(m, file=sys.stderr)) if as_json else emit
        o = conclude.run_rounds(req, cat, paths.config_dir(), db, out_dir, say)
        if as_json:
            print_json("compare_rounds", conclude.to_json(o))
        return
    if "warmup" in given:
        raise ConfigError(
            "--warmup sets the rounds of --until-conclusive; stored results are not "
            "told apart by warm-up (leave it out)"
        )
    want = {**given, "runner_class": runner_class}
    if axis is not None and values is not None:
        from perftrack.analysis import axis as axis_mod

        (server,) = servers or []
        _check_filter_not_on_axis(axis_mod.canonical(axis), want)
        with store.open_db(db, write=False) as st:
            _check_servers_have_results(st, [server], run_id, db)
            res = axis_mod.tables(st, server, axis, values, metric=metric, run_id=run_id)
        kept = cellfilter.select(res.tables, want, f"{server}'s {axis} comparison in {db}")
        if as_json:
            print_json("compare", compare_json(kept, metric))
            return
        print_headlines(kept)
        print_tables(kept, metric)
        if res.one_sided:
            emit(
                f"{res.one_sided} series of {server} with only one of the two values: not compared"
            )
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
    ts = cellfilter.select(ts, want, f"run {run_id} of {db}" if run_id else str(db))
    if as_json:
        print_json("compare", compare_json(ts, metric))
    else:
        print_headlines(ts)
        print_tables(ts, metric)


def _check_filter_not_on_axis(axis: str, want: dict[str, Any]) -> None:
    """An axis comparison's two sides differ in the axis: a filter on it would drop one."""
    from perftrack.analysis import axis as axis_mod

    for name, value in want.items():
        if value is not None and cellfilter.COLUMNS[name] in axis_mod.AXES[axis]:
            raise ConfigError(
                f"{cellfilter.option(name)} {value} filters the {axis} axis that --axis "
                f"compares; its two values are --values"
            )


def _check_servers_have_results(
    results: Any, servers: list[str], run_id: str | None, db: Path
) -> None:
    """A named server without results is a typo (or the wrong DB/run), never "no results";
    so is a run the DB does not hold."""
    if run_id is not None and run_id not in (runs := results.run_ids()):
        shown = ", ".join(runs[:SHOWN_RUNS]) + (", …" if len(runs) > SHOWN_RUNS else "")
        raise ConfigError(f"no run {run_id!r} in {db}; runs there, newest first: {shown or '-'}")
    have = results.server_ids(run_id)
    missing = [s for s in servers if s not in have]
    if missing:
        where = f"run {run_id} of {db}" if run_id else str(db)
        raise ConfigError(
            f"no results for server {missing[0]!r} in {where}; servers with results: "
            f"{', '.join(have) or '(none)'}"
        )


def _check_axis_cli(servers: list[str], axis: str | None, values: Any) -> None:
    """--axis and --values go together, with exactly one server."""
    from perftrack.analysis import axis as axis_mod

    if axis is None:
        raise ConfigError(
            "--values goes with --axis: perftrack compare SERVER --axis A --values X Y"
        )
    axis_mod.canonical(axis)
    if values is None:
        raise ConfigError(f"--axis {axis} needs --values A B, e.g. --values latin1 utf8mb4")
    if len(servers) != 1:
        raise ConfigError(
            f"--axis compares two {axis} values on one server, not {len(servers)}: "
            f"perftrack compare SERVER --axis {axis} --values A B"
        )
    if values[0] == values[1]:
        raise ConfigError(f"compare two different {axis} values, not {values[0]!r} with itself")


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
    workload: CellWorkload = ROUND_CELL["workload"],
    threads: CellThreads = ROUND_CELL["threads"],
    charset: CellCharset = ROUND_CELL["charset"],
    duration: CellDuration = ROUND_CELL["duration"],
    warmup: CellWarmup = ROUND_CELL["warmup"],
    tables: CellTables = ROUND_CELL["tables"],
    table_size: CellTableSize = ROUND_CELL["table_size"],
    profile: CellProfile = ROUND_CELL["profile"],
    runner_class: RunnerClassOpt = None,
    min_effect: MinEffectOpt = 10.0,
    out_dir: RunsOpt = paths.DEFAULT_RUNS,
) -> None:
    """Benchmark the catalog releases between GOOD and BAD, halving, to the first bad one."""
    from perftrack.experiments import bisect, conclude

    cat = catalog.read_catalog()
    rel = bisect.releases(cat, good, bad)
    req = round_request(good, bad, step_budget * 60, locals())
    conclude.validate(req, cat)
    if dry_run:
        for line in bisect.plan_lines(rel, req.budget_s):
            emit(line)
        return
    sysbench.binary()
    res = bisect.bisect(cat, good, bad, req, paths.config_dir(), db, out_dir, emit)
    if not res.found:
        raise typer.Exit(1)
