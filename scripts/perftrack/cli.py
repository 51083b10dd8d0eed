"""The `perftrack` command line: one verb per stage of the flow.

Every user error becomes one line on stderr (`error: …`) and a documented exit code
(see perftrack.errors); a traceback means a bug in perftrack.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich import box
from rich.console import Console
from rich.table import Table

from . import __version__, catalog, compare, matrix, paths, providers, runner
from .cache import cache_dir
from .drivers import sysbench
from .drivers.sysbench_output import parse_output
from .errors import (
    EXIT_FAILED_CELLS,
    EXIT_INTERRUPTED,
    ConfigError,
    FetchError,
    Interrupted,
    PerftrackError,
)
from .prcommands import pr_app, tags_app
from .runner_commands import runner_app
from .site.commands import site_app

app = typer.Typer(
    help="perftrack: continuous performance-regression tracking for MySQL.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
servers_app = typer.Typer(help="The server catalog (configs/versions.yaml).", no_args_is_help=True)
db_app = typer.Typer(help="The results DB (data/results.duckdb).", no_args_is_help=True)
app.add_typer(servers_app, name="servers")
app.add_typer(db_app, name="db")
app.add_typer(site_app, name="site")
app.add_typer(runner_app, name="runner")
app.add_typer(tags_app, name="tags")
app.add_typer(pr_app, name="pr")

# Logs and CI are not terminals: give tables room instead of rich's 80-column default.
NON_TTY_WIDTH = 180
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else NON_TTY_WIDTH)

DbOpt = Annotated[Path, typer.Option("--db", help="results DB file")]
RunsOpt = Annotated[Path, typer.Option("--out", help="directory for run directories")]
METRIC_HELP = " | ".join(compare.METRICS)  # throughput, latency and cost per operation


def emit(msg: str) -> None:
    out.print(msg, markup=False)


def _runner_class(value: str | None) -> str:
    rc = value or os.environ.get("PERFTRACK_RUNNER_CLASS") or "local"
    if not matrix.NAME_RE.match(rc):
        raise ConfigError(f"runner class '{rc}' must be a short identifier")
    return rc


# servers ---------------------------------------------------------------------------------
@servers_app.command("list")
def servers_list() -> None:
    """List the servers perftrack can fetch."""
    cat = catalog.load()
    t = Table("id", "product", "version", "provider", "note")
    for e in cat.entries:
        t.add_row(e.id, e.product, e.version, e.provider, e.stand_in or "")
    out.print(t)


@servers_app.command("fetch")
def servers_fetch(ids: Annotated[list[str], typer.Argument(help="server ids")]) -> None:
    """Download, verify and extract servers into the cache (reused afterwards)."""
    cat = catalog.load()
    entries = [cat.get(i) for i in ids]
    for e in entries:
        inst = providers.fetch(e, progress=emit)
        where = inst.extra.get("image") or inst.basedir  # docker: the image, not a host path
        emit(f"{e.id}: {inst.product} {inst.version} ready at {where}")


@servers_app.command("tags")
def servers_tags(
    repository: Annotated[str, typer.Argument(help="Docker Hub repository, e.g. mysql")],
    prefix: Annotated[str, typer.Option(help="only tags starting with this")] = "",
) -> None:
    """List a Docker Hub repository's tags (and digests) for the docker provider."""
    from .providers import docker

    if not docker.IMAGE_NAME_RE.match(repository):
        raise ConfigError(
            f"'{repository}' is not a Docker Hub repository name (e.g. mysql, "
            "percona/percona-server)"
        )
    for tag in docker.list_tags(repository):
        if tag.name.startswith(prefix):
            emit(f"{tag.name}  {tag.digest or '-'}")


# run ---------------------------------------------------------------------------------------
def _inline_matrix(
    servers: list[str],
    workload: list[str],
    charset: list[str],
    threads: list[int],
    repeats: int,
    duration: int,
    warmup: int,
    tables_n: int,
    table_size: int,
    profile: str,
) -> matrix.Matrix:
    return matrix.from_dict(
        {
            "name": "inline",
            "servers": servers,
            "workloads": workload or ["oltp_point_select"],
            "charsets": charset or ["latin1"],
            "threads": threads or [1],
            "repeats": repeats,
            "duration_s": duration,
            "warmup_s": warmup,
            "tables": tables_n,
            "table_size": table_size,
            "profile": profile,
        },
        where="command line",
    )


