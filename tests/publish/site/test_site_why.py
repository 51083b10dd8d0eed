"""The run and Regressions pages' why (publish/site/why.py) on the committed data: a
settings diff ranked by explain's own rule (analysis/candidates.py), and its command."""

from __future__ import annotations

from pathlib import Path

from perftrack.analysis import candidates
from perftrack.publish.site import why
from perftrack.servers import rules
from perftrack.store import store

DB = Path(__file__).resolve().parents[3] / "data" / "results.duckdb"
RUN = "20261124T220748Z-851fb4"  # measured mariadb-10.1.23 and 10.2.11 (the open alert)


def test_the_real_regression_diff_is_ranked_by_explains_rule() -> None:
    with store.open_db(DB, write=False) as st:
        sets = {
            s["server"]: s["varset"]
            for s in st.run_varsets([RUN])
            if s["profile"] == "article002" and s["collation"] == "utf8mb4_general_ci"
        }
        diff = st.variables_diff(sets["mariadb-10.1.23"], sets["mariadb-10.2.11"])
    ranks = why.ranked(diff, "mariadb", "10.2.11")
    assert set(ranks) == {name for name, *_ in diff}
    tried = sorted((r["rank"], n) for n, r in ranks.items() if r["rank"] is not None)
    # the ranks are explain's order of its candidates, and only they are ranked
    a = {n: va for n, va, _, c in diff if c != "added"}
    b = {n: vb for n, _, vb, c in diff if c != "removed"}
    cands, _ = candidates.select(a, b, rules.rules_for("mariadb", "10.2.11"))
    assert [n for _, n in tried] == [c.name for c in cands]
    assert len(tried) + sum(1 for r in ranks.values() if r["rank"] is None) == len(diff)
    assert 0 < len(cands) < len(diff)  # some settings folded, some to try
    # a version string is never tried, and says why
    assert ranks["version"] == {"rank": None, "left": "a version string"}
    assert ranks["binlog_format"]["rank"] is not None and ranks["binlog_format"]["left"] is None


def test_the_command_is_one_shell_line_of_explains_options() -> None:
    cmd = why.command(
        "mariadb-10.1.23",
        "mariadb-10.2.11",
        workload="oltp_point_select",
        threads=4,
        collation="utf8mb4_general_ci",
        profile="article002",
    )
    assert cmd == (
        "perftrack explain mariadb-10.1.23 mariadb-10.2.11 --workload oltp_point_select "
        "--threads 4 --charset utf8mb4_general_ci --profile article002"
    )
