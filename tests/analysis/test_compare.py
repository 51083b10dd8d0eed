"""`compare` over the DB on SYNTHETIC records (test fixtures, not measurements): paired
statistics where two servers share rounds, unpaired where they do not."""

from __future__ import annotations

from pathlib import Path

from fixtures.records.synthetic import make_record
from perftrack.analysis import compare
from perftrack.store import store


def test_compare_pairs_values_of_shared_rounds_and_sees_through_drift(tmp_path: Path) -> None:
    """SYNTHETIC interleaved run: both servers slide 29k -> 23k over 8 rounds (drift seen on
    this VM); B is 5% slower in every round. compare pairs the rounds: regression, paired;
    the same values without shared rounds (two runs) are compared unpaired: inconclusive."""
    level = [29_000, 28_000, 27_000, 26_000, 25_000, 24_000, 23_500, 23_000]
    wob = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.99]

    def recs(run_a: str, run_b: str) -> list[dict]:
        out = []
        for i, (lv, w) in enumerate(zip(level, wob, strict=True)):
            for k, (run, sid, ver, f) in enumerate(
                [
                    (run_a, "synthetic-mysql-8.0.36", "8.0.36", 1.0),
                    (run_b, "synthetic-mysql-8.4.0", "8.4.0", 0.95 * wob[-1 - i]),
                ]
            ):
                rec = make_record(
                    run_id=run, cell=2 * i + k, server_id=sid, version=ver, tps=lv * w * f
                )
                rec["cell"]["repeat"] = i + 1
                out.append(rec)
        return out

    for runs, paired, verdict in (
        (("synthetic-pair", "synthetic-pair"), True, "regression"),
        (("synthetic-a", "synthetic-b"), False, "inconclusive"),
    ):
        db = tmp_path / f"{runs[1]}.duckdb"
        with store.open_db(db, write=True) as st:
            st.ingest(recs(*runs))
        with store.open_db(db, write=False) as st:
            (t,) = compare.tables(st)
        c = t.rows[1].vs_previous
        assert c is not None and c.paired is paired and c.verdict == verdict, c
        if paired:
            assert c.ci_low < 0.95 < c.ci_high < 0.97


def test_version_steps_are_each_release_against_its_predecessor_of_the_same_product() -> None:
    """The one definition of the pairs a series compares (verdicts, `compare`, sharding)."""
    servers = [("mysql", "8.4.9"), ("mariadb", "10.11.18"), ("mysql", "5.7.44")]
    servers += [("mysql", "8.0.40"), ("mariadb", "10.2.11"), ("percona", "8.4.2")]
    steps = compare.version_steps(servers, lambda s: s)
    assert steps == [
        (("mariadb", "10.2.11"), ("mariadb", "10.11.18")),  # 10.11 after 10.2: numeric order
        (("mysql", "5.7.44"), ("mysql", "8.0.40")),
        (("mysql", "8.0.40"), ("mysql", "8.4.9")),
    ]  # percona, alone, has no predecessor; no step crosses products
