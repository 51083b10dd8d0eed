"""The `perftrack` entry point: runs the CLI and turns every user error into one line."""

from __future__ import annotations

import functools
import signal
import sys
from typing import Any

import click
import typer.main

from perftrack.cli.app import app
from perftrack.core.errors import EXIT_INTERRUPTED, Interrupted, PerftrackError


def _interrupt(signum: int, frame: object) -> None:
    raise Interrupted(f"interrupted by signal {signal.Signals(signum).name}")


@functools.cache
def command() -> click.Command:
    """The click command of the app, built once a process (typer's building takes ~0.1 s,
    which every in-process call paid), with two fixes to every parameter of every command:
    - an option that reads no environment variable is declared so (typer.Option shows one
      by default, and click 8.2 then ends each error about it with "(env var: 'None')");
    - a path given as "" (`--db ""`, a variable left unset) is refused: it would become
      ".", the current directory."""
    root = typer.main.get_command(app)
    todo: list[click.Command] = [root]
    while todo:
        cmd = todo.pop()
        if isinstance(cmd, click.Group):
            todo.extend(cmd.commands.values())
        for p in cmd.params:
            if isinstance(p, click.Option) and p.envvar is None:
                p.show_envvar = False
            if isinstance(p.type, click.Path):
                p.type.convert = _non_empty(p.type.convert)  # type: ignore[method-assign]
    return root


def _non_empty(convert: Any) -> Any:
    def checked(value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            raise click.BadParameter("empty: give a path", ctx=ctx, param=param)
        return convert(value, param, ctx)

    return checked


def main(argv: list[str] | None = None) -> int:
    # SIGTERM/SIGHUP end perftrack like Ctrl-C does: cleanup code runs, no traceback.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    try:
        rc = command()(args=argv, standalone_mode=False)
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
