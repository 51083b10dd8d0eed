"""The `perftrack site` commands: build, serve, png (registered in cli/__init__.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from perftrack.core import paths
from perftrack.core.errors import ConfigError

site_app = typer.Typer(
    help="The published static site (pages, charts, data from the DB).", no_args_is_help=True
)

DbOpt = Annotated[Path, typer.Option("--db", help="results DB file")]
SiteOpt = Annotated[Path, typer.Option("--out", help="directory of the built site")]
DEFAULT_ANNOTATIONS = "annotations.yaml"  # in configs/
DEFAULT_STUDIES = "studies"  # configs/studies/*.yaml


def _say(msg: str) -> None:
    typer.echo(msg)


def _config_file(name: str) -> Path | None:
    try:
        return paths.config_dir() / name
    except ConfigError:  # no checkout around: no annotations or studies, not an error
        return None


@site_app.command("build")
def build_cmd(db: DbOpt = paths.DEFAULT_DB, out: SiteOpt = Path("build/site")) -> None:
    """Write the static site: HTML, Vega-Lite specs, data exported from the DB, vendored JS."""
    from perftrack.publish.site import build

    res = build.build(
        db,
        out,
        annotations_path=_config_file(DEFAULT_ANNOTATIONS),
        studies_dir=_config_file(DEFAULT_STUDIES),
        progress=_say,
    )
    note = " (the DB has no results yet: the pages say so)" if res.empty else ""
    _say(
        f"{out}: {len(res.pages)} pages, {res.bytes_total / 1e6:.2f} MB{note}; open "
        f"{out}/index.html or run `perftrack site serve --out {out}`"
    )


@site_app.command("serve")
def serve_cmd(
    out: SiteOpt = Path("build/site"),
    port: Annotated[int, typer.Option(min=0, max=65535, help="port (0: any free one)")] = 8000,
) -> None:
    """Serve a built site on http://127.0.0.1:PORT/ for local viewing (Ctrl-C stops)."""
    from perftrack.publish.site import serve

    serve.serve(out, port, _say)


@site_app.command("png")
def png_cmd(
    chart: Annotated[
        str, typer.Argument(help="overview, trend, scaling, charset, heatmap, history")
    ],
    out: Annotated[Path, typer.Option("--out", help="PNG file to write")],
    db: DbOpt = paths.DEFAULT_DB,
    workload: Annotated[str | None, typer.Option(help="only this workload")] = None,
    collation: Annotated[str | None, typer.Option(help="only this collation")] = None,
    threads: Annotated[int | None, typer.Option(help="only this thread count")] = None,
    profile: Annotated[str | None, typer.Option(help="only this profile")] = None,
    runner_class: Annotated[str | None, typer.Option(help="only this runner class")] = None,
) -> None:
    """Render one chart to PNG offline (vl-convert), e.g. for job summaries and PR comments."""
    from perftrack.publish.site import png

    given = {
        k: str(v)
        for k, v in {
            "workload": workload,
            "collation": collation,
            "threads": threads,
            "profile": profile,
            "runner_class": runner_class,
        }.items()
        if v is not None
    }
    n, chosen = png.render(chart, db, out, given, _config_file(DEFAULT_ANNOTATIONS))
    where = ", ".join(f"{k}={v}" for k, v in chosen.items()) or "all results"
    _say(f"{out}: {chart} chart, {n} rows ({where})")
