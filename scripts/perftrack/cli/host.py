"""The `perftrack runner` commands: tune, preflight, sweep a self-hosted benchmark runner,
and keep a bench job's records outside its workspace (salvage, forget).

(Registered in cli/__init__.py; runners/tune and runners/preflight are thin wrappers.)
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from perftrack.core import paths
from perftrack.core.errors import ConfigError, EnvironmentProblem
from perftrack.host import preflight, salvage, sweep, tuning

runner_app = typer.Typer(
    help="A self-hosted benchmark runner: tune, preflight, sweep it; salvage run records.",
    no_args_is_help=True,
)

EXIT_DRIFT = 1
KEY_RE = re.compile(r"^[0-9a-f]{6,64}\Z")


def _say(msg: str) -> None:
    typer.echo(msg)


@runner_app.command("tune")
def tune_cmd(
    check: Annotated[
        bool, typer.Option("--check", help="report drift per knob; change nothing")
    ] = False,
    undo: Annotated[
        bool, typer.Option("--undo", help="restore the values saved by the last tune")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="print the actions, change nothing")
    ] = False,
    root: Annotated[Path, typer.Option("--root", help="where /sys and /proc are (tests)")] = Path(
        "/"
    ),
    state: Annotated[
        Path, typer.Option("--state", help="file of saved previous values")
    ] = tuning.DEFAULT_STATE,
    thp: Annotated[
        str, typer.Option("--thp", help="transparent hugepages: never or madvise")
    ] = tuning.DEFAULT_THP,
    swappiness: Annotated[
        int, typer.Option("--swappiness", help="vm.swappiness to set")
    ] = tuning.DEFAULT_SWAPPINESS,
) -> None:
    """CPU governor, turbo, SMT, THP, swappiness, NUMA balancing, cron/timers (root)."""
    if check and undo:
        raise ConfigError("--check and --undo exclude each other: pick one")
    if not root.is_dir():
        raise ConfigError(f"--root {root} is not a directory")
    knobs = tuning.knobs(thp, swappiness)
    systemd = tuning.Systemd() if root.resolve() == Path("/") else None
    units = tuning.NOISE_UNITS
    if check:
        statuses = tuning.check(root, knobs, systemd, units)
        for status in statuses:
            _say(status.line())
        drift = [s.knob for s in statuses if s.state == tuning.DRIFT]
        if drift:
            _say(f"drift: {', '.join(drift)} (run `runners/tune` as root to fix)")
            raise typer.Exit(EXIT_DRIFT)
        _say("no drift")
        return
    if undo:
        actions = tuning.undo(root, state, systemd, dry_run=dry_run)
        verb = "would undo" if dry_run else "undone"
        for action in actions:
            _say(f"{verb}: {action}")
        if not actions:
            _say(f"nothing to undo ({state} holds no saved values)")
        return
    actions = tuning.apply(root, state, knobs, systemd, units, dry_run=dry_run)
    for action in actions:
        _say(f"{'would ' if dry_run else ''}{action}")
    if not actions:
        _say("already tuned: nothing to change")
    elif not dry_run:
        _say(f"previous values saved in {state} (`runners/tune --undo` restores them)")


@runner_app.command("preflight")
def preflight_cmd(
    duration: Annotated[
        float | None, typer.Option("--duration", help="seconds of noise probe (default: config)")
    ] = None,
    expect_key: Annotated[
        str | None, typer.Option("--expect-key", help="refuse unless the runner key is this")
    ] = None,
    no_probe: Annotated[bool, typer.Option("--no-probe", help="fingerprint only")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """Runner class key (hardware fingerprint) and a short noise probe; refuses a noisy host."""
    if expect_key is not None and not KEY_RE.match(expect_key):
        raise ConfigError(f"--expect-key {expect_key!r} is not a runner key (hex digits)")
    report = preflight.run_preflight(
        paths.config_dir(), duration, expect_key, probe_noise=not no_probe
    )
    if as_json:
        _say(report.as_json())
    else:
        for line in report.lines():
            _say(line)
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        with open(github_output, "a") as handle:
            handle.write(f"runner_key={report.key}\n")
    if report.violations:
        raise EnvironmentProblem(preflight.refusal(list(report.violations)))


@runner_app.command("sweep")
def sweep_cmd(
    root: Annotated[
        list[Path] | None,
        typer.Option("--root", help="where server directories are (default: the temp dir)"),
    ] = None,
) -> None:
    """Stop servers and containers of dead perftrack runs, remove their pt-* directories."""
    roots = root or [Path(tempfile.gettempdir())]
    for r in roots:
        if not r.is_dir():
            raise ConfigError(f"--root {r} is not a directory")
    sweep.sweep(roots, shutil.which("docker"), say=_say)


@runner_app.command("salvage")
def salvage_cmd(
    night_id: Annotated[str, typer.Option("--night-id", help="tonight's id (the run's id)")],
    into: Annotated[Path, typer.Option("--into", help="where tonight's runs go")] = Path("runs"),
    earlier: Annotated[
        Path, typer.Option("--earlier", help="where earlier nights' runs go")
    ] = Path("salvaged"),
) -> None:
    """Copy the run records kept on this runner into the workspace, for upload."""
    salvage.salvage(salvage.night_id(night_id), into, earlier, say=_say)


@runner_app.command("forget")
def forget_cmd(
    uploaded: Annotated[list[Path], typer.Argument(help="directories that were uploaded")],
) -> None:
    """Delete kept runs whose every record is in the uploaded directories."""
    salvage.forget(uploaded, say=_say)
