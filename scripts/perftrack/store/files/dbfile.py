"""The DuckDB file itself: create it in a portable storage format, open it (telling a
locked, corrupt or newer-format file apart, with git history to recover from), migrate it,
and rewrite it to give back the space DuckDB never frees."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from perftrack.core import git
from perftrack.core.errors import DatabaseError, EnvironmentProblem
from perftrack.core.files import fsync_path
from perftrack.store.files import codecheck, migrations, nightfiles, readcache
from perftrack.store.files.sqltext import sql_string

# --- file format -----------------------------------------------------------------------
# Storage format of a newly created file: "v1.1.0", which every DuckDB since 1.1 reads (the
# package's floor is duckdb>=1.2, the first with ROW_GROUP_SIZE below), so a file written
# by a newer DuckDB in CI still opens on an older laptop (DuckDB 2.0's default format
# does not). DuckDB keeps an existing
# file's format. Block size stays DuckDB's default (256 KiB): measured on 20,000 synthetic
# results, 16 KiB blocks turned off ALP compression in this format and made the file 60%
# larger.
STORAGE_VERSION = "v1.1.0"
CREATE_CONFIG: codecheck.Config = {"storage_compatibility_version": STORAGE_VERSION}
# DuckDB never shrinks a file: blocks freed when a checkpoint rewrites a table stay in it.
# Nightly appends left ~40% of a 15 MB file free in a 100-night synthetic test; rewriting
# a file that size takes ~0.3 s. So a write-mode close rewrites the file when at least
# this share of it, and at least this many bytes, is free.
COMPACT_FREE_FRACTION = 0.25
# Rows per row group when writing; None: DuckDB's default, 122,880. (Measured when
# `results` was a table of this file; since schema v6 it is night files, and only the
# small tables stay here.) A checkpoint rewrites a
# table's last, open row group, so smaller groups confine each night's rewrite, but they
# compress worse. Measured at a year of synthetic history (benchmarks/repo_cost.py,
# docs/schema.md "Size by design"): 2,048 rows gave 210 KB a night but a 57 MB file,
# 16,384 rows 406 KB and 51 MB, the default 265 KB and 40 MB; only the default keeps the
# file under the 50 MB target, so it stays. DuckDB merges small row groups back at a
# checkpoint made without the option, so a size here applies to every write connection.
ROW_GROUP_SIZE: int | None = None
DB_ALIAS = "perftrack_db"
COMPACT_MIN_FREE_BYTES = 1024 * 1024


# --- corruption diagnosis --------------------------------------------------------------
# How far back in git history to look for a copy of the DB that still opens: about three
# weeks of nightly commits; older than that, re-ingesting records is the better fix.
GIT_REVISIONS_TRIED = 20
# A local `git log`/`git show` answers in well under a second; this only guards a hang.
GIT_TIMEOUT_S = 30.0
# DuckDB's messages for a file locked by another process, and for a newer storage format.
DUCKDB_LOCK_MARKERS = ("Could not set lock", "Conflicting lock")
DUCKDB_NEWER_FORMAT = re.compile(r"version number \d+|newer version of DuckDB", re.IGNORECASE)
MAX_REASON_CHARS = 200


# === opening ===========================================================================


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS] + "…"


def read_every_column(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Hash every value of `table`: DuckDB reads, and checksums, every block of it."""
    con.execute(f'SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM "{table}"').fetchall()


def _probe(con: duckdb.DuckDBPyConnection) -> int | None:
    """Read the catalog, the schema version and every value stored in the file (since v6
    the night files are checked by `nightfiles.verify`); return the version.

    Catches a file that is not DuckDB, is truncated, or has a damaged block anywhere. Cheap
    at this DB's size: ~0.1 s for a 26 MB file (100 synthetic nights of 200 cells).
    """
    version = migrations.schema_version(con)
    for table in sorted(migrations.user_tables(con)):
        read_every_column(con, table)
    return version


def _opens(path: Path) -> bool:
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return False
    try:
        _probe(con)
        return True
    except duckdb.Error:
        return False
    finally:
        con.close()


def _git(directory: Path, *args: str) -> bytes | None:
    """Run git in `directory`; None when git is missing, it is not a repo, or git fails."""
    try:
        done = git.run(directory, *args, timeout=GIT_TIMEOUT_S, text=False)
    except (OSError, subprocess.SubprocessError, EnvironmentProblem):
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass(frozen=True)
class _GitHistory:
    tracked: bool
    good_revision: str | None = None  # short hash
    good_date: str | None = None  # YYYY-MM-DD (committer date)


