"""`perftrack plan`: budget fit, priorities, rotation, shards, dispatch inputs, job matrix,
and one real shard run against real servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from datetime import date, timedelta
from pathlib import Path

import pytest

from perftrack.core.errors import ConfigError
from perftrack.planning import dispatch, fleet, matrix, nightplan, packing, pairing, schedule
from perftrack.servers import catalog
from perftrack.store.queries.pastruns import OpenRegression

REPO = Path(__file__).resolve().parents[2]
NIGHT = date(2026, 11, 23)
PAIR = ("mariadb-10.11.18", "mariadb-10.11.19")


def info(sid: str) -> tuple[str, str]:
    return "mariadb", sid.split("-", 1)[1]


# The scheduling tests' servers: three MariaDB releases the `info` above describes (the real
# nightly selects its servers by rule, tests/planning/test_selection.py).
SCHEDULE_SERVERS = ["mariadb-10.2.11", "mariadb-10.11.18", "mariadb-10.11.19"]


def nightly(**kw) -> matrix.Matrix:
    data = matrix.read_matrix(REPO / "configs" / "matrices" / "nightly.yaml").to_dict()
    data["servers"] = SCHEDULE_SERVERS
    return matrix.from_dict({**data, **kw})


def one_class(control: str | None = "mariadb-10.11.18") -> fleet.Fleet:
    return fleet.from_dict(
        {
            "control_server": control,
            "classes": {"bench-default": {"labels": ["self-hosted", "linux", "mysql-bench"]}},
        },
        "test",
    )


def two_classes() -> fleet.Fleet:
    return fleet.from_dict(
        {
            "control_server": "mariadb-10.11.18",
            "classes": {
                "small": {"labels": ["self-hosted", "small"]},
                "large": {"labels": ["self-hosted", "large"]},
            },
            "series": [{"class": "large", "threads": [16, 64]}],
        },
        "test",
    )


def make(m=None, fl=None, history=None, **kw) -> schedule.NightPlan:
    kw.setdefault("night", NIGHT)
    kw.setdefault("budget_minutes", None)
    kw.setdefault("shards", 1)
    return schedule.make_schedule(
        m or nightly(), info, fl or one_class(), history or schedule.History(), **kw
    )


def planned_ids(p: schedule.NightPlan) -> list[str]:
    return [c.cell_id for sh in p.shards for c in p.shard_cells(sh)]


def all_ids(m: matrix.Matrix) -> set[str]:
    return {c.cell_id for c in schedule._cells(m, info, "mariadb-10.11.18")[0]}


# --- budget --------------------------------------------------------------------------------
def test_no_budget_runs_every_cell_once():
    p = make(shards=3)
    ids = planned_ids(p)
    assert len(ids) == len(set(ids)) == len(all_ids(nightly())) == 360
    assert p.cut == [] and p.rotation_nights == 1


def test_budget_fits_every_shard_and_accounts_for_every_cell():
    p = make(budget_minutes=60, shards=2)
    for sh in p.shards:
        assert sh.load_s <= 60 * 60
    planned = len(planned_ids(p))
    cut = sum(len(s.cells) for s in p.cut)
    assert planned + cut + p.deferred_cells == 360  # nothing silently dropped
    assert p.rotation_nights > 1
    d = p.to_dict()
    assert d["estimate_s"] == pytest.approx(sum(sh["estimate_s"] for sh in d["shards"]), abs=1)
    assert d["estimate_all_s"] == 360 * (60 + 10 + 3.0)  # the stated default per cell


def test_estimates_come_from_history_then_similar_then_default():
    m = nightly(servers=list(PAIR))
    cells = schedule._cells(m, info, None)[0]
    c = cells[0]
    h = schedule.History(
        exact={schedule._exact_key(c): 99.0}, similar={schedule._similar_key(cells[-1]): 42.0}
    )
    assert schedule.estimate(c, h) == (99.0, "history")
    other = next(x for x in cells if schedule._exact_key(x) != schedule._exact_key(c))
    if schedule._similar_key(other) == schedule._similar_key(cells[-1]):
        assert schedule.estimate(other, h) == (42.0, "similar")
    assert schedule.estimate(c, schedule.History()) == (73.0, "default")


def test_control_cells_always_run_even_over_budget():
    p = make(budget_minutes=1, shards=1)
    chosen = [s for s in p.chosen if s.priority == schedule.CONTROL]
    assert chosen and all(s.server_id == "mariadb-10.11.18" for s in chosen)
    assert any("control cells alone exceed" in n for n in p.notes)
    assert all(s.priority != schedule.CONTROL for s in p.cut)


def test_control_server_outside_the_matrix_is_added():
    m = nightly(servers=["mariadb-10.2.11", "mariadb-10.11.19"])
    p = make(m, budget_minutes=30)
    assert any(s.server_id == "mariadb-10.11.18" and s.priority == 0 for s in p.chosen)
    cells = [c for sh in p.shards for c in p.shard_cells(sh)]
    groups: dict[int, set[str]] = defaultdict(set)
    for c in cells:
        groups[c.group].add(c.server_id)
    assert all(len(v) == 1 for v in groups.values()), "a group number spans two servers"


# --- priorities ----------------------------------------------------------------------------
def test_new_tags_and_open_regressions_come_before_the_rotation():
    m = nightly()
    h = schedule.History(
        servers_with_results={"mariadb-10.11.18", "mariadb-10.2.11"},  # 10.11.19 is new
        regressions=[
            OpenRegression(
                base="mariadb-10.2.11",
                new="mariadb-10.11.18",
                fields={
                    "workload": "oltp_read_write",
                    "threads": 64,
                    "collation": "latin1_swedish_ci",
                    "profile": "default",
                    "tables": 8,
                    "table_size": 100000,
                    "duration_s": 60,
                    "connection": "tcp",
                },
            )
        ],
        source="test",
    )
    # room for the control slice, the new tag's 24 slices and the 2 regression slices
    # (6.1 min each: 5 repeats x 73 s), not much more
    p = make(m, history=h, budget_minutes=170, shards=1)
    kinds = {(s.server_id, s.priority) for s in p.chosen}
    assert ("mariadb-10.11.19", schedule.NEW_TAG) in kinds
    regs = [s for s in p.chosen if s.priority == schedule.REGRESSION]
    assert {s.server_id for s in regs} == {"mariadb-10.2.11", "mariadb-10.11.18"}
    assert all(s.cells[0][1].threads == 64 for s in regs)
    new_tag = [s for s in p.chosen + p.cut if s.priority == schedule.NEW_TAG]
    assert all(s in p.chosen for s in new_tag), "a new tag was cut for the rotation"
    assert all(s.priority >= schedule.ROTATION for s in p.cut)


def test_acknowledged_or_absent_history_makes_no_new_tags():
    p = make(history=schedule.History(), budget_minutes=60)
    assert not [s for s in p.chosen if s.priority == schedule.NEW_TAG]


# --- rotation ------------------------------------------------------------------------------
@pytest.mark.parametrize("budget", [20, 45, 90])
def test_rotation_covers_the_whole_matrix_over_its_nights(budget):
    m = nightly()
    first = make(m, budget_minutes=budget, shards=2)
    r = first.rotation_nights
    assert r > 1
    seen: set[str] = set()
    for k in range(r):
        p = make(m, budget_minutes=budget, shards=2, night=NIGHT + timedelta(days=k))
        assert p.rotation_nights == r
        assert p.cut == [], "a part of the rotation did not fit its night"
        seen |= set(planned_ids(p))
    assert seen == all_ids(m)


def test_plan_is_deterministic_for_a_night_and_moves_with_the_date():
    a = make(budget_minutes=45, shards=2)
    b = make(budget_minutes=45, shards=2)
    c = make(budget_minutes=45, shards=2, night=NIGHT + timedelta(days=1))
    assert a.to_dict() == b.to_dict()
    assert planned_ids(a) != planned_ids(c)


# --- shards --------------------------------------------------------------------------------
def test_series_are_pinned_to_one_runner_class_and_shards_balance():
    fl = two_classes()
    p = make(fl=fl, shards=4)
    classes_of_series: dict[tuple, set[str]] = defaultdict(set)
    for sh in p.shards:
        for c in p.shard_cells(sh):
            classes_of_series[schedule.series_key(c)].add(sh.runner_class)
            assert sh.runner_class == ("large" if c.threads in (16, 64) else "small")
    assert all(len(v) == 1 for v in classes_of_series.values())
    job = p.job_matrix()["include"]
    assert {j["runner_class"] for j in job} == {"small", "large"}
    assert all(j["runs_on"] == fl.labels(j["runner_class"]) for j in job)
    for rc in ("small", "large"):
        loads = [sh.load_s for sh in p.shards if sh.runner_class == rc]
        biggest_pack = max(
            sum(s.estimate_s for s in p.chosen if s.pack == pk)
            for pk in {s.pack for s in p.chosen if s.runner_class == rc}
        )
        assert max(loads) - min(loads) <= biggest_pack


def test_every_pair_the_night_compares_is_on_one_shard():
    """Three MariaDB servers (two version steps per series), two charsets, 3 shards: the
    servers of a series and the charsets of a server's series run on one shard."""
    p = make(shards=3)
    shard_of: dict[tuple, set[int]] = defaultdict(set)
    for sh in p.shards:
        for c in p.shard_cells(sh):
            # everything the night compares with this cell: every server (one product) and
            # both charsets of its workload and threads
            shard_of[(c.workload, c.threads, c.profile)].add(sh.index)
    assert len(shard_of) == 12 and all(len(v) == 1 for v in shard_of.values())
    assert len(p.shards) == 3  # …and all three runners get work
    d = p.to_dict()["pairing"]
    assert d["comparison_groups"] == 12 and d["split_pairs"] == []
    lines: list[str] = []
    nightplan.render(p, lines.append)
    assert any(
        line.startswith("pairing: 12 comparison group(s); each comparison group")
        and "every pair tonight is measured on one machine" in line
        for line in lines
    )


