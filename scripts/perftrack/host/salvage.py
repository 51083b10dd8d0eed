"""Run records that outlive a killed bench job: `perftrack runner salvage` and `forget`.

A bench job writes its run directory outside the workspace (the next checkout's
`git clean -ffdx` would delete it there), in the runner's state directory
(core/paths.py `nights_dir()`):

    nights/<night id>/shard-<N>/<run id>/{plan.json, run.json, records/, logs/}

The night id is the workflow run's id, so a re-run of a shard finds its earlier attempt
(`perftrack run --night-id` resumes it). At the end of every job, even a failed one,
`salvage` copies every run directory there into the workspace for upload: tonight's (this
night id: this job's own run, and shards of the same night that died on this runner)
into `--into`, earlier nights' (jobs killed with their runner, whose records never
reached a publish) into `--earlier`, each under its night id. Once the upload succeeded,
`forget` deletes from the state directory the runs whose every record is in the uploaded
directories. A job killed before `forget` leaves them for the next job: nothing is lost,
and a record uploaded twice is ingested once (ingest is idempotent by record id).

A run directory whose owner lock is held (a live `perftrack run`) is neither copied nor
deleted.

On a bench host every kept file was signed by the job that wrote it, for that job's night
(core/recordsig.py, runners/record-signer): a kept run is accepted — copied here, resumed
by `perftrack run --night-id` — only with its plan and each record signed for the night
its directory names. A record planted by another job (for an earlier night, or for a run
id still to come) is refused with one line and deleted, and a run whose plan is not
signed goes whole: nothing a job leaves in the state directory is published unless the
job of that night wrote it.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from perftrack.core import dirlock, paths, record, recordsig
from perftrack.core.errors import ConfigError

NIGHT_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
SHARD_PREFIX = "shard-"
RUN_FILES = ("plan.json", "run.json")


def night_id(value: str) -> str:
    """A night id given on the command line (the workflow run's id), validated."""
    if not NIGHT_ID_RE.match(value):
        raise ConfigError(
            f"--night-id {value[:80]!r} is not a night id (letters, digits, '.', '_', '-'; "
            "the workflow run's id)"
        )
    return value


def shard_dir(night: str, shard: int) -> Path:
    """Where a night's shard keeps its run directories on this runner."""
    return paths.nights_dir() / night_id(night) / f"{SHARD_PREFIX}{shard}"


@dataclass(frozen=True)
class KeptRun:
    night: str
    shard: str  # "shard-N"
    path: Path  # the run directory

    @property
    def run_id(self) -> str:
        return self.path.name

    def records(self) -> list[Path]:
        records = self.path / "records"
        return list(record.find([records])) if records.is_dir() else []


def kept_runs(nights: Path) -> Iterator[KeptRun]:
    """Run directories in the state directory, in a stable order."""
    if not nights.is_dir():
        return
    for night in sorted(p for p in nights.iterdir() if p.is_dir() and not p.is_symlink()):
        for shard in sorted(night.glob(f"{SHARD_PREFIX}*")):
            if not shard.is_dir() or shard.is_symlink():
                continue
            for run in sorted(shard.iterdir()):
                if run.is_dir() and not run.is_symlink() and (run / "plan.json").is_file():
                    yield KeptRun(night.name, shard.name, run)


def accepted(run: KeptRun, say: Callable[[str], None] = lambda _m: None) -> bool:
    """Is ``run`` its night's job's work (recordsig)? Records that are not are deleted, a
    run whose plan is not goes whole (False); each refusal is one line."""
    reason = recordsig.refusal(run.path / "plan.json", run.night)
    if reason:
        where = f"night {run.night} ({run.shard})"
        say(f"refused kept run {run.run_id} of {where}: its plan is {reason}; deleted")
        shutil.rmtree(run.path, ignore_errors=True)
        return False
    for rec in run.records():
        reason = recordsig.refusal(rec, run.night)
        if reason:
            where = f"night {run.night} ({run.shard}, run {run.run_id})"
            say(f"refused record {rec.name} of {where}: {reason}; deleted")
            rec.unlink(missing_ok=True)
            rec.with_name(rec.name + recordsig.SUFFIX).unlink(missing_ok=True)
    return True


def _copy(run: KeptRun, dest: Path, with_logs: bool) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name in RUN_FILES:
        if (run.path / name).is_file():
            shutil.copy2(run.path / name, dest / name)
    for rec in run.records():  # the records only (accepted ones: `accepted` ran first)
        target = dest / rec.relative_to(run.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(rec, target)
    if with_logs and (run.path / "logs").is_dir():
        shutil.copytree(run.path / "logs", dest / "logs", dirs_exist_ok=True)


def salvage(
    tonight: str, into: Path, earlier: Path, say: Callable[[str], None] = lambda _m: None
) -> tuple[int, int]:
    """Copy every kept run into `into` (tonight's) or `earlier/<night>/` (earlier
    nights'); (records of tonight, records of earlier nights)."""
    night_id(tonight)
    counts = [0, 0]
    for run in kept_runs(paths.nights_dir()):
        if dirlock.state(run.path) == dirlock.HELD:
            say(f"left {run.path}: a live perftrack is running it")
            continue
        if not accepted(run, say):
            continue
        status = record_status(run)
        n = len(run.records())
        if run.night == tonight:
            _copy(run, into / run.run_id, with_logs=True)
            counts[0] += n
            say(f"tonight's run {run.run_id} ({run.shard}, {status}): {n} record(s) to {into}")
        else:
            _copy(run, earlier / run.night / run.run_id, with_logs=False)
            counts[1] += n
            say(
                f"salvaged run {run.run_id} of night {run.night} ({run.shard}, {status}): "
                f"{n} record(s) to {earlier}"
            )
    if counts == [0, 0]:
        say("no kept run records")
    return counts[0], counts[1]


def record_status(run: KeptRun) -> str:
    """The run's status from its run.json (running, complete, interrupted)."""
    try:
        return str(json.loads((run.path / "run.json").read_text()).get("status", "unknown"))
    except (OSError, ValueError, AttributeError):
        return "unknown"


def _copies(uploaded: Sequence[Path]) -> dict[str, list[Path]]:
    """run id -> directories holding a copy of that run (its plan.json) under `uploaded`."""
    out: dict[str, list[Path]] = {}
    for root in uploaded:
        if not root.is_dir():
            continue
        for plan in (*root.glob("*/plan.json"), *root.glob("*/*/plan.json")):
            out.setdefault(plan.parent.name, []).append(plan.parent)
    return out


def forget(uploaded: Sequence[Path], say: Callable[[str], None] = lambda _m: None) -> int:
    """Delete kept runs whose every record has a copy under `uploaded`; how many."""
    copies = _copies(uploaded)
    gone = 0
    nights = paths.nights_dir()
    for run in kept_runs(nights):
        names = {p.name for p in run.records()}
        have: set[str] = set()
        for copy in copies.get(run.run_id, []):
            have |= {p.name for p in record.find([copy])} if copy.is_dir() else set()
        if run.run_id not in copies or not names <= have:
            continue
        with dirlock.claimed(run.path) as mine:
            if not mine and dirlock.state(run.path) != dirlock.NO_LOCK:
                say(f"left {run.path}: a live perftrack is running it")
                continue
            shutil.rmtree(run.path, ignore_errors=True)
        gone += 1
        say(f"forgot run {run.run_id} of night {run.night} ({len(names)} record(s) uploaded)")
    for shard in sorted(nights.glob(f"*/{SHARD_PREFIX}*")) if nights.is_dir() else []:
        for d in (shard, shard.parent):
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
    if not gone:
        say("nothing to forget")
    return gone
