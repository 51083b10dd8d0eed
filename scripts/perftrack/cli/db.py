"""`perftrack ingest` and `perftrack db`: the results DB."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from perftrack.cli.app import DbOpt, emit, print_json
from perftrack.core import paths
from perftrack.core.errors import ConfigError

db_app = typer.Typer(help="The results DB (data/results.duckdb).", no_args_is_help=True)


def ingest(
    sources: Annotated[list[Path], typer.Argument(help="record files or run directories")],
    db: DbOpt = paths.DEFAULT_DB,
) -> None:
    """Add run records to the DB (idempotent; all or nothing)."""
    from perftrack.store import store

    res = store.ingest_paths(db, sources)
    if res.added == 0 and res.already == 0:
        raise ConfigError(f"no run records in {', '.join(map(str, sources))}")
    emit(f"{db}: {res.added} record(s) added, {res.already} already present")


@db_app.command("info")
def db_info(
    db: DbOpt = paths.DEFAULT_DB, as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """Schema version, size and row counts of the DB."""
    from perftrack.store import store

    with store.open_db(db, write=False) as st:
        info = st.info()
    if as_json:
        print_json("db_info", info)
        return
    for k, v in info.items():
        emit(f"{k}: {v}")


@db_app.command("migrate")
def db_migrate(db: DbOpt = paths.DEFAULT_DB) -> None:
    """Bring an older DB's schema forward (ingest does this too)."""
    from perftrack.store import store

    with store.open_db(db, write=True) as st:
        done, version = st.migrated, st.schema_version
    emit(f"{db}: schema v{version}" + (f" (applied {done})" if done else " (up to date)"))


@db_app.command("check")
def db_check(db: DbOpt = paths.DEFAULT_DB) -> None:
    """Verify integrity; exit non-zero on any problem."""
    from perftrack.store import store

    with store.open_db(db, write=False) as st:
        problems = st.check()
    for p in problems:
        emit(f"problem: {p}")
    if problems:
        raise typer.Exit(1)
    emit(f"{db}: ok")