def test_a_split_pair_is_regrouped_and_a_split_plan_is_caught():
    """One server, two charsets, two shards: balance alone would put latin1 on one runner
    and utf8mb4 on the other; the charset pair goes to one shard instead (the other
    runner gets nothing), and the check finds the pair when it is split by hand."""
    m = nightly(
        servers=["mariadb-10.11.19"], workloads=["oltp_point_select"], threads=[1], repeats=2
    )
    p = make(m, fl=one_class(control=None), shards=2)
    assert len(p.shards) == 1 and len(p.shard_cells(p.shards[0])) == 4  # 2 rounds
    assert "1 shard(s) left empty and dropped" in p.notes
    assert pairing.split(p.shards, info) == []
    latin1, utf8mb4 = p.shards[0].slices
    apart = [
        packing.Shard(0, "bench-default", [latin1], latin1.estimate_s),
        packing.Shard(1, "bench-default", [utf8mb4], utf8mb4.estimate_s),
    ]
    (pair,) = pairing.split(apart, info)
    assert pair.kind == "charset axis"
    assert pair.describe().startswith("charset axis mariadb-10.11.19 latin1_swedish_ci/default")
    # the same check on a written plan file with the pair split across two shards
    d = p.to_dict()
    cells = d["shards"][0]["cells"]
    d["shards"] = [
        {**d["shards"][0], "cells": [c for c in cells if c["charset_axis"] == "latin1"]},
        {
            **d["shards"][0],
            "shard": 1,
            "cells": [c for c in cells if c["charset_axis"] != "latin1"],
        },
    ]
    assert [x.kind for x in pairing.split_in_file(d, info)] == ["charset axis"]
    assert pairing.split_in_file(p.to_dict(), info) == []