def _git_history(path: Path, good: Callable[[Path], bool] = _opens) -> _GitHistory:
    """Walk the file's recent git history for the newest copy that passes `good`."""
    resolved = path.resolve()
    directory = next((d for d in resolved.parents if d.is_dir()), Path("/"))
    name = resolved.relative_to(directory).as_posix()
    log = _git(directory, "log", "--format=%H %h %cs", f"-n{GIT_REVISIONS_TRIED}", "--", name)
    text = log.decode("utf-8", "replace") if log else ""
    revisions = [line.split() for line in text.splitlines() if len(line.split()) == 3]
    if not revisions:
        return _GitHistory(tracked=False)
    with tempfile.TemporaryDirectory(prefix="perftrack-git-") as tmp:
        candidate = Path(tmp) / "candidate.duckdb"
        for full, short, date in revisions:
            blob = _git(directory, "show", f"{full}:./{name}")
            if blob is None:
                continue
            candidate.write_bytes(blob)
            if good(candidate):
                return _GitHistory(tracked=True, good_revision=short, good_date=date)
            candidate.unlink()
    return _GitHistory(tracked=True)


def _corrupt_message(path: Path, reason: str) -> str:
    head = f"{path} is not a readable DuckDB file ({reason})"
    history = _git_history(path)
    if history.good_revision:
        return (
            f"{head}; the last good revision is {history.good_revision} ({history.good_date}): "
            f"restore it with `git checkout {history.good_revision} -- {path}`"
        )
    if history.tracked:
        return (
            f"{head}; none of its last {GIT_REVISIONS_TRIED} revisions in git opens either: "
            "restore it from a backup, or move it away and re-ingest the run records"
        )
    return (
        f"{head}: restore it from a backup, or move it away and run `perftrack ingest` "
        "to rebuild it from the run records"
    )


def restore_hint(path: Path, good: Callable[[Path], bool]) -> str:
    """What to do about a bad night file (or DB): its newest good revision in git."""
    history = _git_history(path, good)
    if history.good_revision:
        return (
            f"the last good revision is {history.good_revision} ({history.good_date}): "
            f"restore it with `git checkout {history.good_revision} -- {path}`"
        )
    if history.tracked:
        return (
            f"none of its last {GIT_REVISIONS_TRIED} revisions in git is good: restore it "
            "from a backup"
        )
    return "it is not in git: restore it from a backup"


def attach_files(path: Path, con: duckdb.DuckDBPyConnection, *, write: bool) -> None:
    """Since schema v6: verify the night files, and give the connection views over them
    with absolute paths (in write mode the stored views are also brought up to date when
    the DB and its files moved to a directory of another name). The views read the closed
    months from the read cache (readcache); a writer deletes the cache files they no longer
    read."""
    known = readcache.known_hashes(path)  # the files' sha256s an earlier open read
    try:
        nightfiles.verify(con, path, migrations.CURRENT_VERSION, restore_hint, known)
        if write and not nightfiles.stored_views_current(con, path):
            nightfiles.create_views(con, path, temp=False)
        used = nightfiles.create_views(con, path, temp=True, known=known)
        known.save()
        if write:
            readcache.prune(path, used)
    except duckdb.Error as exc:
        raise DatabaseError(f"{path}: cannot read its night files ({first_line(exc)})") from None


def _open_error(path: Path, exc: duckdb.Error) -> DatabaseError:
    """Turn DuckDB's failure to open `path` into a one-line message that says what to do."""
    text = str(exc)
    if any(marker in text for marker in DUCKDB_LOCK_MARKERS):
        pid = re.search(r"PID (\d+)", text)
        who = f" (pid {pid.group(1)})" if pid else ""
        return DatabaseError(f"{path} is locked by another process{who}; retry when it finishes")
    if DUCKDB_NEWER_FORMAT.search(text):
        return DatabaseError(
            f"{path} was written by a newer DuckDB ({first_line(exc)}): "
            "upgrade duckdb (`pip install -U duckdb`)"
        )
    return DatabaseError(_corrupt_message(path, first_line(exc)))


def connect(
    path: Path, *, read_only: bool, allow: Sequence[Path] = ()
) -> tuple[duckdb.DuckDBPyConnection, int | None]:
    """A connection on the DB file, checked (codecheck: no code perftrack did not create)
    and locked down (no file access outside the DB's directory and `allow`)."""
    try:
        if read_only or ROW_GROUP_SIZE is None:
            con = duckdb.connect(str(path), read_only=read_only, config=codecheck.CONNECT_CONFIG)
        else:  # the row group size is an ATTACH option, in force while attached
            con = duckdb.connect(":memory:", config=codecheck.CONNECT_CONFIG)
            con.execute(
                f"ATTACH {sql_string(str(path))} AS {DB_ALIAS} (ROW_GROUP_SIZE {ROW_GROUP_SIZE})"
            )
            con.execute(f"USE {DB_ALIAS}")
    except duckdb.Error as exc:
        raise _open_error(path, exc) from None
    try:
        codecheck.lock_down(con, path, allow)
        codecheck.refuse_code(con, path)
        version = _probe(con)
        if version is not None and FILES_VERSION <= version <= migrations.CURRENT_VERSION:
            attach_files(path, con, write=not read_only)
    except duckdb.Error as exc:
        con.close()
        raise _open_error(path, exc) from None
    except BaseException:
        con.close()
        raise
    return con, version


FILES_VERSION = 6  # the schema that moved the growing tables into night files


