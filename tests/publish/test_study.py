"""Studies (configs/studies/): loading, bad input, the report's ratios next to the
article's (on SYNTHETIC fixture records), and a tiny study run for real (integration)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
import yaml

from fixtures.records.synthetic import make_record
from perftrack import cli
from perftrack.analysis import grading
from perftrack.core import record
from perftrack.core.errors import ConfigError
from perftrack.planning import study
from perftrack.publish import study_report, study_runs
from perftrack.servers import catalog
from perftrack.store import store
from perftrack.store.files import migrations, nightfiles

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
S000 = "000_charset_57_vs_80"
S001 = "001_mysqlslap_51_vs_57"
FIXTURE_DB = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "db"
    / f"schema_v{migrations.CURRENT_VERSION}.duckdb"
)


def test_both_article_studies_load_with_full_and_local_scales() -> None:
    for name in (S000, S001):
        st = study.load(name, CONFIGS)
        assert set(st.scales) == {"full", "local"}
        full, local = st.matrix("full"), st.matrix("local")
        # the local scale keeps every axis of the article's matrix
        for axis in ("workloads", "charsets", "engines", "durabilities"):
            assert getattr(full, axis) == getattr(local, axis)
        assert study_report.read_reference(st), "reference numbers present"
    full = study.load(S000, CONFIGS).matrix("full")
    assert full.threads == (1, 4, 16, 24, 32, 48, 64, 128, 256)
    assert (full.tables, full.table_size, full.duration_s) == (10, 10_000_000, 300)


ALL = (
    S000,
    S001,
    "002_utf8mb4_80_57_56_mariadb103",
    "003_tpcb_41_vs_50",
    "004_sakila_57_80_84_ps_mariadb",
)


def test_every_article_is_a_study_whose_servers_are_in_the_catalog() -> None:
    assert study.known(CONFIGS) == list(ALL)
    cat = catalog.load(CONFIGS / "versions.yaml")
    for name in ALL:
        st = study.load(name, CONFIGS)
        for scale in ("full", "local"):
            study.check_servers(st, scale, cat)
    missing = dataclasses.replace(
        study.load(S001, CONFIGS),
        roles={**study.load(S001, CONFIGS).roles, "base": {"article": "5.1", "full": "mysql-5.1"}},
    )
    with pytest.raises(ConfigError, match=r"needs server 'mysql-5.1' .* or use --scale local"):
        study.check_servers(missing, "full", cat)


def test_multi_system_studies_compare_every_role_with_the_first() -> None:
    st = study.load("004_sakila_57_80_84_ps_mariadb", CONFIGS)
    assert st.role_names == ("mysql57", "mysql8036", "mysql84", "ps8036", "mariadb113")
    assert st.parts("local") == ("rw", "tpcc")
    rw, tpcc = st.matrices("local")
    assert rw.prepost and rw.dataset_sizes == ("small", "large")
    assert rw.profiles == ("local-default", "local-tuned")
    assert tpcc.workloads == ("tpcc",) and tpcc.isolations == ("RR", "RC")
    assert st.matrices("full")[0].profiles == ("default", "tuned")
    assert [m.name for m in st.matrices("full")] == [
        "study-004_sakila_57_80_84_ps_mariadb-full-rw",
        "study-004_sakila_57_80_84_ps_mariadb-full-tpcc",
    ]
    assert st.baseline("profile") == ("default", "local-default")
    # the article's chart data: 5 systems x 2 datasets x 2 profiles x 11 thread counts
    ref = study_report.read_reference(st)
    assert len(ref) == 220
    small = ("oltp_read_write", 4, None, None, None, None, "small", None, None, "default")
    assert ref[("mysql57", small)] > 10 * ref[("mysql8036", small)]  # 8.0.36's defaults
    assert st.stand_in_profiles == {"local-default": "default", "local-tuned": "tuned"}
    st2 = study.load("002_utf8mb4_80_57_56_mariadb103", CONFIGS)
    assert st2.matrix("full").handshakes == ("skip",) and st2.matrix("full").profile == "article002"
    assert len(st2.claims) == 4 and st2.claims[0].value == pytest.approx(1.40)


def test_unknown_study_lists_the_known_ones(capsys) -> None:
    assert cli.main(["study", "report", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown study 'nope'; known: 000_charset_57_vs_80")
    assert err.count("\n") == 1


def test_report_without_a_run_says_how_to_make_one(tmp_path: Path) -> None:
    st = study.load(S000, CONFIGS)
    with pytest.raises(ConfigError, match="perftrack study run 000_charset_57_vs_80"):
        study_runs.find_run(st, "local", tmp_path, None)


def test_report_with_neither_a_run_nor_a_result_in_the_db_is_one_line(tmp_path, capsys) -> None:
    db = tmp_path / "empty.duckdb"
    assert cli.main(["db", "info", "--db", str(db)]) == 2  # a missing DB is user input
    capsys.readouterr()
    argv = ["study", "report", S000, "--out", str(tmp_path), "--db", str(db)]
    assert cli.main(argv) == 2  # no run, no DB: the run directory's message
    err = capsys.readouterr().err
    assert "perftrack study run 000_charset_57_vs_80" in err and err.count("\n") == 1
    assert cli.main([*argv, "--from-db", "--run", "x"]) == 2
    assert "exclude each other" in capsys.readouterr().err
    nightfiles.copy_db(FIXTURE_DB, db)  # a DB whose results are none of the study's cells
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: no results of study {S000} at scale local in {db}")


CATALOG = catalog.load(CONFIGS / "versions.yaml")
MYSQL = "mysql-9.7.4"  # study 000's `new` at the local scale (the same product: graded)


def _render(st: study.Study, run: Path | list[Path], emit=lambda _: None):
    return study_report.render(st, "local", run, emit, study.players(st, "local", CATALOG))


def _synthetic_run(tmp_path: Path, cells: list[tuple[str, str, int, float]]) -> Path:
    """SYNTHETIC records: (server, collation, threads, qps) as a run of study 000 local."""
    run = tmp_path / "runs" / "synthetic-study"
    (run / "records").mkdir(parents=True)
    (run / "plan.json").write_text('{"matrix": {"name": "study-000_charset_57_vs_80-local"}}')
    for i, (server, coll, threads, qps) in enumerate(cells):
        rec = make_record(run_id="synthetic-study", cell=i, server_id=server, threads=threads)
        rec["cell"].update(workload="oltp_read_only", collation=coll, charset=coll.split("_")[0])
        rec["result"]["qps"] = qps
        record.write(record.validate(rec), run / "records")
    return run


def test_report_ratios_sit_next_to_the_articles(tmp_path: Path) -> None:
    base, new = "mariadb-10.11.18", MYSQL
    run = _synthetic_run(
        tmp_path,
        [
            (base, "latin1_swedish_ci", 4, 2000.0),
            (base, "utf8mb4_unicode_ci", 4, 1000.0),
            (new, "latin1_swedish_ci", 4, 3000.0),
            (new, "utf8mb4_unicode_ci", 4, 2500.0),
        ],
    )
    st = study.load(S000, CONFIGS)
    assert study_runs.find_run(st, "local", tmp_path / "runs", None) == run
    lines: list[str] = []
    table = _render(st, run, lines.append)
    by = {(r.comparison, r.label): r for r in table}
    v = by[("version", "workload=oltp_read_only threads=4 collation=utf8mb4_unicode_ci")]
    assert v.ours == pytest.approx(2.5)
    assert v.article == pytest.approx(3363.7 / 2157.61)  # 8.0.15 / 5.7.25 at 4 threads
    # MySQL 9.7.4 / MariaDB 10.11.18: a side on another product's stand-in, not graded
    assert v.grade.text == "stand-in: MariaDB 10.11.18 for MySQL 5.7.25 — direction only"
    cells = "latin1_swedish_ci / workload=oltp_read_only threads=4 collation=utf8mb4_unicode_ci"
    c = by[("charset base (5.7.25)", cells)]
    assert c.ours == pytest.approx(2.0)
    assert c.article == pytest.approx(4578.18 / 2157.61)
    assert c.stand_ins == ("MariaDB 10.11.18 for MySQL 5.7.25",) and not c.grade.graded
    # MySQL 9.7.4 for MySQL 8.0.15: the same product, graded (one repeat: no interval)
    n = by[("charset new (8.0.15)", cells)]
    assert n.ours == pytest.approx(1.2) and n.stand_ins == ()
    assert n.grade.text == "not shown (within the noise)"
    text = "\n".join(lines)
    assert (
        "base: article MySQL 5.7.25 -> here mariadb-10.11.18 (MariaDB 10.11.18 for MySQL "
        "5.7.25): a stand-in of another product: direction only — no MySQL 5.7 runs here"
    ) in text
    assert "new: article MySQL 8.0.15 -> here mysql-9.7.4 (MySQL 9.7.4 for MySQL 8.0.15): " in text
    # the rule, in its words, with the factor it uses
    assert f"within {grading.MAGNITUDE_FACTOR:g}x of each other" in text


def test_bad_study_files_are_one_line_errors(tmp_path: Path) -> None:
    d = tmp_path / "configs"
    (d / "studies").mkdir(parents=True)
    good = yaml.safe_load((CONFIGS / "studies" / f"{S000}.yaml").read_text())
    (d / "studies" / "reference").mkdir()
    ref = CONFIGS / "studies" / "reference" / f"{S000}.csv"
    (d / "studies" / "reference" / ref.name).write_text(ref.read_text())
    base_role = good["roles"]["base"]
    cases = {
        "reference": ("nope.csv", "does not exist"),
        "roles": ({"base": {}}, "must map 2 to 8 role names"),
        "comparisons": (["x"], "unknown comparison"),
        "claims": ([{"text": "t", "rows": "version"}], r"claims\[0\]: needs text, rows"),
        "baselines": ({"nosuch": "x"}, "baselines.nosuch is not an axis comparison"),
    }
    for key, (value, message) in cases.items():
        bad = dict(good, **{key: value})
        (d / "studies" / f"{S000}.yaml").write_text(yaml.safe_dump(bad))
        with pytest.raises(ConfigError, match=message) as info:
            study.load(S000, d)
        assert "\n" not in str(info.value) and str(d / "studies") in str(info.value)
    # two roles on one server, an unknown axis value, a comparison without its baseline
    for change, message in (
        ({"roles": {"base": base_role, "new": base_role}}, "two roles use the same"),
        ({"comparisons": ["version", "isolation"]}, "needs baselines.isolation"),
    ):
        (d / "studies" / f"{S000}.yaml").write_text(yaml.safe_dump(dict(good, **change)))
        with pytest.raises(ConfigError, match=message):
            study.load(S000, d)
    # a role whose local server is not the article's must say why it stands in; the old
    # study-wide `stand_in` text is gone (per role now); above/below say a side, not a size
    quiet = yaml.safe_load(yaml.safe_dump(good))
    del quiet["roles"]["base"]["stand_in"]
    old_key = dict(good, stand_in="MariaDB stands in for MySQL")
    size = dict(good, claims=[{"text": "t", "rows": "version", "where": {}, "above": 1.2}])
    for bad, message in (
        (quiet, r"roles.base: local server mariadb-10.11.18 is not the article's \(mysql-5.7.25\)"),
        (old_key, "unknown key 'stand_in'"),
        (size, "above says which side is faster, so its value is 1; give up_to"),
    ):
        (d / "studies" / f"{S000}.yaml").write_text(yaml.safe_dump(bad))
        with pytest.raises(ConfigError, match=message) as info:
            study.load(S000, d)
        assert "\n" not in str(info.value)
    # a role's product comes from its `full` catalog entry: one that is missing is one line
    (d / "studies" / f"{S000}.yaml").write_text(yaml.safe_dump(good))
    unknown = dataclasses.replace(
        study.load(S000, d), roles={**good["roles"], "new": {**good["roles"]["new"], "full": "x"}}
    )
    with pytest.raises(ConfigError, match=r"roles.new.full: server 'x' is not in versions.yaml"):
        study.players(unknown, "local", CATALOG)
    bad_axis = yaml.safe_load(yaml.safe_dump(good))
    bad_axis["scales"]["local"]["charsets"] = ["klingon"]
    (d / "studies" / f"{S000}.yaml").write_text(yaml.safe_dump(bad_axis))
    with pytest.raises(ConfigError, match=r"\(scale local\): charset 'klingon' is not"):
        study.load(S000, d)


@pytest.mark.integration
def test_a_tiny_study_runs_and_reports_for_real(tmp_path, config_dir, workroot, capsys):
    """A one-minute copy of study 000's local scale on the MariaDB pair (MySQL 9.7.4, its
    `new`, needs a ~700 MB Debian sid chroot: here MariaDB 10.11.19 plays it)."""
    st = yaml.safe_load((config_dir / "studies" / f"{S000}.yaml").read_text())
    st["roles"]["new"].update(local="mariadb-10.11.19", stand_in="the pair's newer side")
    st["scales"]["local"].update(
        handshakes=["skip"],
        workloads=["oltp_point_select"],
        charsets=["latin1", "utf8mb4_general_ci", "utf8mb4_0900_ai_ci"],
        threads=[4],
        repeats=1,
        duration_s=1,
        warmup_s=0,
        tables=1,
        table_size=500,
    )
    (config_dir / "studies" / f"{S000}.yaml").write_text(yaml.safe_dump(st))
    runs = tmp_path / "runs"
    env = {"PERFTRACK_CONFIG_DIR": str(config_dir)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        rc = cli.main(["study", "run", S000, "--scale", "local", "--out", str(runs)])
        assert rc == 0, capsys.readouterr().err
        capsys.readouterr()
        assert cli.main(["study", "report", S000, "--scale", "local", "--out", str(runs)]) == 0
        from_runs = capsys.readouterr().out
        # The same report from the results DB, as on a fresh clone with no runs/ directory.
        db = tmp_path / "results.duckdb"
        assert cli.main(["ingest", *map(str, runs.iterdir()), "--db", str(db)]) == 0
        capsys.readouterr()
        empty = tmp_path / "no-runs"
        argv = ["study", "report", S000, "--scale", "local", "--out", str(empty), "--db", str(db)]
        assert cli.main(argv) == 0
        from_db = capsys.readouterr().out
        assert f"from {db} (run " in from_db
        rows = [ln for ln in from_runs.splitlines() if "threads=4" in ln]
        assert rows and rows == [ln for ln in from_db.splitlines() if "threads=4" in ln]
        print(from_runs)  # the assertions below read the report made from the run directory
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    text = capsys.readouterr().out
    assert "[version] new / base" in text
    assert (
        "latin1_swedish_ci / workload=oltp_point_select threads=4 collation=utf8mb4_general_ci"
        in text
    )
    assert "utf8mb4_0900_ai_ci is not available on mariadb" in text  # skipped, with reason
    # both sides MariaDB for MySQL: every measured row is shown for its direction only
    assert "stand-in: MariaDB 10.11.19 for MySQL 8.0.15, MariaDB 10.11.18 for MySQL 5.7.25" in text


def test_durability_comparison_matches_the_sync_binlog_rows(tmp_path: Path) -> None:
    """SYNTHETIC records for study 001: MyISAM writes with and without sync_binlog."""
    run = tmp_path / "runs" / "synthetic-001"
    (run / "records").mkdir(parents=True)
    (run / "plan.json").write_text('{"matrix": {"name": "study-001_mysqlslap_51_vs_57-local"}}')
    for i, (dur, qps) in enumerate((("strict", 100.0), ("binlog_nosync", 500.0))):
        rec = make_record(run_id="synthetic-001", cell=i, server_id="mariadb-10.11.18", threads=50)
        rec["cell"].update(workload="slap_write", engine="MyISAM", durability=dur)
        rec["result"]["qps"] = qps
        record.write(record.validate(rec), run / "records")
    st = study.load(S001, CONFIGS)
    table = _render(st, run)
    (row,) = [r for r in table if r.comparison == "durability new (5.7)"]
    assert row.ours == pytest.approx(5.0)
    assert row.article == pytest.approx(19.898 / 0.016)  # 5.7 MyISAM write, 50 clients
    assert row.grade.text == "stand-in: MariaDB 10.11.18 for MySQL 5.7 — direction only"


def test_handshake_cells_are_reported_apart_and_next_to_the_articles_plain_rows(
    tmp_path: Path,
) -> None:
    """SYNTHETIC records: the same cells with and without `handshake: skip` never pool
    their repeats; each is compared with the article's row (which has no handshake)."""
    run = tmp_path / "runs" / "synthetic-hs"
    (run / "records").mkdir(parents=True)
    (run / "plan.json").write_text('{"matrix": {"name": "study-000_charset_57_vs_80-local"}}')
    cells = [(hs, server) for hs in (None, "skip") for server in ("mariadb-10.11.18", "x")]
    for i, (hs, server) in enumerate(cells):
        sid = MYSQL if server == "x" else server
        rec = make_record(run_id="synthetic-hs", cell=i, server_id=sid, threads=4)
        rec["cell"].update(workload="oltp_read_only", collation="latin1_swedish_ci", handshake=hs)
        rec["result"]["qps"] = 1000.0 if hs is None else 1500.0 * (2 if server == "x" else 1)
        record.write(record.validate(rec), run / "records")
    st = study.load(S000, CONFIGS)
    table = _render(st, run)
    version = {r.label: r for r in table if r.comparison == "version"}
    plain = version["workload=oltp_read_only threads=4 collation=latin1_swedish_ci"]
    skip = version["workload=oltp_read_only threads=4 collation=latin1_swedish_ci handshake=skip"]
    assert (plain.ours, skip.ours) == (pytest.approx(1.0), pytest.approx(2.0))
    assert plain.n == skip.n == (1, 1)
    assert skip.article == plain.article == pytest.approx(4106.69 / 4578.18)