def _execute(
    rd: runner.RunDir, resume: bool, retries: int, reuse_datasets: bool = False
) -> runner.Summary:
    r = runner.Runner(
        rd,
        catalog.load(),
        paths.config_dir(),
        emit,
        retries=retries,
        reuse_datasets=reuse_datasets,
        # templates kept for later runs and nights (cache.DATASETS_DIR, bounded, LRU)
        dataset_cache=cache_dir() if reuse_datasets else None,
    )
    s = r.run(resume=resume)
    emit(
        f"run {s.run_id}: {s.ok} ok, {s.failed} failed, {s.skipped} skipped, "
        f"{s.retried} retried; records in {rd.records}"
    )
    for line in s.final_failed:
        emit(f"  failed: {line}")
    return s


@app.command()
def run(
    matrix_file: Annotated[
        str | None,
        typer.Argument(help="matrix file or name in configs/matrices/ (or use --server …)"),
    ] = None,
    server: Annotated[list[str] | None, typer.Option("--server", help="inline: server id")] = None,
    workload: Annotated[list[str] | None, typer.Option(help="inline: workload")] = None,
    charset: Annotated[list[str] | None, typer.Option(help="inline: charset or collation")] = None,
    threads: Annotated[list[int] | None, typer.Option(help="inline: thread count")] = None,
    repeats: Annotated[int, typer.Option(help="inline: repeats")] = 3,
    duration: Annotated[int, typer.Option(help="inline: seconds measured")] = 10,
    warmup: Annotated[int, typer.Option(help="inline: seconds of warm-up")] = 2,
    tables: Annotated[int, typer.Option(help="inline: sysbench tables")] = 2,
    table_size: Annotated[int, typer.Option(help="inline: rows per table")] = 10_000,
    profile: Annotated[str, typer.Option(help="inline: profile")] = "default",
    resume: Annotated[str | None, typer.Option(help="resume the run with this id")] = None,
    retries: Annotated[int, typer.Option(min=0, max=5, help="retries of failed cells")] = 1,
    runner_class: Annotated[str | None, typer.Option(help="runner class label")] = None,
    out_dir: RunsOpt = paths.DEFAULT_RUNS,
    night_plan: Annotated[
        Path | None, typer.Option("--night-plan", help="night plan file (perftrack plan)")
    ] = None,
    shard: Annotated[
        int | None, typer.Option(min=0, help="with --night-plan: the shard to run")
    ] = None,
) -> None:
    """Benchmark a matrix (or inline options); write one run record per cell."""
    if (night_plan is None) != (shard is None):
        raise ConfigError("--night-plan and --shard go together: give both")
    if resume:
        if matrix_file or server or night_plan:
            raise ConfigError("--resume takes no matrix or --server: the run has its plan")
        rd = runner.open_run(out_dir, resume)
        s = _execute(rd, True, retries, bool(rd.plan().get("reuse_datasets")))
    elif night_plan is not None and shard is not None:
        if matrix_file or server:
            raise ConfigError("--night-plan takes no matrix or --server: the plan has the cells")
        s = _run_shard(night_plan, shard, runner_class, out_dir, retries)
    else:
        if matrix_file and server:
            raise ConfigError("give a matrix file or --server options, not both")
        if matrix_file:
            m = matrix.load(paths.matrix_path(matrix_file))
        elif server:
            m = _inline_matrix(
                server,
                workload,
                charset,
                threads,
                repeats,
                duration,
                warmup,
                tables,
                table_size,
                profile,
            )
        else:
            raise ConfigError("nothing to run: give a matrix file or --server ID")
        sysbench.binary()
        rd = runner.create(m, catalog.load(), out_dir, _runner_class(runner_class))
        emit(f"run {rd.run_id}: {len(rd.cells())} cells planned in {rd.path}")
        s = _execute(rd, False, retries)
    if s.failed:
        raise typer.Exit(EXIT_FAILED_CELLS)


def _run_shard(
    plan_file: Path, shard: int, runner_class: str | None, out_dir: Path, retries: int
) -> runner.Summary:
    """One shard of a night plan as one run directory, datasets prepared once per group."""
    from . import nightplan

    work = nightplan.load_shard(plan_file, shard, catalog.load())
    if runner_class and runner_class != work.runner_class:
        raise ConfigError(
            f"shard {shard} is planned for runner class {work.runner_class}, not {runner_class}"
        )
    sysbench.binary()
    rd = runner.create_from_cells(
        work.cells,
        work.matrix_spec,
        out_dir,
        work.runner_class,
        night_plan=work.source,
        reuse_datasets=True,
    )
    emit(f"run {rd.run_id}: shard {shard} of {plan_file}, {len(work.cells)} cells in {rd.path}")
    return _execute(rd, False, retries, True)


