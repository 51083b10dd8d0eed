"""`perftrack study`: the source articles as studies (configs/studies/)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from perftrack.cli.app import DbOpt, RunsOpt, emit, runner_class_of
from perftrack.cli.run import execute
from perftrack.core import paths
from perftrack.core.errors import EXIT_FAILED_CELLS, ConfigError
from perftrack.planning import cells as plan_cells
from perftrack.planning import schedule, study
from perftrack.publish import study_report as report
from perftrack.publish import study_runs
from perftrack.run import runner, tools
from perftrack.servers import catalog
from perftrack.store import store

study_app = typer.Typer(
    help="Studies: the source articles (configs/studies/).", no_args_is_help=True
)
ScaleOpt = Annotated[str, typer.Option("--scale", help="full (the article's matrix) or local")]


@study_app.command("list")
def study_list() -> None:
    """List the studies."""
    for name in study.known(paths.config_dir()):
        emit(f"{name}: {study.read_study(name, paths.config_dir()).title}")


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
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="print the roles, the cells and an estimate of the time only"
        ),
    ] = False,
    db: DbOpt = paths.DEFAULT_DB,
) -> None:
    """Run a study's matrix at a scale; `perftrack study report NAME` reads the run."""
    st = study.read_study(name, paths.config_dir())
    matrices = st.matrices(scale)
    cat = catalog.read_catalog()
    study.check_servers(st, scale, cat)
    for line in report.role_lines(study.players(st, scale, cat)):
        emit(line)
    if scale != "full" and st.local_notes:
        emit(f"local scale: {st.local_notes}")
    if dry_run:
        _dry_run(st, scale, cat, db)
        return
    for m in matrices:
        tools.check_tools(m)
    failed = 0
    for m in matrices:  # one run per part
        rd = runner.create(m, cat, out_dir, runner_class_of(runner_class))
        emit(f"study {st.name} ({m.name}): run {rd.run_id}, {len(rd.cells())} cells in {rd.path}")
        failed += execute(rd, False, retries, reuse_datasets).failed
    if failed:
        raise typer.Exit(EXIT_FAILED_CELLS)


@study_app.command("report")
def study_report(
    name: Annotated[str, typer.Argument(help="study name (configs/studies/NAME.yaml)")],
    scale: ScaleOpt = "local",
    run_ids: Annotated[
        list[str] | None,
        typer.Option("--run", help="run id, one per part of the scale (default: the newest)"),
    ] = None,
    out_dir: RunsOpt = paths.DEFAULT_RUNS,
    db: DbOpt = paths.DEFAULT_DB,
    from_db: Annotated[
        bool,
        typer.Option(
            "--from-db",
            help="read the study's cells from the results DB (--db), as its site page does; "
            "the default when runs/ holds no run of the study",
        ),
    ] = False,
) -> None:
    """Print our ratios next to the article's, from the study's newest run (or --run), else
    from the results DB."""
    st = study.read_study(name, paths.config_dir())
    st.matrices(scale)
    if run_ids and from_db:
        raise ConfigError("--run and --from-db exclude each other: give one")
    if not from_db:
        try:
            dirs = study_runs.find_runs(st, scale, out_dir, list(run_ids or []))
        except ConfigError:
            if run_ids or not db.is_file():
                raise
            from_db = True  # no run directory here: the DB's records of the study's cells
    players = study.players(st, scale, catalog.read_catalog())
    if not from_db:
        report.render(st, scale, dirs, emit, players)
        return
    with store.open_db(db, write=False) as s:
        records = study_runs.db_records(st, scale, s)
    if not records:
        raise ConfigError(
            f"no results of study {st.name} at scale {scale} in {db} or {out_dir}: "
            f"run `perftrack study run {st.name} --scale {scale}`, then `perftrack ingest`"
        )
    runs = sorted({r["run_id"] for r in records if r.get("run_id")})
    where = f"from {db}" + (f" (run {', '.join(runs)})" if runs else "")
    report.render(st, scale, [], emit, players, records=records, source=where)


def _dry_run(study_spec: study.Study, scale: str, cat: catalog.Catalog, db: Path) -> None:
    """What `study run` would plan, per part: cells to run and skipped (with the reasons),
    and the wall time the night planner would estimate for them (from the DB's history)."""
    history = schedule.read_history(db)
    total = 0.0
    for m in study_spec.matrices(scale):
        cells = plan_cells.expand_catalog(m, cat)
        starts = Counter((c.group_key(), c.repeat) for c in cells if not c.skip)
        secs = sum(schedule.estimate(c, history)[0] for c in cells)
        secs += schedule.START_OVERHEAD_ESTIMATE_S * len(starts)
        total += secs
        run = [c for c in cells if not c.skip]
        emit(
            f"{m.name}: {len(cells)} cells, {len(run)} to run on "
            f"{len({c.server_id for c in run})} servers, {len(cells) - len(run)} skipped; "
            f"estimate {secs / 60:.1f} min"
        )
        for (sid, reason), n in sorted(
            Counter((c.server_id, c.skip) for c in cells if c.skip).items()
        ):
            emit(f"  skipped {n} x {sid}: {reason}")
    emit(f"estimate {total / 60:.1f} min in all ({history.source}; nothing was run)")
