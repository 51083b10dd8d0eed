"""`perftrack demo`: the main job end to end on the smoke matrix."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from perftrack.analysis import compare
from perftrack.cli.analysis import detect_into, print_tables
from perftrack.cli.app import DbOpt, RunsOpt, emit, runner_class_of
from perftrack.cli.run import execute
from perftrack.core import paths
from perftrack.core.errors import EXIT_FAILED_CELLS, FetchError
from perftrack.drivers import sysbench
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.servers import catalog, providers


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
    from perftrack.store import store

    m = matrix.read_matrix(paths.matrix_path(matrix_file))
    sysbench.binary()
    cat = catalog.read_catalog()
    emit(f"== 1/5 fetch {len(m.servers)} servers: {', '.join(m.servers)}")
    unbuildable = []
    for sid in m.servers:
        try:
            providers.fetch(cat.get(sid), progress=emit)
        except FetchError as exc:  # a chroot needs root + the Debian archive: optional
            if cat.get(sid).provider != "debian-chroot" or len(m.servers) - len(unbuildable) < 2:
                raise
            emit(f"{sid}: left out of the demo, its Debian chroot cannot be built: {exc}")
            unbuildable.append(sid)
    if unbuildable:
        m = dataclasses.replace(m, servers=tuple(s for s in m.servers if s not in unbuildable))
    emit(f"== 2/5 run matrix '{m.name}'")
    rd = runner.create(m, cat, out_dir, runner_class_of(None))
    emit(f"run {rd.run_id}: {len(rd.cells())} cells planned in {rd.path}")
    s = execute(rd, False, runner.DEFAULT_RETRIES)
    emit(f"== 3/5 ingest into {db}")
    res = store.ingest_paths(db, [rd.path])
    emit(f"{db}: {res.added} record(s) added")
    emit("== 4/5 detect and compare (ratio = this version's geometric mean / the previous one's)")
    detect_into(db)
    with store.open_db(db, write=False) as st:
        print_tables(compare.tables(st, run_id=rd.run_id), "tps")
    emit(f"== 5/5 build the site into {site}")
    from perftrack.cli.site import build_cmd

    build_cmd(db, site)
    if s.failed:
        raise typer.Exit(EXIT_FAILED_CELLS)