@app.command("plan")
def plan_cmd(
    matrix_file: Annotated[
        str | None, typer.Argument(help="matrix name or file (default: nightly)")
    ] = None,
    budget_minutes: Annotated[
        int | None,
        typer.Option(min=1, max=10080, help="wall-clock minutes each shard may take"),
    ] = None,
    shards: Annotated[int, typer.Option(min=1, max=256, help="parallel jobs")] = 1,
    db: DbOpt = paths.DEFAULT_DB,
    out_file: Annotated[Path, typer.Option("--out", help="night plan file")] = Path(
        "runs/night-plan.json"
    ),
    github_output: Annotated[
        bool, typer.Option("--github-output", help="append matrix= and shards= to $GITHUB_OUTPUT")
    ] = False,
    use_dispatch: Annotated[
        bool, typer.Option("--dispatch", help="read the PT_* workflow inputs from the env")
    ] = False,
    night: Annotated[str | None, typer.Option(help="YYYY-MM-DD (default: today, UTC)")] = None,
    rotation_nights: Annotated[
        int | None, typer.Option(min=1, max=366, help="nights a full rotation takes")
    ] = None,
) -> None:
    """Plan tonight: estimate, fit the budget by priority, split into shards."""
    from . import dispatch, nightplan

    try:
        if github_output and not os.environ.get("GITHUB_OUTPUT"):
            raise ConfigError("--github-output needs $GITHUB_OUTPUT (set inside GitHub Actions)")
        p = nightplan.make(
            matrix_file,
            budget_minutes=budget_minutes,
            shards=shards,
            db=db,
            night=nightplan.parse_night(night),
            use_dispatch=use_dispatch,
            rotation_nights=rotation_nights,
        )
        nightplan.render(p, emit)
        nightplan.write(p, out_file)
        emit(f"night plan written to {out_file}")
        if github_output:
            dispatch.write_outputs(p.job_matrix())
        dispatch.summary(nightplan.summary_markdown(p))
    except PerftrackError as exc:
        dispatch.error_summary(exc)
        raise


# ingest / db ------------------------------------------------------------------------------
@app.command()
def ingest(
    sources: Annotated[list[Path], typer.Argument(help="record files or run directories")],
    db: DbOpt = paths.DEFAULT_DB,
) -> None:
    """Add run records to the DB (idempotent; all or nothing)."""
    from . import store

    res = store.ingest_paths(db, sources)
    if res.added == 0 and res.already == 0:
        raise ConfigError(f"no run records in {', '.join(map(str, sources))}")
    emit(f"{db}: {res.added} record(s) added, {res.already} already present")


