"""The results store: `data/results.duckdb`, written only by `perftrack ingest`.

`open_db` gives a `Store`: a DuckDB connection on the file, a lock shared with every
other perftrack process, and the schema brought up to date (write mode) or checked (read
mode). `Store.ingest` adds run records in one transaction, idempotently by record id.
Tables and columns are described in docs/schema.md; migrations live in migrations.py.

The file is committed to git, so it is kept small and self-contained: variable sets are
stored once by content hash, interval series only as summaries plus a short downsample,
and every write-mode close ends with a CHECKPOINT (no `.wal` file left beside it).
"""

from __future__ import annotations

import errno
import fcntl
import glob
import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import duckdb
import numpy as np

from perftrack.core import record
from perftrack.core.errors import ConfigError, DatabaseError, RecordError
from perftrack.store import migrations

# --- locking ---------------------------------------------------------------------------
# A nightly ingest of a few hundred records takes seconds; a minute covers a slow runner
# and still fails fast enough for an interactive user to notice.
LOCK_TIMEOUT_S = 60.0
# How often a waiting process retries the lock: short enough not to add noticeable delay,
# long enough not to spin (flock has no timed wait, so we poll).
LOCK_POLL_S = 0.05
LOCK_SUFFIX = ".lock"

# --- file format -----------------------------------------------------------------------
# Storage format of a newly created file: "v1.1.0", which every DuckDB since 1.1 reads (the
# package's floor is duckdb>=1.2, the first with ROW_GROUP_SIZE below), so a file written
# by a newer DuckDB in CI still opens on an older laptop (DuckDB 2.0's default format
# does not). DuckDB keeps an existing
# file's format. Block size stays DuckDB's default (256 KiB): measured on 20,000 synthetic
# results, 16 KiB blocks turned off ALP compression in this format and made the file 60%
# larger.
STORAGE_VERSION = "v1.1.0"
CREATE_CONFIG: dict[str, str] = {"storage_compatibility_version": STORAGE_VERSION}
# DuckDB never shrinks a file: blocks freed when a checkpoint rewrites a table stay in it.
# Nightly appends left ~40% of a 15 MB file free in a 100-night synthetic test; rewriting
# a file that size takes ~0.3 s. So a write-mode close rewrites the file when at least
# this share of it, and at least this many bytes, is free.
COMPACT_FREE_FRACTION = 0.25
# Rows per row group when writing; None: DuckDB's default, 122,880. A checkpoint rewrites a
# table's last, open row group, so smaller groups confine each night's rewrite, but they
# compress worse. Measured at a year of synthetic history (benchmarks/repo_cost.py,
# docs/schema.md "Size by design"): 2,048 rows gave 210 KB a night but a 57 MB file,
# 16,384 rows 406 KB and 51 MB, the default 265 KB and 40 MB; only the default keeps the
# file under the 50 MB target, so it stays. DuckDB merges small row groups back at a
# checkpoint made without the option, so a size here applies to every write connection.
ROW_GROUP_SIZE: int | None = None
DB_ALIAS = "perftrack_db"
COMPACT_MIN_FREE_BYTES = 1024 * 1024

# --- content keys ----------------------------------------------------------------------
# Hex digits kept from a sha256 for server keys and variable-set hashes: 64 bits, so a
# collision among even millions of distinct sets is vanishingly unlikely (birthday bound).
KEY_HEX_DIGITS = 16

# SHOW GLOBAL VARIABLES entries that differ between two starts of the same binary with the
# same configuration: paths under per-cell temp dirs and the provider cache, ports, ids,
# host names and GTID positions. They say nothing about performance, and keeping them would
# make every cell's set unique and defeat storing each set once. Names from MySQL 5.7-9.x,
# Percona Server and MariaDB 10.x-11.x.
VOLATILE_VARIABLES: frozenset[str] = frozenset(
    {
        "admin_port",
        "aria_log_dir_path",
        "basedir",
        "character_sets_dir",
        "datadir",
        "general_log_file",
        "gtid_binlog_pos",
        "gtid_binlog_state",
        "gtid_current_pos",
        "gtid_executed",
        "gtid_purged",
        "gtid_slave_pos",
        "hostname",
        "innodb_data_home_dir",
        "innodb_doublewrite_dir",
        "innodb_log_group_home_dir",
        "innodb_temp_tablespaces_dir",
        "innodb_tmpdir",
        "innodb_undo_directory",
        "lc_messages_dir",
        "log_basename",
        "log_bin_basename",
        "log_bin_index",
        "log_error",
        "mysqlx_port",
        "mysqlx_socket",
        "pid_file",
        "plugin_dir",
        "port",
        "relay_log",
        "relay_log_basename",
        "relay_log_index",
        "relay_log_info_file",
        "report_host",
        "report_port",
        "secure_file_priv",
        "server_uid",  # MariaDB 10.11+: random per datadir
        "server_uuid",
        "slow_query_log_file",
        "socket",
        "timestamp",
        "tmpdir",
    }
)