def test_a_study_scale_may_set_the_handshake_modifier(tmp_path: Path) -> None:
    d = tmp_path / "configs"
    (d / "studies" / "reference").mkdir(parents=True)
    src = yaml.safe_load((CONFIGS / "studies" / f"{S000}.yaml").read_text())
    src["scales"]["local"]["handshakes"] = ["skip"]
    (d / "studies" / f"{S000}.yaml").write_text(yaml.safe_dump(src))
    ref = CONFIGS / "studies" / "reference" / f"{S000}.csv"
    (d / "studies" / "reference" / ref.name).write_text(ref.read_text())
    st = study.load(S000, d)
    assert st.matrix("local").handshakes == ("skip",)


def test_a_study_may_be_named_by_its_number() -> None:
    assert study.load("000", CONFIGS).name == S000
    assert study.load("001_mysql", CONFIGS).name == S001
    with pytest.raises(ConfigError, match="ambiguous: 000_charset_57_vs_80, 001_mysqlslap"):
        study.load("00", CONFIGS)
    with pytest.raises(ConfigError, match="unknown study '9'"):
        study.load("9", CONFIGS)


@pytest.mark.parametrize("repeats", [4, 2])
def test_a_ratio_is_marked_outside_the_noise_when_its_interval_shows_it_at_any_repeats(
    tmp_path: Path, repeats: int
) -> None:
    """SYNTHETIC: latin1 clearly faster than both utf8mb4 collations on MySQL 9.7.4 (for
    MySQL 8.0.15: graded), general_ci and unicode_ci overlapping. With 4 repeats a side the
    first is marked `*` and graded (2x against the article's 1.22x: magnitude differs);
    with 2 as well: a Welch t on the logs shows a 2x change of 0.5% noise at 2 values a
    side (a rank test, the unpaired test before, could not go below p = 0.333 there)."""
    cells = []
    for i in range(repeats):
        cells += [
            (MYSQL, "latin1_swedish_ci", 4, 2000.0 + 10 * i),
            (MYSQL, "utf8mb4_unicode_ci", 4, 1000.0 + 10 * i),
            (MYSQL, "utf8mb4_general_ci", 4, 1000.0 + 25 * ((i + 1) % 2) + 5 * i),
        ]
    run = _synthetic_run(tmp_path, cells)
    lines: list[str] = []
    table = _render(study.load(S000, CONFIGS), run, lines.append)
    text = "\n".join(lines)
    uni = next(r for r in table if r.comparison.startswith("charset new") and "unicode" in r.label)
    assert uni.ours == pytest.approx(2.0, rel=0.02)
    assert uni.article == pytest.approx(4106.69 / 3363.7)  # 8.0.15 at 4 threads
    finding = "finding (new, MySQL 9.7.4 for MySQL 8.0.15): latin1_swedish_ci faster than"
    assert uni.sure and uni.interval is not None and uni.interval.ci_low > 1
    assert uni.grade.outcome == grading.MAGNITUDE_DIFFERS
    # the direction-only finding: both rows outside the noise, on latin1's side
    assert f"{finding} the utf8mb4 collation — 2 rows (2 agrees): agrees" in text
    assert "general_ci/unicode_ci" in text and "): not shown (within the noise)" in text
    assert "NOTE:" not in text