@pytest.mark.parametrize("budget", [20, 45])
def test_under_a_budget_pairs_stay_on_one_shard_every_night_of_the_rotation(budget):
    """Each (workload, threads) group is 3 servers x 2 charsets x 5 rounds x 73 s = 36.5
    min. Under 45 minutes a shard it stays whole, every night; under 20 it cannot, and is
    split by series (18.25 min): version steps still never split, charset pairs may, and
    the plan names each one it split."""
    r = make(budget_minutes=budget, shards=2).rotation_nights
    split: list[str] = []
    for k in range(r):
        p = make(budget_minutes=budget, shards=2, night=NIGHT + timedelta(days=k))
        where: dict[tuple, set[int]] = defaultdict(set)
        for sh in p.shards:
            for c in p.shard_cells(sh):
                where[schedule.series_key(c)].add(sh.index)
        assert all(len(v) == 1 for v in where.values())  # version steps: one machine
        assert [x.describe() for x in pairing.split(p.shards, info)] == p.split_pairs
        assert p.to_dict()["pairing"]["split_pairs"] == p.split_pairs
        split += p.split_pairs
    assert all(x.startswith("charset axis mariadb-") for x in split)
    assert bool(split) == (budget == 20)


def test_fewer_shards_than_classes_is_an_error():
    with pytest.raises(ConfigError, match="--shards 2"):
        make(fl=two_classes(), shards=1)


