"""The workload catalog (workloads/*.yaml): loading, bad files, and every sysbench
workload run for real on MariaDB 10.11 (integration)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from perftrack.core.errors import ConfigError
from perftrack.planning import matrix, workloads
from perftrack.run import runner
from perftrack.servers import catalog

ISSUE_SYSBENCH = {
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "select_random_points",
    "select_random_ranges",
    "oltp_distinct_ranges",
}


def test_catalog_has_every_sysbench_workload_of_the_issue() -> None:
    assert set(workloads.WORKLOADS) >= ISSUE_SYSBENCH
    assert workloads.get("oltp_insert").writes
    assert not workloads.get("select_random_points").writes
    assert "--distinct-ranges=1" in workloads.get("oltp_distinct_ranges").options
    # select_random_* refuse to prepare >1 table: the shared dataset is prepared otherwise
    assert workloads.get("select_random_ranges").prepare_script() == "oltp_read_only"


def test_unknown_workload_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown workload 'nope'; known: .*oltp_insert"):
        workloads.get("nope")


def test_run_order_puts_readers_first() -> None:
    order = workloads.run_order(["oltp_insert", "oltp_point_select", "select_random_points"])
    assert order == ["oltp_point_select", "select_random_points", "oltp_insert"]


def _write(d: Path, text: str) -> Path:
    d.mkdir(exist_ok=True)
    (d / "w.yaml").write_text(text)
    return d


ENTRY = "  - {name: a, tool: sysbench, script: oltp_read_only, writes: false, description: x}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("workloads:\n" + ENTRY + ENTRY, "declared twice"),
        (
            "workloads:\n  - {name: a, tool: jmeter, script: s, writes: false, description: x}\n",
            "tool must be one of",
        ),
        (
            "workloads:\n  - {name: a, tool: sysbench, script: s, description: x}\n",
            "lacks 'writes'",
        ),
        (
            "workloads:\n  - {name: a, tool: sysbench, script: s, writes: false, description: x,"
            " options: ['; rm -rf /']}\n",
            "--name=value",
        ),
        (
            "workloads:\n  - {name: a, tool: sysbench, script: x.lua, writes: false,"
            " description: x}\n",
            "no Lua file",
        ),
        ("nothing: here\n", "'workloads:' list"),
    ],
)
def test_bad_workload_files_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as exc:
        workloads.read_workloads(_write(tmp_path / "wl", text))
    assert "\n" not in str(exc.value)


@pytest.mark.integration
def test_every_sysbench_workload_runs_on_mariadb(tmp_path, config_dir, workroot) -> None:
    """One server start, one prepare of 2 tiny tables, every workload for 1 s."""
    names = sorted(w for w in ISSUE_SYSBENCH)
    m = matrix.from_dict(
        {
            "name": "wl",
            "servers": ["mariadb-10.11.18"],
            "workloads": names,
            "charsets": ["latin1"],
            "threads": [1],
            "repeats": 1,
            "duration_s": 1,
            "warmup_s": 0,
            "tables": 2,
            "table_size": 200,
        }
    )
    cat = catalog.read_catalog(config_dir / "versions.yaml")
    rd = runner.create(m, cat, tmp_path / "runs", "test")
    r = runner.Runner(
        rd=rd, catalog=cat, config_dir=config_dir, emit=lambda _: None, workroot=workroot
    )
    s = r.run()
    recs = {x["cell"]["workload"]: x for recs in rd.attempts().values() for x in recs}
    bad = {w: x["reason"] for w, x in recs.items() if x["status"] != "ok"}
    assert bad == {}
    assert (s.ok, s.failed) == (len(names), 0)
    for x in recs.values():
        assert x["result"]["qps"] > 0
    distinct = recs["oltp_distinct_ranges"]
    assert "--distinct-ranges=1" in distinct["tool"]["command"]
    # only DISTINCT range queries: one query per transaction besides BEGIN/COMMIT
    assert distinct["result"]["qps"] == pytest.approx(3 * distinct["result"]["tps"], rel=0.05)


@pytest.mark.integration
def test_tpcb_runs_and_keeps_the_pgbench_balance_invariant(tmp_path, config_dir, workroot):
    """Scale 2 (2 branches, 20 tellers, 2 x 500 accounts) next to the oltp dataset; after
    the TPC-B cell, every balance table sums to the history's deltas."""
    m = matrix.from_dict(
        {
            "name": "tpcb",
            "servers": ["mariadb-10.11.18"],
            "workloads": ["oltp_point_select", "tpcb", "oltp_update_non_index"],
            "charsets": ["utf8mb4"],
            "threads": [2],
            "repeats": 1,
            "duration_s": 2,
            "warmup_s": 0,
            "tables": 2,
            "table_size": 500,
        }
    )
    sums: list[tuple] = []

    def check(srv, cell) -> None:
        if cell.workload == "oltp_update_non_index":
            sums.extend(
                srv.query(
                    "SELECT (SELECT COUNT(*) FROM sbtest.pgbench_accounts),"
                    " (SELECT COUNT(*) FROM sbtest.pgbench_tellers),"
                    " (SELECT SUM(abalance) FROM sbtest.pgbench_accounts),"
                    " (SELECT SUM(tbalance) FROM sbtest.pgbench_tellers),"
                    " (SELECT SUM(bbalance) FROM sbtest.pgbench_branches),"
                    " (SELECT SUM(delta) FROM sbtest.pgbench_history),"
                    " (SELECT COUNT(*) FROM sbtest.pgbench_history)"
                )
            )

    cat = catalog.read_catalog(config_dir / "versions.yaml")
    rd = runner.create(m, cat, tmp_path / "runs", "test")
    r = runner.Runner(
        rd=rd,
        catalog=cat,
        config_dir=config_dir,
        emit=lambda _: None,
        workroot=workroot,
        before_measure=check,
    )
    s = r.run()
    recs = {x["cell"]["workload"]: x for recs in rd.attempts().values() for x in recs}
    assert {w: x["reason"] for w, x in recs.items() if x["status"] != "ok"} == {}
    assert s.ok == 3
    tpcb = recs["tpcb"]["result"]
    # BEGIN, UPDATE, SELECT, UPDATE, UPDATE, INSERT, COMMIT per transaction
    assert tpcb["qps"] == pytest.approx(7 * tpcb["tps"], rel=0.02)
    ((n_acc, n_tel, a, t, b, d, n_hist),) = sums
    assert (n_acc, n_tel) == (1000, 20)
    assert a == t == b == d
    assert n_hist == tpcb["events"]


