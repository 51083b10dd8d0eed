"""detect's noise, vectorised: the same numbers as stats.cv sample by sample; and the
store's variable-set diffs, read once per pair. SYNTHETIC test-fixture records and
random samples."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from fixtures.records.synthetic import BASE_VARIABLES, make_record
from perftrack.analysis import compare, detect, stats
from perftrack.store import store


def test_cvs_is_cv_of_each_sample_to_the_last_bit() -> None:
    """Samples of every size from 0 to 39 (pairwise summation changes at 8 values), with
    zero means and negative values among them: the same floats (or None) as stats.cv."""
    rng = np.random.default_rng(19)
    samples: list[list[float]] = []
    for k in range(3000):
        n = k % 40
        values = [round(float(x), 2) for x in rng.lognormal(7, 0.2, n)]
        if k % 7 == 0:
            values = [0.0] * n
        elif k % 5 == 0 and n:
            values = [-v for v in values[:-1]] + [sum(values[:-1])]  # a mean of about 0
        samples.append(values)
    got = stats.cvs(samples)
    want = [stats.cv(v) for v in samples]
    assert sum(c is None for c in want) > 100  # the None cases are exercised
    assert [repr(c) for c in got] == [repr(c) for c in want]


def test_noise_pools_are_each_samples_cv_and_aa_ratios_pooled_by_key() -> None:
    """noise_pools against its definition, sample by sample: every CV to the last bit, the
    sizes, and the pooled A/A log-ratios (non-positive values make no pair; a sample
    without a CV adds none) and their spread, the same in any order."""
    rng = np.random.default_rng(23)
    keys: list[tuple[str, str]] = []
    samples: list[list[float]] = []
    for k in range(4000):
        n = 2 + k % 9
        values = [round(float(x), 2) for x in rng.lognormal(5, 0.3, n)]
        if k % 11 == 0:
            values[k % n] = 0.0  # a pair with a zero: no log-ratio
        if k % 13 == 0:
            values = [0.0] * n  # zero mean: no CV, nothing pooled
        keys.append((f"class-{k % 3}", f"wl-{k % 5}"))
        samples.append(values)
    keys.append(("class-none", "wl"))
    samples.append([0.0, 0.0, 0.0])  # its only sample has no CV: no pool
    pools = stats.noise_pools(keys, samples)
    want: dict[tuple[str, str], tuple[list[str], list[int], list[float]]] = {}
    for key, values in zip(keys, samples, strict=True):
        c = stats.cv(values)
        if c is None:
            continue
        cvs, sizes, ratios = want.setdefault(key, ([], [], []))
        cvs.append(repr(c))
        sizes.append(len(values))
        ratios += stats.aa_log_ratios(values)
    assert set(pools) == set(want) and ("class-none", "wl") not in pools
    for key, (cvs, sizes, ratios) in want.items():
        pool = pools[key]
        assert sorted(repr(c) for c in pool.cvs) == sorted(cvs)
        assert sorted(pool.sizes) == sorted(sizes)
        got = pool.log_ratios()
        assert len(got) == len(ratios) < sum(s // 2 for s in sizes)  # zeros made no pair
        assert np.allclose(np.sort(got), np.sort(ratios), rtol=1e-14, atol=1e-300)
        spread = stats.aa_spread(ratios)
        assert spread is not None
        assert stats.aa_spread(ratios[::-1]) == spread  # exact in any order (fsum)
        assert stats.aa_spread(got) == pytest.approx(spread, rel=1e-14)  # numpy's log


def test_noise_is_stats_cv_of_every_sample_to_the_last_bit(tmp_path: Path) -> None:
    db = tmp_path / "n.duckdb"
    rng = np.random.default_rng(5)
    recs = []
    for run, repeats in enumerate((3, 4, 5, 5, 7)):  # samples of several sizes
        for rep in range(repeats):
            for server in range(2):
                rec = make_record(
                    run_id=f"synthetic-noise-{run}",
                    cell=rep * 2 + server,
                    server_id=f"synthetic-mysql-8.0.3{server}",
                    version=f"8.0.3{server}",
                    tps=round(float(rng.lognormal(7, 0.15)), 2),
                )
                rec["cell"]["repeat"] = rep + 1
                recs.append(rec)
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    with store.open_db(db, write=False) as st:
        got = detect.compute_noise(st)
        samples = st.noise_samples("tps", detect.NOISE_RECENT_RUNS)
    pooled: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for rc, hw, wl, values in samples:
        if len(values) >= detect.MIN_REPEATS_FOR_NOISE:
            pooled[(rc, hw, wl)].append(stats.cv(values))
    (row,) = got
    (cvs,) = pooled.values()
    assert row[4] == len(cvs) == 10
    assert row[6] == float(np.median(cvs))  # exactly, not approximately
    assert row[7] == float(np.percentile(cvs, detect.NOISE_P90))
    assert compare.METRICS["tps"][0] == "tps"


def test_a_variable_diff_is_read_once_and_callers_cannot_change_it(tmp_path: Path) -> None:
    db = tmp_path / "v.duckdb"
    changed = {**BASE_VARIABLES, "innodb_flush_log_at_trx_commit": "2"}
    with store.open_db(db, write=True) as st:
        st.ingest([make_record(cell=0), make_record(cell=1, variables=changed)])
    with store.open_db(db, write=False) as st:
        a, b = (
            h
            for (h,) in st.con.execute(
                "SELECT DISTINCT varset_hash FROM results ORDER BY 1"
            ).fetchall()
        )
        first = st.variables_diff(a, b)
        first.clear()  # a caller's list, not the cache
        calls = []
        real = st._variables_diff
        st._variables_diff = lambda x, y: calls.append((x, y)) or real(x, y)  # type: ignore[method-assign]
        again = st.variables_diff(a, b)
    assert calls == []  # from the cache
    assert [r[0] for r in again] == ["innodb_flush_log_at_trx_commit"]


def _sql_diff(st: store.Store, a: str, b: str) -> list[tuple[object, ...]]:
    """The variables diff as one SQL full outer join (what the store computed before)."""
    return st._tuples(
        """SELECT coalesce(x.name, y.name), x.value, y.value,
                  CASE WHEN x.name IS NULL THEN 'added' WHEN y.name IS NULL THEN 'removed'
                       ELSE 'changed' END
           FROM (SELECT name, value FROM server_variables WHERE varset_hash = ?) x
           FULL OUTER JOIN (SELECT name, value FROM server_variables WHERE varset_hash = ?) y
           USING (name)
           WHERE x.name IS NULL OR y.name IS NULL OR x.value IS DISTINCT FROM y.value
           ORDER BY 1""",
        [a, b],
    )


def test_a_variable_diff_is_the_full_join_of_the_two_sets_and_sees_sets_stored_later(
    tmp_path: Path,
) -> None:
    """Added, removed, changed and null values, by name, as the SQL full outer join of the
    two sets gives them; a set ingested after the sets were first read is read too."""
    db = tmp_path / "v.duckdb"
    a_vars = {**BASE_VARIABLES, "only_in_a": "1", "null_in_a": None, "same_null": None}
    b_vars = {**BASE_VARIABLES, "only_in_b": "x", "null_in_a": "on", "same_null": None}
    b_vars["innodb_flush_log_at_trx_commit"] = "2"
    c_vars = {**BASE_VARIABLES, "innodb_buffer_pool_size": "1"}
    hashes = "SELECT varset_hash FROM results ORDER BY cell_id"
    with store.open_db(db, write=True) as st:
        st.ingest([make_record(cell=0, variables=a_vars), make_record(cell=1, variables=b_vars)])
        ha, hb = (h for (h,) in st.con.execute(hashes).fetchall())
        got = st.variables_diff(ha, hb)
        assert got == _sql_diff(st, ha, hb)
        assert {r[0]: r[3] for r in got} == {
            "innodb_flush_log_at_trx_commit": "changed",
            "null_in_a": "changed",
            "only_in_a": "removed",
            "only_in_b": "added",
        }
        st.ingest([make_record(cell=2, variables=c_vars)])  # stored after the first read
        hc = st.con.execute(hashes).fetchall()[2][0]
        later = st.variables_diff(ha, hc)
        assert later == _sql_diff(st, ha, hc)
        assert "innodb_buffer_pool_size" in [r[0] for r in later]
