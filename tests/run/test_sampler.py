"""Cost per operation and host-noise flags (sampler.py): real servers, real sysbench, real
/proc and cgroup files; the noisy decision and perf parsing from given inputs."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from perftrack.core import record
from perftrack.core.errors import ConfigError
from perftrack.planning import matrix
from perftrack.run import perf, runner, sampler, targets
from perftrack.run.server import BENCH_DB, Server
from perftrack.servers import catalog, providers
from perftrack.store import store
from servers.providers.test_docker import dockerd, sid_image  # noqa: F401  (module-scoped fixtures)

SERVER = "mariadb-10.11.18"


def tiny(**kw: object) -> matrix.Matrix:
    base = {
        "name": "cost",
        "servers": [SERVER],
        "workloads": ["oltp_read_write"],
        "charsets": ["latin1"],
        "threads": [2],
        "repeats": 1,
        "duration_s": 3,
        "warmup_s": 1,
        "tables": 1,
        "table_size": 1000,
    }
    return matrix.from_dict({**base, **kw})


def run_cells(tmp_path: Path, config_dir: Path, workroot: Path, m: matrix.Matrix, **kw):
    cat = catalog.read_catalog(config_dir / "versions.yaml")
    rd = runner.create(m, cat, tmp_path / "runs", "test")
    lines: list[str] = []
    r = runner.Runner(
        rd=rd, catalog=cat, config_dir=config_dir, emit=lines.append, workroot=workroot, **kw
    )
    summary = r.run()
    recs = [x for recs in rd.attempts().values() for x in recs]
    return summary, recs, lines


# --- real server, real sysbench ---------------------------------------------------------


@pytest.mark.integration
def test_real_run_records_cost_per_transaction(tmp_path, config_dir, workroot) -> None:
    s, recs, _ = run_cells(tmp_path, config_dir, workroot, tiny())
    assert (s.ok, s.failed) == (1, 0)
    (rec,) = recs
    res, cost, host = rec["result"], rec["cost"], rec["host"]
    assert cost["source"] == "proc" and cost["pid"] > 1
    assert cost["transactions"] == res["events"] > 0
    assert cost["queries"] > cost["transactions"]  # oltp_read_write: 18 queries per txn
    assert cost["window_s"] >= rec["cell"]["duration_s"]
    # plausible magnitudes for a small in-memory read/write transaction
    assert 10 < res["cpu_us_per_txn"] < 1_000_000
    assert res["cpu_us_per_txn"] == pytest.approx(
        res["cpu_user_us_per_txn"] + res["cpu_sys_us_per_txn"], abs=0.01
    )
    assert 0 < res["cpu_us_per_query"] < res["cpu_us_per_txn"]
    assert res["ctx_vol_per_txn"] > 0  # every transaction waits on the network at least
    assert res["ctx_invol_per_txn"] >= 0
    assert res["write_bytes_per_txn"] > 0  # redo log writes of the commits
    assert res["read_bytes_per_txn"] >= 0
    assert res["peak_rss_bytes"] > 50 * 1024 * 1024
    # hardware counters: either measured, or null with the reason (never 0)
    reason = perf.perf_hardware()
    for f in ("instructions_per_txn", "cycles_per_txn", "ipc"):
        if reason is None:
            assert res[f] > 0
        else:
            assert res[f] is None
            assert cost["unavailable"][f] == reason
    # host signals of the same window
    for k in ("steal_pct", "iowait_pct", "foreign_cpu_pct", "server_cpu_pct"):
        assert 0 <= host[k] <= 100
    assert host["server_cpu_pct"] > 0 and host["loadgen_cpu_pct"] > 0
    assert host["noisy"] is (host["noisy_reason"] is not None)
    record.validate(rec)
    # ... and they reach the DB
    db = tmp_path / "r.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
        row = st.con.execute(
            "SELECT cpu_us_per_txn, ctx_vol_per_txn, peak_rss_bytes, instructions_per_txn, "
            "cost_unavailable, host_steal_pct, noisy FROM results"
        ).fetchone()
    assert row[0] == res["cpu_us_per_txn"] and row[1] == res["ctx_vol_per_txn"]
    assert row[2] == res["peak_rss_bytes"] and row[3] == res["instructions_per_txn"]
    assert (row[4] is None) == (reason is None and not cost["unavailable"])
    assert row[5] == host["steal_pct"] and row[6] == host["noisy"]


@pytest.mark.integration
def test_slap_cells_are_sampled_too(tmp_path, config_dir, workroot) -> None:
    m = tiny(workloads=["slap_read"], warmup_s=0)
    s, recs, _ = run_cells(tmp_path, config_dir, workroot, m)
    assert (s.ok, s.failed) == (1, 0), s.final_failed
    (rec,) = recs
    assert rec["tool"]["name"] == "slap"
    assert rec["cost"]["transactions"] == rec["result"]["events"] > 0
    assert rec["result"]["cpu_us_per_txn"] > 0 and rec["host"]["server_cpu_pct"] > 0


@pytest.mark.integration
def test_sampling_off_leaves_the_old_record_shape(tmp_path, config_dir, workroot) -> None:
    m = tiny(workloads=["oltp_point_select"], duration_s=1, warmup_s=0)
    s, recs, _ = run_cells(tmp_path, config_dir, workroot, m, sample_cost=False)
    assert s.ok == 1
    (rec,) = recs
    assert "cost" not in rec and "host" not in rec
    assert not set(record.COST_FIELDS) & set(rec["result"])


@pytest.mark.integration
def test_noisy_window_is_flagged_and_measured_again(tmp_path, config_dir, workroot) -> None:
    # limits nothing can stay under: every window is noisy, so the cell is re-measured once
    (config_dir / "runners.yaml").write_text(
        "control_server: mariadb-10.11.18\nnoise_limits:\n  foreign_cpu_pct: 0\n"
        "  steal_pct: 0\n  iowait_pct: 0\n  repeat_noisy: true\n"
    )
    m = tiny(workloads=["oltp_point_select"], duration_s=1, warmup_s=0)
    s, recs, lines = run_cells(tmp_path, config_dir, workroot, m)
    assert (s.ok, s.failed, s.retried) == (1, 0, 0)
    first, again = sorted(recs, key=lambda r: r["attempt"])
    assert (first["attempt"], again["attempt"]) == (1, 2)
    assert first["status"] == again["status"] == "ok"
    assert first["host"]["noisy"] is True and "foreign CPU" in first["host"]["noisy_reason"]
    assert first["host"].get("repeat_of") is None and again["host"]["repeat_of"] == 1
    assert any("measuring it again" in ln for ln in lines)


@pytest.mark.integration
def test_a_failed_re_measure_leaves_the_cell_ok(tmp_path, config_dir, workroot) -> None:
    (config_dir / "runners.yaml").write_text(
        "control_server: mariadb-10.11.18\nnoise_limits:\n  foreign_cpu_pct: 0\n"
        "  steal_pct: 0\n  iowait_pct: 0\n  repeat_noisy: true\n"
    )
    calls: list[int] = []

    def break_the_repeat(srv: Server, cell) -> None:
        calls.append(1)
        if len(calls) == 2:  # the re-measure: its table is gone, sysbench fails
            srv.query(f"DROP TABLE {BENCH_DB}.sbtest1")

    m = tiny(workloads=["oltp_point_select"], duration_s=1, warmup_s=0)
    s, recs, _ = run_cells(
        tmp_path, config_dir, workroot, m, before_measure=break_the_repeat, retries=2
    )
    assert (s.ok, s.failed, s.retried) == (1, 0, 0), s.final_failed
    first, again = sorted(recs, key=lambda r: r["attempt"])
    assert first["status"] == "ok" and first["host"]["noisy"] is True
    assert again["status"] == "failed" and again["host"]["repeat_of"] == 1
    assert "cost" not in again
    assert len(calls) == 2  # the failed re-measure was not retried


@pytest.fixture
def mariadb_server(tmp_path: Path, config_dir: Path, workroot: Path):
    cat = catalog.read_catalog(config_dir / "versions.yaml")
    inst = providers.fetch(cat.get(SERVER))
    with Server(install=inst, options={}, workroot=workroot) as srv:
        yield srv


@pytest.mark.integration
def test_target_is_the_server_process_and_counters_read(mariadb_server: Server) -> None:
    target, why = targets.target_for(mariadb_server)
    assert why is None and isinstance(target, targets.ProcTarget)
    assert targets._comm(target.pid) in targets.SERVER_NAMES
    c = target.counters()
    assert c.unavailable == {}
    assert c.cpu_user_us is not None and c.cpu_user_us > 0
    assert len(c.ctx) > 3  # mariadbd runs many threads
    assert c.peak_rss_bytes is not None and c.peak_rss_bytes > 0


@pytest.mark.integration
def test_perf_attaches_to_the_server_with_software_events(mariadb_server: Server) -> None:
    """The attach / stop / parse path of PerfStat, with events every machine can count."""
    if shutil.which("perf") is None:
        pytest.skip("perf is not installed (apt-get install linux-perf)")
    target, _ = targets.target_for(mariadb_server)
    assert target is not None and target.pid is not None
    stat = perf.PerfStat(target.pid, ("task-clock", "context-switches"))
    stat.start()
    mariadb_server.query("SELECT SLEEP(0.3)")
    for _ in range(50):
        mariadb_server.query("SELECT COUNT(*) FROM information_schema.tables")
    counts = stat.stop()
    assert stat.error is None
    assert isinstance(counts["task-clock"], float) and counts["task-clock"] > 0
    assert isinstance(counts["context-switches"], float) and counts["context-switches"] > 0
    assert not stat.out.exists()


@pytest.mark.integration
def test_cgroup_target_reads_a_real_cgroup(mariadb_server: Server) -> None:
    """The docker provider's path (cgroup v2 files) on a cgroup made for the server here."""
    root = next((r for r in targets.CGROUP_ROOTS if (r / "cgroup.controllers").is_file()), None)
    if root is None or not os.access(root, os.W_OK):
        pytest.skip("no writable cgroup v2 hierarchy here")
    target, _ = targets.target_for(mariadb_server)
    assert isinstance(target, targets.ProcTarget)
    cg = root / f"perftrack-test-{secrets.token_hex(4)}"
    try:
        cg.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot create a cgroup: {exc}")
    old = targets.cgroup_dir(target.pid)
    try:
        (cg / "cgroup.procs").write_text(str(target.pid))
        assert targets.cgroup_dir(target.pid) == cg
        cgt = targets.CgroupTarget(cg, target.pid)
        assert cgt.pids() == [target.pid]
        win = sampler.Window(cgt, perf=False)
        win.start()
        for _ in range(200):
            mariadb_server.query("SELECT COUNT(*) FROM information_schema.columns")
        sample = win.stop()
        assert sample.source == "cgroup"
        assert sample.totals["cpu_user_us"] is not None and sample.totals["cpu_user_us"] > 0
        assert sample.totals["ctx_vol"] is not None and sample.totals["ctx_vol"] > 0
        # io.stat / memory.peak absent (controllers off in a bare hierarchy): the server
        # process's own /proc files stand in; without a pid, a reason
        assert sample.peak_rss_bytes is not None and sample.peak_rss_bytes > 0
        bare = targets.CgroupTarget(cg).counters()
        assert bare.cpu_user_us is not None
        for group in ("io", "rss"):
            if group in bare.unavailable:
                assert "absent" in bare.unavailable[group]
        assert sample.unavailable["instructions"] == "perf sampling is off"
    finally:
        home = old if old is not None else root
        with contextlib.suppress(OSError):
            (home / "cgroup.procs").write_text(str(target.pid))
        with contextlib.suppress(OSError):
            cg.rmdir()