@db_app.command("info")
def db_info(
    db: DbOpt = paths.DEFAULT_DB, as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """Schema version, size and row counts of the DB."""
    from . import store

    with store.open_db(db, write=False) as st:
        info = st.info()
    if as_json:
        print(json.dumps(info, indent=1, default=str))
        return
    for k, v in info.items():
        emit(f"{k}: {v}")


@db_app.command("migrate")
def db_migrate(db: DbOpt = paths.DEFAULT_DB) -> None:
    """Bring an older DB's schema forward (ingest does this too)."""
    from . import store

    with store.open_db(db, write=True) as st:
        done, version = st.migrated, st.schema_version
    emit(f"{db}: schema v{version}" + (f" (applied {done})" if done else " (up to date)"))


@db_app.command("check")
def db_check(db: DbOpt = paths.DEFAULT_DB) -> None:
    """Verify integrity; exit non-zero on any problem."""
    from . import store

    with store.open_db(db, write=False) as st:
        problems = st.check()
    for p in problems:
        emit(f"problem: {p}")
    if problems:
        raise typer.Exit(1)
    emit(f"{db}: ok")


def _detect(db: Path, metric: str = "tps") -> None:
    from . import annotations, store, yamlfile
    from . import detect as detect_mod

    cfg = paths.config_dir()
    notes = annotations.load(cfg / "annotations.yaml")
    runners = yamlfile.load(cfg / "runners.yaml") if (cfg / "runners.yaml").is_file() else {}
    control = runners.get("control_server") if isinstance(runners, dict) else None
    with store.open_db(db, write=True) as st:
        s = detect_mod.run(st.con, notes, control, metric)
    emit(
        f"{db}: {s.noise} noise estimates, {s.verdicts} verdicts "
        f"({s.regressions} unacknowledged regressions, {s.acknowledged} acknowledged), "
        f"{s.change_points} change points over {s.series} series"
    )


@app.command()
def detect(
    db: DbOpt = paths.DEFAULT_DB,
    metric: Annotated[str, typer.Option(help=METRIC_HELP)] = "tps",
) -> None:
    """Recompute noise, verdicts and change points and store them in the DB."""
    if metric not in compare.METRICS:
        raise ConfigError(f"unknown metric '{metric}'; known: {', '.join(compare.METRICS)}")
    _detect(db, metric)


@app.command("publish")
def publish_cmd(
    sources: Annotated[list[Path], typer.Argument(help="record files or directories (all shards)")],
    db: DbOpt = paths.DEFAULT_DB,
    remote: Annotated[str, typer.Option(help="git remote to push to")] = "origin",
    branch: Annotated[str | None, typer.Option(help="branch (default: the current one)")] = None,
    attempts: Annotated[int, typer.Option(help="push attempts (lost races retried)")] = 5,
    push: Annotated[bool, typer.Option("--push/--no-push", help="push the commit")] = True,
    plan_file: Annotated[Path | None, typer.Option("--plan", help="the night plan")] = None,
    summary_file: Annotated[Path | None, typer.Option("--summary", help="append markdown")] = None,
    chart: Annotated[str | None, typer.Option(help="chart URL/path for the summary")] = None,
) -> None:
    """Ingest a night's records, detect, commit the DB and push it (retrying push races)."""
    from . import publish, summary

    plan = summary.load_plan(plan_file) if plan_file else None
    res = publish.publish(
        sources, db=db, remote=remote, branch=branch, attempts=attempts, push=push, say=emit
    )
    state = f"pushed as `{res.commit[:12]}`" if res.pushed and res.commit else "no new commit"
    head = (
        f"{res.records} record(s) from {len(res.run_ids)} run(s), {res.added} new; "
        f"{state} after {res.attempts} attempt(s)."
    )
    emit(head)
    if summary_file:
        summary.append(
            summary_file, summary.markdown(db, res.run_ids, headline=head, plan=plan, chart=chart)
        )


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


@app.command("compare")
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
    from . import store

    if metric not in compare.METRICS:
        raise ConfigError(f"unknown metric '{metric}'; known: {', '.join(compare.METRICS)}")
    if until_conclusive or budget is not None:
        from . import conclude

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
        ts = compare.tables(
            st.con,
            metric=metric,
            run_id=run_id,
            servers=servers or None,
            noise=compare.load_noise(st.con),
        )
    if as_json:
        print(json.dumps(compare.to_json(ts, metric), indent=1))
    else:
        print_tables(ts, metric)


def _round_request(a: str, b: str, seconds: float, opts: dict[str, Any]) -> Any:
    """The interleaved-rounds request of `compare --until-conclusive` and `bisect`, from
    the cell options both commands share (their `locals()`: the same option names)."""
    from . import conclude

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
        runner_class=_runner_class(opts["runner_class"]),
        min_effect=opts["min_effect"] / 100,
    )


@app.command("bisect")
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
    from . import bisect, conclude

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


@app.command()
def parse(file: Annotated[Path, typer.Argument(help="saved sysbench output")]) -> None:
    """Parse saved sysbench 1.0.x output and print it as JSON."""
    try:
        text = file.read_text(errors="replace")
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read ({exc.strerror})") from None
    print(json.dumps(parse_output(text, source=str(file)), indent=1))