def test_runner_classes_config_is_validated():
    for bad in (
        {"classes": {"x": {"labels": []}}},
        {"classes": {"x": {"labels": ["ok", "bad label"]}}},
        {"classes": {"x": {"labels": ["a"]}}, "series": [{"class": "y"}]},
        {"classes": {"x": {"labels": ["a"]}}, "series": [{"class": "x", "disk": ["ssd"]}]},
        {"clases": {}},
    ):
        with pytest.raises(ConfigError):
            fleet.from_dict(bad, "runners.yaml")
    assert fleet.read_fleet(REPO / "configs").default_class == "bench-default"


# --- dispatch inputs -----------------------------------------------------------------------
@pytest.fixture
def cat() -> catalog.Catalog:
    return catalog.read_catalog(REPO / "configs" / "versions.yaml")


def test_dispatch_inputs_override_the_matrix(cat):
    env = {
        "PT_MATRIX": "nightly",
        "PT_VERSIONS": "mariadb-10.11.18, mariadb-10.11.19",
        "PT_WORKLOADS": "oltp_point_select",
        "PT_CHARSETS": "latin1",
        "PT_THREADS": "1,4",
        "PT_PROFILE": "",
        "PT_REPEATS": "3",
        "PT_DURATION": "30",
        "PT_BUDGET_MINUTES": "90",
        "PT_SHARDS": "2",
    }
    got = dispatch.from_env(env, cat, REPO / "configs", None)
    assert got.matrix.servers == PAIR and got.matrix.threads == (1, 4)
    assert (got.matrix.repeats, got.matrix.duration_s) == (3, 30)
    assert got.matrix.profile == "default"  # empty = the matrix's value
    assert (got.budget_minutes, got.shards) == (90, 2)
    assert dispatch.from_env({}, cat, REPO / "configs", None).matrix.name == "nightly"


@pytest.mark.parametrize(
    ("var", "value", "needle"),
    [
        ("PT_VERSIONS", "mysql-99.0", "unknown server"),
        ("PT_VERSIONS", "mariadb-10.11.18;reboot", "characters other than"),
        ("PT_VERSIONS", "$(id)", "characters other than"),
        ("PT_VERSIONS", "`id`", "characters other than"),
        ("PT_VERSIONS", "mariadb-10.11.18\nfoo", "characters other than"),
        ("PT_WORKLOADS", "${{ github.token }}", "expression"),
        ("PT_WORKLOADS", "oltp_nope", "PT_WORKLOADS"),
        ("PT_THREADS", "four", "whole number"),
        ("PT_THREADS", "1.5", "whole number"),
        ("PT_THREADS", "-1", "whole number"),
        ("PT_THREADS", "99999999999999999999", "whole number"),
        ("PT_THREADS", "1,,4", "empty item"),
        ("PT_THREADS", ",", "empty item"),
        ("PT_CHARSETS", "latin2", "latin1, utf8mb4"),
        ("PT_CHARSETS", "latin1,latin1", "twice"),
        ("PT_PROFILE", "../../etc/passwd", "characters other than"),
        ("PT_PROFILE", "nosuch", "unknown profile"),
        ("PT_REPEATS", "0", "from 1"),
        ("PT_DURATION", "1e9", "whole number"),
        ("PT_BUDGET_MINUTES", "100000000", "whole number"),
        ("PT_SHARDS", "0", "whole number"),
        ("PT_MATRIX", "nightly.yaml", "no matrix"),
        ("PT_MATRIX", "/etc/passwd", "characters other than"),
        ("PT_MATRIX", "a,b", "one matrix"),
        ("PT_VERSIONS", "x" * 5000, "longer than"),
    ],
)
def test_hostile_dispatch_inputs_are_one_line_errors(cat, var, value, needle):
    with pytest.raises(ConfigError) as err:
        dispatch.from_env({var: value}, cat, REPO / "configs", None)
    msg = str(err.value)
    assert var in msg and needle in msg
    assert "\n" not in msg and len(msg) < 400