# --- decisions from given samples ---------------------------------------------------------


def given_sample(**totals: float | None) -> sampler.WindowSample:
    base: dict[str, float | None] = {
        "cpu_user_us": 800_000.0,
        "cpu_sys_us": 200_000.0,
        "ctx_vol": 2000.0,
        "ctx_invol": 100.0,
        "read_bytes": 0.0,
        "write_bytes": 4_096_000.0,
        "instructions": None,
        "cycles": None,
    }
    base.update(totals)
    return sampler.WindowSample(
        source="proc",
        pid=1234,
        window_s=10.0,
        totals=base,
        peak_rss_bytes=200_000_000,
        host={"steal_pct": 1.0, "iowait_pct": 0.5, "foreign_cpu_pct": 3.0, "cpu_mhz": 2600.0},
        unavailable={"instructions": "not supported", "cycles": "not supported"},
    )


def test_per_operation_divides_by_the_work_done() -> None:
    fields, cost, host = sampler.per_operation(given_sample(), 1000, 18000, sampler.NoiseLimits())
    assert fields["cpu_us_per_txn"] == 1000.0
    assert fields["cpu_user_us_per_txn"] == 800.0 and fields["cpu_sys_us_per_txn"] == 200.0
    assert fields["cpu_us_per_query"] == pytest.approx(1000 / 18, abs=1e-3)
    assert fields["ctx_vol_per_txn"] == 2.0 and fields["ctx_invol_per_txn"] == 0.1
    assert fields["write_bytes_per_txn"] == 4096.0 and fields["read_bytes_per_txn"] == 0.0
    assert fields["instructions_per_txn"] is None and fields["ipc"] is None
    assert cost["unavailable"]["instructions_per_txn"] == "not supported"
    assert cost["unavailable"]["ipc"] == "not supported"
    assert "cpu_us_per_txn" not in cost["unavailable"]
    assert host["noisy"] is False and host["noisy_reason"] is None


