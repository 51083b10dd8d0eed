"""The SQL page's examples (site/assets/sql.js) on the committed data, through DuckDB in
Python on the tables the site ships: no example pools over an axis that differs between
its rows. Each row of an example's result is compared with the per-series rows computed
here (every axis a key): a ratio or a median must be that of exactly one series, so its
sign is never one that no series has (issue 37: tpcb 10.2.11/10.1.23 pooled over InnoDB
and MyISAM read 1.21, while InnoDB alone is 0.940 and MyISAM 0.892)."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from perftrack.store.files import nightfiles

REPO = Path(__file__).resolve().parents[3]
DB = REPO / "data" / "results.duckdb"
SQL_JS = REPO / "site" / "assets" / "sql.js"
# A series: what the history page and detect keep apart (store/queries/results.py SITE_SERIES)
SERIES = (
    "runner_class", "hw_key", "profile", "tables", "table_size", "duration_s", "connection",
    "engine", "isolation", "durability", "handshake", "dataset_size", "phase", "workload",
    "threads", "collation",
)  # fmt: skip
# The pair of the issue, and the cell where pooling flipped the sign.
ISSUE = {"base": "mariadb-10.1.23", "new": "mariadb-10.2.11", "workload": "tpcb",
         "threads": "10", "collation": "latin1_swedish_ci"}  # fmt: skip


def examples() -> list[tuple[str, str]]:
    """(title, SQL template) of every example, read from the page's own script."""
    text = SQL_JS.read_text()
    found = re.findall(r'title: "([^"]+)",\s*sql: `((?:\\.|[^`\\])*)`', text)
    assert len(found) >= 5
    return [(title, sql.replace("\\`", "`")) for title, sql in found]


def per_series(con: Any, server: str) -> dict[tuple[Any, ...], dict[str, list[float]]]:
    """{series key + run_id: {server: tps values}} of one server, computed here."""
    cols = ", ".join(f"ru.{c}" if c in ("runner_class", "hw_key") else f'r."{c}"' for c in SERIES)
    rows = con.execute(
        f"""SELECT {cols}, r.run_id, r.tps FROM results r JOIN servers s USING (server_key)
            JOIN runs ru USING (run_id) WHERE r.status = 'ok' AND s.server_id = ?""",
        [server],
    ).fetchall()
    out: dict[tuple[Any, ...], list[float]] = defaultdict(list)
    for *key, run_id, tps in rows:
        if tps is not None:
            out[(*key, run_id)].append(tps)
    return out


def matching(refs: list[dict[str, Any]], row: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in refs if all(r[k] == row[k] for k in r if k in row and k != "value")]


@pytest.fixture(scope="module")
def con() -> Any:
    c = nightfiles.connect(DB)
    yield c
    c.close()


def fill(sql: str, values: dict[str, str]) -> str:
    for k, v in values.items():
        sql = sql.replace("{" + k + "}", v)
    return sql


def test_no_example_pools_over_an_axis_on_the_committed_data(con: Any) -> None:
    base = per_series(con, ISSUE["base"])
    new = per_series(con, ISSUE["new"])

    def pooled(values: dict[tuple[Any, ...], list[float]]) -> dict[tuple[Any, ...], float]:
        by_series: dict[tuple[Any, ...], list[float]] = defaultdict(list)
        for (*key, _run), v in values.items():
            by_series[tuple(key)] += v
        return {k: statistics.median(v) for k, v in by_series.items()}

    b, n = pooled(base), pooled(new)
    ratios = [dict(zip(SERIES, k, strict=True), value=n[k] / b[k]) for k in b.keys() & n.keys()]
    nights = [
        dict(zip((*SERIES, "run_id"), k, strict=True), value=statistics.median(v))
        for k, v in new.items()
    ]
    # the issue's cell has two engines, one ratio each, both below 1
    cell = [r for r in ratios if r["workload"] == "tpcb" and r["threads"] == 10]
    assert sorted(r["engine"] for r in cell) == ["InnoDB", "MyISAM"]
    assert all(r["value"] < 1 for r in cell), cell
    checked = 0
    for title, template in examples():
        cur = con.execute(fill(template, ISSUE))
        names = [d[0] for d in cur.description]
        for values in cur.fetchall():
            row = dict(zip(names, values, strict=True))
            if "ratio" in row and "base_tps" in row:  # medians; detect's verdicts: its own
                refs = matching(ratios, row)
                assert len(refs) == 1, (title, row, refs)
                assert row["ratio"] == pytest.approx(refs[0]["value"], abs=6e-5), (title, row)
                assert row["new_tps"] / row["base_tps"] == pytest.approx(refs[0]["value"])
                assert (row["ratio"] < 1) == (refs[0]["value"] < 1)
                checked += 1
            elif "median_tps" in row:
                refs = matching(nights, row)
                assert len(refs) == 1, (title, row, refs)
                assert row["median_tps"] == pytest.approx(refs[0]["value"], abs=0.06), title
                checked += 1
    assert checked >= len(cell) + 1  # the ratio rows of the issue's pair and some nights