@pytest.mark.integration
def test_tpcc_runs_at_rr_and_rc_with_its_transaction_mix(tmp_path, config_dir, workroot):
    """1 warehouse, 1000 items, 30 customers per district; 4 threads at RR and RC."""
    m = matrix.from_dict(
        {
            "name": "tpcc",
            "servers": ["mariadb-10.11.18"],
            "workloads": ["tpcc", "oltp_update_non_index"],
            "charsets": ["latin1"],
            "isolations": ["RR", "RC"],
            "threads": [4],
            "repeats": 1,
            "duration_s": 2,
            "warmup_s": 0,
            "tables": 1,
            "table_size": 1000,
        }
    )
    counts: dict[str, tuple] = {}

    def check(srv, cell) -> None:
        if cell.workload == "oltp_update_non_index":
            counts[cell.isolation] = srv.query(
                "SELECT (SELECT COUNT(*) FROM sbtest.history),"
                " (SELECT COUNT(*) FROM sbtest.orders),"
                " (SELECT COUNT(*) FROM sbtest.orders WHERE o_carrier_id IS NOT NULL),"
                " (SELECT COUNT(*) FROM sbtest.customer)"
            )[0]

    cat = catalog.read_catalog(config_dir / "versions.yaml")
    rd = runner.create(m, cat, tmp_path / "runs", "test")
    r = runner.Runner(
        rd=rd,
        catalog=cat,
        config_dir=config_dir,
        emit=lambda _: None,
        workroot=workroot,
        before_measure=check,
    )
    s = r.run()
    recs = [x for recs in rd.attempts().values() for x in recs]
    assert [x["reason"] for x in recs if x["status"] != "ok"] == []
    assert s.ok == 4
    tpcc = [x for x in recs if x["cell"]["workload"] == "tpcc"]
    assert {x["effective"]["transaction_isolation"] for x in tpcc} == {
        "REPEATABLE-READ",
        "READ-COMMITTED",
    }
    for x in tpcc:
        assert x["result"]["tps"] > 0
        assert x["result"]["qps"] > 5 * x["result"]["tps"]  # multi-statement transactions
        assert "--mysql-ignore-errors=1205,1213" in x["tool"]["command"]
    initial_orders, initial_delivered = 300, 300 - 90  # 10 districts x 30, 30% undelivered
    for history, orders, delivered, cust in counts.values():
        assert cust == 300
        assert history > 0, "payment ran"
        assert orders > initial_orders, "new-order ran"
        assert delivered >= initial_delivered


