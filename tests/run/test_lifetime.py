"""Server lifetime `run` (run/lifetime.py) against real MariaDB servers and real sysbench:
every round on one server start, effective settings verified in every round, nothing left
behind (the `workroot` fixture checks processes and directories after each test)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_runner import PAIR, make_runner, records, tiny

from perftrack.core.errors import Interrupted

pytestmark = pytest.mark.integration


def _pids(seen: dict[str, list[int]]):
    def hook(srv, cell):
        seen.setdefault(cell.server_id, []).append(srv.process.pid)

    return hook


@pytest.mark.parametrize("lifetime", ["run", "group"])
def test_every_round_runs_on_one_server_start_only_with_lifetime_run(
    tmp_path, config_dir, workroot, lifetime
):
    seen: dict[str, list[int]] = {}
    m = tiny(repeats=3, duration_s=1, server_lifetime=lifetime)
    r, rd, _ = make_runner(tmp_path, config_dir, workroot, m, before_measure=_pids(seen))
    s = r.run()
    assert (s.ok, s.failed) == (6, 0)
    starts = 1 if lifetime == "run" else 3
    assert rd.status()["server_starts"] == dict.fromkeys(PAIR, starts)
    assert rd.status()["server_lifetime"] == lifetime
    # the processes themselves: one pid per server for the whole run, or one per round
    assert {sid: len(set(p)) for sid, p in seen.items()} == dict.fromkeys(PAIR, starts)
    assert {sid: len(p) for sid, p in seen.items()} == dict.fromkeys(PAIR, 3)
    # the dataset was prepared once per server start, and verified in every round
    assert len(list(rd.logs.glob("*.prepare.*.txt"))) == 2 * starts
    assert len(list(rd.logs.glob("*.connection.txt"))) == 6
    for x in records(rd):
        assert x["effective"]["collation_server"] == x["cell"]["collation"] == "latin1_swedish_ci"
        assert x["effective"].get("server_lifetime") == ("run" if lifetime == "run" else None)


def test_a_kept_server_whose_settings_changed_fails_its_check_and_is_replaced(
    tmp_path, config_dir, workroot
):
    """Round 1 changes the kept server's collation behind perftrack's back: round 2's
    read-back refuses it (cells failed, server stopped), round 3 and the retry get fresh
    servers with the right settings."""
    seen: dict[str, list[int]] = {}

    def tamper(srv, cell):
        _pids(seen)(srv, cell)
        if cell.round == 1:
            srv.query("SET GLOBAL collation_server = 'latin1_bin'")

    m = tiny(servers=PAIR[:1], repeats=3, duration_s=1, server_lifetime="run")
    r, rd, _ = make_runner(tmp_path, config_dir, workroot, m, before_measure=tamper)
    s = r.run()
    assert (s.ok, s.failed, s.retried) == (3, 0, 1)
    failed = [x for x in records(rd) if x["status"] == "failed"]
    assert len(failed) == 1 and "collation_server=latin1_bin" in failed[0]["reason"]
    assert failed[0]["cell"]["round"] == 2
    ok = [x for x in records(rd) if x["status"] == "ok"]
    assert all(x["effective"]["collation_server"] == "latin1_swedish_ci" for x in ok)
    assert rd.status()["server_starts"] == {PAIR[0]: 3}  # first, round 3, the retry
    assert len(set(seen[PAIR[0]])) == 3


def test_interrupted_run_stops_every_kept_server(tmp_path, config_dir, workroot):
    seen: dict[str, list[int]] = {}

    def interrupt(srv, cell):
        _pids(seen)(srv, cell)
        if cell.round == 2:
            raise KeyboardInterrupt

    m = tiny(repeats=3, duration_s=1, server_lifetime="run")
    r, rd, _ = make_runner(tmp_path, config_dir, workroot, m, before_measure=interrupt)
    with pytest.raises(Interrupted, match="--resume"):
        r.run()
    assert rd.status()["status"] == "interrupted"
    pids = {p for ps in seen.values() for p in ps}
    assert len(pids) == 2, "both servers were up at once, kept from round 1"
    for pid in pids:  # gone, not zombies of ours either
        assert not os.path.exists(f"/proc/{pid}"), f"server {pid} still runs"


@pytest.mark.parametrize("lifetime", ["group", "run"])
def test_an_interruption_right_after_a_server_start_leaves_no_server(
    tmp_path, config_dir, workroot, monkeypatch, lifetime
):
    """A SIGTERM landing after a group's server started but before the runner's try that
    releases it (the CI flake of stop 28: a `pt-*` directory left behind): the run's
    stop_all stops it; the `workroot` fixture checks nothing remains."""
    from perftrack.run import lifetime as lt

    acquire = lt.Servers.acquire
    calls = []

    def interrupted_acquire(self, grp, template):
        got = acquire(self, grp, template)
        calls.append(got[0].process.pid)
        if len(calls) == 2:
            raise KeyboardInterrupt  # as the signal handler would, between the two
        return got

    monkeypatch.setattr(lt.Servers, "acquire", interrupted_acquire)
    m = tiny(repeats=2, duration_s=1, server_lifetime=lifetime)
    r, rd, _ = make_runner(tmp_path, config_dir, workroot, m)
    with pytest.raises(Interrupted, match="--resume"):
        r.run()
    assert rd.status()["status"] == "interrupted"
    assert len(calls) == 2
    for pid in calls:
        assert not os.path.exists(f"/proc/{pid}"), f"server {pid} still runs"


def test_cli_refuses_an_unknown_lifetime_and_a_lifetime_for_a_resume(tmp_path, configs):
    base = [sys.executable, "-c", "import sys; from perftrack.cli import main; sys.exit(main())"]
    for args, msg in (
        (["--server", PAIR[0], "--server-lifetime", "night"], "must be group or run"),
        (["--resume", "20260101T000000Z-abcdef", "--server-lifetime", "run"], "a plan has"),
    ):
        res = subprocess.run(
            [*base, "run", *args, "--out", str(tmp_path / "runs")], capture_output=True, text=True
        )
        assert res.returncode == 2, res.stderr
        assert res.stderr.startswith("error:") and msg in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "runs").exists()


def test_kept_servers_start_from_the_dataset_template_once(tmp_path, config_dir, workroot):
    """With reuse_datasets the template is prepared once per server and copied once per
    kept server start; no later round prepares or copies again."""
    seen: dict[str, list[int]] = {}
    m = tiny(repeats=3, duration_s=1, server_lifetime="run")
    r, rd, lines = make_runner(
        tmp_path, config_dir, workroot, m, before_measure=_pids(seen), reuse_datasets=True
    )
    s = r.run()
    assert (s.ok, s.failed) == (6, 0)
    assert rd.status()["server_starts"] == dict.fromkeys(PAIR, 1)
    assert sum("dataset prepared once" in ln for ln in lines) == 2
    assert len(list(rd.logs.glob("*.prepare.*.txt"))) == 2  # the templates' loads only
    assert {sid: len(set(p)) for sid, p in seen.items()} == dict.fromkeys(PAIR, 1)
