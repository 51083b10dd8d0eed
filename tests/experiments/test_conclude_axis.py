"""`perftrack compare SERVER --axis AXIS --values A B --until-conclusive`: interleaved
rounds of two configurations of ONE real server, decided by the same sequential looks as
a server comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from clirun import assert_one_line_error, perftrack
from perftrack.analysis import axis
from perftrack.experiments import conclude
from perftrack.servers import catalog
from perftrack.store import store
from standins import WORKLOAD, write_configs

SERVER = "mariadb-10.11.18"
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["sa-1", "--axis", "colour", "--values", "a", "b"], "unknown axis 'colour'"),
        (["sa-1", "--axis", "table_size", "--values", "1", "2"], "cannot vary table_size"),
        (["sa-1", "--axis", "durability", "--values", "relaxed", "nosuch"], "nosuch"),
        (["sa-1", "--axis", "profile", "--values", "default", "nosuch"], "nosuch"),
        (["sa-1", "sa-2", "--axis", "durability", "--values", "relaxed", "strict"], "one server"),
        (["sa-1", "--axis", "durability", "--values", "strict", "strict"], "two different"),
        (["sa-1", "--axis", "durability", "--values", "relaxed", "strict", "--budget"], "needs"),
    ],
)
def test_bad_axis_rounds_are_refused_in_one_line_before_anything_runs(
    tmp_path: Path, args: list[str], needle: str
):
    cfg = write_configs(tmp_path / "configs", first_bad=3)
    db = tmp_path / "r.duckdb"
    budget = [] if args[-1] == "--budget" else ["--budget", "5"]
    res = perftrack(
        "compare", *[a for a in args if a != "--budget"], "--until-conclusive", *budget,
        "--db", str(db), "--out", str(tmp_path / "runs"),
        env={"PERFTRACK_CONFIG_DIR": str(cfg)},
    )  # fmt: skip
    assert_one_line_error(res, 2, needle)
    assert not db.exists() and not (tmp_path / "runs").exists()  # nothing half-written


def test_until_conclusive_calls_a_real_durability_cost_a_regression(tmp_path: Path, workroot: Path):
    """One real MariaDB 10.11.18, durability `relaxed` (no binlog, redo flushed once a
    second) against `strict` (binlog and redo fsynced at every commit), writes: several
    times slower, so a few 2 s rounds decide. Both arms run on the same server binary in
    every round, alternating which goes first. Measured here while other tests ran:
    strict 36-741 tx/s, relaxed 1,700-10,000 (fsync time on a shared disk varies), so the
    per-round ratios spread widely; 6 minutes leave room for the third look (n = 9)."""
    req = conclude.Request(
        a=SERVER, b=SERVER, budget_s=360, workload=WORKLOAD, threads=2, duration_s=2, warmup_s=0,
        table_size=1000, axis="durability", values=("relaxed", "strict"),
    )  # fmt: skip
    lines: list[str] = []
    db = tmp_path / "r.duckdb"
    cat = catalog.read_catalog()
    o = conclude.run_rounds(
        req, cat, Path("configs"), db, tmp_path / "runs", lines.append, workroot=workroot
    )
    assert o.verdict == "regression", "\n".join(lines)
    last = o.rounds[-1]
    assert last.comparison is not None and last.comparison.paired
    assert last.comparison.ci_high < 1 and last.n_a == last.n_b == len(o.rounds)
    assert lines[0].startswith(f"until conclusive: {SERVER} durability=strict against")
    # every round ran both values on the one server, in alternating order
    a, b = conclude.session_pairs(db, o.run_ids, req)
    assert len(a) == len(b) == len(o.rounds)
    # the DB form of the same comparison pairs the same rounds and agrees
    with store.open_db(db, write=False) as st:
        res = axis.tables(st, SERVER, "durability", ("relaxed", "strict"))
    (t,) = res.tables
    c = t.rows[1].vs_previous
    assert c is not None and c.paired and c.n_a == len(o.rounds)
    assert c.verdict == "regression" and c.ratio < 1