def test_hardware_counters_give_ipc_when_measured() -> None:
    s = given_sample(instructions=3e9, cycles=2e9)
    s.unavailable = {}
    fields, cost, _ = sampler.per_operation(s, 1000, 18000, sampler.NoiseLimits())
    assert fields["instructions_per_txn"] == 3e6 and fields["cycles_per_txn"] == 2e6
    assert fields["ipc"] == 1.5
    assert cost["unavailable"] == {}


def test_no_transactions_means_unavailable_not_zero() -> None:
    fields, cost, _ = sampler.per_operation(given_sample(), None, None, sampler.NoiseLimits())
    assert fields["cpu_us_per_txn"] is None and fields["cpu_us_per_query"] is None
    assert cost["unavailable"]["cpu_us_per_txn"] == "the run reported no transactions"
    assert fields["peak_rss_bytes"] == 200_000_000  # not per transaction: still known


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ({"steal_pct": 1.0, "iowait_pct": 1.0, "foreign_cpu_pct": 10.0}, None),
        ({"steal_pct": 5.0, "iowait_pct": 10.0, "foreign_cpu_pct": 25.0}, None),  # at limit
        ({"steal_pct": 7.5, "iowait_pct": 0.0, "foreign_cpu_pct": 0.0}, "CPU steal 7.5% > 5%"),
        ({"steal_pct": 0, "iowait_pct": 12.0, "foreign_cpu_pct": 0}, "iowait 12.0% > 10%"),
        (
            {"steal_pct": 6.0, "iowait_pct": 0, "foreign_cpu_pct": 40.0},
            "CPU steal 6.0% > 5%; foreign CPU 40.0% > 25%",
        ),
        ({"steal_pct": None, "iowait_pct": None, "foreign_cpu_pct": None}, None),
    ],
)
def test_noisy_decision(host: dict, expected: str | None) -> None:
    assert sampler.noisy_reason(host, sampler.NoiseLimits()) == expected


