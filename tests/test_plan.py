from perftrack import matrix, plan

INFO = {"old": ("mariadb", "10.2.11"), "new": ("mariadb", "10.11.19"), "my8": ("mysql", "8.0.36")}


def expand(**kw):
    base = {
        "name": "t",
        "servers": ["old", "new"],
        "workloads": ["oltp_read_write", "oltp_point_select"],
        "charsets": ["latin1"],
        "threads": [1, 4],
        "repeats": 3,
    }
    return plan.expand(matrix.from_dict({**base, **kw}), INFO.__getitem__)


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