def test_four_system_report_rows_and_claims_from_synthetic_records(tmp_path: Path) -> None:
    """SYNTHETIC records for study 002 local: 8.0's player (MySQL 9.7.4) 1.3x 5.7's (MariaDB
    10.2.11) on OLTP_RO utf8mb4, 5.6's (MariaDB 10.1.23) 0.8x on point selects; every role
    is compared with the first (5.7). Those claims are about MySQL and 5.7's player is
    MariaDB: shown for their direction only, not graded. MariaDB 10.3.5's player (11.4.5,
    the same product) has latin1 1.5x utf8mb4 on OLTP_RO: that claim is graded from it.
    `utf8mb4` is each server's default collation (MySQL 9.7.4: utf8mb4_0900_ai_ci, MariaDB:
    utf8mb4_general_ci): the version rows pair them, as the article did."""
    name = "002_utf8mb4_80_57_56_mariadb103"
    run = tmp_path / "runs" / "synthetic-002"
    (run / "records").mkdir(parents=True)
    (run / "plan.json").write_text(f'{{"matrix": {{"name": "study-{name}-local"}}}}')
    speed = {"mariadb-10.2.11": 1.0, MYSQL: 1.3, "mariadb-10.1.23": 0.8, "mariadb-11.4.5": 1.0}
    i = 0
    for server, factor in speed.items():
        for wl in ("oltp_read_only", "oltp_point_select"):
            for coll in ("utf8mb4_general_ci", "latin1_swedish_ci"):
                if coll.startswith("latin1") and server != "mariadb-11.4.5":
                    continue
                for rep in range(4):
                    rec = make_record(run_id="synthetic-002", cell=i, server_id=server, threads=4)
                    if server == MYSQL and coll.startswith("utf8mb4"):
                        coll = "utf8mb4_0900_ai_ci"  # MySQL 9.7.4's default
                    rec["cell"].update(workload=wl, collation=coll, charset=coll.split("_")[0])
                    latin1 = 1.5 if coll.startswith("latin1") else 1.0
                    rec["result"]["qps"] = 1000.0 * factor * latin1 * (1 + rep / 1000)
                    record.write(record.validate(rec), run / "records")
                    i += 1
    st = study.load(name, CONFIGS)
    lines: list[str] = []
    table = _render(st, [run], lines.append)
    comparisons = {r.comparison for r in table if r.ours is not None}
    assert comparisons == {
        "version mysql80 (8.0) / mysql57 (5.7)",
        "version mysql56 (5.6) / mysql57 (5.7)",
        "version mariadb103 (MariaDB 10.3.5) / mysql57 (5.7)",
        "charset mariadb103 (MariaDB 10.3.5)",
    }
    ro80 = next(r for r in table if "mysql80" in r.comparison and "oltp_read_only" in r.label)
    assert ro80.label == (
        "workload=oltp_read_only threads=4 collation=utf8mb4 "
        "(defaults: utf8mb4_0900_ai_ci / utf8mb4_general_ci)"
    )
    assert ro80.ours == pytest.approx(1.3) and ro80.sure
    assert ro80.grade.text == "stand-in: MariaDB 10.2.11 for MySQL 5.7 — direction only"
    claims = [line for line in lines if line.startswith("claim:")]
    assert len(claims) == 4
    assert claims[0].endswith(
        "up to 1.40; ours: 1.300–1.300 over 1 rows (1 stand-in (direction only)): "
        "stand-in: MariaDB 10.2.11 for MySQL 5.7 — direction only"
    )
    assert "ours: no data" in claims[1]  # no distinct-ranges records
    assert claims[2].endswith(
        "< 1; ours: 0.800–0.800 over 1 rows (1 stand-in (direction only)): stand-in: "
        "MariaDB 10.1.23 for MySQL 5.6, MariaDB 10.2.11 for MySQL 5.7 — direction only"
    )
    assert claims[3].endswith("> 1; ours: 1.500–1.500 over 1 rows (1 agrees): agrees")
    with pytest.raises(ConfigError, match="has 1 part"):
        study_runs.find_runs(st, "local", tmp_path / "runs", ["a", "b"])


