"""`perftrack explain A B`: which changed settings account for a regression, by experiment."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from perftrack.cli.app import DbOpt, RunsOpt, emit, print_json
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
    MinEffectOpt,
    RunnerClassOpt,
    round_request,
)
from perftrack.core import files, paths
from perftrack.core.errors import ConfigError
from perftrack.drivers import sysbench
from perftrack.planning import cells
from perftrack.servers import catalog

# explain's --min-effect: the regression it is asked to explain. 5%, not compare's 10%: a
# version step's default that costs 5-10% (the adaptive hash index on point selects) is
# exactly what explain is for, and a gap inside ±10% is not "no regression".
EXPLAIN_MIN_EFFECT_PCT = 5.0


def explain_cmd(
    a: Annotated[str, typer.Argument(help="server id of the release before the regression")],
    b: Annotated[str, typer.Argument(help="server id of the release that regressed")],
    budget: Annotated[float, typer.Option("--budget", help="wall-clock minutes")] = 20.0,
    as_json: Annotated[bool, typer.Option("--json", help="the result as JSON on stdout")] = False,
    profile_out: Annotated[
        Path | None,
        typer.Option("--profile-out", help="write a my.cnf fragment of the isolated settings"),
    ] = None,
    no_store: Annotated[
        bool, typer.Option("--no-store", help="do not store the explanation in the DB")
    ] = False,
    db: DbOpt = paths.DEFAULT_DB,
    metric: Annotated[str, typer.Option(help="tps | qps")] = "tps",
    workload: CellWorkload = ROUND_CELL["workload"],
    threads: CellThreads = ROUND_CELL["threads"],
    charset: CellCharset = ROUND_CELL["charset"],
    duration: CellDuration = ROUND_CELL["duration"],
    warmup: CellWarmup = ROUND_CELL["warmup"],
    tables: CellTables = ROUND_CELL["tables"],
    table_size: CellTableSize = ROUND_CELL["table_size"],
    profile: CellProfile = ROUND_CELL["profile"],
    handshake: CellHandshake = ROUND_CELL["handshake"],
    runner_class: RunnerClassOpt = None,
    min_effect: MinEffectOpt = EXPLAIN_MIN_EFFECT_PCT,
    out_dir: RunsOpt = paths.DEFAULT_RUNS,
    server_lifetime: Annotated[
        str,
        typer.Option(
            "--server-lifetime",
            help="run: each arm's server started once and kept up for its stage's rounds; "
            "group: a fresh server per arm and round",
        ),
    ] = cells.EXPLAIN_SERVER_LIFETIME,
) -> None:
    """Start B with groups of A's settings, halving, to find which changes cost how much.

    The candidates are the effective variables that differ between A and B and that B
    accepts at startup with A's value; each isolated setting (or inseparable group) is
    reported with the share of the A→B gap it recovers.
    """
    from perftrack.experiments import explain, explanation

    req = round_request(a, b, budget * 60, locals())
    cat = catalog.read_catalog()
    explain.validate(req, cat)
    if profile_out is not None and not profile_out.parent.is_dir():
        raise ConfigError(f"--profile-out: no directory {profile_out.parent}")
    _check_stored_verdicts(db, a, b, workload, threads, req.min_effect)
    sysbench.binary()
    say = (lambda m: print(m, file=sys.stderr)) if as_json else emit

    def gap_stored(result: explanation.Explanation) -> None:  # the first stage's paired gap
        line = explain.store_gap(db, result)
        if line:
            say(line)

    res = explain.explain(
        req, cat, paths.config_dir(), out_dir, say, on_gap=None if no_store else gap_stored
    )
    if profile_out is not None:
        files.replace_text(profile_out, explanation.profile_fragment(res))
    if not no_store:
        from perftrack.store import explanations

        explanations.save(db, explanation.to_json(res))
    if as_json:
        print_json("explanation", explanation.to_json(res))
    else:
        for line in explanation.table_lines(res):
            emit(line)


def _check_stored_verdicts(
    db: Path, server_a: str, server_b: str, workload: str, threads: int, min_effect: float
) -> None:
    """The DB's verdicts of B against A on this workload: every one's interval excludes a
    regression of ``min_effect`` -> refuse (an `unchanged` inside ±10% does not)."""
    from perftrack.experiments import explain
    from perftrack.store import explanations, store

    if not db.is_file():
        return
    with store.open_db(db, write=False) as st:
        found = explanations.stored_verdicts(st, server_a, server_b, workload, threads)
    if found and all(
        low is not None and explain.excludes_regression(low, min_effect) for _v, low in found
    ):
        lows = ", ".join(f"{v} from {low:.3f}" for v, low in found[:4] if low is not None)
        raise ConfigError(
            f"no regression to explain: the DB's verdicts of {server_b} against {server_a} "
            f"on {workload}, "
            f"{threads} thread(s) ({lows}) exclude a regression of {min_effect:.0%} ({db})"
        )
