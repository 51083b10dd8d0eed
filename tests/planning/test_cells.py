import pytest

from perftrack.core.errors import ConfigError
from perftrack.planning import axes, matrix
from perftrack.planning import cells as plan

INFO = {"old": ("mariadb", "10.2.11"), "new": ("mariadb", "10.11.19"), "my8": ("mysql", "8.0.36")}


BASE = {
    "name": "t",
    "servers": ["old", "new"],
    "workloads": ["oltp_read_write", "oltp_point_select"],
    "charsets": ["latin1"],
    "threads": [1, 4],
    "repeats": 3,
}


def expand(**kw):
    return plan.expand(matrix.from_dict({**BASE, **kw}), INFO.__getitem__)


def test_every_combination_once_with_stable_ids():
    cells = expand()
    assert len(cells) == 2 * 2 * 2 * 3
    assert len({c.cell_id for c in cells}) == len(cells)
    assert [c.cell_id for c in cells] == [c.cell_id for c in expand()]


def test_versions_interleave_and_rotate_per_round():
    cells = expand()
    order = [g[0].server_id for g in plan.groups(cells)]
    assert order == ["old", "new", "new", "old", "old", "new"]


def test_reads_run_before_writes_within_a_group():
    for g in plan.groups(expand()):
        assert [c.workload for c in g] == ["oltp_point_select"] * 2 + ["oltp_read_write"] * 2


def test_unsupported_collation_is_skipped_with_reason_not_dropped():
    cells = expand(servers=["new", "my8"], charsets=["utf8mb4_0900_ai_ci"], repeats=1)
    skipped = [c for c in cells if c.skip]
    assert {c.server_id for c in skipped} == {"new"}
    assert "utf8mb4_0900_ai_ci" in skipped[0].skip
    assert all(c.skip is None for c in cells if c.server_id == "my8")


def test_charset_axis_resolves_to_each_release_default_collation():
    cells = expand(servers=["new", "my8"], charsets=["utf8mb4"], repeats=1)
    by = {c.server_id: c.collation for c in cells}
    assert by == {"new": "utf8mb4_general_ci", "my8": "utf8mb4_0900_ai_ci"}


# --- issue 5: handshake modifier, dataset size, pre/post passes ----------------------------

INFO.update({"my84": ("mysql", "8.4.3"), "my83": ("mysql", "8.3.0")})


def test_handshake_is_identity_only_when_set_and_skipped_where_removed():
    plain = expand(servers=["new", "my8"], repeats=1)
    skip = expand(servers=["new", "my8", "my83", "my84"], repeats=1, handshakes=["skip"])
    assert all(c.handshake is None for c in plain)
    ids_plain = {c.cell_id for c in plain}
    assert ids_plain.isdisjoint({c.cell_id for c in skip})
    by = {c.server_id: c.skip for c in skip}
    assert by["new"] is None and by["my8"] is None, "MariaDB and MySQL 8.0 take the option"
    assert "skip-character-set-client-handshake" in by["my84"]
    assert "removed in MySQL 8.3.0" in by["my83"]
    both = expand(servers=["new"], repeats=1, handshakes=["client", "skip"])
    assert len(plan.groups(both)) == 2, "one server start per handshake value"


def test_prepost_wraps_the_writes_in_read_only_passes_with_distinct_ids():
    cells = expand(prepost=True, repeats=1)
    for g in plan.groups(cells):
        assert [(c.workload, c.phase) for c in g] == [
            ("oltp_point_select", None),
            ("oltp_point_select", None),
            ("oltp_read_only", "pre"),
            ("oltp_read_only", "pre"),
            ("oltp_read_write", None),
            ("oltp_read_write", None),
            ("oltp_read_only", "post"),
            ("oltp_read_only", "post"),
        ]
    assert len({c.cell_id for c in cells}) == len(cells)
    without = {c.cell_id for c in expand(repeats=1)}
    assert without <= {c.cell_id for c in cells}, "cells without a phase keep their ids"


def test_prepost_needs_a_workload_that_writes_the_oltp_tables():
    with pytest.raises(ConfigError, match=r"prepost.*oltp_read_write") as exc:
        expand(workloads=["oltp_point_select"], prepost=True)
    assert "\n" not in str(exc.value)
    with pytest.raises(ConfigError, match=r"prepost.*oltp_read_write"):
        expand(workloads=["tpcb"], prepost=True)
    with pytest.raises(ConfigError, match="'prepost' must be true or false"):
        expand(prepost="yes")


def test_dataset_sizes_size_table_size_to_the_release_default_buffer_pool():
    cells = expand(servers=["new"], repeats=1, tables=2, dataset_sizes=["small", "large"])
    rows = {c.dataset_size: c.table_size for c in cells}
    pool = 128 << 20  # every tracked release's default (rules.py buffer_pool_default)
    assert rows["small"] == round(0.5 * pool / (2 * axes.ROW_BYTES["oltp"]))
    assert rows["large"] == round(3.0 * pool / (2 * axes.ROW_BYTES["oltp"]))
    assert len(plan.groups(cells)) == 2
    assert {c.dataset_size for c in expand(repeats=1)} == {None}
    mx = matrix.from_dict({**BASE, "dataset_sizes": ["large"], "prepost": True})
    assert matrix.from_dict(mx.to_dict()) == mx, "plan.json's matrix loads back"


def test_dataset_sizes_follow_a_profile_that_declares_the_buffer_pool(config_dir, monkeypatch):
    (config_dir / "profiles" / "pool8m.cnf").write_text("[mysqld]\ninnodb_buffer_pool_size=8M\n")
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(config_dir))
    cells = expand(servers=["new"], repeats=1, tables=1, dataset_sizes=["large"], profile="pool8m")
    assert {c.table_size for c in cells} == {round(3.0 * (8 << 20) / axes.ROW_BYTES["oltp"])}


@pytest.mark.parametrize(
    ("extra", "complaint"),
    [
        ({"table_size": 100}, "remove 'table_size'"),
        ({"workloads": ["tpcc"]}, "cannot size the 'tpcc' dataset"),
        ({"workloads": ["tpcb", "oltp_point_select"]}, "sizes one dataset"),
        ({"dataset_sizes": ["huge"]}, "unknown dataset_size 'huge'"),
    ],
)
def test_bad_dataset_size_matrices_are_one_line_errors(extra, complaint):
    with pytest.raises(ConfigError, match=complaint) as exc:
        expand(**{"dataset_sizes": ["small"], **extra})
    assert "\n" not in str(exc.value)
