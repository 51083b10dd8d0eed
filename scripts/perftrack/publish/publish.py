"""`perftrack publish`: the nightly publish job, from records to a pushed DB commit.

One call does what the workflow's single `publish` job needs, in this order:

1. read and validate every run record that arrived (all shards' artifacts, merged); a
   shard that failed or never started simply has no records: its cells stay missing in
   the DB (no row, never a zero);
2. ingest them into the DB file of a git work tree (idempotent by record id), recompute
   the derived statistics (`detect`), close the DB (CHECKPOINT: no `.wal` beside it);
3. commit the DB file and its new night files (`data/results/<yyyy>/…parquet`, see
   store/files/nightfiles.py) and push the commit to the remote branch.

A push can lose a race: another publish (or any commit) reached the branch first. The DB
is a binary file, so the commits are never merged: on a rejected push the local commit is
dropped, the branch is reset to the remote's (`git reset --keep`, which takes *their* DB
file and night files, drops ours, and leaves unrelated local changes alone), the same
records are ingested again (ingest is idempotent, so the other night's rows stay and ours
are added once, in new files), detect runs again, and a new commit is pushed. Bounded
attempts; when exhausted, the error says what to do (the records are still in the
artifacts: re-run the job).

Credentials: with `GITHUB_TOKEN` in the environment and an `https://github.com/` remote,
the token reaches git only through `GIT_CONFIG_*` environment variables of the git
processes (an `http.extraheader`, as actions/checkout writes it), never a file on disk or
a command line, so the checkout can use `persist-credentials: false`.
"""

from __future__ import annotations

import base64
import os
import random
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from perftrack.analysis import annotations as acks  # not `annotations`: the __future__ name
from perftrack.analysis import detect as detect_mod
from perftrack.core import git, paths, record, yamlfile
from perftrack.core.errors import ConfigError, EnvironmentProblem, RecordError
from perftrack.publish import archive
from perftrack.store import store
from perftrack.store.files import nightfiles

DEFAULT_ATTEMPTS = 5
MAX_ATTEMPTS = 20
# Between attempts: a short random pause, so two jobs that lost to each other do not
# retry in lockstep. Bounded well under a minute in total at the default attempts.
RETRY_PAUSE_S = (0.5, 3.0)
GIT_TIMEOUT_S = 300.0  # a push of a few MB over a slow link; only guards a hang
# What git prints when a push lost a race (rejected as non-fast-forward, or a concurrent
# receive-pack held the ref lock); anything else (auth, network, hooks) is not retried.
RACE_MARKERS = (
    "[rejected]",
    "non-fast-forward",
    "fetch first",
    "cannot lock ref",
    "failed to lock",
    "failed to update ref",
    "stale info",
    "incorrect old value",
)
BOT_NAME = "github-actions[bot]"
BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"
GITHUB_HOST = "https://github.com/"
MAX_MESSAGE_CHARS = 300


class PushError(EnvironmentProblem):
    """The DB commit could not be pushed (attempts exhausted, or git refused)."""


class TooLarge(EnvironmentProblem):
    """A file the commit would hold is over the size limit: refused before committing."""


# The largest file publish commits. GitHub refuses a push with a file over 100 MB, and a
# refused push would fail every night from then on; the repository's budget is 50 MB
# (docs/benchmarks.md, "Budgets").
DEFAULT_MAX_FILE_MB = 50


@dataclass(kw_only=True)
class Result:
    records: int = 0  # record files read
    added: int = 0  # new in the DB at the attempt that was pushed
    run_ids: list[str] = field(default_factory=list)
    commit: str | None = None  # the pushed (or, with push=False, local) commit
    attempts: int = 0
    pushed: bool = False
    held_back: list[HeldBack] = field(default_factory=list)  # with hold_back_bad


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_MESSAGE_CHARS else line[: MAX_MESSAGE_CHARS - 1] + "…"