REAL_DB = CONFIGS.parent / "data" / "results.duckdb"  # REAL local runs of 002-004, read only


@pytest.mark.parametrize(
    "name", ["002_utf8mb4_80_57_56_mariadb103", "004_sakila_57_80_84_ps_mariadb"]
)
def test_real_reports_show_other_products_stand_ins_for_their_direction_only(
    name: str, capsys
) -> None:
    """`perftrack study report` of data/results.duckdb (the studies' REAL local runs, all
    on MariaDB): every row, claim and finding with a side on MariaDB standing in for MySQL
    or Percona Server says "stand-in: MariaDB X for Y — direction only" and is not graded;
    rows on a same-product stand-in (MariaDB 11.4.5 for MariaDB 10.3.5 / 11.3) are graded by
    the one rule; no line grades a MySQL claim from MariaDB."""
    assert cli.main(["study", "report", name, "--from-db", "--db", str(REAL_DB)]) == 0
    out = capsys.readouterr().out
    st = study.load(name, CONFIGS)
    players = study.players(st, "local", CATALOG)
    with store.open_db(REAL_DB, write=False) as s:
        side, _ = study_report.collect(st, "local", study_runs.db_records(st, "local", s))
    table = study_report.rows(st, side, players)
    lines = out.splitlines()
    cross = {p.label for p in players.values() if p.cross_product}
    assert "MariaDB 10.2.11 for MySQL 5.7" in cross
    measured = [r for r in table if r.ours is not None]
    assert any(r.stand_ins for r in measured) and any(not r.stand_ins for r in measured)
    for r in measured:
        assert set(r.stand_ins) <= cross
        # two rows can share a label and a ratio (0.939 twice in 004): the interval tells
        span = f"[{r.interval.ci_low:.3f}, {r.interval.ci_high:.3f}]" if r.interval else ""
        line = next(
            ln
            for ln in lines
            if ln.startswith(f"  {r.label} ") and f"{r.ours:.3f}" in ln and span in ln
        )
        assert line.endswith(f"  {r.grade.text}")
        if r.stand_ins:
            assert not r.grade.graded and r.grade.text.startswith("stand-in: MariaDB ")
            assert r.grade.text.endswith(" — direction only")
        elif r.article is not None:  # the same product: graded by the one rule
            assert r.grade.outcome in grading.OUTCOMES
    # a claim is graded from its rows of the claim's product only: the stand-in rows
    # change nothing, and a claim with nothing else says so instead of a grade
    checks = study_report.claim_checks(st, table)
    assert [c.line() for c in checks] == [ln for ln in lines if ln.startswith("claim:")]
    stand_in_claims = 0
    for c in checks:
        same = study_report.ClaimCheck(c.claim, [r for r in c.rows if not r.stand_ins])
        if any(r.ours is not None for r in same.rows):
            assert c.grade == same.grade and c.grade.graded
        elif any(r.ours is not None for r in c.rows):
            assert c.grade.text.startswith("stand-in: MariaDB ") and not c.grade.graded
            assert c.line().endswith(" — direction only")
            stand_in_claims += 1
    assert stand_in_claims > 0
    assert f"within {grading.MAGNITUDE_FACTOR:g}x of each other" in out  # the rule, stated