# demo ---------------------------------------------------------------------------------------
@app.command()
def demo(
    matrix_file: Annotated[str, typer.Option("--matrix")] = "smoke",
    db: DbOpt = paths.DEFAULT_DB,
    out_dir: RunsOpt = paths.DEFAULT_RUNS,
    site: Annotated[Path, typer.Option("--site", help="where the site is built")] = Path(
        "build/site"
    ),
) -> None:
    """The main job on the embedded default: fetch, benchmark, store, compare, build the
    site."""
    from . import store

    m = matrix.load(paths.matrix_path(matrix_file))
    sysbench.binary()
    cat = catalog.load()
    emit(f"== 1/5 fetch {len(m.servers)} servers: {', '.join(m.servers)}")
    unbuildable = []
    for sid in m.servers:
        try:
            providers.fetch(cat.get(sid), progress=emit)
        except FetchError as exc:  # the sid chroot needs root + the Debian archive: optional
            if cat.get(sid).provider != "debian-sid" or len(m.servers) - len(unbuildable) < 2:
                raise
            emit(f"{sid}: left out of the demo, its Debian sid chroot cannot be built: {exc}")
            unbuildable.append(sid)
    if unbuildable:
        m = dataclasses.replace(m, servers=tuple(s for s in m.servers if s not in unbuildable))
    emit(f"== 2/5 run matrix '{m.name}'")
    rd = runner.create(m, cat, out_dir, _runner_class(None))
    emit(f"run {rd.run_id}: {len(rd.cells())} cells planned in {rd.path}")
    s = _execute(rd, False, runner.DEFAULT_RETRIES)
    emit(f"== 3/5 ingest into {db}")
    res = store.ingest_paths(db, [rd.path])
    emit(f"{db}: {res.added} record(s) added")
    emit("== 4/5 detect and compare (ratio = this version's median / the previous one's)")
    _detect(db)
    with store.open_db(db, write=False) as st:
        print_tables(compare.tables(st.con, run_id=rd.run_id), "tps")
    emit(f"== 5/5 build the site into {site}")
    from .site.commands import build_cmd

    build_cmd(db, site)
    if s.failed:
        raise typer.Exit(EXIT_FAILED_CELLS)


@app.command()
def version() -> None:
    """Print perftrack's version."""
    emit(__version__)


# study -------------------------------------------------------------------------------------
study_app = typer.Typer(
    help="Studies: the source articles (configs/studies/).", no_args_is_help=True
)
app.add_typer(study_app, name="study")
ScaleOpt = Annotated[str, typer.Option("--scale", help="full (the article's matrix) or local")]


@study_app.command("list")
def study_list() -> None:
    """List the studies."""
    from . import study

    for name in study.known(paths.config_dir()):
        emit(f"{name}: {study.load(name, paths.config_dir()).title}")


@study_app.command("run")
def study_run(
    name: Annotated[str, typer.Argument(help="study name (configs/studies/NAME.yaml)")],
    scale: ScaleOpt = "full",
    retries: Annotated[int, typer.Option(min=0, max=5, help="retries of failed cells")] = 1,
    runner_class: Annotated[str | None, typer.Option(help="runner class label")] = None,
    reuse_datasets: Annotated[
        bool,
        typer.Option(
            "--reuse-datasets/--prepare-each-group",
            help="prepare each dataset once and copy it (default) or prepare in every group",
        ),
    ] = True,
    out_dir: RunsOpt = paths.DEFAULT_RUNS,
) -> None:
    """Run a study's matrix at a scale; `perftrack study report NAME` reads the run."""
    from . import study

    st = study.load(name, paths.config_dir())
    m = st.matrix(scale)
    cat = catalog.load()
    study.check_servers(st, scale, cat)
    study.check_tools(m)
    rd = runner.create(m, cat, out_dir, _runner_class(runner_class))
    emit(f"study {name} (scale {scale}): run {rd.run_id}, {len(rd.cells())} cells in {rd.path}")
    if scale != "full" and st.stand_in:
        emit(f"stand-ins: {st.stand_in}")
    s = _execute(rd, False, retries, reuse_datasets)
    if s.failed:
        raise typer.Exit(EXIT_FAILED_CELLS)


@study_app.command("report")
def study_report(
    name: Annotated[str, typer.Argument(help="study name (configs/studies/NAME.yaml)")],
    scale: ScaleOpt = "local",
    run_id: Annotated[str | None, typer.Option("--run", help="run id (default: newest)")] = None,
    out_dir: RunsOpt = paths.DEFAULT_RUNS,
) -> None:
    """Print our ratios next to the article's, from the study's newest run (or --run)."""
    from . import study

    st = study.load(name, paths.config_dir())
    st.matrix(scale)
    study.render(st, scale, study.find_run(st, scale, out_dir, run_id), emit)


def _interrupt(signum: int, frame: object) -> None:
    raise Interrupted(f"interrupted by signal {signal.Signals(signum).name}")


def main(argv: list[str] | None = None) -> int:
    # SIGTERM/SIGHUP end perftrack like Ctrl-C does: cleanup code runs, no traceback.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    try:
        rc = app(args=argv, standalone_mode=False)
    except PerftrackError as exc:
        msg = " ".join(str(exc).split())
        print(f"error: {msg}", file=sys.stderr)
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        print("error: aborted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:  # a bad option value: one line, like ours
        msg = " ".join(exc.format_message().split())
        print(f"error: {msg} (see --help)", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return rc if isinstance(rc, int) else 0


def _entry() -> Any:  # pragma: no cover
    sys.exit(main())
