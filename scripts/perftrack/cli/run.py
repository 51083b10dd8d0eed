"""`perftrack run`, `perftrack plan` and `perftrack parse`: plan and run benchmarks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from perftrack.cli.app import DbOpt, RunsOpt, emit, runner_class_of
from perftrack.core import paths
from perftrack.core.errors import EXIT_FAILED_CELLS, ConfigError, PerftrackError
from perftrack.drivers import sysbench
from perftrack.drivers.sysbench_output import parse_output
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.servers import catalog
from perftrack.servers.cache import cache_dir


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


def _catalog_of(run_dir: runner.RunDir) -> catalog.Catalog:
    """The catalog, with the pins the run's night plan made while planning (a docker entry
    the catalog marks unpinned, pinned for that night: servers/planpins.py)."""
    from perftrack.servers import planpins

    pins = planpins.parse(run_dir.plan().get("pins"), run_dir.path / "plan.json")
    return planpins.apply(catalog.read_catalog(), planpins.digests(pins))


def execute(
    run_dir: runner.RunDir, resume: bool, retries: int, reuse_datasets: bool = False
) -> runner.RunOutcome:
    r = runner.Runner(
        rd=run_dir,
        catalog=_catalog_of(run_dir),
        config_dir=paths.config_dir(),
        emit=emit,
        retries=retries,
        reuse_datasets=reuse_datasets,
        # templates kept for later runs and nights (cache.DATASETS_DIR, bounded, LRU)
        dataset_cache=cache_dir() if reuse_datasets else None,
    )
    s = r.run(resume=resume)
    emit(
        f"run {s.run_id}: {s.ok} ok, {s.failed} failed, {s.skipped} skipped, "
        f"{s.retried} retried; records in {run_dir.records}"
    )
    for line in s.final_failed:
        emit(f"  failed: {line}")
    return s


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
    night_id: Annotated[
        str | None,
        typer.Option(
            "--night-id",
            help="with --night-plan: keep the run in the runner's state directory under "
            "this night (resuming an unfinished run of the shard), not in --out",
        ),
    ] = None,
    server_lifetime: Annotated[
        str | None,
        typer.Option(
            "--server-lifetime",
            help="group: a fresh server per group of each round; run: each server x "
            "options x dataset started once and kept up for every round (default: the "
            "matrix's server_lifetime, else group)",
        ),
    ] = None,
) -> None:
    """Benchmark a matrix (or inline options); write one run record per cell."""
    if server_lifetime is not None and (resume or night_plan is not None):
        raise ConfigError("--server-lifetime goes with a matrix or --server: a plan has its own")
    if server_lifetime is not None and server_lifetime not in matrix.SERVER_LIFETIMES:
        raise ConfigError(
            f"--server-lifetime must be {' or '.join(matrix.SERVER_LIFETIMES)}, "
            f"not {server_lifetime!r}"
        )
    if (night_plan is None) != (shard is None):
        raise ConfigError("--night-plan and --shard go together: give both")
    if night_id is not None and night_plan is None:
        raise ConfigError("--night-id goes with --night-plan and --shard")
    if resume:
        if matrix_file or server or night_plan:
            raise ConfigError("--resume takes no matrix or --server: the run has its plan")
        rd = runner.open_run(out_dir, resume)
        s = execute(rd, True, retries, bool(rd.plan().get("reuse_datasets")))
    elif night_plan is not None and shard is not None:
        if matrix_file or server:
            raise ConfigError("--night-plan takes no matrix or --server: the plan has the cells")
        s = _run_shard(night_plan, shard, runner_class, out_dir, retries, night_id)
    else:
        if matrix_file and server:
            raise ConfigError("give a matrix file or --server options, not both")
        if matrix_file:
            m = matrix.read_matrix(paths.matrix_path(matrix_file))
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
        if server_lifetime is not None:  # checked like the matrix key (prepost needs group)
            spec = {**m.to_dict(), "server_lifetime": server_lifetime}
            m = matrix.from_dict(spec, where="--server-lifetime")
        sysbench.binary()
        rd = runner.create(m, catalog.read_catalog(), out_dir, runner_class_of(runner_class))
        emit(f"run {rd.run_id}: {len(rd.cells())} cells planned in {rd.path}")
        s = execute(rd, False, retries)
    if s.failed:
        raise typer.Exit(EXIT_FAILED_CELLS)


def _unfinished(out_dir: Path, night_id: str) -> runner.RunDir | None:
    """The newest run directory in `out_dir` that did not complete and that no live
    process runs (a shard's earlier attempt, killed with its runner), and that this
    night's job wrote (on a bench host: signed, host/salvage.py `accepted`)."""
    from perftrack.core import dirlock
    from perftrack.host import salvage

    if not out_dir.is_dir():
        return None
    for p in sorted(out_dir.iterdir(), reverse=True):
        rd = runner.RunDir(p)
        unfinished = (p / "plan.json").is_file() and rd.status().get("status") != "complete"
        if not unfinished or dirlock.state(p) == dirlock.HELD:
            continue
        kept = salvage.KeptRun(night_id, out_dir.name, p)
        if salvage.accepted(kept, emit):
            return rd
    return None


def _run_shard(
    plan_file: Path,
    shard: int,
    runner_class: str | None,
    out_dir: Path,
    retries: int,
    night_id: str | None = None,
) -> runner.RunOutcome:
    """One shard of a night plan as one run directory, datasets prepared once per group.

    With a night id the run directory is kept in the runner's state directory (host/
    salvage.py), and an unfinished run of the same night's shard there is resumed."""
    from perftrack.host import salvage
    from perftrack.planning import nightplan

    if night_id is not None:
        out_dir = salvage.shard_dir(night_id, shard)
    work = nightplan.load_shard(plan_file, shard, catalog.read_catalog())
    earlier = _unfinished(out_dir, night_id) if night_id is not None else None
    if earlier is not None:
        emit(f"run {earlier.run_id}: an unfinished earlier attempt of shard {shard}, resumed")
        return execute(earlier, True, retries, True)
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
        **({"pins": work.pins} if work.pins else {}),
    )
    emit(f"run {rd.run_id}: shard {shard} of {plan_file}, {len(work.cells)} cells in {rd.path}")
    return execute(rd, False, retries, True)


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
    pin_unpinned: Annotated[
        bool,
        typer.Option(
            "--pin-unpinned",
            help="ask Docker Hub for the digest of each selected docker entry marked "
            "`digest: unpinned` and pin it for this night (trust on first use); one that "
            "cannot be pinned is skipped with the reason. Without it nothing is asked "
            "and such entries are skipped",
        ),
    ] = False,
) -> None:
    """Plan tonight: estimate, fit the budget by priority, split into shards."""
    from perftrack.planning import dispatch, nightplan

    try:
        if github_output and not os.environ.get("GITHUB_OUTPUT"):
            raise ConfigError("--github-output needs $GITHUB_OUTPUT (set inside GitHub Actions)")
        p = nightplan.make_night_plan(
            matrix_file,
            budget_minutes=budget_minutes,
            shards=shards,
            db=db,
            night=nightplan.parse_night(night),
            use_dispatch=use_dispatch,
            rotation_nights=rotation_nights,
            pin_unpinned=pin_unpinned,
        )
        nightplan.render(p, emit)
        nightplan.write(p, out_file)
        emit(f"night plan written to {out_file}")
        if github_output:
            dispatch.write_outputs(p.job_matrix(), pinned=tuple(p.pins))
        dispatch.summary(nightplan.summary_markdown(p))
    except PerftrackError as exc:
        dispatch.error_summary(exc)
        raise


def parse(file: Annotated[Path, typer.Argument(help="saved sysbench output")]) -> None:
    """Parse saved sysbench 1.0.x output and print it as JSON."""
    try:
        text = file.read_text(errors="replace")
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read ({exc.strerror})") from None
    print(json.dumps(parse_output(text, source=str(file)), indent=1))
