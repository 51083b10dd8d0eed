"""The `perftrack tags` and `perftrack pr` commands (registered in cli/__init__.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from perftrack.core import ghoutput, paths

tags_app = typer.Typer(
    help="New MySQL release tags (Docker Hub + GitHub) and catalog changes.", no_args_is_help=True
)
pr_app = typer.Typer(help="The PR check: verdict report and PR comment.", no_args_is_help=True)

GhOutOpt = Annotated[
    Path | None,
    typer.Option("--github-output", help="append key=value outputs here ($GITHUB_OUTPUT)"),
]


def _say(msg: str) -> None:
    typer.echo(msg)


@tags_app.command("check")
def tags_check(
    write: Annotated[bool, typer.Option("--write", help="append the new versions")] = False,
    github_output: GhOutOpt = None,
) -> None:
    """New MySQL releases (Docker Hub library/mysql + GitHub mysql-server tags) vs the catalog."""
    from perftrack.servers import catalog, tags

    cat = catalog.read_catalog()
    result = tags.check(cat)
    if write:
        tags.append(cat.path, result.new)
    tags.report(result, write, _say)
    if github_output is not None:
        ids = [r.server_id for r in result.new]
        ghoutput.append(github_output, {"added": " ".join(ids), "count": str(len(ids))})


@tags_app.command("diff")
def tags_diff(
    base_ref: Annotated[str, typer.Option("--base-ref", help="git ref of the PR's base")],
    matrix_name: Annotated[
        str, typer.Option("--matrix", help="PR matrix (name in configs/matrices/ or file)")
    ] = "pr",
    matrix_out: Annotated[
        Path | None, typer.Option("--matrix-out", help="write the PR's matrix here")
    ] = None,
    pairs_out: Annotated[
        Path | None, typer.Option("--pairs-out", help="write the pairs here (JSON)")
    ] = None,
    github_output: GhOutOpt = None,
) -> None:
    """Servers the working tree's catalog adds vs BASE_REF, each with its predecessor."""
    from perftrack.publish import prcheck
    from perftrack.servers import catalog

    head = catalog.read_catalog()
    base = prcheck.base_catalog(base_ref, head.path)
    pairs = prcheck.added_pairs(base, head)
    for p in pairs:
        verb = "changed" if p.new in base else "added"
        _say(f"{verb} {p.new}: " + (f"vs {p.previous}" if p.previous else "no predecessor"))
    if not pairs:
        _say(f"no servers added since {base_ref}")
    runnable = [p for p in pairs if p.previous]
    if matrix_out is not None and runnable:
        prcheck.write_matrix(prcheck.pr_matrix(pairs, head, matrix_name), matrix_out)
        _say(f"{matrix_out}: the {matrix_name} matrix with {len(runnable)} pair(s)")
    if pairs_out is not None:
        pairs_out.write_text(prcheck.pairs_json(pairs) + "\n", encoding="utf-8")
    ghoutput.append(
        github_output,
        {"pairs": prcheck.pairs_json(pairs), "added": str(len(pairs)), "count": str(len(runnable))},
    )


@pr_app.command("report")
def pr_report(
    pairs_file: Annotated[Path, typer.Option("--pairs", help="pairs JSON from tags diff")],
    runs: Annotated[Path, typer.Option("--runs", help="directory of the PR's run(s)")],
    db: Annotated[Path, typer.Option("--db", help="scratch DB holding the PR's runs")],
    markdown: Annotated[Path, typer.Option("--markdown", help="write the verdict table here")],
    chart: Annotated[Path | None, typer.Option("--chart", help="write a PNG chart here")] = None,
    summary: Annotated[Path | None, typer.Option("--json", help="write a JSON summary")] = None,
    chart_link: Annotated[str | None, typer.Option(help="where the chart will be")] = None,
    github_output: GhOutOpt = None,
) -> None:
    """Verdicts of the PR's new servers vs their predecessors (exit 0; see `regressions`)."""
    from perftrack.analysis import annotations
    from perftrack.publish import prcheck

    pairs = prcheck.read_pairs(pairs_file)
    notes = annotations.read_annotations(paths.config_dir() / "annotations.yaml")
    run_ids = prcheck.run_ids(runs) if runs.is_dir() else []
    rep = prcheck.build_report(db, run_ids, pairs, notes)
    markdown.write_text(prcheck.markdown(rep, chart_link), encoding="utf-8")
    if chart is not None and rep.lines:
        prcheck.chart(rep, chart)
    if summary is not None:
        summary.write_text(json.dumps(prcheck.summary_json(rep), indent=1), encoding="utf-8")
    _say(
        f"{len(rep.lines)} comparison(s): {len(rep.regressions)} unacknowledged regression(s), "
        f"{len(rep.acknowledged)} acknowledged; report in {markdown}"
    )
    ghoutput.append(github_output, {"regressions": str(len(rep.regressions))})


@pr_app.command("comment")
def pr_comment(
    body: Annotated[Path, typer.Option("--body", help="markdown file")],
    pr_number: Annotated[
        str | None, typer.Option("--pr", help="PR number (default: $PR_NUMBER)")
    ] = None,
) -> None:
    """Create or update the one PR comment (env: GITHUB_REPOSITORY, GITHUB_TOKEN, …)."""
    from perftrack.publish import prcomment

    action, cid = prcomment.upsert(prcomment.target_from_env(pr_number), prcomment.read_body(body))
    _say(f"PR comment {cid} {action}")
