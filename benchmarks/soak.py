"""Soak: hundreds of consecutive cells across server restarts, with injected faults, then
account for every cell in the DB and look for leaks.

What runs: the Debian MariaDB pair (catalog), `oltp_point_select`, 1 s cells, one tiny
table, TCP on 127.0.0.1, through the real `Runner` (a fresh server per group) and a real
ingest into a temporary DuckDB file. Faults: every Nth group's server is SIGKILLed before
its first measurement (its cells fail, then pass on the retry at the end of the plan);
optionally every Mth group's server is SIGSTOPped so sysbench hangs until its bound.
One charset axis, `utf8mb4_0900_ai_ci`, is skipped by the version rules on MariaDB, so
all three final statuses occur.

Checks: every planned cell has a record in the DB, attempts numbered 1..n with none twice,
a final status ok/failed/skipped; `db check` is clean; re-ingesting adds nothing; and
no growth in leaked processes (descendants of this process), this process's open file
descriptors (/proc/self/fd) or the disk use of the server work directory.

    .venv/bin/python benchmarks/soak.py --rounds 13 --kill-every 7 --freeze-every 17

The test suite runs the same code with ~20 cells (tests/test_soak.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from perftrack.core import hardware, record
from perftrack.drivers import sysbench
from perftrack.planning import cells as plan
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.run.server import Server
from perftrack.servers import catalog
from perftrack.store import store

REPO = Path(__file__).resolve().parents[1]
SERVERS = ["mariadb-10.11.18", "mariadb-10.11.19"]
SKIPPED_AXIS = "utf8mb4_0900_ai_ci"  # MySQL 8.0's collation: MariaDB skips it (rules.py)
# A frozen server's sysbench is killed this long after its --time (production: 60 s).
HANG_GRACE_S = 3.0
FINAL_STATUSES = frozenset({"ok", "failed", "skipped"})


@dataclass
class Sample:
    """One look at the resources a leak would grow."""

    descendants: int  # live processes below this one (servers, sysbench)
    fds: int  # this process's open file descriptors
    work_bytes: int  # disk use of the server work directory (datadirs)


@dataclass
class Report:
    run_id: str
    planned: int
    executed_cells: int  # planned cells that are not skipped
    groups: int  # server starts of the first pass
    ok: int = 0
    failed: int = 0
    skipped: int = 0
    attempts: int = 0  # records in the DB
    kills: int = 0
    freezes: int = 0
    missing: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    bad_attempts: list[str] = field(default_factory=list)
    final_failed: list[str] = field(default_factory=list)  # "cell: reason" of the last attempt
    db_problems: list[str] = field(default_factory=list)
    reingest_added: int = 0
    before: Sample | None = None
    after: Sample | None = None
    first_cell: Sample | None = None  # taken inside the first measurement (server up)
    last_cell: Sample | None = None  # taken inside the last measurement
    peak_descendants: int = 0
    seconds: float = 0.0

    def problems(self) -> list[str]:
        """Everything that makes the soak fail; empty when it passed."""
        out = [f"cell missing from the DB: {c}" for c in self.missing]
        out += [f"cell stored twice: {c}" for c in self.duplicated]
        out += [f"attempts not 1..n: {c}" for c in self.bad_attempts]
        out += [f"db check: {p}" for p in self.db_problems]
        if self.ok + self.failed + self.skipped != self.planned:
            out.append(f"final statuses cover {self.ok + self.failed + self.skipped} cells")
        if self.reingest_added:
            out.append(f"re-ingest added {self.reingest_added} records")
        if self.before and self.after:
            if self.after.descendants > self.before.descendants:
                out.append(f"processes leaked: {self.after.descendants - self.before.descendants}")
            if self.after.fds > self.before.fds:
                out.append(f"file descriptors grew: {self.before.fds} -> {self.after.fds}")
            if self.after.work_bytes > self.before.work_bytes:
                out.append(f"work dir grew: {self.before.work_bytes} -> {self.after.work_bytes} B")
        if self.first_cell and self.last_cell and self.last_cell.fds > self.first_cell.fds:
            out.append(f"fds grew over the run: {self.first_cell.fds} -> {self.last_cell.fds}")
        return out


def descendants(pid: int | None = None) -> list[int]:
    """Live descendants of `pid` (default: this process), from /proc."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] == "Z":  # a zombie holds nothing but its pid
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def disk_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def sample(work: Path) -> Sample:
    return Sample(len(descendants()), len(os.listdir("/proc/self/fd")), disk_bytes(work))


def soak_matrix(rounds: int, threads: list[int], charsets: list[str]) -> matrix.Matrix:
    return matrix.from_dict(
        {
            "name": "soak",
            "description": "bounded local soak (benchmarks/soak.py)",
            "servers": SERVERS,
            "workloads": ["oltp_point_select"],
            "charsets": charsets,
            "threads": threads,
            "repeats": rounds,
            "duration_s": 1,
            "warmup_s": 0,
            "tables": 1,
            "table_size": 1000,
        }
    )