# --- interval summaries ----------------------------------------------------------------
# At most this many points of the per-interval tps series are kept: enough for a sparkline
# of how a cell's throughput moved; raw intervals stay in the run record / workflow
# artifact. Scale (docs/schema.md, "Size by design"): at 60 points the series was 38 % of
# a synthetic year's DB and most of each night's git delta; 12 points cost a fifth.
SERIES_POINTS = 12
# Downsampled points keep 3 significant digits (0.1 % steps, far below the A/A noise of
# 10-20 %), summary percentiles 0.01 tps and the CV 4 decimals: short decimals compress
# several times better in DuckDB (ALP) than full doubles.
SERIES_SIGNIFICANT = 3
SERIES_DECIMALS = 2
CV_DECIMALS = 4
TPS_PERCENTILES = (5.0, 50.0, 95.0)

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

VALID_STATUSES = ("ok", "failed", "skipped")


@dataclass(frozen=True)
class IngestResult:
    added: int  # records written by this call
    already: int  # records skipped because their record_id was already stored (or repeated)


def lock_path(db_path: Path) -> Path:
    """The lock file beside the DB: `data/results.duckdb.lock` (keep it out of git)."""
    return db_path.with_name(db_path.name + LOCK_SUFFIX)


# === the lock ==========================================================================


class _Lock:
    """`flock` on `<db>.lock`: exclusive for writers, shared for readers, bounded wait.

    The exclusive holder writes its pid into the file so a waiter can name it; the pid is
    cleared on release so a stale one is never reported.
    """

    def __init__(self, path: Path, *, exclusive: bool) -> None:
        self.path = path
        self.exclusive = exclusive
        self.fd: int | None = None

    def acquire(self, db_path: Path, timeout_s: float) -> None:
        fd = self._open()
        if fd is None:  # read-only directory: nobody can write the DB here either
            return
        mode = fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH
        deadline = time.monotonic() + max(timeout_s, 0.0)
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_pid(fd)
                    os.close(fd)
                    raise DatabaseError(_locked_message(db_path, holder)) from None
                time.sleep(LOCK_POLL_S)
        self.fd = fd
        if self.exclusive:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        try:
            if self.exclusive:
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _open(self) -> int | None:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            if self.exclusive or exc.errno not in (errno.EACCES, errno.EROFS, errno.EPERM):
                raise DatabaseError(
                    f"cannot create lock file {self.path} ({exc.strerror})"
                ) from None
        try:
            return os.open(self.path, os.O_RDONLY)
        except OSError:
            return None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _locked_message(db_path: Path, pid: int | None) -> str:
    who = f" (pid {pid})" if pid is not None else ""
    return f"{db_path} is locked by another perftrack process{who}; retry when it finishes"


# === opening ===========================================================================


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS] + "…"


