"""`perftrack publish`: the nightly publish job."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from perftrack.cli.app import DbOpt, emit
from perftrack.core import paths


def publish_cmd(
    sources: Annotated[list[Path], typer.Argument(help="record files or directories (all shards)")],
    db: DbOpt = paths.DEFAULT_DB,
    remote: Annotated[str, typer.Option(help="git remote to push to")] = "origin",
    branch: Annotated[str | None, typer.Option(help="branch (default: the current one)")] = None,
    attempts: Annotated[int, typer.Option(help="push attempts (lost races retried)")] = 5,
    max_file_mb: Annotated[
        float, typer.Option(help="refuse a commit holding a file larger than this (MB)")
    ] = 50,
    push: Annotated[bool, typer.Option("--push/--no-push", help="push the commit")] = True,
    plan_file: Annotated[Path | None, typer.Option("--plan", help="the night plan")] = None,
    summary_file: Annotated[Path | None, typer.Option("--summary", help="append markdown")] = None,
    chart: Annotated[str | None, typer.Option(help="chart URL/path for the summary")] = None,
    earlier: Annotated[
        list[Path] | None,
        typer.Option(
            "--earlier",
            help="records of earlier nights salvaged from killed jobs: ingested, not "
            "counted as tonight's",
        ),
    ] = None,
    hold_back_bad: Annotated[
        bool,
        typer.Option(
            "--hold-back-bad",
            help="hold back only the batch (a shard's artifact directory) holding a bad "
            "record, name it, and publish the others (the nightly's); without it a bad "
            "record stops everything before anything is written",
        ),
    ] = False,
    archive_records: Annotated[
        bool,
        typer.Option(
            "--archive",
            help="add the records to their months' GitHub Release assets and commit "
            "data/archive/manifest.json with the night (env: GITHUB_REPOSITORY, GITHUB_TOKEN)",
        ),
    ] = False,
) -> None:
    """Ingest a night's records, detect, commit the DB and push it (retrying push races)."""
    from perftrack.publish import archive, publish
    from perftrack.publish import job_summary as summary

    archive_to = archive.remote_from_env() if archive_records else None
    plan = summary.load_plan(plan_file) if plan_file else None
    if not earlier:
        late: set[str] = set()
    elif hold_back_bad:
        late = set(publish.read_batches(earlier)[1])
    else:
        late = set(publish.read_records(earlier)[1])
    res = publish.publish(
        [*sources, *(earlier or [])],
        db=db,
        remote=remote,
        branch=branch,
        attempts=attempts,
        push=push,
        say=emit,
        max_file_mb=max_file_mb,
        hold_back_bad=hold_back_bad,
        archive_to=archive_to,
    )
    state = f"pushed as `{res.commit[:12]}`" if res.pushed and res.commit else "no new commit"
    head = (
        f"{res.records} record(s) from {len(res.run_ids)} run(s), {res.added} new; "
        f"{state} after {res.attempts} attempt(s)."
    )
    if late:
        head += f" {len(late)} of the runs are earlier nights' salvaged from killed jobs."
    if res.held_back:
        head += (
            f" HELD BACK {len(res.held_back)} batch(es) with a bad record, not published: "
            + "; ".join(f"{h.batch.name} ({h.files} file(s)): {h.reason}" for h in res.held_back)
        )
    emit(head)
    if res.held_back and os.environ.get("GITHUB_ACTIONS") == "true":
        emit(f"::warning title=records held back::{len(res.held_back)} batch(es) not published")
    tonight = [r for r in res.run_ids if r not in late]
    if summary_file:
        summary.append(
            summary_file,
            summary.markdown(
                db, tonight, headline=head, plan=plan, chart=chart, detected=res.added > 0
            ),
        )


cache_app = typer.Typer(
    help="The publish job's read cache between nights: sealed with a key only that job "
    "holds, verified before use (docs/workflows.md).",
    no_args_is_help=True,
)
CacheKeyOpt = Annotated[
    str, typer.Option("--for", help="the exact Actions cache key (the data/ tree it is for)")
]
SummaryOpt = Annotated[Path | None, typer.Option("--summary", help="append the line here")]


def _cache_say(line: str, summary_file: Path | None) -> None:
    emit(line)
    if summary_file is not None:
        with summary_file.open("a", encoding="utf-8") as fh:
            fh.write(f"\nRead cache: {line}\n")


@cache_app.command("seal")
def cache_seal(
    directory: Annotated[Path, typer.Argument(help="the read cache, data/.results-cache")],
    key: CacheKeyOpt,
    summary_file: SummaryOpt = None,
) -> None:
    """Seal the read cache for the next night (needs PERFTRACK_CACHE_KEY)."""
    from perftrack.publish import cacheseal

    _cache_say(cacheseal.seal(directory, key), summary_file)


@cache_app.command("verify")
def cache_verify(
    directory: Annotated[Path, typer.Argument(help="the read cache, data/.results-cache")],
    key: CacheKeyOpt,
    summary_file: SummaryOpt = None,
) -> None:
    """Keep a restored read cache only if this job sealed it; else remove it, say why."""
    from perftrack.publish import cacheseal

    _cache_say(cacheseal.verify(directory, key), summary_file)


archive_app = typer.Typer(
    help="The monthly archive of run records: GitHub Release assets listed in "
    "data/archive/manifest.json (docs/workflows.md). Env: GITHUB_REPOSITORY, GITHUB_TOKEN, "
    "PERFTRACK_GITHUB_API_URL or GITHUB_API_URL.",
    no_args_is_help=True,
)
ManifestOpt = Annotated[Path, typer.Option(help="the manifest in git")]
MonthOpt = Annotated[str, typer.Option("--month", help="YYYY-MM")]


@archive_app.command("upload")
def archive_upload(
    sources: Annotated[list[Path], typer.Argument(help="record files or directories")],
    manifest: ManifestOpt = Path("data/archive/manifest.json"),
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh",
            help="the records are their months' whole content: the current asset is not "
            "read (puts right an asset that no longer matches the manifest)",
        ),
    ] = False,
) -> None:
    """Add the records to their months' assets (each replaced) and update the manifest."""
    from perftrack.core.errors import ConfigError
    from perftrack.publish import archive

    missing = [str(s) for s in sources if not s.exists()]
    if missing:
        raise ConfigError(f"no such file or directory: {', '.join(missing)}")
    done = archive.archive(archive.remote_from_env(), sources, manifest, fresh=fresh)
    for e in done:
        emit(f"{e.month}: {e.asset} ({e.records} records, {e.bytes} bytes, sha256 {e.sha256})")
    if not done:
        emit("archive: nothing new")


@archive_app.command("verify")
def archive_verify(
    month: MonthOpt, manifest: ManifestOpt = Path("data/archive/manifest.json")
) -> None:
    """Download one month's asset and check it against the manifest; nothing written."""
    from perftrack.publish import archive

    e = archive.verify(archive.remote_from_env(), manifest, month)
    emit(f"{e.month}: {e.asset} verified ({e.records} records, sha256 {e.sha256})")


@archive_app.command("fetch")
def archive_fetch(
    month: MonthOpt,
    out: Annotated[Path, typer.Option(help="a new directory for the records")],
    manifest: ManifestOpt = Path("data/archive/manifest.json"),
) -> None:
    """Download one month's asset, verify it, unpack its records into a new directory."""
    from perftrack.publish import archive

    e = archive.fetch(archive.remote_from_env(), manifest, month, out)
    emit(f"{e.month}: {e.records} records into {out}")
