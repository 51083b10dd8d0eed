"""Configuration axes (configs/axes.yaml): planning, translation by the rules table,
record/DB compatibility, and real servers taking (or silently refusing) the values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures.records.synthetic import make_record
from perftrack.core import record
from perftrack.core.cell import IDENTITY_FIELDS, cell_id
from perftrack.core.errors import ConfigError
from perftrack.planning import axes, matrix
from perftrack.planning import cells as plan
from perftrack.run import runner
from perftrack.servers import catalog, options, rules
from perftrack.store import store

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
INFO = {
    "mariadb-10.11.18": ("mariadb", "10.11.18"),
    "mysql-8.0.36": ("mysql", "8.0.36"),
}


def m(**kw) -> matrix.Matrix:
    base = {
        "name": "ax",
        "servers": ["mariadb-10.11.18"],
        "workloads": ["oltp_point_select"],
        "charsets": ["latin1"],
        "threads": [1],
        "repeats": 1,
    }
    return matrix.from_dict({**base, **kw})


def test_axes_file_documents_every_value_set() -> None:
    a = axes.read_axes(CONFIGS)
    assert set(a.engines) >= {"InnoDB", "MyISAM"}
    assert a.isolations == {"RR": "REPEATABLE-READ", "RC": "READ-COMMITTED"}
    assert {"strict", "relaxed"} <= set(a.durabilities)
    assert all(d.description for d in a.durabilities.values())


def test_cells_without_axes_keep_their_ids() -> None:
    cells = plan.expand(m(), INFO.__getitem__)
    (c,) = cells
    assert (c.engine, c.isolation, c.durability) == (None, None, None)
    old_identity = {k: getattr(c, k) for k in IDENTITY_FIELDS}
    assert c.cell_id == cell_id(old_identity)


def test_axes_multiply_cells_into_separate_groups_with_distinct_ids() -> None:
    mx = m(engines=["InnoDB", "MyISAM"], isolations=["RR", "RC"], profile=["default", "tuned"])
    cells = plan.expand(mx, INFO.__getitem__)
    assert len(cells) == 8
    assert len({c.cell_id for c in cells}) == 8
    assert len(plan.groups(cells)) == 8
    again = matrix.from_dict(json.loads(json.dumps(mx.to_dict())))  # plan.json round trip
    assert again == mx
    assert {c.profile for c in cells} == {"default", "tuned"}
    assert {(c.engine, c.isolation) for c in cells} == {
        (e, i) for e in ("InnoDB", "MyISAM") for i in ("RR", "RC")
    }


def test_engine_a_server_lacks_is_a_skipped_cell_with_the_reason() -> None:
    cells = plan.expand(
        m(servers=["mariadb-10.11.18", "mysql-8.0.36"], engines=["Aria"]), INFO.__getitem__
    )
    skip = {c.server_id: c.skip for c in cells}
    assert skip["mariadb-10.11.18"] is None
    assert "storage engine Aria is not available on mysql" in str(skip["mysql-8.0.36"])


def test_unknown_axis_value_is_a_one_line_error() -> None:
    with pytest.raises(ConfigError, match=r"unknown isolation 'SNAPSHOT'; known: RR, RC"):
        m(isolations=["SNAPSHOT"])


def test_options_use_the_release_names_from_the_rules_table() -> None:
    a = axes.read_axes(CONFIGS)
    cell = plan.expand(m(isolations=["RC"], durabilities=["relaxed"]), INFO.__getitem__)[0]
    maria = axes.server_options(cell, rules.rules_for("mariadb", "10.11.18"), a)
    mysql = axes.server_options(cell, rules.rules_for("mysql", "8.0.36"), a)
    assert maria["transaction-isolation"] == "READ-COMMITTED"
    assert "skip-log-bin" in maria and "disable-log-bin" in mysql
    assert maria["innodb_flush_log_at_trx_commit"] == "2"
    strict = plan.expand(m(durabilities=["strict"]), INFO.__getitem__)[0]
    opts = axes.server_options(strict, rules.rules_for("mariadb", "10.11.18"), a)
    assert opts["log-bin"] and opts["sync_binlog"] == "1"


def test_mismatch_names_the_setting_and_the_wanted_value() -> None:
    a = axes.read_axes(CONFIGS)
    cell = plan.expand(m(engines=["MyISAM"], isolations=["RC"]), INFO.__getitem__)[0]
    eff = {"table_engines": "InnoDB", "transaction_isolation": "READ-COMMITTED"}
    assert axes.mismatches(cell, eff, a) == ["table_engines=InnoDB (want MyISAM)"]


def test_old_records_stay_valid_and_new_fields_reach_the_db(tmp_path: Path) -> None:
    """Synthetic records (fixtures): one without the axis fields, one with them."""
    old = make_record(cell=0)
    assert "engine" not in old["cell"]
    record.validate(old)
    new = make_record(cell=1)
    new["cell"].update(engine="MyISAM", isolation="RC", durability=None)
    record.validate(new)
    db = tmp_path / "r.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest([old, new])
        rows = st.con.execute(
            "SELECT cell_id, engine, isolation, durability FROM results ORDER BY cell_id"
        ).fetchall()
    by_cell = {r[0]: r[1:] for r in rows}
    assert by_cell[old["cell_id"]] == (None, None, None)
    assert by_cell[new["cell_id"]] == ("MyISAM", "RC", None)


def _run(tmp_path, config_dir, workroot, mx):
    cat = catalog.read_catalog(config_dir / "versions.yaml")
    rd = runner.create(mx, cat, tmp_path / "runs", "test")
    s = runner.Runner(
        rd=rd, catalog=cat, config_dir=config_dir, emit=lambda _: None, workroot=workroot
    ).run()
    return s, [x for recs in rd.attempts().values() for x in recs]


@pytest.mark.integration
def test_axes_are_set_verified_and_recorded_on_mariadb(tmp_path, config_dir, workroot) -> None:
    mx = m(
        workloads=["oltp_point_select", "oltp_update_index"],
        engines=["InnoDB", "MyISAM"],
        isolations=["RC"],
        durabilities=["relaxed", "strict"],
        profile="tuned",
        duration_s=1,
        warmup_s=0,
        tables=1,
        table_size=200,
    )
    s, recs = _run(tmp_path, config_dir, workroot, mx)
    assert [x["reason"] for x in recs if x["status"] != "ok"] == []
    assert s.ok == 8
    for x in recs:
        eff, cell = x["effective"], x["cell"]
        assert eff["table_engines"] == cell["engine"]
        assert eff["transaction_isolation"] == "READ-COMMITTED"
        assert eff["log_bin"] == ("ON" if cell["durability"] == "strict" else "OFF")
        assert eff["innodb_flush_log_at_trx_commit"] == (
            "1" if cell["durability"] == "strict" else "2"
        )
        assert x["variables"]["innodb_buffer_pool_size"] == str(4 * 1024**3), "tuned profile"
        assert cell["profile"] == "tuned"


@pytest.mark.integration
def test_engine_silently_substituted_fails_the_cell_loudly(tmp_path, config_dir, workroot):
    """A profile that lets the server swap MyISAM for InnoDB without an error: the
    read-back catches it."""
    (config_dir / "profiles" / "swap.cnf").write_text(
        "[mysqld]\nenforce_storage_engine=InnoDB\nsql_mode=\n"
    )
    mx = m(engines=["MyISAM"], profile="swap", duration_s=1, warmup_s=0, tables=1, table_size=100)
    s, recs = _run(tmp_path, config_dir, workroot, mx)
    assert s.ok == 0 and s.failed == 1
    reasons = {x["reason"] for x in recs}
    assert any("table_engines=InnoDB (want MyISAM)" in r for r in reasons), reasons
    assert json.dumps(recs)  # records written and readable


# --- handshake modifier and dataset size (issue 5) -----------------------------------------


def test_handshake_and_dataset_size_value_sets_are_documented() -> None:
    a = axes.read_axes(CONFIGS)
    assert a.handshakes == {"skip": True, "client": False}
    assert a.dataset_sizes["small"] < 1 < a.dataset_sizes["large"]
    assert axes.dataset_class(5 << 20, 8 << 20, a) == "small"
    assert axes.dataset_class(9 << 20, 8 << 20, a) == "large"


def test_handshake_skip_sets_the_option_and_checks_the_connection_charset() -> None:
    a = axes.read_axes(CONFIGS)
    cell = plan.expand(m(handshakes=["skip"]), INFO.__getitem__)[0]
    opts = axes.server_options(cell, rules.rules_for("mariadb", "10.11.18"), a)
    assert opts == {"skip-character-set-client-handshake": None}
    client = plan.expand(m(handshakes=["client"]), INFO.__getitem__)[0]
    assert axes.server_options(client, rules.rules_for("mariadb", "10.11.18"), a) == {}
    aligned = dict.fromkeys(axes.CONNECTION_VARS[:3], "latin1")
    aligned["collation_connection"] = "latin1_swedish_ci"
    assert axes.mismatches(cell, aligned, a) == []
    fell_back = {**aligned, "character_set_client": "utf8mb4"}
    assert axes.mismatches(cell, fell_back, a) == ["character_set_client=utf8mb4 (want latin1)"]
    assert axes.mismatches(client, fell_back, a) == [], "client: recorded, not required"


def test_a_profile_cannot_set_the_removed_handshake_option_on_mysql_8_4() -> None:
    with pytest.raises(ConfigError, match=r"removed in MySQL 8\.3\.0"):
        options.translate_options(
            rules.rules_for("mysql", "8.4.3"), {"skip-character-set-client-handshake": None}
        )
    assert rules.rules_for("mysql", "8.0.36").client_handshake_option
    assert not rules.rules_for("mysql", "8.3.0").client_handshake_option


def test_dataset_size_mismatch_and_buffer_pool_sources() -> None:
    a = axes.read_axes(CONFIGS)
    rule = rules.rules_for("mariadb", "10.11.18")
    assert axes.buffer_pool_bytes(rule, {}) == 128 << 20
    assert axes.buffer_pool_bytes(rule, {"innodb-buffer-pool-size": "6M"}) == 6 << 20
    cell = plan.expand(m(dataset_sizes=["large"]), INFO.__getitem__)[0]
    assert axes.mismatches(cell, {"dataset_size": "small"}, a) == [
        "dataset_size=small (want large)"
    ]


def test_new_cell_fields_validate_and_their_read_back_reaches_the_db(tmp_path: Path) -> None:
    """Synthetic record (fixtures): the new axes are cell fields; the DB keeps them as
    columns (schema v5) and their read-back values in the `effective` JSON (docs/schema.md)."""
    new = make_record(cell=2)
    new["cell"].update(handshake="skip", dataset_size="large", phase="post")
    new["effective"].update(
        character_set_client="latin1", dataset_size="large", dataset_bytes="26279936", phase="post"
    )
    record.validate(new)
    bad = json.loads(json.dumps(new))
    bad["cell"]["phase"] = "during"
    with pytest.raises(record.RecordError, match="cell/phase"):
        record.validate(bad)
    with store.open_db(tmp_path / "r.duckdb", write=True) as st:
        st.ingest([new])
        row = st.con.execute(
            "SELECT effective->>'phase', effective->>'dataset_size', "
            "effective->>'character_set_client', phase, dataset_size, handshake FROM results"
        ).fetchone()
    assert row == ("post", "large", "latin1", "post", "large", "skip")


@pytest.mark.integration
def test_handshake_skip_aligns_the_benchmark_connection_on_mariadb(tmp_path, config_dir, workroot):
    """sysbench's client library asks for utf8mb4; on a latin1 server only `skip` makes the
    benchmark connection latin1. Both are read back from sysbench's own connection."""
    mx = m(handshakes=["client", "skip"], duration_s=1, warmup_s=0, tables=1, table_size=100)
    s, recs = _run(tmp_path, config_dir, workroot, mx)
    assert (s.ok, s.failed) == (2, 0), [x["reason"] for x in recs]
    by = {x["cell"]["handshake"]: x["effective"] for x in recs}
    assert by["skip"]["character_set_client"] == "latin1"
    assert by["skip"]["collation_connection"] == "latin1_swedish_ci"
    assert by["client"]["character_set_client"] == "utf8mb4", "libmariadb's default"


@pytest.mark.integration
def test_handshake_option_silently_ignored_fails_the_cell_loudly(
    tmp_path, config_dir, workroot, monkeypatch
):
    """A server that ignores the option (here: a `loose-` name it does not know, as a
    release that dropped the option would) keeps the client's charset: the cell fails."""
    monkeypatch.setattr(axes, "HANDSHAKE_OPTION", "loose-skip-character-set-client-handshake-x")
    mx = m(handshakes=["skip"], duration_s=1, warmup_s=0, tables=1, table_size=100)
    s, recs = _run(tmp_path, config_dir, workroot, mx)
    assert (s.ok, s.failed) == (0, 1)
    assert all("character_set_client=utf8mb4 (want latin1)" in x["reason"] for x in recs)