def read_every_column(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Hash every value of `table`: DuckDB reads, and checksums, every block of it."""
    con.execute(f'SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM "{table}"').fetchall()


def _probe(con: duckdb.DuckDBPyConnection) -> int | None:
    """Read the catalog, the schema version and every stored value; return the version.

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
        done = subprocess.run(
            ["git", *args],
            cwd=directory,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass(frozen=True)
class _GitHistory:
    tracked: bool
    good_revision: str | None = None  # short hash
    good_date: str | None = None  # YYYY-MM-DD (committer date)


def _git_history(path: Path) -> _GitHistory:
    """Walk the file's recent git history for the newest copy that still opens."""
    directory, name = path.resolve().parent, path.name
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
            if _opens(candidate):
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


def _open_error(path: Path, exc: duckdb.Error) -> DatabaseError:
    """Turn DuckDB's failure to open `path` into a one-line message that says what to do."""
    text = str(exc)
    if any(marker in text for marker in DUCKDB_LOCK_MARKERS):
        pid = re.search(r"PID (\d+)", text)
        who = f" (pid {pid.group(1)})" if pid else ""
        return DatabaseError(f"{path} is locked by another process{who}; retry when it finishes")
    if DUCKDB_NEWER_FORMAT.search(text):
        return DatabaseError(
            f"{path} was written by a newer DuckDB ({_first_line(exc)}): "
            "upgrade duckdb (`pip install -U duckdb`)"
        )
    return DatabaseError(_corrupt_message(path, _first_line(exc)))


def _connect(path: Path, *, read_only: bool) -> tuple[duckdb.DuckDBPyConnection, int | None]:
    try:
        if read_only or ROW_GROUP_SIZE is None:
            con = duckdb.connect(str(path), read_only=read_only)
        else:  # the row group size is an ATTACH option, in force while attached
            con = duckdb.connect(":memory:")
            con.execute(
                f"ATTACH {_sql_string(str(path))} AS {DB_ALIAS} (ROW_GROUP_SIZE {ROW_GROUP_SIZE})"
            )
            con.execute(f"USE {DB_ALIAS}")
    except duckdb.Error as exc:
        raise _open_error(path, exc) from None
    try:
        version = _probe(con)
    except duckdb.Error as exc:
        con.close()
        raise _open_error(path, exc) from None
    return con, version


def _create(path: Path) -> list[int]:
    """Create a migrated DB at `path` atomically (built beside it, then renamed into place)."""
    tmp = _temp_path(path, "creating")
    wal = tmp.with_name(tmp.name + ".wal")
    for leftover in (tmp, wal):
        leftover.unlink(missing_ok=True)
    try:
        con = duckdb.connect(str(tmp), config=CREATE_CONFIG)
        try:
            applied = migrations.migrate(con)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, path)
        _fsync(path.parent, directory=True)
    except duckdb.Error as exc:
        raise DatabaseError(f"cannot create {path} ({_first_line(exc)})") from None
    finally:
        for leftover in (tmp, wal):
            leftover.unlink(missing_ok=True)
    return applied


def worth_compacting(free_blocks: int, total_blocks: int, block_size: int) -> bool:
    free_bytes = free_blocks * block_size
    return (
        total_blocks > 0
        and free_bytes >= COMPACT_MIN_FREE_BYTES
        and free_blocks / total_blocks >= COMPACT_FREE_FRACTION
    )


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _fsync(path: Path, *, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _rewrite(path: Path, block_size: int | None = None) -> None:
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
            con.execute(f"ATTACH {_sql_string(str(path))} AS old (READ_ONLY)")
            con.execute(f"ATTACH {_sql_string(str(tmp))} AS new{options}")
            con.execute("COPY FROM DATABASE old TO new")
            con.execute("DETACH new")
            con.execute("DETACH old")
        finally:
            con.close()
        _fsync(tmp)
        os.replace(tmp, path)
        _fsync(path.parent, directory=True)
    except duckdb.Error as exc:
        raise DatabaseError(
            f"{path}: compacting failed, the file is unchanged ({_first_line(exc)})"
        ) from None
    finally:
        for leftover in (tmp, wal):
            leftover.unlink(missing_ok=True)


TEMP_MARKERS = ("creating", "compacting")  # `.<db>.<marker>-<pid>` files built beside the DB


def _temp_path(path: Path, marker: str) -> Path:
    return path.with_name(f".{path.name}.{marker}-{os.getpid()}")


def _remove_leftovers(path: Path) -> None:
    """Delete temp files a killed writer left; safe because we hold the exclusive lock."""
    for marker in TEMP_MARKERS:
        for leftover in path.parent.glob(f".{glob.escape(path.name)}.{marker}-*"):
            leftover.unlink(missing_ok=True)


def _check_version(path: Path, version: int | None, *, write: bool) -> None:
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


def _migrate_existing(path: Path, con: duckdb.DuckDBPyConnection, version: int) -> list[int]:
    try:
        applied = migrations.migrate(con)
        con.execute("CHECKPOINT")
    except duckdb.Error as exc:
        now = migrations.schema_version(con)
        raise DatabaseError(
            f"{path}: migrating from schema v{version} failed and was rolled back; the file is "
            f"at v{now} ({_first_line(exc)})"
        ) from None
    return applied


def open_db(path: Path, *, write: bool, lock_timeout_s: float = LOCK_TIMEOUT_S) -> Store:
    """Open the results DB; use as a context manager (`with open_db(...) as store:`).

    write=True: take the exclusive lock (waiting up to `lock_timeout_s`), create the file
    if missing, migrate it forward. write=False: take a shared lock, open read-only, and
    refuse a missing file or one whose schema is not the current one.
    """
    path = Path(path)
    if not write and not path.exists():
        raise ConfigError(f"{path} does not exist: run `perftrack ingest` first to create it")
    if write:
        path.parent.mkdir(parents=True, exist_ok=True)
    lock = _Lock(lock_path(path), exclusive=write)
    lock.acquire(path, lock_timeout_s)
    try:
        if write:
            _remove_leftovers(path)
        applied: list[int] = []
        if not path.exists():
            if not write:
                raise ConfigError(f"{path} does not exist: run `perftrack ingest` first")
            applied = _create(path)
        con, version = _connect(path, read_only=not write)
        try:
            _check_version(path, version, write=write)
            assert version is not None  # _check_version refused None
            if write and version < migrations.CURRENT_VERSION:
                applied += _migrate_existing(path, con, version)
        except BaseException:
            con.close()
            raise
    except BaseException:
        lock.release()
        raise
    return Store(path=path, con=con, write=write, lock=lock, migrated=applied)


# === turning a record into rows ========================================================


def _content_key(values: Sequence[Any]) -> str:
    text = json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_HEX_DIGITS]


SERVER_IDENTITY = ("id", "product", "version", "provider", "version_string", "source_sha256")


def server_key(server: dict[str, Any]) -> str:
    """Stable key of a server build: sha256 of its identity fields as a JSON list, 16 hex.

    Fields: id, product, version, provider, version_string, source_sha256, stand_in (a
    missing optional field counts as null). Same binary reported the same way ⇒ same key.
    """
    return _content_key([*(server.get(f) for f in SERVER_IDENTITY), server.get("stand_in")])


def stored_variables(variables: dict[str, str | None] | None) -> dict[str, str | None]:
    """The variables kept for a record: all but VOLATILE_VARIABLES, sorted by name."""
    kept = {k: v for k, v in (variables or {}).items() if k.lower() not in VOLATILE_VARIABLES}
    return dict(sorted(kept.items()))


def varset_hash(variables: dict[str, str | None]) -> str | None:
    """Content hash of a stored variable set; None for an empty set.

    sha256 over the lines `name=<JSON of value>\\n` sorted by name (JSON so that a null
    and the string "null", or values with newlines, cannot collide), first 16 hex digits.
    """
    if not variables:
        return None
    # json's C string encoder is exactly json.dumps(str, ensure_ascii=False), ~10x faster:
    # a 650-variable set is hashed once per record (measured: 2 ms -> 0.3 ms).
    text = "".join(
        f"{k}={_json_str(v) if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}\n"
        for k, v in sorted(variables.items())
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_HEX_DIGITS]


_json_str = json.encoder.encode_basestring  # type: ignore[attr-defined]


def _timestamp(value: str, field: str, where: str) -> datetime:
    """An RFC 3339 date-time as a naive UTC datetime (the DB stores UTC without zone)."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise RecordError(f"{where}: field '{field}' is not an RFC 3339 date-time") from None
    if parsed.tzinfo is None:
        raise RecordError(f"{where}: field '{field}' has no UTC offset (e.g. 'Z' or '+00:00')")
    return parsed.astimezone(UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class IntervalSummary:
    p5: float | None
    p50: float | None
    p95: float | None
    cv: float | None
    series: list[float] | None


def summarize_intervals(tps: Sequence[float]) -> IntervalSummary:
    """p5/p50/p95 (linear interpolation), CV (sample stdev / mean) and a short downsample.

    The downsample splits the series into at most SERIES_POINTS contiguous, nearly equal
    chunks and averages each; a series that is already short is kept as it is.
    """
    if not tps:
        return IntervalSummary(None, None, None, None, None)
    values = np.asarray(tps, dtype=float)
    p5, p50, p95 = (
        round(float(x), SERIES_DECIMALS) for x in np.percentile(values, TPS_PERCENTILES)
    )
    mean = float(values.mean())
    cv = (
        round(float(values.std(ddof=1) / mean), CV_DECIMALS)
        if len(values) > 1 and mean > 0
        else None
    )
    # the chunks np.array_split makes (the first n % k one longer), averaged in one pass
    k = min(SERIES_POINTS, len(values))
    size, extra = divmod(len(values), k)
    lengths = np.full(k, size) + (np.arange(k) < extra)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    means = np.add.reduceat(values, starts) / lengths
    series = [float(f"{x:.{SERIES_SIGNIFICANT}g}") for x in means]
    return IntervalSummary(p5, p50, p95, cv, series)


# (column, DuckDB type) of `results`, in table order; values come from `_result_row`.
RESULT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("record_id", "VARCHAR"),
    ("run_id", "VARCHAR"),
    ("cell_id", "VARCHAR"),
    ("attempt", "INTEGER"),
    ("status", "VARCHAR"),
    ("reason", "VARCHAR"),
    ("server_key", "VARCHAR"),
    ("workload", "VARCHAR"),
    ("threads", "INTEGER"),
    ("charset", "VARCHAR"),
    ("collation", "VARCHAR"),
    ("profile", "VARCHAR"),
    ("tables", "INTEGER"),
    ("table_size", "BIGINT"),
    ("duration_s", "INTEGER"),
    ("warmup_s", "INTEGER"),
    ("repeat", "INTEGER"),
    ("round", "INTEGER"),
    ("connection", "VARCHAR"),
    ("tps", "DOUBLE"),
    ("qps", "DOUBLE"),
    ("latency_avg_ms", "DOUBLE"),
    ("latency_pct_ms", "DOUBLE"),
    ("latency_pct", "DOUBLE"),
    ("latency_max_ms", "DOUBLE"),
    ("errors_per_s", "DOUBLE"),
    ("reconnects_per_s", "DOUBLE"),
    ("total_time_s", "DOUBLE"),
    ("events", "BIGINT"),
    ("tps_p5", "DOUBLE"),
    ("tps_p50", "DOUBLE"),
    ("tps_p95", "DOUBLE"),
    ("tps_cv", "DOUBLE"),
    ("tps_series", "DOUBLE[]"),
    ("varset_hash", "VARCHAR"),
    ("effective", "VARCHAR"),  # JSON column; passed as text, DuckDB casts on insert
    ("error_log_tail", "VARCHAR"),
    ("tool_name", "VARCHAR"),
    ("tool_version", "VARCHAR"),
    ("started_at", "TIMESTAMP"),
    ("finished_at", "TIMESTAMP"),
    # schema v3: configuration axes, null when not set (and in records older than them)
    ("engine", "VARCHAR"),
    ("isolation", "VARCHAR"),
    ("durability", "VARCHAR"),
    # schema v4: cost per operation and host signals (null in records older than them), as
    # the migration made them; a JSON column (cost_unavailable) travels as text
    *((name, "VARCHAR" if t == "JSON" else t) for name, t in migrations.V4_COST_COLUMNS),
    # schema v5: the other three axes (null when not set)
    ("handshake", "VARCHAR"),
    ("dataset_size", "VARCHAR"),
    ("phase", "VARCHAR"),
)
# The record's result fields stored as columns; `threads` comes from the cell instead.
RESULT_METRICS = tuple(f for f in (*record.RESULT_FIELDS, *record.COST_FIELDS) if f != "threads")
CELL_FIELDS = record.CELL_FIELDS


@dataclass(frozen=True)
class PreparedRecord:
    """One validated record as the rows it adds to each table."""

    record_id: str
    hardware: tuple[Any, ...]
    server: tuple[Any, ...]
    run: tuple[Any, ...]
    result: tuple[Any, ...]
    varset_hash: str | None
    variables: dict[str, str | None]


def _result_row(
    rec: dict[str, Any], skey: str, vhash: str | None, started: datetime, finished: datetime
) -> tuple[Any, ...]:
    result = rec.get("result") or {}
    summary = summarize_intervals([i["tps"] for i in result.get("intervals") or []])
    effective = rec.get("effective")
    values: dict[str, Any] = {
        "record_id": rec["record_id"],
        "run_id": rec["run_id"],
        "cell_id": rec["cell_id"],
        "attempt": rec["attempt"],
        "status": rec["status"],
        "reason": rec.get("reason"),
        "server_key": skey,
        **{f: rec["cell"].get(f) for f in CELL_FIELDS},
        **{m: result.get(m) for m in RESULT_METRICS},
        "tps_p5": summary.p5,
        "tps_p50": summary.p50,
        "tps_p95": summary.p95,
        "tps_cv": summary.cv,
        "tps_series": summary.series,
        "varset_hash": vhash,
        "effective": None if effective is None else json.dumps(effective, sort_keys=True),
        "error_log_tail": rec.get("error_log_tail"),
        "tool_name": rec["tool"]["name"],
        "tool_version": rec["tool"]["version"],
        "started_at": started,
        "finished_at": finished,
        **_cost_values(rec),
    }
    return tuple(values[name] for name, _ in RESULT_COLUMNS)


def _cost_values(rec: dict[str, Any]) -> dict[str, Any]:
    """Schema v4 columns from the record's optional `cost` and `host` objects."""
    unavailable = (rec.get("cost") or {}).get("unavailable")
    host = rec.get("host") or {}
    return {
        "cost_unavailable": json.dumps(unavailable, sort_keys=True) if unavailable else None,
        "host_steal_pct": host.get("steal_pct"),
        "host_iowait_pct": host.get("iowait_pct"),
        "host_foreign_cpu_pct": host.get("foreign_cpu_pct"),
        "cpu_mhz": host.get("cpu_mhz"),
        "noisy": host.get("noisy"),
        "noisy_reason": host.get("noisy_reason"),
    }


def prepare(rec: dict[str, Any], where: str) -> PreparedRecord:
    """Rows for one validated record; RecordError (naming `where`) for bad timestamps."""
    started = _timestamp(rec["started_at"], "started_at", where)
    finished = _timestamp(rec["finished_at"], "finished_at", where)
    hw, server = rec["hardware"], rec["server"]
    skey = server_key(server)
    variables = stored_variables(rec.get("variables"))
    vhash = varset_hash(variables)
    return PreparedRecord(
        record_id=rec["record_id"],
        hardware=(hw["key"], hw["cpu_model"], hw["cores"], hw["mem_gib"], hw["kernel"]),
        server=(skey, *(server.get(f) for f in SERVER_IDENTITY), server.get("stand_in")),
        run=(
            rec["run_id"],
            rec["runner_class"],
            hw["key"],
            started,
            finished,
            rec["tool"].get("perftrack_version"),
        ),
        result=_result_row(rec, skey, vhash, started, finished),
        varset_hash=vhash,
        variables=variables,
    )


# === writing ===========================================================================


def _insert(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],
    on_conflict: str = "",
) -> None:
    """Insert rows in one statement: each column travels as one typed list, unnested.

    Much faster than executemany (one round trip instead of one per row).
    """
    if not rows:
        return
    names = ", ".join(f'"{name}"' for name, _ in columns)
    exprs = ", ".join(f"unnest(?::{sql_type}[])" for _, sql_type in columns)
    params = [list(column) for column in zip(*rows, strict=True)]
    con.execute(f"INSERT INTO {table} ({names}) SELECT {exprs} {on_conflict}", params)


