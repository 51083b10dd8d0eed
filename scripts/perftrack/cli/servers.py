"""`perftrack servers`: the server catalog (list, pin, fetch, Docker Hub tags)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from perftrack.cli.app import emit, out
from perftrack.core import ghoutput
from perftrack.core.errors import ConfigError, EnvironmentProblem
from perftrack.servers import catalog, providers, releases

servers_app = typer.Typer(help="The server catalog (configs/versions.yaml).", no_args_is_help=True)


@servers_app.command("list")
def servers_list() -> None:
    """List the servers perftrack can fetch."""
    cat = catalog.read_catalog()
    lines = releases.read_releases(releases.beside(cat.path))
    known = [e.version for e in cat]
    t = Table("id", "product", "version", "line", "support", "provider", "pinned", "note")
    for e in cat.entries:
        line = lines.line_of(e.product, e.version)
        t.add_row(
            e.id,
            e.product,
            e.version,
            line.label if line else "",
            lines.status(e.product, e.version, known),
            e.provider,
            _pin_state(e),
            e.stand_in or e.notes or "",
        )
    out.print(t)


def _pin_state(entry: catalog.Entry) -> str:
    if entry.unpinned:
        return "NOT YET"
    if entry.provider in ("docker", "tarball") and not (
        entry.digest or (entry.tarball and entry.tarball.sha256)
    ):
        return "no"
    return "yes"


@servers_app.command("pin")
def servers_pin(
    ids: Annotated[
        list[str] | None, typer.Argument(help="server ids (default: all unpinned)")
    ] = None,
    provider: Annotated[
        str | None, typer.Option(help="only entries of this provider: docker or tarball")
    ] = None,
    write: Annotated[bool, typer.Option("--write", help="record the pins in the catalog")] = False,
    github_output: Annotated[
        Path | None,
        typer.Option("--github-output", help="append pinned=IDS and pin_count=N here"),
    ] = None,
    from_night: Annotated[
        Path | None,
        typer.Option(
            "--from-night",
            help="a night plan: propose the digests it pinned while planning that the "
            "night's run records (--records) used; asks no registry",
        ),
    ] = None,
    records: Annotated[
        list[Path] | None,
        typer.Option("--records", help="with --from-night: the night's run records (dirs)"),
    ] = None,
) -> None:
    """Pin entries marked `unpinned`: Docker Hub digest or tarball sha256 (on a runner)."""
    from perftrack.servers import pin

    if from_night is not None or records:
        from perftrack.cli import nightpins

        if from_night is None or ids or provider:
            raise ConfigError("--records goes with --from-night, which takes no ids or --provider")
        return nightpins.pin_from_night(from_night, list(records or []), write, github_output)
    cat = catalog.read_catalog()
    entries = pin.pending(cat, list(ids or []), provider)
    if not entries:
        emit("nothing to pin: every docker and tarball entry has its digest or sha256")
    outcome = pin.pin_all(entries, emit)
    for p in outcome.pins:
        emit(f"{p.server_id}: {p.key} {p.value}")
    if write:
        pin.write(cat.path, outcome.pins)
        if outcome.pins:
            emit(f"wrote {len(outcome.pins)} pin(s) to {cat.path}")
    ids = [p.server_id for p in outcome.pins]
    ghoutput.append(github_output, {"pinned": " ".join(ids), "pin_count": str(len(ids))})
    for sid, reason in outcome.failed:
        emit(f"{sid}: NOT pinned: {reason}")
    if outcome.failed:
        raise EnvironmentProblem(
            f"{len(outcome.failed)} of {len(entries)} entries could not be pinned "
            f"({', '.join(s for s, _ in outcome.failed)}); they stay unpinned"
        )


@servers_app.command("fetch")
def servers_fetch(ids: Annotated[list[str], typer.Argument(help="server ids")]) -> None:
    """Download, verify and extract servers into the cache (reused afterwards)."""
    cat = catalog.read_catalog()
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
    from perftrack.servers.providers import docker

    if not docker.IMAGE_NAME_RE.match(repository):
        raise ConfigError(
            f"'{repository}' is not a Docker Hub repository name (e.g. mysql, "
            "percona/percona-server)"
        )
    for tag in docker.list_tags(repository):
        if tag.name.startswith(prefix):
            emit(f"{tag.name}  {tag.digest or '-'}")