def perftrack(*args: str, env: dict[str, str], cwd: Path = REPO):
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from perftrack.cli import main; sys.exit(main())",
            *args,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
        timeout=120,
    )


def test_bad_dispatch_input_fails_the_plan_and_says_so_in_the_job_summary(tmp_path):
    summary, out, plan_file = tmp_path / "summary.md", tmp_path / "out", tmp_path / "p.json"
    res = perftrack(
        "plan",
        "--dispatch",
        "--github-output",
        "--out",
        str(plan_file),
        "--db",
        str(tmp_path / "none.duckdb"),
        env={
            "PT_THREADS": "1; curl evil <b>x</b>",
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(out),
        },
    )
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: PT_THREADS")
    text = summary.read_text()
    assert "perftrack plan failed" in text and "PT\\_THREADS" in text
    assert "<b>" not in text and "&lt;b&gt;" in text
    assert not plan_file.exists() and not out.exists(), "something half-written"


def test_github_output_is_the_job_matrix_and_the_shard_count(tmp_path):
    out, plan_file = tmp_path / "gh-output", tmp_path / "p.json"
    out.write_text("earlier=1\n")
    res = perftrack(
        "plan",
        "nightly",
        "--budget-minutes",
        "60",
        "--shards",
        "3",
        "--github-output",
        "--out",
        str(plan_file),
        "--db",
        str(tmp_path / "none.duckdb"),
        env={"GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": ""},
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.index("estimate:") < res.stdout.index("shard 0")
    lines = out.read_text().splitlines()
    assert lines[0] == "earlier=1"
    key, _, value = lines[1].partition("=")
    assert key == "matrix" and " " not in value
    job = json.loads(value)
    assert [j["shard"] for j in job["include"]] == [0, 1, 2]
    assert all(
        j["runs_on"] == ["self-hosted", "linux", "x64", "mysql-bench"] for j in job["include"]
    )
    assert lines[2] == "shards=3"
    assert lines[3:] == ["pinned=", "pin_count=0"]  # nothing pinned while planning (no flag)
    saved = json.loads(plan_file.read_text())
    assert saved["schema"] == schedule.SCHEMA and saved["matrix"] == "nightly"
    assert [s["shard"] for s in saved["shards"]] == [0, 1, 2]
    assert all(s["cells"] and s["runs_on"] for s in saved["shards"])


def test_github_output_outside_actions_is_an_error(tmp_path):
    env = {k: "" for k in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")}
    res = perftrack("plan", "tiny", "--github-output", "--out", str(tmp_path / "p"), env=env)
    assert res.returncode == 2 and "GITHUB_OUTPUT" in res.stderr
    res = perftrack("plan", "tiny", "--night", "2026-13-01", env=env)
    assert res.returncode == 2 and "YYYY-MM-DD" in res.stderr


# --- reading a shard back ------------------------------------------------------------------
def test_a_tampered_or_missing_shard_is_refused(tmp_path, cat):
    p = make(nightly(servers=list(PAIR)), shards=2)
    f = tmp_path / "plan.json"
    nightplan.write(p, f)
    assert len(nightplan.load_shard(f, 1, cat).cells) == len(p.shard_cells(p.shards[1]))
    with pytest.raises(ConfigError, match="no shard 7"):
        nightplan.load_shard(f, 7, cat)
    d = json.loads(f.read_text())
    d["shards"][0]["cells"][0]["threads"] = 999
    f.write_text(json.dumps(d))
    with pytest.raises(ConfigError, match="cell_id does not match"):
        nightplan.load_shard(f, 0, cat)
    f.write_text("{}")
    with pytest.raises(ConfigError, match="not a night plan"):
        nightplan.load_shard(f, 0, cat)


# --- a real shard ---------------------------------------------------------------------------
@pytest.mark.integration
def test_a_real_shard_runs_its_cells_resumes_and_feeds_the_next_estimate(
    tmp_path, config_dir, workroot
):
    (config_dir / "matrices" / "shardtest.yaml").write_text(
        "name: shardtest\n"
        f"servers: [{PAIR[0]}, {PAIR[1]}]\n"
        # two workloads: two comparison groups (a version step pairs its two servers per
        # series, so both sides of a pair share a shard), one per shard
        "workloads: [oltp_point_select, oltp_read_only]\ncharsets: [latin1]\nthreads: [2]\n"
        "repeats: 1\nduration_s: 1\nwarmup_s: 0\ntables: 1\ntable_size: 500\n"
    )
    env = {
        "PERFTRACK_CONFIG_DIR": str(config_dir),
        "TMPDIR": str(workroot),
        "GITHUB_STEP_SUMMARY": "",
    }
    plan_file, runs, db = tmp_path / "night.json", tmp_path / "runs", tmp_path / "r.duckdb"
    res = perftrack("plan", "shardtest", "--shards", "2", "--out", str(plan_file), env=env)
    assert res.returncode == 0, res.stderr
    plan = json.loads(plan_file.read_text())
    assert len(plan["shards"]) == 2
    # each shard: one workload, both servers of its version step (measured on one machine)
    for sh in plan["shards"]:
        assert {c["server_id"] for c in sh["cells"]} == set(PAIR)
        assert len({c["workload"] for c in sh["cells"]}) == 1
    shard = plan["shards"][1]
    res = perftrack(
        "run", "--night-plan", str(plan_file), "--shard", "1", "--out", str(runs), env=env
    )
    assert res.returncode == 0, res.stdout + res.stderr
    (run_dir,) = runs.iterdir()
    recs = [json.loads(p.read_text()) for p in (run_dir / "records").glob("*.json")]
    assert sorted(r["cell_id"] for r in recs) == sorted(c["cell_id"] for c in shard["cells"])
    assert all(r["status"] == "ok" and r["runner_class"] == shard["runner_class"] for r in recs)
    saved = json.loads((run_dir / "plan.json").read_text())
    assert saved["night_plan"]["shard"] == 1 and saved["reuse_datasets"] is True
    assert "dataset prepared once" in res.stdout or "dataset reused from the cache" in res.stdout
    res = perftrack("run", "--resume", run_dir.name, "--out", str(runs), env=env)
    assert res.returncode == 0 and "1 of 1 cells already" not in res.stderr
    assert len(list((run_dir / "records").glob("*.json"))) == len(recs)
    res = perftrack(
        "run",
        "--night-plan",
        str(plan_file),
        "--shard",
        "1",
        "--runner-class",
        "other",
        "--out",
        str(runs),
        env=env,
    )
    assert res.returncode == 2 and "planned for runner class" in res.stderr
    # the shard's records now estimate its cells; its servers are no longer new tags
    res = perftrack("ingest", str(run_dir), "--db", str(db), env=env)
    assert res.returncode == 0, res.stderr
    res = perftrack(
        "plan", "shardtest", "--db", str(db), "--out", str(tmp_path / "n2.json"), env=env
    )
    assert res.returncode == 0, res.stderr
    again = json.loads((tmp_path / "n2.json").read_text())
    assert again["estimate_sources"].get("history", 0) == len(shard["cells"])
    ran = {c["server_id"] for c in shard["cells"]}
    new = [c for sh in again["shards"] for c in sh["cells"] if c["server_id"] not in ran]
    assert again["cells_by_priority"].get("new tag", 0) == len(new)


def test_estimates_from_history_add_each_server_start_once():
    """Records time the cells only; a server start per group and round is spread over the
    cells that share it, so the plan's total is cells x history + starts x overhead."""
    m = nightly(servers=list(PAIR))
    cells = schedule._cells(m, info, None)[0]
    h = schedule.History(exact={schedule._exact_key(c): 10.0 for c in cells}, source="test")
    p = make(m, history=h, shards=1)
    starts = len({(c.group_key(), c.repeat) for c in cells})
    assert starts < len(cells)
    want = 10.0 * len(cells) + schedule.START_OVERHEAD_ESTIMATE_S * starts
    assert p.to_dict()["estimate_all_s"] == pytest.approx(want, abs=1)
