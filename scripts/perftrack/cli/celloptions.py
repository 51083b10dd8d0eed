"""The cell options shared by the commands that measure or filter one cell: `compare`
(a filter over stored results; with --until-conclusive the rounds' cell), `bisect` and
`explain` (the rounds' cell), declared once, and the rounds' request built from them."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from perftrack.cli.app import runner_class_of
from perftrack.planning import cells, matrix

# The cell interleaved rounds measure when an option does not say (compare
# --until-conclusive, bisect); compare over stored results filters by the options given.
ROUND_CELL: dict[str, Any] = {
    "workload": "oltp_point_select",
    "threads": 1,
    "charset": "latin1",
    "duration": cells.ROUND_DURATION_S,
    "warmup": 1,
    "tables": 2,
    "table_size": 10_000,
    "profile": "default",
    "handshake": None,  # the axis's default (configs/axes.yaml)
}

# The cell of --until-conclusive rounds and bisect steps (one workload/threads/charset).
CellWorkload = Annotated[str, typer.Option("--workload", help="rounds: workload")]
CellThreads = Annotated[int, typer.Option("--threads", min=1, help="rounds: threads")]
CellCharset = Annotated[str, typer.Option("--charset", help="rounds: charset or collation")]
CellDuration = Annotated[int, typer.Option("--duration", min=1, help="rounds: seconds measured")]
CellWarmup = Annotated[int, typer.Option("--warmup", min=0, help="rounds: seconds of warm-up")]
CellTables = Annotated[int, typer.Option("--tables", min=1, help="rounds: sysbench tables")]
CellTableSize = Annotated[int, typer.Option("--table-size", min=1, help="rounds: rows per table")]
CellProfile = Annotated[str, typer.Option("--profile", help="rounds: profile")]
CellHandshake = Annotated[
    str | None, typer.Option("--handshake", help="rounds: handshake (configs/axes.yaml)")
]
RunnerClassOpt = Annotated[str | None, typer.Option("--runner-class", help="runner class label")]


def _cell_opt(name: str, kind: type, what: str, **option_args: Any) -> Any:
    """A cell option of `compare`: a filter over stored results, the rounds' cell with
    --until-conclusive (ROUND_CELL's value when not given)."""
    flag = "--" + name.replace("_", "-")
    return Annotated[
        kind | None,
        typer.Option(
            flag, help=f"only this {what} (rounds: default {ROUND_CELL[name]})", **option_args
        ),
    ]


FilterWorkload = _cell_opt("workload", str, "workload")
FilterThreads = _cell_opt("threads", int, "thread count", min=1)
FilterCharset = _cell_opt("charset", str, "charset or collation")
FilterDuration = _cell_opt("duration", int, "measured duration in seconds", min=1)
FilterWarmup = _cell_opt("warmup", int, "warm-up in seconds; rounds only", min=0)
FilterTables = _cell_opt("tables", int, "number of sysbench tables", min=1)
FilterTableSize = _cell_opt("table_size", int, "rows per table", min=1)
FilterProfile = _cell_opt("profile", str, "profile")
MinEffectOpt = Annotated[
    float, typer.Option("--min-effect", help="percent: 'unchanged' rules out a change this big")
]


def round_request(server_a: str, server_b: str, seconds: float, opts: dict[str, Any]) -> Any:
    """The interleaved-rounds request of `compare --until-conclusive` and `bisect`, from
    the cell options both commands share (their `locals()`: the same option names)."""
    from perftrack.experiments import conclude

    return conclude.Request(
        a=server_a,
        b=server_b,
        budget_s=seconds,
        workload=opts["workload"],
        threads=opts["threads"],
        charset=opts["charset"],
        duration_s=opts["duration"],
        warmup_s=opts["warmup"],
        tables=opts["tables"],
        table_size=opts["table_size"],
        profile=opts["profile"],
        handshake=opts.get("handshake"),
        metric=opts["metric"],
        runner_class=runner_class_of(opts["runner_class"]),
        min_effect=opts["min_effect"] / 100,
        axis=opts.get("axis"),
        values=tuple(opts.get("values") or ()),
        server_lifetime=opts.get("server_lifetime") or matrix.DEFAULT_SERVER_LIFETIME,
    )
