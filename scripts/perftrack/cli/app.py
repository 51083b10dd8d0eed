"""What every `perftrack` command shares: the root Typer app, the console, common options.

Every user error becomes one line on stderr (`error: …`) and a documented exit code
(see perftrack.core.errors); a traceback means a bug in perftrack.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from perftrack import __version__
from perftrack.analysis import compare
from perftrack.core.errors import ConfigError
from perftrack.planning import matrix

app = typer.Typer(
    help="perftrack: continuous performance-regression tracking for MySQL.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# Logs and CI are not terminals: give tables room instead of rich's 80-column default.
NON_TTY_WIDTH = 180
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else NON_TTY_WIDTH)
DbOpt = Annotated[Path, typer.Option("--db", help="results DB file")]
RunsOpt = Annotated[Path, typer.Option("--out", help="directory for run directories")]
METRIC_HELP = " | ".join(compare.METRICS)  # throughput, latency and cost per operation


def emit(msg: str) -> None:
    out.print(msg, markup=False)


def schema(kind: str) -> str:
    """The schema version a `--json` output carries: bumped when its shape changes."""
    return f"perftrack.{kind}.v{JSON_VERSION}"


JSON_VERSION = 1


def print_json(kind: str, body: dict[str, Any]) -> None:
    """A `--json` output: one object, its first field the schema version (`schema`)."""
    print(json.dumps({"schema": schema(kind), **body}, indent=1, default=str))


def runner_class_of(value: str | None) -> str:
    rc = value or os.environ.get("PERFTRACK_RUNNER_CLASS") or "local"
    if not matrix.NAME_RE.match(rc):
        raise ConfigError(f"runner class '{rc}' must be a short identifier")
    return rc


def version() -> None:
    """Print perftrack's version."""
    emit(__version__)
