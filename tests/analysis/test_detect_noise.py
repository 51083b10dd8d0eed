"""detect's noise, vectorised: the same numbers as stats.cv sample by sample; and the
store's variable-set diffs, read once per pair. SYNTHETIC test-fixture records and
random samples."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

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