def soak(
    workdir: Path,
    *,
    rounds: int,
    threads: list[int],
    charsets: list[str],
    kill_every: int,
    freeze_every: int = 0,
    config_dir: Path | None = None,
    emit: Callable[[str], None] = lambda _line: None,
) -> Report:
    """Run the soak in `workdir` (runs/, w/ for server dirs, results.duckdb) and check it."""
    configs = config_dir or REPO / "configs"
    cat = catalog.read_catalog(configs / "versions.yaml")
    runs, work, db = workdir / "runs", workdir / "w", workdir / "results.duckdb"
    work.mkdir(parents=True, exist_ok=True)
    m = soak_matrix(rounds, threads, charsets)
    rd = runner.create(m, cat, runs, "soak")
    cells = rd.cells()
    first_pass = plan.groups([c for c in cells if not c.skip])
    rep = Report(rd.run_id, len(cells), sum(map(len, first_pass)), len(first_pass))
    # Load once what every process keeps open or cached, so the samples compare like for like.
    hardware.fingerprint()
    sysbench.version()
    record.schema()
    rep.before = sample(work)
    faulted: set[int] = set()

    def inject(srv: Server, cell: plan.Cell) -> None:
        s = sample(work)
        rep.first_cell = rep.first_cell or s
        rep.last_cell = s
        rep.peak_descendants = max(rep.peak_descendants, s.descendants)
        if cell.group in faulted or srv.process is None:
            return  # one fault per group, first pass only (retries run clean)
        faulted.add(cell.group)
        if kill_every and cell.group % kill_every == 0:
            rep.kills += 1
            srv.kill()
            srv.process.wait()
        elif freeze_every and cell.group % freeze_every == 0:
            rep.freezes += 1
            os.kill(srv.process.pid, signal.SIGSTOP)  # Server.stop() continues and stops it

    r = runner.Runner(
        rd=rd,
        catalog=cat,
        config_dir=configs,
        emit=emit,
        workroot=work,
        before_measure=inject,
        sysbench_grace_s=HANG_GRACE_S,
    )
    started = time.monotonic()
    rep.final_failed = r.run().final_failed
    rep.seconds = time.monotonic() - started
    store.ingest_paths(db, [rd.path])
    rep.reingest_added = store.ingest_paths(db, [rd.path]).added
    _account(rep, db, cells)
    rep.after = sample(work)
    return rep


def _account(rep: Report, db: Path, cells: list[plan.Cell]) -> None:
    with store.open_db(db, write=False) as st:
        rows = st.con.execute(
            "SELECT cell_id, attempt, status FROM results WHERE run_id = ? ORDER BY attempt",
            [rep.run_id],
        ).fetchall()
        rep.db_problems = st.check()
    rep.attempts = len(rows)
    by_cell: dict[str, list[tuple[int, str]]] = {}
    for cid, attempt, status in rows:
        by_cell.setdefault(cid, []).append((attempt, status))
    counts = Counter((cid, attempt) for cid, attempt, _ in rows)
    rep.duplicated = sorted(f"{c}:{a}" for (c, a), n in counts.items() if n > 1)
    rep.missing = sorted({c.cell_id for c in cells} - set(by_cell))
    finals: Counter[str] = Counter()
    for cid, attempts in by_cell.items():
        if [a for a, _ in attempts] != list(range(1, len(attempts) + 1)):
            rep.bad_attempts.append(cid)
        final = attempts[-1][1]
        finals[final if final in FINAL_STATUSES else "other"] += 1
    rep.ok, rep.failed, rep.skipped = finals["ok"], finals["failed"], finals["skipped"]


def summary(rep: Report) -> dict[str, Any]:
    d = asdict(rep)
    d["retried_attempts"] = rep.attempts - rep.planned
    d["problems"] = rep.problems()
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=13, help="interleaved rounds (repeats)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--charsets", nargs="+", default=["latin1", "utf8mb4", SKIPPED_AXIS])
    ap.add_argument("--kill-every", type=int, default=7, help="SIGKILL every Nth group's server")
    ap.add_argument("--freeze-every", type=int, default=17, help="SIGSTOP every Mth group's")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="perftrack-soak-") as tmp:
        rep = soak(
            Path(tmp),
            rounds=a.rounds,
            threads=a.threads,
            charsets=a.charsets,
            kill_every=a.kill_every,
            freeze_every=a.freeze_every,
            emit=print,
        )
        print(json.dumps(summary(rep), indent=1))
    sys.exit(1 if rep.problems() else 0)


if __name__ == "__main__":
    main()