def test_host_signals_from_proc_stat_deltas() -> None:
    hz = targets.CLK_TCK
    a = sampler.Snapshot(
        t=0.0, server=targets.Counters(), host_cpu=[0] * 8, own_cpu_us=0.0, mhz=2600.0
    )
    # 2 CPUs x 10 s: 2000 ticks at 100 Hz; user 900, system 300, idle 600, iowait 100,
    # steal 100; the server used 6 s, perftrack + sysbench 3 s -> foreign 3 s of 20 s
    b = sampler.Snapshot(
        t=10.0,
        server=targets.Counters(),
        host_cpu=[900, 0, 300, 600, 100, 0, 0, 100],
        own_cpu_us=3e6,
        mhz=None,
    )
    b.host_cpu = [x * hz // 100 for x in b.host_cpu]
    h = sampler.host_signals(a, b, 6e6)
    assert h["steal_pct"] == 5.0 and h["iowait_pct"] == 5.0
    assert h["foreign_cpu_pct"] == 15.0
    assert h["server_cpu_pct"] == 30.0 and h["loadgen_cpu_pct"] == 15.0
    assert h["cpu_mhz"] == 2600.0


def test_context_switches_count_new_threads_and_reused_tids() -> None:
    a = {1: (10, 1), 2: (100, 5), 3: (50, 50)}
    b = {1: (15, 1), 2: (3, 0), 4: (7, 2)}  # 2: a new thread with a reused tid; 3 exited
    assert sampler._ctx_delta(a, b) == (5 + 3 + 7, 0 + 0 + 2)


def test_perf_csv_parsing_keeps_not_supported_as_a_reason() -> None:
    text = (
        "# started on Mon Nov 23 12:00:00 2026\n\n"
        "<not supported>,,instructions,0,100.00,,\n"
        "<not supported>,,cycles,0,100.00,,\n"
        "1.17,msec,task-clock,1171234,100.00,0.006,CPUs utilized\n"
        "2,,context-switches,1171234,100.00,1.712,K/sec\n"
        "12345678,,instructions:u,1000,100.00,,\n"
    )
    got = perf._parse_perf_csv(text)
    assert got["cycles"] == "not supported"
    assert got["task-clock"] == 1.17 and got["context-switches"] == 2.0
    assert got["instructions"] == 12345678.0  # the :u modifier names the same event


def test_perf_probe_gives_a_reason_or_none() -> None:
    reason = perf.perf_hardware()
    if shutil.which("perf") is None:
        assert reason == perf.PERF_HINT
    else:
        out = subprocess.run(
            ["perf", "stat", "-x,", "-e", "instructions", "--", "true"],
            capture_output=True,
            text=True,
            check=False,
        )
        supported = "<not supported>" not in out.stderr and out.returncode == 0
        assert (reason is None) == supported


def test_noise_limits_from_runners_yaml(tmp_path: Path) -> None:
    assert sampler.load_limits(tmp_path) == sampler.NoiseLimits()
    (tmp_path / "runners.yaml").write_text(
        "control_server: x\nnoise_limits:\n  steal_pct: 2\n  repeat_noisy: true\n"
    )
    lim = sampler.load_limits(tmp_path)
    assert lim.steal_pct == 2.0 and lim.repeat_noisy is True
    assert lim.foreign_cpu_pct == sampler.DEFAULT_LIMITS["foreign_cpu_pct"]
    for bad, msg in (
        ("noise_limits: 5\n", "must be a mapping"),
        ("noise_limits:\n  stael_pct: 5\n", "unknown key 'stael_pct'"),
        ("noise_limits:\n  steal_pct: lots\n", "percentage 0-100"),
        ("noise_limits:\n  iowait_pct: 101\n", "percentage 0-100"),
        ("noise_limits:\n  repeat_noisy: 1\n", "true or false"),
    ):
        (tmp_path / "runners.yaml").write_text(bad)
        with pytest.raises(ConfigError, match=msg):
            sampler.load_limits(tmp_path)


def test_repo_runners_yaml_limits_load() -> None:
    repo_configs = Path(__file__).resolve().parents[2] / "configs"
    assert isinstance(sampler.load_limits(repo_configs), sampler.NoiseLimits)


def test_work_done_from_parsed_sysbench() -> None:
    parsed = {"events": 500, "tps": 50.0, "qps": 900.0, "total_time_s": 10.0}
    assert sampler.work_done(parsed) == (500, 9000)
    parsed.update(reads=7000, writes=2000, other=1000)
    assert sampler.work_done(parsed) == (500, 10000)
    assert sampler.work_done({"events": 0, "tps": 0.0, "qps": 0.0, "total_time_s": 1}) == (
        None,
        None,
    )


# --- the docker provider: a real container on a private dockerd (its tests' fixtures) ---


@pytest.mark.integration
def test_docker_server_is_sampled_from_its_container(
    sid_image,  # noqa: F811  (the imported fixture)
    tmp_path: Path,
    config_dir: Path,
    workroot: Path,
) -> None:
    ref, sid = sid_image
    with (config_dir / "versions.yaml").open("a") as catalog_file:
        catalog_file.write(
            f"\n  - id: mysql-sid-docker\n    product: mysql\n    version: {sid.version}\n"
            f"    provider: docker\n    image: {ref}\n    digest: {image_id(ref)}\n"
        )
    m = tiny(servers=["mysql-sid-docker"], workloads=["oltp_point_select"], warmup_s=0)
    s, recs, _ = run_cells(tmp_path, config_dir, workroot, m)
    assert (s.ok, s.failed) == (1, 0), s.final_failed
    (rec,) = recs
    cost, res = rec["cost"], rec["result"]
    # the container's cgroup where the host has a cgroup v2 one for it, else its process;
    # io.stat / memory.peak absent (controllers off): the container's process stands in
    assert cost["source"] in ("cgroup", "proc") and cost["pid"] > 1
    assert res["cpu_us_per_txn"] > 0 and res["ctx_vol_per_txn"] > 0
    assert res["write_bytes_per_txn"] is not None and res["peak_rss_bytes"] > 0
    assert set(cost["unavailable"]) <= {"instructions_per_txn", "cycles_per_txn", "ipc"}


def image_id(ref: str) -> str:
    """The local image's id: the digest a catalog entry for an imported image records."""
    return subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", ref],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