@pytest.mark.integration
def test_datasets_prepared_once_and_every_group_starts_from_the_fresh_copy(
    tmp_path, config_dir, workroot
):
    """3 rounds x 2 servers: one `prepare` per server; every round's reader sees the
    freshly prepared row count, though the previous round's oltp_insert added rows."""
    m = matrix.from_dict(
        {
            "name": "tmpl",
            "servers": ["mariadb-10.11.18", "mariadb-10.11.19"],
            "workloads": ["oltp_point_select", "oltp_insert"],
            "charsets": ["latin1"],
            "engines": ["InnoDB"],
            "threads": [2],
            "repeats": 3,
            "duration_s": 1,
            "warmup_s": 0,
            "tables": 1,
            "table_size": 300,
        }
    )
    rows_seen: list[int] = []

    def count(srv, cell) -> None:
        if cell.workload == "oltp_point_select":
            rows_seen.append(srv.query("SELECT COUNT(*) FROM sbtest.sbtest1")[0][0])

    cat = catalog.read_catalog(config_dir / "versions.yaml")
    rd = runner.create(m, cat, tmp_path / "runs", "test")
    lines: list[str] = []
    r = runner.Runner(
        rd=rd,
        catalog=cat,
        config_dir=config_dir,
        emit=lines.append,
        workroot=workroot,
        before_measure=count,
        reuse_datasets=True,
    )
    s = r.run()
    recs = [x for recs in rd.attempts().values() for x in recs]
    assert [x["reason"] for x in recs if x["status"] != "ok"] == []
    assert s.ok == 12
    assert len(list(rd.logs.glob("*.prepare.*.txt"))) == 2, "one prepare per server"
    assert sum("dataset prepared once" in ln for ln in lines) == 2
    assert rows_seen == [300] * 6
    for x in recs:  # verified on every copy, as after a prepare
        assert x["effective"]["table_engines"] == "InnoDB"
        assert x["effective"]["table_collations"] == "latin1_swedish_ci"


# --- Lua workloads that do not load are refused at validation time (issue 5) ---------------

BAD_LUA = {
    "syntax.lua": "function event()\n  local x = = 1\nend\n",
    "needs.lua": "local m = require('perftrack_no_such_module')\nfunction event() end\n",
}