class Git:
    """git in one work tree, with optional token auth passed through the environment."""

    def __init__(self, worktree: Path, token: str | None = None) -> None:
        self.worktree = worktree
        self.env = dict(os.environ)
        for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            self.env.pop(k, None)
        if token:
            self._token_env(token)
        if not self.config("user.email"):
            for who in ("AUTHOR", "COMMITTER"):
                self.env.setdefault(f"GIT_{who}_NAME", BOT_NAME)
                self.env.setdefault(f"GIT_{who}_EMAIL", BOT_EMAIL)

    def _token_env(self, token: str) -> None:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        n = int(self.env.get("GIT_CONFIG_COUNT", "0") or 0)
        self.env[f"GIT_CONFIG_KEY_{n}"] = f"http.{GITHUB_HOST}.extraheader"
        self.env[f"GIT_CONFIG_VALUE_{n}"] = f"AUTHORIZATION: basic {basic}"
        self.env["GIT_CONFIG_COUNT"] = str(n + 1)

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        try:
            p = git.run_git(self.worktree, *args, env=self.env, timeout=GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise PushError(f"git {args[0]} did not finish in {GIT_TIMEOUT_S:.0f} s") from None
        if check and p.returncode != 0:
            raise PushError(f"git {' '.join(args)} failed: {_one_line(p.stderr or p.stdout)}")
        return p

    def out(self, *args: str) -> str:
        return self.run(*args).stdout.strip()

    def config(self, key: str) -> str:
        return self.run("config", "--get", key, check=False).stdout.strip()


def worktree_of(db: Path) -> tuple[Path, Path]:
    """(git top-level directory, the DB's path relative to it); ConfigError if none."""
    parent = db.resolve().parent
    existing = next((d for d in (parent, *parent.parents) if d.is_dir()), Path("/"))
    top = git.toplevel(existing)
    if top is None:
        raise ConfigError(f"{db} is not inside a git work tree: publish commits it there")
    parent.mkdir(parents=True, exist_ok=True)  # a first publish into a fresh checkout
    return top, db.resolve().relative_to(top)


@dataclass(frozen=True)
class HeldBack:
    """A batch of records not published because one of its files is bad."""

    batch: Path  # a shard's artifact directory (or a record file given alone)
    files: int  # record files in it
    reason: str  # the first bad file and why


def batches(sources: Sequence[Path]) -> list[tuple[Path, list[Path]]]:
    """Each source's batches: every subdirectory of a directory is one (a shard's artifact:
    incoming/records-shard-N/), the records directly in it one more, a file alone one."""
    missing = [str(s) for s in sources if not s.exists()]
    if missing:
        raise ConfigError(f"no such file or directory: {', '.join(missing)}")
    out: list[tuple[Path, list[Path]]] = []
    for src in sources:
        if not src.is_dir():
            out.append((src, [src]))
            continue
        loose = [q for q in sorted(src.iterdir()) if q.is_file()]
        out.append((src, [q for q in loose if record.RECORD_NAME.match(q.name)]))
        out += [(d, list(record.find([d]))) for d in sorted(src.iterdir()) if d.is_dir()]
    return [(b, files) for b, files in out if files]


def read_batches(
    sources: Sequence[Path],
) -> tuple[list[store.PreparedRecord], list[str], list[HeldBack]]:
    """Every record under `sources`, batch by batch (`batches`): a batch with a bad record
    is held back whole, the others are read and validated as `read_records` does."""
    prepared: list[store.PreparedRecord] = []
    held: list[HeldBack] = []
    for batch, files in batches(sources):
        try:
            prepared += store.read_prepared(files)
        except RecordError as exc:
            held.append(HeldBack(batch=batch, files=len(files), reason=_one_line(str(exc))))
    return prepared, sorted({p.run_id for p in prepared}), held


def read_records(sources: Sequence[Path]) -> tuple[list[store.PreparedRecord], list[str]]:
    """Every record under `sources`, validated before anything is written; and run ids."""
    missing = [str(s) for s in sources if not s.exists()]
    if missing:
        raise ConfigError(f"no such file or directory: {', '.join(missing)}")
    prepared = store.read_prepared(sources)
    return prepared, sorted({p.run_id for p in prepared})


def ingest_and_detect(db: Path, prepared: Sequence[store.PreparedRecord]) -> store.IngestResult:
    """Ingest (idempotent) and recompute noise/verdicts/change points; closes with CHECKPOINT."""
    cfg = paths.config_dir()
    notes = acks.load_file(cfg / "annotations.yaml")
    runners = yamlfile.read_yaml(cfg / "runners.yaml") if (cfg / "runners.yaml").is_file() else {}
    control = runners.get("control_server") if isinstance(runners, dict) else None
    with store.open_db(db, write=True) as st:
        res = st.ingest_prepared(prepared) if prepared else store.IngestResult(0, 0)
        if res.added:  # not strict: an annotation for a pair not measured yet waits
            detect_mod.detect_and_store(st, notes.notes, control, expire_days=notes.expire_days)
    return res


def _branch(git: Git, branch: str | None) -> str:
    if branch:
        return branch
    p = git.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    name = p.stdout.strip() or os.environ.get("GITHUB_REF_NAME", "")
    if not name:
        raise ConfigError("HEAD is detached: give the branch to push to with --branch")
    return name


def _is_race(stderr: str) -> bool:
    return any(m in stderr for m in RACE_MARKERS)


def _restore(git: Git, top: Path, rel: Path) -> None:
    """Put the DB file and its night files back as the branch has them (a refused night)."""
    files = str(nightfiles.files_dir(rel))
    git.run("reset", "--quiet", "--", str(rel), files)
    git.run("checkout", "--quiet", "--", str(rel), files, check=False)
    git.run("clean", "-fdq", "--", files)  # this night's new files
    if not git.out("ls-files", "--", str(rel)):  # new file: not on the branch yet
        (top / rel).unlink(missing_ok=True)


def _check_sizes(git: Git, top: Path, rel: Path, max_file_mb: float) -> None:
    """`TooLarge` naming the file and the limit if a staged file is over it; the DB file
    and its night files are then restored to the branch's (the night's records stay in
    the run's artifacts)."""
    limit = int(max_file_mb * 1_000_000)
    staged = [n for n in git.out("diff", "--cached", "--name-only", "-z").split("\0") if n]
    for name in staged:
        size = (top / name).stat().st_size if (top / name).is_file() else 0
        if size > limit:
            _restore(git, top, rel)
            raise TooLarge(
                f"{name} would be {size / 1e6:.1f} MB, over the {max_file_mb:g} MB limit "
                "for a file in the repository: nothing committed or pushed (the records are "
                "in the run's artifacts); see docs/schema.md for the storage layout"
            )


# The growth guard (issue 39): the committed history's budget is 270 KB of git growth a
# night at the nightly's 3,960 results. A night whose new night files weigh more than
# GROWTH_FACTOR times that budget, scaled by its result count (never below one night's
# budget: a small night's files are mostly Parquet metadata), is refused: something wrote
# far more than the measured values (docs/schema.md, "The growth guard").
GROWTH_BUDGET_KB = 270.0
GROWTH_RESULTS = 3960
GROWTH_FACTOR = 3.0


def growth_limit(results: int, budget_kb: float = GROWTH_BUDGET_KB) -> int:
    """The most bytes of new night files a night of `results` results may commit."""
    return int(GROWTH_FACTOR * budget_kb * 1000 * max(1.0, results / GROWTH_RESULTS))


def _check_growth(git: Git, top: Path, rel: Path, results: int, budget_kb: float) -> None:
    """`TooLarge` naming the night's new files and their size if they are over
    `growth_limit`; the DB and its night files are then restored to the branch's."""
    files = str(nightfiles.files_dir(rel))
    added = git.out("diff", "--cached", "--name-only", "--diff-filter=A", "-z", "--", files)
    names = [n for n in added.split("\0") if n]
    size = sum((top / n).stat().st_size for n in names if (top / n).is_file())
    limit = growth_limit(results, budget_kb)
    if size > limit:
        _restore(git, top, rel)
        night = ", ".join(Path(n).name for n in names[:3]) + (" …" if len(names) > 3 else "")
        raise TooLarge(
            f"the night ({night}) would add {size / 1000:.1f} KB of night files for "
            f"{results} result(s), over the growth limit of {limit / 1000:.1f} KB "
            f"({GROWTH_FACTOR:g} x {budget_kb:g} KB a {GROWTH_RESULTS}-result night): "
            "nothing committed or pushed (the records are in the run's artifacts)"
        )


def _record_files(sources: Sequence[Path], held: Sequence[HeldBack]) -> list[Path]:
    """The record files of every batch under `sources` that was not held back."""
    skip = {h.batch for h in held}
    return [f for batch, files in batches(sources) if batch not in skip for f in files]


def default_message(run_ids: Sequence[str], added: int) -> str:
    runs = ", ".join(run_ids[:5]) + (f" and {len(run_ids) - 5} more" if len(run_ids) > 5 else "")
    return f"data: publish {added} result(s) from run(s) {runs or '(none)'}"


def publish(
    sources: Sequence[Path],
    *,
    db: Path = paths.DEFAULT_DB,
    remote: str = "origin",
    branch: str | None = None,
    attempts: int = DEFAULT_ATTEMPTS,
    push: bool = True,
    message: str | None = None,
    say: Callable[[str], None] = lambda _m: None,
    pause: Callable[[float], None] = time.sleep,
    max_file_mb: float = DEFAULT_MAX_FILE_MB,
    hold_back_bad: bool = False,
    growth_budget_kb: float = GROWTH_BUDGET_KB,
    archive_to: archive.Remote | None = None,
) -> Result:
    """Ingest `sources` into `db`, detect, commit the DB and push (retrying lost races).

    A bad record stops everything before anything is written; with `hold_back_bad` (the
    nightly's), only its batch (`batches`: one shard's artifact) is held back, named in a
    line, and the others publish — one broken shard does not cost the night.
    A commit that would hold a file over `max_file_mb` is refused before it is made: the
    DB file is put back as the branch has it, and nothing is committed or pushed; so is
    a night whose new files are far over the growth budget (`growth_limit`).
    With `archive_to`, the night's records are added to their months' release assets
    (publish/archive.py) once the checks pass, and the manifest is committed with the
    night (at every attempt: a lost race takes the remote's manifest, then archives again)."""
    if not 1 <= attempts <= MAX_ATTEMPTS:
        raise ConfigError(f"--attempts must be 1..{MAX_ATTEMPTS}, not {attempts}")
    if not 0 < max_file_mb <= 100:
        raise ConfigError(f"--max-file-mb must be above 0 and at most 100, not {max_file_mb:g}")
    held: list[HeldBack] = []
    if hold_back_bad:
        prepared, run_ids, held = read_batches(sources)
    else:
        prepared, run_ids = read_records(sources)
    top, rel = worktree_of(db)
    git = Git(top, os.environ.get("GITHUB_TOKEN") or None)
    target = _branch(git, branch) if push else ""
    result = Result(records=len(prepared), run_ids=run_ids, held_back=held)
    for h in held:
        say(f"held back {h.batch} ({h.files} record file(s)), not published: {h.reason}")
    if not prepared:
        say("no run records arrived (every shard failed or none ran): nothing to publish")
        return result
    say(f"{len(prepared)} record(s) from {len(run_ids)} run(s): {', '.join(run_ids)}")
    for attempt in range(1, attempts + 1):
        result.attempts = attempt
        res = ingest_and_detect(db, prepared)
        result.added = res.added
        say(f"attempt {attempt}: {res.added} record(s) added, {res.already} already in {rel}")
        ours: tuple[str, ...] = (
            str(rel),
            str(nightfiles.files_dir(rel)),
        )  # the DB and its night files
        git.run("add", "-A", "--", *ours)
        if git.run("diff", "--cached", "--quiet", "--", *ours, check=False).returncode == 0:
            say(f"{rel} unchanged: nothing to commit")
            return result
        _check_sizes(git, top, rel, max_file_mb)
        _check_growth(git, top, rel, res.added, growth_budget_kb)
        if archive_to is not None:
            try:
                archive.archive(archive_to, _record_files(sources, held), top / archive.MANIFEST)
            except (ConfigError, EnvironmentProblem, RecordError) as exc:
                # the night is published all the same (its records stay in the run's
                # artifacts); the archive is put right by hand (docs/workflows.md)
                git.run("checkout", "--quiet", "--", str(archive.MANIFEST), check=False)
                say(f"records archive NOT updated: {_one_line(str(exc))}")
            if (top / archive.MANIFEST).exists():
                git.run("add", "--", str(archive.MANIFEST))
                ours = (*ours, str(archive.MANIFEST))
        git.run(
            "commit", "--quiet", "-m", message or default_message(run_ids, res.added), "--",
            *ours,
        )  # fmt: skip
        result.commit = git.out("rev-parse", "HEAD")
        if not push:
            return result
        p = git.run("push", "--porcelain", remote, f"HEAD:refs/heads/{target}", check=False)
        if p.returncode == 0:
            result.pushed = True
            say(f"pushed {result.commit[:12]} to {remote} {target}")
            return result
        detail = _one_line(p.stderr or p.stdout)
        if not _is_race(p.stderr + p.stdout):
            raise PushError(f"git push to {remote} {target} failed: {detail}")
        if attempt == attempts:
            raise PushError(
                f"git push to {remote} {target} lost the race {attempts} times ({detail}); "
                "nothing was published: re-run the publish job (the records are in the "
                "run's artifacts) or `perftrack publish` with more --attempts"
            )
        say(f"attempt {attempt}: push rejected ({detail}); taking the remote's DB and retrying")
        git.run("fetch", "--quiet", remote, f"refs/heads/{target}")
        git.run("reset", "--quiet", "--keep", "FETCH_HEAD")
        pause(random.uniform(*RETRY_PAUSE_S))
    raise AssertionError("unreachable")  # pragma: no cover


__all__ = [
    "DEFAULT_ATTEMPTS",
    "Git",
    "HeldBack",
    "PushError",
    "Result",
    "TooLarge",
    "batches",
    "default_message",
    "growth_limit",
    "ingest_and_detect",
    "publish",
    "read_batches",
    "read_records",
    "worktree_of",
]