def create(path: Path) -> list[int]:
    """Create a migrated DB at `path` atomically: built with its (empty) night files in a
    temp directory beside it, then the files' directory and the DB renamed into place."""
    files = nightfiles.files_dir(path)
    if files.exists():
        raise DatabaseError(
            f"{files} exists but {path} does not: restore the DB file from git "
            f"(`git checkout -- {path}`), or move {files} away to start a new DB"
        )
    tmp_dir = _temp_path(path, "creating")
    shutil.rmtree(tmp_dir, ignore_errors=True)
    tmp_dir.mkdir()
    tmp = tmp_dir / path.name
    try:
        con = duckdb.connect(str(tmp), config=CREATE_CONFIG)
        try:
            applied = migrations.migrate(con)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        new_files = nightfiles.files_dir(tmp)
        if new_files.exists():
            os.replace(new_files, files)
        os.replace(tmp, path)
        fsync_path(path.parent, directory=True)
    except duckdb.Error as exc:
        raise DatabaseError(f"cannot create {path} ({first_line(exc)})") from None
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return applied


def worth_compacting(free_blocks: int, total_blocks: int, block_size: int) -> bool:
    free_bytes = free_blocks * block_size
    return (
        total_blocks > 0
        and free_bytes >= COMPACT_MIN_FREE_BYTES
        and free_blocks / total_blocks >= COMPACT_FREE_FRACTION
    )


def rewrite(path: Path, block_size: int | None = None) -> None:
    """Copy every table into a fresh file and rename it over `path`: drops free blocks.

    The caller holds the exclusive lock and has no connection open on `path`. On failure
    `path` is untouched.
    """
    tmp = _temp_path(path, "compacting")
    wal = tmp.with_name(tmp.name + ".wal")
    # The storage format comes from the connection's setting (CREATE_CONFIG).
    opts = [] if block_size is None else [f"BLOCK_SIZE {int(block_size)}"]
    opts += [] if ROW_GROUP_SIZE is None else [f"ROW_GROUP_SIZE {ROW_GROUP_SIZE}"]
    options = f" ({', '.join(opts)})" if opts else ""
    try:
        for leftover in (tmp, wal):
            leftover.unlink(missing_ok=True)
        con = duckdb.connect(":memory:", config=CREATE_CONFIG)
        try:
            # the stored views are re-bound when copied: their paths resolve from here
            search = str(path.resolve().parent.parent)
            con.execute(f"SET file_search_path = {sql_string(search)}")
            con.execute(f"ATTACH {sql_string(str(path))} AS old (READ_ONLY)")
            con.execute(f"ATTACH {sql_string(str(tmp))} AS new{options}")
            con.execute("COPY FROM DATABASE old TO new")
            con.execute("DETACH new")
            con.execute("DETACH old")
        finally:
            con.close()
        fsync_path(tmp)
        os.replace(tmp, path)
        fsync_path(path.parent, directory=True)
    except duckdb.Error as exc:
        raise DatabaseError(
            f"{path}: compacting failed, the file is unchanged ({first_line(exc)})"
        ) from None
    finally:
        for leftover in (tmp, wal):
            leftover.unlink(missing_ok=True)


TEMP_MARKERS = ("creating", "compacting")  # `.<db>.<marker>-<pid>` files built beside the DB


def _temp_path(path: Path, marker: str) -> Path:
    return path.with_name(f".{path.name}.{marker}-{os.getpid()}")


def remove_leftovers(path: Path) -> None:
    """Delete temp files a killed writer left; safe because we hold the exclusive lock."""
    for marker in TEMP_MARKERS:
        for leftover in path.parent.glob(f".{glob.escape(path.name)}.{marker}-*"):
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
    nightfiles.remove_leftovers(path)


def check_version(path: Path, version: int | None, *, write: bool) -> None:
    current = migrations.CURRENT_VERSION
    if version is None:
        raise DatabaseError(
            f"{path} is a DuckDB file but not a perftrack results DB (no schema_version rows); "
            "move it away or point perftrack at the right file"
        )
    if version > current:
        raise DatabaseError(
            f"{path} has schema v{version} but this perftrack knows v{current}: upgrade perftrack"
        )
    if version < current and not write:
        if version == 0:
            raise DatabaseError(f"{path} has no perftrack tables yet: run `perftrack ingest` first")
        raise DatabaseError(
            f"{path} has schema v{version} but this perftrack uses v{current}: "
            "run `perftrack db migrate` (or `perftrack ingest`) to upgrade it"
        )


def migrate_existing(path: Path, con: duckdb.DuckDBPyConnection, version: int) -> list[int]:
    try:
        applied = migrations.migrate(con)
        con.execute("CHECKPOINT")
    except duckdb.Error as exc:
        now = migrations.schema_version(con)
        raise DatabaseError(
            f"{path}: migrating from schema v{version} failed and was rolled back; the file is "
            f"at v{now} ({first_line(exc)})"
        ) from None
    if version < FILES_VERSION <= migrations.CURRENT_VERSION:
        attach_files(path, con, write=True)
    return applied
