"""Server lifecycle: initialise a datadir, start on 127.0.0.1, verify, stop, clean up.

A `Server` is a context manager: whatever happens inside (an error, Ctrl-C, SIGTERM), the
process is stopped (SIGTERM, then SIGKILL after `STOP_TIMEOUT_S`) and its directory
removed. Servers are also started with PR_SET_PDEATHSIG so they die with perftrack even
if perftrack itself is SIGKILLed. The directory's owner lock (core/dirlock.py) is held
from its creation until it is removed: a directory whose lock is free belongs to a dead
perftrack, and `perftrack runner sweep` may stop what still runs from it and remove it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql

from perftrack.core import dirlock
from perftrack.core.errors import ServerError
from perftrack.run.errorlog import (
    disk_full,
    known_cause,
    last_error_line,
    tail,
    tail_bytes,
)
from perftrack.servers.install import Install
from perftrack.servers.rules import INIT_INSECURE, Rule, rules_for

INIT_TIMEOUT_S = 180  # mysqld --initialize on a slow disk takes ~10 s; install scripts ~2 s
READY_TIMEOUT_S = 120  # 11.4 without --skip-ssl spent ~13 s generating keys; 10x margin
STOP_TIMEOUT_S = 60  # clean InnoDB shutdown of a small dataset takes < 2 s
POLL_S = 0.1
DEFERRED_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
GROUP_TERM_WAIT_S = 10  # a bootstrap server shuts down in < 1 s; docker stop in ~1 s
GROUP_KILL_WAIT_S = 5
# A healthy server answers SELECT 1 in milliseconds; one that has not within this bound
# (hung, SIGSTOPped, swapping to death) is treated as gone for the rest of its group.
RESPONSIVE_TIMEOUT_S = 5
# Unix socket paths are limited to 107 bytes (sun_path); keep server dirs short.
SOCKET_PATH_MAX = 100
BENCH_USER = "perftrack"
BENCH_DB = "sbtest"
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_group(proc: subprocess.Popen[bytes], term_wait_s: float = GROUP_TERM_WAIT_S) -> None:
    """Stop a process started with start_new_session and everything it forked: SIGTERM
    (a launcher may clean up, e.g. remove its container), then SIGKILL; wait until the
    group is gone so nothing writes into a directory we are about to remove."""
    pgid = proc.pid
    for sig, wait_s in ((signal.SIGTERM, term_wait_s), (signal.SIGKILL, GROUP_KILL_WAIT_S)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=POLL_S)
            if not _group_alive(pgid):
                return
        proc.poll()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


@dataclass(kw_only=True)
class Server:
    """One running server for one group of cells."""

    install: Install
    options: dict[str, str | None] = field(default_factory=dict)  # [mysqld] options
    workroot: Path | None = None
    port: int | None = None  # None: pick a free one
    keep_dir: bool = False
    # A datadir saved from a stopped server of the same install and options (a prepared
    # dataset): copied instead of initialising, so the dataset need not be loaded again.
    template: Path | None = None

    rule: Rule = field(init=False)
    dir: Path = field(init=False)
    password: str = field(init=False)
    process: subprocess.Popen[bytes] | None = field(init=False, default=None)
    version_string: str | None = field(init=False, default=None)
    variables: dict[str, str | None] = field(init=False, default_factory=dict)
    final_log_tail: str = field(init=False, default="")  # kept when the dir is removed
    _lock: int | None = field(init=False, default=None)  # the directory's owner lock

    def __post_init__(self) -> None:
        self.rule = rules_for(self.install.product, self.install.version)
        self.password = secrets.token_hex(12)

    # paths -------------------------------------------------------------------------
    @property
    def datadir(self) -> Path:
        return self.dir / "data"

    @property
    def socket_path(self) -> Path:
        return self.dir / "s.sock"

    @property
    def error_log(self) -> Path:
        return self.dir / "error.log"

    @property
    def tmpdir(self) -> Path:
        return self.dir / "tmp"

    @property
    def cnf(self) -> Path:
        return self.dir / "my.cnf"

    # lifecycle ---------------------------------------------------------------------
    def __enter__(self) -> Server:
        root = self.workroot or Path(tempfile.gettempdir())
        # Ctrl-C / SIGTERM are held from before the directory exists until inside the try
        # that removes it on any exception: no gap in which an interruption leaks it.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, DEFERRED_SIGNALS)
        try:
            try:
                root.mkdir(parents=True, exist_ok=True)
                self.dir = Path(tempfile.mkdtemp(prefix=dirlock.SERVER_DIR_PREFIX, dir=root))
                if len(str(self.socket_path)) > SOCKET_PATH_MAX:
                    shutil.rmtree(self.dir, ignore_errors=True)
                    self.dir = Path(tempfile.mkdtemp(prefix=dirlock.SERVER_DIR_PREFIX))
                self._lock = dirlock.hold(self.dir)
            except OSError as exc:
                if getattr(self, "dir", None) is not None:  # made, but its lock was not
                    shutil.rmtree(self.dir, ignore_errors=True)
                problem = self._os_problem(f"cannot create a directory in {root}", exc, root)
                raise ServerError(problem) from None
            try:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a held signal lands here
                self._start()
            except OSError as exc:  # e.g. my.cnf or a log cannot be written: disk full
                self.stop()
                problem = self._os_problem("cannot prepare the server", exc, self.dir)
                raise ServerError(problem) from None
            except BaseException:
                self.stop()
                raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        return self

    def _os_problem(self, what: str, exc: OSError, where: Path) -> str:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return f"{self.install.server_id}: {disk_full(where)}"
        return f"{self.install.server_id}: {what}: {exc.strerror or exc}"

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def my_cnf_text(self) -> str:
        """The generated my.cnf: fixed safety settings, then the cell's options."""
        fixed: dict[str, str | None] = {
            "basedir": str(self.install.basedir),
            "datadir": str(self.datadir),
            "socket": str(self.socket_path),
            "port": str(self.port),
            "bind-address": "127.0.0.1",
            "skip-name-resolve": None,
            "log-error": str(self.error_log),
            "pid-file": str(self.dir / "mysqld.pid"),
            "lc-messages-dir": str(self.install.share_dir),
            # private temp files: the shared /tmp let servers of other runs (other pid
            # namespaces, same pids) remove each other's #sql-temptable-<pid> files
            "tmpdir": str(self.tmpdir),
            **self.install.server_options,
        }
        if os.geteuid() == 0:
            fixed["user"] = "root"
        lines = ["# generated by perftrack: fixed settings, then profile + cell axes", "[mysqld]"]
        for key, value in {**fixed, **self.options}.items():
            lines.append(key if value is None else f"{key}={value}")
        for arg in self.rule.start_args:
            lines.append(arg.removeprefix("--"))
        return "\n".join(lines) + "\n"

    def _start(self) -> None:
        if self.port is None:
            self.port = free_port()
        elif port_in_use(self.port):
            raise ServerError(
                f"port {self.port} on 127.0.0.1 is already in use: stop what holds it "
                "or leave the port unset so perftrack picks a free one"
            )
        self.tmpdir.mkdir(exist_ok=True)
        self.cnf.write_text(self.my_cnf_text())
        if self.template is not None:
            shutil.copytree(self.template, self.datadir, symlinks=True)
        else:
            self._initialise()
        self._launch()
        self._wait_ready()
        self._setup()

    def _run_init(self, cmd: list[str]) -> None:
        log = self.dir / "init.log"
        with log.open("wb") as out:
            try:
                # Own process group: install scripts fork the server (--bootstrap), which
                # must die with them if we are interrupted, or it keeps writing the datadir.
                proc = subprocess.Popen(
                    cmd,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=self.install.env(),
                    preexec_fn=_die_with_parent,
                    cwd=self.dir,
                    start_new_session=True,
                )
            except OSError as exc:
                raise ServerError(
                    f"{self.install.server_id}: cannot run {cmd[0]}: {exc.strerror}"
                ) from None
            try:
                proc.wait(timeout=INIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                stop_group(proc)
                raise ServerError(
                    f"{self.install.server_id}: datadir initialisation did not finish within "
                    f"{INIT_TIMEOUT_S} s; see {log}"
                ) from None
            except BaseException:
                stop_group(proc)
                raise
        if proc.returncode != 0:
            # the whole init log (KBs): install scripts print the server's [ERROR] first
            # and ~30 lines of advice after it, which a tail would keep instead
            whole = tail_bytes(log) + "\n" + tail_bytes(self.error_log)
            detail = known_cause(whole, self.dir) or last_error_line(whole)
            raise ServerError(
                f"{self.install.server_id}: datadir initialisation failed "
                f"(exit {proc.returncode}): {detail}"
            )

    def _initialise(self) -> None:
        cnf = f"--defaults-file={self.cnf}"
        if self.rule.init == INIT_INSECURE or self.install.install_db is None:
            cmd = [*self.install.launcher, str(self.install.mysqld), cnf, "--initialize-insecure"]
        else:
            cmd = [
                *self.install.launcher,
                str(self.install.install_db),
                cnf,
                f"--basedir={self.install.basedir}",
                f"--datadir={self.datadir}",
                *self.rule.init_args,
            ]
            if os.geteuid() == 0:
                cmd.append("--user=root")
        self._run_init(cmd)

    def _launch(self) -> None:
        stdout = (self.dir / "stdout.log").open("wb")
        try:
            self.process = subprocess.Popen(
                [*self.install.launcher, str(self.install.mysqld), f"--defaults-file={self.cnf}"],
                stdout=stdout,
                stderr=subprocess.STDOUT,
                env=self.install.env(),
                preexec_fn=_die_with_parent,
                cwd=self.dir,
                start_new_session=True,
            )
        except OSError as exc:
            raise ServerError(
                f"{self.install.server_id}: cannot start {self.install.mysqld}: {exc.strerror}"
            ) from None
        finally:
            stdout.close()

    def log_tail(self) -> str:
        return "\n".join(t for t in (tail(self.error_log), tail(self.dir / "stdout.log")) if t)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        assert self.process is not None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                whole = tail_bytes(self.dir / "stdout.log") + "\n" + tail_bytes(self.error_log)
                detail = known_cause(whole, self.dir) or last_error_line(self.log_tail())
                if "Address already in use" in self.log_tail():
                    detail = f"port {self.port} is already in use ({detail})"
                raise ServerError(
                    f"{self.install.server_id} would not start (exit "
                    f"{self.process.returncode}): {detail}"
                )
            if self.socket_path.exists():
                try:
                    self.admin().close()
                    return
                except pymysql.err.OperationalError:
                    pass
            time.sleep(POLL_S)
        raise ServerError(
            f"{self.install.server_id} was not ready within {READY_TIMEOUT_S} s: "
            f"{last_error_line(self.log_tail())}"
        )

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def responsive(self) -> bool:
        """True if the server is running and answers SELECT 1 within the bound."""
        if not self.alive():
            return False
        try:
            con = pymysql.connect(
                unix_socket=str(self.socket_path),
                user="root",
                password="",
                connect_timeout=RESPONSIVE_TIMEOUT_S,
                read_timeout=RESPONSIVE_TIMEOUT_S,
                write_timeout=RESPONSIVE_TIMEOUT_S,
            )
            try:
                with con.cursor() as cur:
                    cur.execute("SELECT 1")
            finally:
                con.close()
        except (pymysql.err.MySQLError, OSError):
            return False
        return True

    def cause_in_log(self) -> str | None:
        """A known cause (disk full, missing library) in the server's logs, or None."""
        if getattr(self, "dir", None) is None or not self.dir.exists():
            return known_cause(self.final_log_tail, getattr(self, "dir", Path(".")))
        whole = tail_bytes(self.error_log) + "\n" + tail_bytes(self.dir / "stdout.log")
        return known_cause(whole, self.dir)

    def admin(self) -> pymysql.connections.Connection:
        """Root over the private socket (root exists only as root@localhost)."""
        return pymysql.connect(
            unix_socket=str(self.socket_path),
            user="root",
            password="",
            autocommit=True,
            connect_timeout=5,
            read_timeout=600,
            charset="utf8mb4",
        )

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        """Run one statement as root; a failure (server gone, disk full) is a ServerError."""
        try:
            con = self.admin()
            try:
                with con.cursor() as cur:
                    cur.execute(sql, args)
                    return list(cur.fetchall())
            finally:
                con.close()
        except pymysql.err.MySQLError as exc:
            first = sql.split()[0] if sql.split() else "query"
            raise ServerError(
                f"{self.install.server_id}: {first} failed: {' '.join(str(exc).split())}"
            ) from None

    def _setup(self) -> None:
        plugin = self.rule.auth_plugin
        ident = f"IDENTIFIED WITH {plugin} BY %s" if plugin else "IDENTIFIED BY %s"
        for host in ("127.0.0.1", "localhost"):
            if self.template is not None:  # the template's user has an old password
                self._drop_bench_user(host)
            self.query(f"CREATE USER '{BENCH_USER}'@'{host}' {ident}", (self.password,))
            self.query(f"GRANT ALL ON *.* TO '{BENCH_USER}'@'{host}'")
        self.version_string = str(self.query("SELECT VERSION()")[0][0])
        self.variables = {str(k): self._portable(v) for k, v in self.query("SHOW GLOBAL VARIABLES")}

    def _drop_bench_user(self, host: str) -> None:
        if self.rule.drop_user_if_exists:
            self.query(f"DROP USER IF EXISTS '{BENCH_USER}'@'{host}'")
            return
        exists = self.query(
            "SELECT COUNT(*) FROM mysql.user WHERE User = %s AND Host = %s", (BENCH_USER, host)
        )
        if exists and exists[0][0]:
            self.query(f"DROP USER '{BENCH_USER}'@'{host}'")

    def _portable(self, value: Any) -> str | None:
        """A variable's value with this run's private paths replaced by placeholders,
        so equal configurations give equal variable sets (stored once, by content)."""
        if value is None:
            return None
        text = str(value)
        for path, name in ((self.dir, "{server_dir}"), (self.install.basedir, "{basedir}")):
            text = text.replace(str(path), name)
        return text

    def create_database(self, charset: str, collation: str) -> None:
        self.query(f"DROP DATABASE IF EXISTS {BENCH_DB}")
        self.query(f"CREATE DATABASE {BENCH_DB} CHARACTER SET {charset} COLLATE {collation}")

    def effective(self) -> dict[str, str | None]:
        """Settings that decide a verdict, read back from the server with SQL."""
        iso = self.rule.isolation_var
        row = self.query(
            "SELECT @@character_set_server, @@collation_server, "
            f"@@{iso}, @@{self.rule.engine_var}, @@version"
        )[0]
        db = self.query(
            "SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME "
            "FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s",
            (BENCH_DB,),
        )
        tables = self.query(
            "SELECT DISTINCT TABLE_COLLATION, ENGINE FROM information_schema.TABLES "
            "WHERE TABLE_SCHEMA = %s",
            (BENCH_DB,),
        )
        return {
            "character_set_server": row[0],
            "collation_server": row[1],
            "transaction_isolation": row[2],
            "default_storage_engine": row[3],
            "version": row[4],
            "database_charset": db[0][0] if db else None,
            "database_collation": db[0][1] if db else None,
            "table_collations": ",".join(sorted(str(t[0]) for t in tables)) or None,
            "table_engines": ",".join(sorted(str(t[1]) for t in tables)) or None,
        }

    def stop(self) -> None:
        """Stop the server (SIGTERM, SIGKILL after a bound) and remove its directory.

        Ctrl-C / SIGTERM arriving meanwhile are held until the cleanup is done (it is
        bounded by STOP_TIMEOUT_S), so an interruption never leaves a datadir behind.
        """
        old = signal.pthread_sigmask(signal.SIG_BLOCK, DEFERRED_SIGNALS)
        try:
            self._stop()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def _stop(self) -> None:
        proc = self.process
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            # A stopped (SIGSTOPped, frozen) server acts on SIGTERM only once continued.
            proc.send_signal(signal.SIGCONT)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc is not None:
            proc.wait()
        if getattr(self, "dir", None) is not None and self.dir.exists():
            self.final_log_tail = self.log_tail()
        if not self.keep_dir and getattr(self, "dir", None) is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
        dirlock.release(self._lock)
        self._lock = None

    def kill(self) -> None:
        """SIGKILL (tests use this to simulate a crash)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()


@contextlib.contextmanager
def running(
    install: Install, options: dict[str, str | None], **server_args: Any
) -> Iterator[Server]:
    with Server(install=install, options=options, **server_args) as srv:
        yield srv
