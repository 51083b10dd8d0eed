"""The upgrade advisor (`perftrack advise`) on SYNTHETIC records (test fixtures, not
measurements): direct and chained estimates, changed settings, bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fixtures.records.synthetic import BASE_VARIABLES, make_record
from perftrack import cli
from perftrack.analysis import advise, compare, settings, stats
from perftrack.core.errors import ConfigError
from perftrack.store import store

REPEATS = 6
JITTER = (1.0, 1.01, 0.99, 1.005, 0.995, 1.0)


def _records(
    run_id: str, servers: list[tuple[str, str, float]], hw_key: str, variables: dict[str, dict]
) -> list[dict]:
    """One SYNTHETIC run: each server REPEATS times, interleaved, tps scaled per server."""
    recs = []
    n = 0
    for rep in range(REPEATS):
        for k, (sid, version, tps) in enumerate(servers):
            jitter = JITTER[(rep + k) % REPEATS]  # each arm its own noise: pairs vary
            rec = make_record(
                run_id=run_id,
                cell=n,
                server_id=sid,
                version=version,
                tps=tps * jitter,
                variables=variables.get(sid),
                hw_key=hw_key,
            )
            rec["cell"]["repeat"] = rep + 1
            rec["result"]["latency_pct_ms"] = 10.0 * 1000.0 / (tps * jitter)
            recs.append(rec)
            n += 1
    return recs


@pytest.fixture
def chain_db(tmp_path: Path) -> Path:
    """SYNTHETIC: 8.0.36 vs 8.4.0 measured together on one machine (8.4.0 20% slower), 8.4.0
    vs 9.1.0 on another (9.1.0 10% faster than 8.4.0); 8.0.36 and 9.1.0 never together."""
    v84 = {**BASE_VARIABLES, "innodb_flush_log_at_trx_commit": "2", "version": "8.4.0"}
    v91 = {**v84, "innodb_buffer_pool_size": "268435456", "version": "9.1.0"}
    recs = _records(
        "synthetic-advise-1",
        [("synthetic-mysql-8.0.36", "8.0.36", 1000.0), ("synthetic-mysql-8.4.0", "8.4.0", 800.0)],
        "aaaaaaaaaaaa",
        {"synthetic-mysql-8.4.0": v84},
    ) + _records(
        "synthetic-advise-2",
        [("synthetic-mysql-8.4.0", "8.4.0", 500.0), ("synthetic-mysql-9.1.0", "9.1.0", 550.0)],
        "bbbbbbbbbbbb",
        {"synthetic-mysql-8.4.0": v84, "synthetic-mysql-9.1.0": v91},
    )
    db = tmp_path / "r.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    return db


def _advice(db: Path, base: str) -> list[advise.SeriesAdvice]:
    from perftrack.analysis import detect

    with store.open_db(db, write=False) as st:
        ts = compare.tables(st)
        return advise.advise(ts, base, "tps", detect.variables_diff_of(st))


def test_direct_and_chained_estimates_with_the_settings_changed_on_the_way(chain_db: Path):
    (a,) = _advice(chain_db, "8.0.36")
    assert a.base == "synthetic-mysql-8.0.36"
    by = {t.server: t for t in a.targets}
    direct = by["synthetic-mysql-8.4.0"]
    assert direct.direct and direct.series == 1
    assert direct.throughput is not None and direct.throughput.ratio == pytest.approx(0.8, rel=0.01)
    assert direct.throughput.ci_low < 0.8 < direct.throughput.ci_high
    assert direct.throughput.verdict == "regression"
    assert direct.p95 is not None and direct.p95.ratio == pytest.approx(1.25, rel=0.02)
    assert direct.p95.verdict == "regression"  # p95 up is worse
    assert direct.settings["innodb_flush_log_at_trx_commit"] == ["1", "2"]
    chained = by["synthetic-mysql-9.1.0"]
    assert chained.via == ["synthetic-mysql-8.4.0"] and chained.series == 2
    assert chained.throughput is not None
    assert chained.throughput.ratio == pytest.approx(0.8 * 1.1, rel=0.01)
    # the chained interval is wider than either step's (half-widths add in quadrature)
    step = stats.compare_paired(
        [500.0 * JITTER[r] for r in range(REPEATS)],
        [550.0 * JITTER[(r + 1) % REPEATS] for r in range(REPEATS)],
    )
    assert step is not None
    width = math.log(chained.throughput.ci_high / chained.throughput.ci_low)
    assert width > math.log(step.ci_high / step.ci_low)
    assert chained.settings["innodb_flush_log_at_trx_commit"] == ["1", "2"]
    assert chained.settings["innodb_buffer_pool_size"] == ["134217728", "268435456"]
    assert a.unreachable == []


def test_chain_adds_logs_and_widens_in_quadrature() -> None:
    s = advise.Estimate(
        ratio=0.9, ci_low=0.85, ci_high=0.95, p_value=0.001, threshold=0.03, verdict="regression"
    )
    c = advise.chain([s, s], higher_is_better=True)
    assert c.ratio == pytest.approx(0.81)
    half = (math.log(0.95) - math.log(0.85)) / 2
    assert math.log(c.ci_high / c.ci_low) / 2 == pytest.approx(half * math.sqrt(2))
    assert c.verdict == "regression"


def test_advise_cli_table_and_json(chain_db: Path, capsys) -> None:
    assert cli.main(["advise", "--from", "synthetic-mysql-8.0.36", "--db", str(chain_db)]) == 0
    text = capsys.readouterr().out
    assert "chained via synthetic-mysql-8.4.0 (2 series)" in text
    assert "-20.0%" in text and "regression" in text
    assert "innodb_flush_log_at_trx_commit: 1 → 2" in " ".join(text.split())
    argv = ["advise", "--from", "8.0.36", "--db", str(chain_db), "--json"]
    assert cli.main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "perftrack.advise.v1" and doc["metric"] == "tps"
    doc = doc["series"]
    assert [t["server"] for t in doc[0]["targets"]] == [
        "synthetic-mysql-8.4.0",
        "synthetic-mysql-9.1.0",
    ]
    assert doc[0]["targets"][1]["direct"] is False


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--from", "5.7.44"], "no results of '5.7.44': advise starts from a release with results"),
        (["--from", "8.0.36", "--workload", "nope"], "no results match --workload nope"),
        (["--from", "8.0.36", "--metric", "speed"], "unknown metric 'speed'"),
        (["--from", "9.1.0", "--threads", "8"], None),  # the newest: nothing newer, exit 0
    ],
)
def test_bad_advise_input_is_one_line(chain_db: Path, capsys, argv, needle) -> None:
    rc = cli.main(["advise", *argv, "--db", str(chain_db)])
    cap = capsys.readouterr()
    if needle is None:
        assert rc == 0 and "no newer release measured" in cap.out
        return
    assert rc == 2
    assert needle in cap.err and cap.err.count("\n") == 1


def test_a_release_with_no_path_of_measurements_is_named(tmp_path: Path) -> None:
    """SYNTHETIC: 9.0.1 measured alone, in no pair with anything: not reachable."""
    recs = _records(
        "synthetic-advise-3",
        [("synthetic-mysql-8.0.36", "8.0.36", 1000.0), ("synthetic-mysql-8.4.0", "8.4.0", 900.0)],
        "aaaaaaaaaaaa",
        {},
    ) + _records(
        "synthetic-advise-4", [("synthetic-mysql-9.0.1", "9.0.1", 700.0)], "cccccccccccc", {}
    )
    db = tmp_path / "r.duckdb"
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    (a,) = _advice(db, "synthetic-mysql-8.0.36")
    assert [t.server for t in a.targets] == ["synthetic-mysql-8.4.0"]
    assert a.unreachable == ["synthetic-mysql-9.0.1"]
    with pytest.raises(ConfigError, match="no results of 'nope'"):
        _advice(db, "nope")


def test_each_setting_change_is_named_once_per_release_step() -> None:
    """Two series shapes that went through the same steps (SYNTHETIC advice): one step
    each, values that mean the same (0 / 0.000000, utf8 / utf8mb3) left out."""
    step_ab = {"expire_logs_days": ["0", "0.000000"], "histogram_size": ["0", "254"]}
    step_ab = {**step_ab, "character_set_system": ["utf8", "utf8mb3"]}

    def target(server: str, version: str, steps: list) -> advise.ReleaseAdvice:
        kept = [(x, y, settings.changed(d)) for x, y, d in steps]
        return advise.ReleaseAdvice(
            server=server, version=version, throughput=None, p95=None, via=[], series=1,
            steps=kept,
        )  # fmt: skip

    shape = [
        advise.SeriesAdvice(
            shape={"threads": t},
            base="a",
            targets=[
                target("b", "2.0", [("a", "b", step_ab)]),
                target("c", "3.0", [("a", "b", step_ab), ("b", "c", {"x": ["1", "2"]})]),
            ],
            unreachable=[],
        )
        for t in (1, 4)
    ]
    steps = advise.release_steps(shape)
    assert [(s.a, s.b, s.series) for s in steps] == [("a", "b", 2), ("b", "c", 2)]
    assert steps[0].changes == {"histogram_size": [["0", "254"]]}
    assert steps[1].changes == {"x": [["1", "2"]]}