def _existing(
    con: duckdb.DuckDBPyConnection, table: str, column: str, keys: Iterable[str]
) -> set[str]:
    wanted = sorted(set(keys))
    if not wanted:
        return set()
    rows = con.execute(
        f"SELECT DISTINCT {column} FROM {table} WHERE {column} IN (SELECT unnest(?::VARCHAR[]))",
        [wanted],
    ).fetchall()
    return {key for (key,) in rows}


def _merge_runs(new: Sequence[PreparedRecord]) -> list[tuple[Any, ...]]:
    """One row per run_id: earliest start, latest finish, first non-null perftrack version."""
    runs: dict[str, list[Any]] = {}
    for p in new:
        run_id, runner_class, hw_key, started, finished, version = p.run
        row = runs.setdefault(run_id, [run_id, runner_class, hw_key, started, finished, version])
        row[3], row[4] = min(row[3], started), max(row[4], finished)
        row[5] = row[5] or version
    return [tuple(row) for row in runs.values()]


HARDWARE_COLUMNS = (
    ("hw_key", "VARCHAR"),
    ("cpu_model", "VARCHAR"),
    ("cores", "INTEGER"),
    ("mem_gib", "DOUBLE"),
    ("kernel", "VARCHAR"),
)
SERVER_COLUMNS = (
    ("server_key", "VARCHAR"),
    ("server_id", "VARCHAR"),
    ("product", "VARCHAR"),
    ("version", "VARCHAR"),
    ("provider", "VARCHAR"),
    ("version_string", "VARCHAR"),
    ("source_sha256", "VARCHAR"),
    ("stand_in", "VARCHAR"),
)
RUN_COLUMNS = (
    ("run_id", "VARCHAR"),
    ("runner_class", "VARCHAR"),
    ("hw_key", "VARCHAR"),
    ("first_started_at", "TIMESTAMP"),
    ("last_finished_at", "TIMESTAMP"),
    ("perftrack_version", "VARCHAR"),
)
VARIABLE_COLUMNS = (("varset_hash", "VARCHAR"), ("name", "VARCHAR"), ("value", "VARCHAR"))
# A run seen again (more of its records arrive later) widens its time bounds.
RUN_UPSERT = (
    "ON CONFLICT (run_id) DO UPDATE SET "
    "first_started_at = least(runs.first_started_at, excluded.first_started_at), "
    "last_finished_at = greatest(runs.last_finished_at, excluded.last_finished_at), "
    "perftrack_version = coalesce(runs.perftrack_version, excluded.perftrack_version)"
)