def _lua_workloads(tmp_path: Path) -> Path:
    d = tmp_path / "wl"
    (d / "lua").mkdir(parents=True)
    for name, text in BAD_LUA.items():
        (d / "lua" / name).write_text(text)
    (d / "lua" / "good.lua").write_text("function event() end\n")
    entries = "".join(
        f"  - {{name: {n}, tool: sysbench, script: lua/{n}.lua, writes: false, description: x}}\n"
        for n in ("syntax", "needs", "good")
    )
    (d / "lua.yaml").write_text("workloads:\n" + entries)
    return d


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("syntax", r"workload syntax: Lua script does not load: \S*syntax\.lua:2: unexpected"),
        ("needs", r"workload needs: .*needs\.lua:1: module 'perftrack_no_such_module' not found"),
    ],
)
def test_lua_that_does_not_load_is_refused_naming_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, message: str
) -> None:
    d = _lua_workloads(tmp_path)
    monkeypatch.setenv(workloads.ENV_WORKLOADS_DIR, str(d))
    monkeypatch.setattr(workloads, "WORKLOADS", workloads.read_workloads(d))
    base = {"name": "t", "servers": ["mariadb-10.11.18"], "charsets": ["latin1"], "threads": [1]}
    with pytest.raises(ConfigError, match=message) as exc:
        matrix.from_dict({**base, "workloads": [name]})
    assert "\n" not in str(exc.value)
    matrix.from_dict({**base, "workloads": ["good"]})  # a script that loads passes
    (d / "lua" / "good.lua").unlink()
    with pytest.raises(ConfigError, match="no Lua file"):
        matrix.from_dict({**base, "workloads": ["good"]})


def test_project_lua_workloads_load() -> None:
    for w in workloads.WORKLOADS.values():
        workloads.check_loads(w)


def test_cli_refuses_a_matrix_with_a_broken_lua_workload(tmp_path: Path) -> None:
    """The real CLI: one line naming file and line, non-zero exit, no run directory."""
    d = _lua_workloads(tmp_path)
    mfile = tmp_path / "m.yaml"
    mfile.write_text(
        "name: t\nservers: [mariadb-10.11.18]\nworkloads: [syntax]\n"
        "charsets: [latin1]\nthreads: [1]\n"
    )
    env = {**os.environ, workloads.ENV_WORKLOADS_DIR: str(d)}
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from perftrack.cli import main; sys.exit(main())",
            "run",
            str(mfile),
            "--out",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "syntax.lua:2:" in lines[0], out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.integration
def test_dataset_templates_are_kept_for_the_next_run_and_evicted_beyond_the_bound(
    tmp_path, config_dir, workroot, monkeypatch
):
    """Across runs (nights): the second run of the same matrix copies the template the
    first one left in the dataset cache instead of preparing again; with a bound of 0 GB
    a third run with another dataset size evicts the first template but not its own."""

    def run(table_size: int, name: str) -> tuple[list[str], runner.RunDir]:
        m = matrix.from_dict(
            {
                "name": name,
                "servers": ["mariadb-10.11.19"],
                "workloads": ["oltp_point_select"],
                "charsets": ["latin1"],
                "threads": [2],
                "repeats": 1,
                "duration_s": 1,
                "warmup_s": 0,
                "tables": 1,
                "table_size": table_size,
            }
        )
        cat = catalog.read_catalog(config_dir / "versions.yaml")
        rd = runner.create(m, cat, tmp_path / "runs", "test")
        lines: list[str] = []
        s = runner.Runner(
            rd=rd,
            catalog=cat,
            config_dir=config_dir,
            emit=lines.append,
            workroot=workroot,
            reuse_datasets=True,
            dataset_cache=tmp_path / "cache",
        ).run()
        assert s.ok == 1 and s.failed == 0
        return lines, rd

    first, rd1 = run(300, "night1")
    second, rd2 = run(300, "night2")
    assert sum("prepared once (kept in the cache)" in ln for ln in first) == 1
    assert sum("reused from the cache" in ln for ln in second) == 1
    assert len(list(rd1.logs.glob("*.prepare.*.txt"))) == 1
    assert list(rd2.logs.glob("*.prepare.*.txt")) == [], "no prepare on the second night"
    kept = sorted(p.name for p in (tmp_path / "cache" / "datasets").iterdir())
    assert len(kept) == 1
    monkeypatch.setenv("PERFTRACK_DATASET_CACHE_GB", "0")
    third, _ = run(400, "night3")
    assert any(f"evicted {kept[0]}" in ln for ln in third)
    (left,) = (tmp_path / "cache" / "datasets").iterdir()
    assert left.name != kept[0] and (left / "datadir").is_dir()
