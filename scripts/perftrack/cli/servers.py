"""`perftrack servers`: the server catalog (list, fetch, Docker Hub tags)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from perftrack.cli.app import emit, out
from perftrack.core.errors import ConfigError
from perftrack.servers import catalog, providers

servers_app = typer.Typer(help="The server catalog (configs/versions.yaml).", no_args_is_help=True)


@servers_app.command("list")
def servers_list() -> None:
    """List the servers perftrack can fetch."""
    cat = catalog.load()
    t = Table("id", "product", "version", "provider", "note")
    for e in cat.entries:
        t.add_row(e.id, e.product, e.version, e.provider, e.stand_in or "")
    out.print(t)


@servers_app.command("fetch")
def servers_fetch(ids: Annotated[list[str], typer.Argument(help="server ids")]) -> None:
    """Download, verify and extract servers into the cache (reused afterwards)."""
    cat = catalog.load()
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