def test_every_local_scale_plans_and_a_recent_mysql_is_real_mysql(tmp_path: Path, capsys) -> None:
    """`study run --scale local --dry-run` plans every study here (nothing runs): who plays
    each role, the cells and an estimate. Where an article asks for a recent MySQL (8.0,
    8.4) the local scale plays it with real Oracle MySQL 9.7.4: the same product, graded;
    its `skip` handshake cells are skipped with the reason (the option left in 8.3)."""
    recent = {S000: "new", "002_utf8mb4_80_57_56_mariadb103": "mysql80"}
    recent["004_sakila_57_80_84_ps_mariadb"] = "mysql84"
    for name in ALL:
        argv = ["study", "run", name, "--scale", "local", "--dry-run", "--out", str(tmp_path)]
        assert cli.main([*argv, "--db", str(tmp_path / "no.duckdb")]) == 0
        out = capsys.readouterr().out
        assert "nothing was run" in out and not any(tmp_path.iterdir())
        st = study.load(name, CONFIGS)
        assert all(f"{r}: article " in out for r in st.role_names)
        players = study.players(st, "local", CATALOG)
        if name in recent:
            p = players[recent[name]]
            assert (p.server, p.server_name, p.product) == (MYSQL, "MySQL 9.7.4", "mysql")
            assert p.stand_in and not p.cross_product
            assert f"-> here {MYSQL} (MySQL 9.7.4 for MySQL " in out
        if name in (S000, "002_utf8mb4_80_57_56_mariadb103"):
            assert f"x {MYSQL}: skip-character-set-client-handshake is not available" in out
    full = study.players(study.load(S000, CONFIGS), "full", CATALOG)
    assert all(p.article_server and not p.stand_in for p in full.values())