def _write(con: duckdb.DuckDBPyConnection, new: Sequence[PreparedRecord]) -> None:
    """Rows of records not yet stored; the caller holds the transaction."""
    hardware = {p.hardware[0]: p.hardware for p in new}
    servers = {p.server[0]: p.server for p in new}
    _insert(con, "hardware", HARDWARE_COLUMNS, list(hardware.values()), "ON CONFLICT DO NOTHING")
    _insert(con, "servers", SERVER_COLUMNS, list(servers.values()), "ON CONFLICT DO NOTHING")
    _insert(con, "runs", RUN_COLUMNS, _merge_runs(new), RUN_UPSERT)
    varsets = {p.varset_hash: p.variables for p in new if p.varset_hash}
    stored = _existing(con, "server_variables", "varset_hash", varsets)
    rows = [(h, k, v) for h, vs in varsets.items() if h not in stored for k, v in vs.items()]
    _insert(con, "server_variables", VARIABLE_COLUMNS, rows)
    _insert(con, "results", RESULT_COLUMNS, [p.result for p in new])


# === the store =========================================================================


class Store:
    """An open results DB. `con` is the DuckDB connection for read-only consumers."""

    def __init__(
        self,
        *,
        path: Path,
        con: duckdb.DuckDBPyConnection,
        write: bool,
        lock: _Lock,
        migrated: list[int],
    ) -> None:
        self.path = path
        self.con = con
        self.write = write
        self.migrated = migrated  # schema versions applied while opening (write mode)
        # Rewrite the file compactly on close even if little space is free (`compact`).
        self.compact_on_close = False
        self._lock = lock
        self._closed = False

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return migrations.schema_version(self.con) or 0

    def close(self) -> None:
        """Write mode: CHECKPOINT (no .wal left), compact if worth it. Then close and unlock."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.write:
                self._finish_write()
            else:
                self.con.close()
        finally:
            self._lock.release()

    def _finish_write(self) -> None:
        try:
            self.con.execute("CHECKPOINT")
            free, total, block = self.con.execute(
                "SELECT free_blocks, total_blocks, block_size FROM pragma_database_size() "
                "WHERE database_name = current_database()"
            ).fetchone() or (0, 0, 0)
        except duckdb.Error as exc:
            self.con.close()
            raise DatabaseError(
                f"{self.path}: final CHECKPOINT failed ({_first_line(exc)})"
            ) from None
        self.con.close()
        if self.compact_on_close or worth_compacting(free, total, block):
            _rewrite(self.path)

    # --- ingest ---

    def ingest(self, records: Sequence[dict[str, Any]]) -> IngestResult:
        """Add validated run records in one transaction; records already stored are skipped.

        Records are validated again (~10 ms each with a full variable set) so no caller can
        write a row the schema forbids; `ingest_paths` validates once, while reading.
        """
        prepared = []
        for i, rec in enumerate(records):
            where = rec.get("record_id", f"record #{i + 1}") if isinstance(rec, dict) else "?"
            prepared.append(prepare(record.validate(rec, where=str(where)), str(where)))
        return self.ingest_prepared(prepared)

    def ingest_prepared(self, prepared: Sequence[PreparedRecord]) -> IngestResult:
        """Write prepared records, all or nothing; idempotent by record_id."""
        if not self.write:
            raise RuntimeError("ingest needs a store opened with write=True")
        unique: dict[str, PreparedRecord] = {}
        for p in prepared:  # a record_id repeated within the batch counts once
            unique.setdefault(p.record_id, p)
        self.con.begin()
        try:
            stored = _existing(self.con, "results", "record_id", unique)
            new = [p for rid, p in unique.items() if rid not in stored]
            _write(self.con, new)
            self.con.commit()
        except duckdb.Error as exc:
            self.con.rollback()
            raise DatabaseError(
                f"{self.path}: ingest failed and was rolled back, nothing was written "
                f"({_first_line(exc)})"
            ) from None
        except BaseException:
            self.con.rollback()
            raise
        return IngestResult(added=len(new), already=len(prepared) - len(new))

    # --- inspection ---

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.con.execute(sql, list(params)).fetchone()
        return row[0] if row else None

    def server_ids(self, run_id: str | None = None) -> list[str]:
        """The ids of the servers with results (in one run, if given), sorted."""
        sql = "SELECT DISTINCT s.server_id FROM results r JOIN servers s USING (server_key)"
        rows = self.con.execute(
            sql + (" WHERE r.run_id = ?" if run_id else "") + " ORDER BY 1",
            [run_id] if run_id else [],
        ).fetchall()
        return [r[0] for r in rows]

    def info(self) -> dict[str, Any]:
        """A summary for `perftrack db info`; times are ISO strings (UTC) or None."""
        tables = migrations.user_tables(self.con)
        counts = {t: self._scalar(f'SELECT count(*) FROM "{t}"') for t in migrations.TABLES}
        first, last = self.con.execute(
            "SELECT min(started_at), max(finished_at) FROM results"
        ).fetchone() or (None, None)
        by_status = self.con.execute(
            "SELECT status, count(*) FROM results GROUP BY status ORDER BY status"
        ).fetchall()
        hw_keys = self.con.execute("SELECT DISTINCT hw_key FROM runs ORDER BY hw_key").fetchall()
        return {
            "path": str(self.path),
            "size_bytes": self.path.stat().st_size,
            "schema_version": self.schema_version,
            "tables": sorted(tables),
            "counts": counts,
            "runs": counts["runs"],
            "hardware_keys": [k for (k,) in hw_keys],
            "first_result_at": first.isoformat() if first else None,
            "last_result_at": last.isoformat() if last else None,
            "results_by_status": dict(by_status),
        }

    def check(self) -> list[str]:
        """Problems found in the DB, one line each; an empty list means healthy."""
        problems = self._check_tables()
        if problems:
            return problems
        problems += self._check_version()
        for sql, what in INTEGRITY_CHECKS:
            count, example = self.con.execute(sql).fetchone() or (0, None)
            if count:
                problems.append(f"{count} {what} (e.g. {example})")
        return problems

    def _check_tables(self) -> list[str]:
        """Every table of the schema exists and every column of it can be read."""
        present = migrations.user_tables(self.con)
        problems = [f"table {t} is missing" for t in migrations.TABLES if t not in present]
        for table in (t for t in migrations.TABLES if t in present):
            try:
                read_every_column(self.con, table)
            except duckdb.Error as exc:
                problems.append(f"table {table} cannot be read ({_first_line(exc)})")
        return problems

    def _check_version(self) -> list[str]:
        rows = self.con.execute("SELECT version FROM schema_version").fetchall()
        versions = [v for (v,) in rows]
        if not versions:
            return ["schema_version has no rows"]
        if max(versions) != migrations.CURRENT_VERSION:
            return [f"schema is v{max(versions)}, expected v{migrations.CURRENT_VERSION}"]
        return []


# (SQL returning count and one example, what it means). Each is a consistency rule ingest
# keeps; a hit means the DB was written by something else or by a bug.
INTEGRITY_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "SELECT count(*), min(r.record_id) FROM results r "
        "WHERE r.run_id NOT IN (SELECT run_id FROM runs)",
        "results have a run_id with no row in runs",
    ),
    (
        "SELECT count(*), min(r.record_id) FROM results r "
        "WHERE r.server_key NOT IN (SELECT server_key FROM servers)",
        "results have a server_key with no row in servers",
    ),
    (
        "SELECT count(*), min(r.record_id) FROM results r WHERE r.varset_hash IS NOT NULL "
        "AND r.varset_hash NOT IN (SELECT varset_hash FROM server_variables)",
        "results have a varset_hash with no rows in server_variables",
    ),
    (
        "SELECT count(*), min(r.record_id) FROM results r JOIN runs u USING (run_id) "
        "WHERE u.hw_key NOT IN (SELECT hw_key FROM hardware)",
        "results belong to a run whose hw_key has no row in hardware",
    ),
    (
        "SELECT count(*), min(record_id) FROM "
        "(SELECT record_id FROM results GROUP BY record_id HAVING count(*) > 1)",
        "record_ids appear more than once in results",
    ),
    (
        "SELECT count(*), min(record_id) FROM results WHERE status IS NULL OR status NOT IN ("
        + ", ".join(f"'{s}'" for s in VALID_STATUSES)
        + ")",
        f"results have a status other than {'/'.join(VALID_STATUSES)}",
    ),
    (
        "SELECT count(*), min(record_id) FROM results WHERE status = 'ok' AND tps IS NULL",
        "ok results have no tps",
    ),
)


def compact(db_path: Path, *, lock_timeout_s: float = LOCK_TIMEOUT_S) -> tuple[int, int]:
    """Rewrite the DB without free blocks (for `perftrack db compact`); (bytes before, after)."""
    db_path = Path(db_path)
    if not db_path.exists():
        raise ConfigError(f"{db_path} does not exist: run `perftrack ingest` first to create it")
    before = db_path.stat().st_size
    with open_db(db_path, write=True, lock_timeout_s=lock_timeout_s) as store:
        store.compact_on_close = True
    return before, db_path.stat().st_size


def ingest_paths(
    db_path: Path, paths: Iterable[Path], *, lock_timeout_s: float = LOCK_TIMEOUT_S
) -> IngestResult:
    """Read and validate every record file under `paths`, then ingest them in one transaction.

    Any invalid file raises RecordError (naming the file and field) before the DB is opened,
    so nothing is written. No record files at all returns IngestResult(0, 0) without opening
    the DB.
    """
    prepared = [prepare(record.read(p), str(p)) for p in record.find(paths)]
    if not prepared:
        return IngestResult(added=0, already=0)
    with open_db(db_path, write=True, lock_timeout_s=lock_timeout_s) as store:
        return store.ingest_prepared(prepared)


__all__ = [
    "LOCK_TIMEOUT_S",
    "IngestResult",
    "IntervalSummary",
    "PreparedRecord",
    "Store",
    "compact",
    "ingest_paths",
    "lock_path",
    "open_db",
    "prepare",
    "server_key",
    "stored_variables",
    "summarize_intervals",
    "varset_hash",
    "worth_compacting",
]
