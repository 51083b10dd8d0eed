"""Faults of the run stage, each made real: a missing shared library, a port already taken,
a full disk (a small tmpfs mounted by the test), a hung sysbench, a run directory on a full
disk. Every test ends with no server or sysbench process of its own and no datadir left.

Integration: real MariaDB servers from the catalog (download cache reused), real sysbench.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fixtures.hand_edit import add_night_files
from fixtures.records.synthetic import make_record
from leaks import processes_mentioning
from perftrack.core import record
from perftrack.core.errors import EnvironmentProblem, ServerError
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.run.server import Server
from perftrack.servers import catalog, providers
from perftrack.store import store

SERVER = "mariadb-10.11.18"
# A tmpfs too small for MariaDB 10.11's 12 MiB ibdata1: initialisation fails on ENOSPC.
TOO_SMALL_MB = 8
# Room for an initialised 10.11 datadir with a 4 MiB redo log (33 MiB measured: ibdata1
# and ibtmp1 12 MiB each, the log, system tables), but not for 300k sysbench rows (~60 MiB).
FILLS_DURING_PREPARE_MB = 48
FILLING_ROWS = 300_000
# A run directory's plan.json and run.json fit easily; records are then written into it.
RUNS_DISK_MB = 4
# sysbench's wall-clock bound beyond --time in the hang test (production: 60 s).
HANG_GRACE_S = 3.0


def tiny(**kw) -> matrix.Matrix:
    base = {
        "name": "faults",
        "servers": [SERVER],
        "workloads": ["oltp_point_select"],
        "charsets": ["latin1"],
        "threads": [2],
        "repeats": 1,
        "duration_s": 1,
        "warmup_s": 0,
        "tables": 1,
        "table_size": 500,
    }
    return matrix.from_dict({**base, **kw})


def make_runner(
    runs: Path, config_dir: Path, workroot: Path, m: matrix.Matrix, **kw
) -> tuple[runner.Runner, runner.RunDir]:
    cat = catalog.read_catalog(config_dir / "versions.yaml")
    rd = runner.create(m, cat, runs, "test")
    return runner.Runner(
        rd=rd, catalog=cat, config_dir=config_dir, emit=lambda _line: None, workroot=workroot, **kw
    ), rd


def all_records(rd: runner.RunDir) -> list[dict]:
    return [r for recs in rd.attempts().values() for r in recs]


def install(config_dir: Path, server_id: str = SERVER):
    return providers.fetch(catalog.read_catalog(config_dir / "versions.yaml").get(server_id))


# --- a small filesystem, made by the test ------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[int], Path]]:
    """mount(size_mb) -> an empty tmpfs of that size; unmounted and removed afterwards."""
    mounted: list[Path] = []

    def mount(size_mb: int) -> Path:
        where = tmp_path / f"d{len(mounted)}"
        where.mkdir()
        res = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0700", "tmpfs", str(where)],
            capture_output=True,
            text=True,
            check=False,
        )
        if res.returncode != 0:
            where.rmdir()
            pytest.skip(f"cannot mount a {size_mb} MB tmpfs here (needs root): {res.stderr}")
        mounted.append(where)
        return where

    try:
        yield mount
    finally:
        leaks = [p for where in mounted for p in processes_mentioning(str(where))]
        for where in mounted:
            for p in processes_mentioning(str(where)):  # only ours can mention this path
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(p.split()[0]), signal.SIGKILL)
            subprocess.run(["umount", "-l", str(where)], check=False)
            where.rmdir()
        assert leaks == [], "a server or sysbench process leaked"


def fill(disk: Path) -> Path:
    """Fill a filesystem to the last byte; returns the ballast file."""
    ballast = disk / "ballast"
    fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 20, 4096, 1):  # big chunks, then the last pages and bytes
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)
    with pytest.raises(OSError) as err:
        (disk / "probe").write_bytes(b"x")
    assert err.value.errno == errno.ENOSPC
    (disk / "probe").unlink(missing_ok=True)
    return ballast


def leftovers(directory: Path, keep: tuple[str, ...] = ()) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


# --- a missing shared library -------------------------------------------------------------


def test_missing_shared_library_fails_the_cell_naming_the_library(
    tmp_path: Path, config_dir: Path, workroot: Path
) -> None:
    tree = install(config_dir).basedir.parent
    broken = tmp_path / "nolib"
    try:
        shutil.copytree(tree, broken, symlinks=True, copy_function=os.link)
    except OSError:  # another filesystem: a real copy (~60 MB)
        shutil.rmtree(broken, ignore_errors=True)
        shutil.copytree(tree, broken, symlinks=True)
    removed = list((broken / "usr/lib/x86_64-linux-gnu").glob("liburing.so.2*"))
    assert removed, "the Debian tree ships liburing.so.2 beside the server"
    for lib in removed:
        lib.unlink()
    assert (tree / "usr/lib/x86_64-linux-gnu/liburing.so.2").exists(), "the cache is untouched"
    with (config_dir / "versions.yaml").open("a") as fh:
        fh.write(
            "\n  - id: nolib-10.11.18\n    product: mariadb\n    version: 10.11.18\n"
            f"    provider: path\n    basedir: {broken / 'usr'}\n"
        )
    r, rd = make_runner(tmp_path / "runs", config_dir, workroot, tiny(servers=["nolib-10.11.18"]))
    s = r.run()
    assert (s.ok, s.failed) == (0, 1)
    recs = all_records(rd)
    assert [x["attempt"] for x in recs] == [1, 2], "failed once, retried once, both recorded"
    for rec in recs:
        assert rec["status"] == "failed"
        assert "missing shared library liburing.so.2" in rec["reason"], rec["reason"]
        assert rec["result"] is None
    assert rd.status()["status"] == "complete"


# --- a port already taken -----------------------------------------------------------------


def test_port_already_taken_is_refused_naming_the_port(config_dir: Path, workroot: Path) -> None:
    inst = install(config_dir)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(ServerError, match=f"port {port} on 127.0.0.1 is already in use"):
            Server(install=inst, options={}, workroot=workroot, port=port).__enter__()
    assert leftovers(workroot) == []
    # the same with a real server holding the port
    with Server(install=inst, options={}, workroot=workroot) as first:
        assert first.port is not None
        with pytest.raises(ServerError, match=f"port {first.port} .*already in use") as err:
            Server(install=inst, options={}, workroot=workroot, port=first.port).__enter__()
        assert "\n" not in str(err.value)
        assert first.responsive(), "the server holding the port is untouched"


# --- a full disk --------------------------------------------------------------------------


def test_datadir_on_a_disk_too_small_fails_as_disk_full(
    tmp_path: Path, config_dir: Path, small_disk
) -> None:
    disk = small_disk(TOO_SMALL_MB)
    r, rd = make_runner(tmp_path / "runs", config_dir, disk, tiny())
    s = r.run()
    assert (s.ok, s.failed) == (0, 1)
    recs = all_records(rd)
    assert len(recs) == 2, "first attempt and its retry"
    for rec in recs:
        assert rec["status"] == "failed" and rec["result"] is None
        assert f"disk full on {disk}" in rec["reason"], rec["reason"]
        assert "initialisation failed" in rec["reason"]
        assert "error 28" in rec["error_log_tail"]
    assert leftovers(disk) == []


def test_datadir_on_a_full_disk_fails_as_disk_full(
    tmp_path: Path, config_dir: Path, small_disk
) -> None:
    disk = small_disk(TOO_SMALL_MB)
    fill(disk)
    r, rd = make_runner(tmp_path / "runs", config_dir, disk, tiny(), retries=0)
    s = r.run()
    assert (s.ok, s.failed) == (0, 1)
    (rec,) = all_records(rd)
    assert f"disk full on {disk}" in rec["reason"], rec["reason"]
    assert leftovers(disk, keep=("ballast",)) == []


def test_disk_filling_up_during_prepare_fails_the_group_as_disk_full(
    tmp_path: Path, config_dir: Path, small_disk
) -> None:
    (config_dir / "profiles" / "smalllog.cnf").write_text(
        "[mysqld]\ninnodb_log_file_size=4M\n"  # the datadir must fit the small disk
    )
    disk = small_disk(FILLS_DURING_PREPARE_MB)
    m = tiny(
        workloads=["oltp_point_select", "oltp_read_only"],
        profile="smalllog",
        table_size=FILLING_ROWS,
    )
    r, rd = make_runner(tmp_path / "runs", config_dir, disk, m, retries=0)
    s = r.run()
    assert (s.ok, s.failed) == (0, 2)
    for rec in all_records(rd):
        assert rec["reason"].startswith("sysbench prepare"), rec["reason"]
        assert "is full" in rec["reason"]
        assert f"disk full on {disk}" in rec["reason"]
        assert rec["server"]["version_string"], "the server had started"
        assert "is full" in rec["error_log_tail"]
    assert leftovers(disk) == []


def test_run_directory_on_a_full_disk_stops_with_a_one_line_error_then_resumes(
    config_dir: Path, workroot: Path, small_disk
) -> None:
    runs = small_disk(RUNS_DISK_MB)
    r, rd = make_runner(runs, config_dir, workroot, tiny(repeats=2))
    ballast = fill(runs)
    with pytest.raises(EnvironmentProblem) as err:
        r.run()
    msg = str(err.value)
    assert "\n" not in msg
    assert f"disk full on {runs}" in msg and f"--resume {rd.run_id}" in msg, msg
    assert not list(rd.records.glob(".tmp-*")), "no half-written record"
    ballast.unlink()
    r2 = runner.Runner(
        rd=rd, catalog=r.catalog, config_dir=config_dir, emit=lambda _line: None, workroot=workroot
    )
    s = r2.run(resume=True)
    assert (s.ok, s.failed) == (2, 0)
    assert {c.cell_id for c in rd.cells()} == set(rd.attempts())
    assert rd.status()["status"] == "complete"


# --- a hung sysbench ----------------------------------------------------------------------


def test_hung_sysbench_is_killed_at_its_bound_and_the_group_fails_fast(
    tmp_path: Path, config_dir: Path, workroot: Path
) -> None:
    frozen: list[tuple[int, int]] = []  # (server pid, port)

    def freeze_first(srv: Server, cell) -> None:
        if not frozen and srv.process is not None:
            frozen.append((srv.process.pid, int(srv.port or 0)))
            os.kill(srv.process.pid, signal.SIGSTOP)  # sysbench now waits forever

    m = tiny(workloads=["oltp_point_select", "oltp_read_only"])
    r, rd = make_runner(
        tmp_path / "runs",
        config_dir,
        workroot,
        m,
        before_measure=freeze_first,
        sysbench_grace_s=HANG_GRACE_S,
    )
    try:
        s = r.run()
    finally:
        for pid, _ in frozen:  # should be gone; never leave a stopped server behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert (s.ok, s.failed) == (2, 0), "both cells passed on their retry"
    first = {cid: recs[0] for cid, recs in rd.attempts().items()}
    reasons = sorted(x["reason"] for x in first.values())
    hung = [x for x in reasons if x.startswith("sysbench hung")]
    assert len(hung) == 1 and "killed" in hung[0] and "--time=1" in hung[0], reasons
    assert "no longer answers" in hung[0]
    other = [x for x in reasons if x not in hung]
    assert len(other) == 1 and other[0].startswith("server stopped answering"), reasons
    assert all(len(recs) == 2 and recs[1]["status"] == "ok" for recs in rd.attempts().values())
    pid, port = frozen[0]
    assert processes_mentioning(f"--mysql-port={port}") == [], "sysbench was killed"
    assert not Path(f"/proc/{pid}").exists(), "the frozen server was stopped"


# --- the DB's integrity check from the command line ----------------------------------------


CLI = "import sys; from perftrack.cli import main; sys.exit(main())"


def perftrack(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_db_check_exits_non_zero_naming_each_problem(tmp_path: Path) -> None:
    db = tmp_path / "results.duckdb"
    records = tmp_path / "records"
    for i in range(3):
        record.write(make_record(cell=i), records)  # synthetic fixture records
    assert perftrack("ingest", str(records), "--db", str(db)).returncode == 0
    healthy = perftrack("db", "check", "--db", str(db))
    assert healthy.returncode == 0 and "ok" in healthy.stdout
    add_night_files(  # rows a hand edit added: an orphan result, a run on unknown hardware
        db,
        {
            "results": "(SELECT * REPLACE ('synthetic-orphan:0000000000000000:1' AS record_id, "
            "'no-such-run' AS run_id) FROM results LIMIT 1) UNION ALL "
            "(SELECT * REPLACE ('synthetic-nohw:0000000000000000:1' AS record_id, "
            "'synthetic-nohw' AS run_id) FROM results LIMIT 1)",
            "runs": "SELECT * REPLACE ('synthetic-nohw' AS run_id, 'feedfeedfeed' AS hw_key) "
            "FROM runs LIMIT 1",
        },
    )
    sick = perftrack("db", "check", "--db", str(db))
    assert sick.returncode == 1, sick.stdout + sick.stderr
    problems = [ln for ln in sick.stdout.splitlines() if ln.startswith("problem: ")]
    assert any("run_id with no row in runs" in p for p in problems), problems
    assert any("hw_key has no row in hardware" in p for p in problems), problems
    assert "Traceback" not in sick.stderr
    with store.open_db(db, write=False) as st:
        assert len(st.check()) == len(problems)
