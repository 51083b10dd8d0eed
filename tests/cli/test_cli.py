"""The CLI as a user meets it: one-line errors, exit codes, no tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clirun import assert_one_line_error, perftrack
from perftrack.store.files import nightfiles

REPO = Path(__file__).resolve().parents[2]

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sysbench"


def test_help_lists_the_verbs():
    res = perftrack("--help")
    assert res.returncode == 0
    for verb in ("servers", "run", "ingest", "compare", "parse", "db", "demo"):
        assert verb in res.stdout
    sub = perftrack("servers", "--help")
    assert "list" in sub.stdout and "fetch" in sub.stdout
    dbh = perftrack("db", "--help")
    assert "info" in dbh.stdout and "check" in dbh.stdout


def test_servers_list_shows_the_catalog():
    res = perftrack("servers", "list")
    assert res.returncode == 0
    assert "mariadb-10.11.18" in res.stdout and "debian" in res.stdout


def test_unknown_version_lists_known_ones():
    res = perftrack("run", "--server", "mariadb-10.11.99")
    assert_one_line_error(res, 2, "mariadb-10.11.99", "mariadb-10.11.18")


def test_malformed_matrix_names_file_and_line(tmp_path: Path):
    p = tmp_path / "m.yaml"
    p.write_text("name: m\nservers: [a\n")
    assert_one_line_error(perftrack("run", str(p)), 2, "m.yaml:", "malformed YAML")


def test_missing_sysbench_says_how_to_install(tmp_path: Path):
    env = {"PATH": str(tmp_path)}  # nothing on PATH: no sysbench
    res = perftrack("run", "--server", "mariadb-10.11.18", env=env)
    assert_one_line_error(res, 3, "apt-get install sysbench")


def test_parse_prints_json_and_refuses_garbage(tmp_path: Path):
    res = perftrack("parse", str(FIXTURES / "run_histogram.txt"))
    assert res.returncode == 0
    data = json.loads(res.stdout)
    assert data["status"] == "ok" and data["tps"] > 0 and data["latency_pct"] == 95.0
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\nworld\n")
    assert_one_line_error(perftrack("parse", str(junk)), 2, "junk.txt")
    assert_one_line_error(perftrack("parse", str(tmp_path / "none.txt")), 2, "none.txt")


def test_server_killed_output_parses_as_failed():
    res = perftrack("parse", str(FIXTURES / "run_server_killed.txt"))
    data = json.loads(res.stdout)
    assert data["status"] == "failed" and "2013" in data["reason"]


def test_db_that_is_not_duckdb_is_refused(tmp_path: Path):
    db = tmp_path / "results.duckdb"
    db.write_text("not a database\n")
    assert_one_line_error(perftrack("db", "info", "--db", str(db)), 4, "results.duckdb")
    assert db.read_text() == "not a database\n", "nothing written"


@pytest.mark.parametrize("bad", ["../../etc", "a/b", "$(id)"])
def test_resume_with_a_hostile_run_id_is_refused(bad: str, tmp_path: Path):
    res = perftrack("run", "--resume", bad, "--out", str(tmp_path))
    assert_one_line_error(res, 2)


@pytest.mark.integration
def test_demo_runs_the_main_job_end_to_end_on_the_tiny_matrix(tmp_path: Path, workroot) -> None:
    """`make demo`'s command on the test matrix, real servers: fetch, run, ingest, detect
    and compare, then the site is built from the DB it wrote."""
    db, site = tmp_path / "r.duckdb", tmp_path / "site"
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from perftrack.cli import main; sys.exit(main())",
            *("demo", "--matrix", "tiny", "--db", str(db), "--out", str(tmp_path / "runs")),
            *("--site", str(site)),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(workroot)},
        timeout=600,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    steps = [ln for ln in res.stdout.splitlines() if ln.startswith("== ")]
    assert [s[:6] for s in steps] == ["== 1/5", "== 2/5", "== 3/5", "== 4/5", "== 5/5"]
    assert "16 record(s) added" in res.stdout
    assert (site / "index.html").is_file() and (site / "history.html").is_file()


# Typos never pass quietly (issue 23 item 5): exit 2, one line naming the bad value and the
# valid ones.
def test_unknown_charset_is_refused_naming_the_valid_ones(tmp_path: Path):
    res = perftrack(
        "run", "--server", "mariadb-10.11.18", "--charset", "klingon", "--out", str(tmp_path)
    )
    assert_one_line_error(res, 2, "'klingon'", "latin1", "utf8mb4_0900_ai_ci")
    assert not any(tmp_path.iterdir())  # nothing half-written


def test_compare_of_servers_without_results_is_refused(tmp_path: Path):
    db = tmp_path / "r.duckdb"
    nightfiles.copy_db(REPO / "data" / "results.duckdb", db)
    for args in (("mariadb-10.11.18", "nosuch"), ("nosuch1", "nosuch2")):
        res = perftrack("compare", *args, "--db", str(db))
        assert_one_line_error(res, 2, "no results for server 'nosuch", "mariadb-10.11.18")


def test_compare_of_two_mariadb_servers_stars_no_stand_in(tmp_path: Path):
    """data/results.duckdb (REAL runs, copied): its MariaDB servers' stored records still
    carry the catalog's old `stand_in` text; outside a study a server is what it is, so
    compare shows neither a star nor a stand-in note, in its table or its JSON."""
    import duckdb

    db = tmp_path / "r.duckdb"
    nightfiles.copy_db(REPO / "data" / "results.duckdb", db)
    with duckdb.connect(str(REPO / "data" / "results.duckdb"), read_only=True) as con:
        stored = con.execute("SELECT count(*) FROM servers WHERE stand_in IS NOT NULL").fetchone()
    assert stored and stored[0] > 0  # the history keeps the text; readers do not show it
    pair = ("mariadb-10.11.18", "mariadb-10.11.19")
    res = perftrack("compare", *pair, "--db", str(db))
    assert res.returncode == 0, res.stderr
    rows = [ln for ln in res.stdout.splitlines() if ln.strip().startswith(pair)]
    assert rows and all(ln.split()[1] != "*" for ln in rows)  # "server  n ...", no star
    assert "stand-in" not in res.stdout
    res = perftrack("compare", *pair, "--db", str(db), "--json")
    assert res.returncode == 0 and "stand_in" not in res.stdout and '"server"' in res.stdout


def test_resume_of_an_unknown_run_lists_only_run_ids(tmp_path: Path):
    (tmp_path / "20261124T000000Z-abcdef").mkdir()
    (tmp_path / "20261124T000000Z-abcdef" / "plan.json").write_text("{}")
    (tmp_path / "night-plan.json").write_text("{}")
    res = perftrack("run", "--resume", "nosuch", "--out", str(tmp_path))
    assert_one_line_error(res, 2, "no run 'nosuch'", "runs there: 20261124T000000Z-abcdef")
    assert "plan.json" not in res.stderr


def test_missing_db_is_a_user_error_not_a_corrupt_one(tmp_path: Path):
    res = perftrack("compare", "--db", str(tmp_path / "nope.duckdb"))
    assert_one_line_error(res, 2, "does not exist", "perftrack ingest")


def test_matrix_with_an_unknown_server_names_it_and_the_known_ones(tmp_path: Path):
    m = tmp_path / "m.yaml"
    m.write_text(
        "name: x\nservers: [nosuch]\nworkloads: [oltp_point_select]\n"
        "charsets: [latin1]\nthreads: [1]\n"
    )
    res = perftrack("run", str(m), "--out", str(tmp_path / "runs"))
    assert_one_line_error(res, 2, "unknown server 'nosuch'; known: mariadb-10.11.18")


# Issue 37 item 8: each defect a new user met, exit 2 with one line and no traceback.
def test_empty_db_path_is_refused_with_one_line(tmp_path: Path):
    for args in (("compare",), ("db", "info"), ("advise", "--from", "10.2.11"), ("site", "build")):
        res = perftrack(*args, "--db", "")
        assert_one_line_error(res, 2, "'--db'", "empty")
    res = perftrack("site", "build", "--out", "")  # any path option: "" would be "."
    assert_one_line_error(res, 2, "'--out'", "empty")
    res = perftrack("compare", "--db", str(tmp_path))  # a directory is no DB file
    assert_one_line_error(res, 2, "is a directory: give the results DB file")
    assert not any(tmp_path.iterdir())


def test_compare_of_an_unknown_run_is_refused_naming_the_runs(tmp_path: Path):
    db = tmp_path / "r.duckdb"
    nightfiles.copy_db(REPO / "data" / "results.duckdb", db)
    res = perftrack("compare", "--db", str(db), "--run", "nope")
    assert_one_line_error(res, 2, "no run 'nope'", "runs there, newest first: 2026")


def test_option_errors_name_no_environment_variable():
    for args in (("advise",), ("compare", "--threads", "x")):
        res = perftrack(*args)
        assert_one_line_error(res, 2, "'--")
        assert "env var" not in res.stderr


def test_a_negative_thread_count_is_refused_as_a_number(tmp_path: Path):
    for value in ("-1", "0", "1,-2"):
        res = perftrack("plan", "--dispatch", "--out", str(tmp_path), env={"PT_THREADS": value})
        assert_one_line_error(res, 2, "PT_THREADS", "must be a whole number from 1 to")
    res = perftrack("plan", "--dispatch", "--out", str(tmp_path), env={"PT_VERSIONS": "-x"})
    assert_one_line_error(res, 2, "PT_VERSIONS: '-x' must start with a letter or a digit")
    assert not any(tmp_path.iterdir())


def test_advise_names_the_filter_the_user_gave(tmp_path: Path):
    db = tmp_path / "r.duckdb"
    nightfiles.copy_db(REPO / "data" / "results.duckdb", db)
    res = perftrack("advise", "--from", "10.2.11", "--db", str(db), "--charset", "klingon")
    assert_one_line_error(res, 2, "--charset klingon", "latin1")
    assert "--collation" not in res.stderr


# Issue 37 item 4: `compare` opens with one headline per pair and honours every cell filter;
# every --json output carries its schema version.
def test_compare_opens_with_one_headline_per_pair_and_honours_the_filters(tmp_path: Path):
    db = tmp_path / "r.duckdb"
    nightfiles.copy_db(REPO / "data" / "results.duckdb", db)
    pair = ("mariadb-10.1.23", "mariadb-10.2.11")
    res = perftrack("compare", *pair, "--db", str(db), "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "perftrack.compare.v1"
    (head,) = doc["headlines"]
    rows = [r for g in doc["groups"] for r in g["rows"] if r["verdict"]]
    assert head["pair"] == "mariadb-10.1.23 → mariadb-10.2.11" and head["cells"] == len(rows)
    for v in ("regression", "improvement", "unchanged", "inconclusive"):
        assert head[v] == sum(r["verdict"] == v for r in rows)
    resolved = [r for g in doc["groups"] for r in g["rows"] if r["verdict"] == "regression"]
    if resolved:  # the largest resolved change is one of the pair's regressions/improvements
        assert head["largest_ratio"] in [r["ratio"] for r in resolved]
    text = perftrack("compare", *pair, "--db", str(db)).stdout.splitlines()
    assert text[0] == head["text"] and text[1] == ""  # the headline first, then the tables

    res = perftrack(
        "compare", *pair, "--db", str(db), "--json", "--threads", "4", "--charset", "utf8mb4"
    )
    kept = json.loads(res.stdout)["groups"]
    assert kept and len(kept) < len(doc["groups"])
    assert all(g["group"]["threads"] == 4 for g in kept)
    assert all(g["group"]["collation"].startswith("utf8mb4") for g in kept)
    res = perftrack("compare", *pair, "--db", str(db), "--workload", "nosuch")
    assert_one_line_error(res, 2, "no results match --workload nosuch", "oltp_point_select")
    res = perftrack("compare", *pair, "--db", str(db), "--warmup", "3")
    assert_one_line_error(res, 2, "--warmup", "--until-conclusive")
    res = perftrack("db", "info", "--db", str(db), "--json")
    assert json.loads(res.stdout)["schema"] == "perftrack.db_info.v1"
    # issue 37 item 8: read-only commands (compare, db info above) leave no lock file
    assert not list(tmp_path.glob("*.lock"))
