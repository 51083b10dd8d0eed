"""mariadb-slap driver: parser on real captured output (tests/fixtures/slap/), commands,
and slap workloads run from a matrix against a real MariaDB (integration)."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaks import ToolCommandLines
from perftrack.core.errors import ParseError
from perftrack.drivers import slap
from perftrack.drivers.sysbench import Endpoint
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.servers import catalog

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slap"


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


def test_parses_one_block_per_concurrency_value() -> None:
    blocks = slap.parse_output(fixture("read_c1_2"))
    assert [(b.clients, b.queries_per_client) for b in blocks] == [(1, 200), (2, 100)]
    assert (blocks[0].seconds_avg, blocks[0].seconds_min, blocks[0].seconds_max) == (
        0.056,
        0.056,
        0.057,
    )
    assert blocks[0].engine is None


def test_queries_per_second_and_latency_from_seconds() -> None:
    (b,) = slap.parse_output(fixture("write_c2"))
    res = slap.result_of(b)
    assert res["qps"] == pytest.approx(200 / 0.098)
    assert res["tps"] == res["qps"]
    assert res["latency_avg_ms"] == pytest.approx(0.098 * 1000 / 100)
    assert (res["seconds_min"], res["seconds_max"], res["events"]) == (0.079, 0.117, 200)
    assert res["total_time_s"] == 0.098 and res["threads"] == 2
    assert set(runner.result_of(res)) >= {"tps", "qps", "intervals"}


def test_engine_line_is_read() -> None:
    (b,) = slap.parse_output(fixture("mixed_c2_myisam"))
    assert b.engine == "myisam"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad_engine", "Unknown storage engine 'nosuchengine'"),
        ("connect_refused", "Can't connect to server"),
        ("", "no benchmark summary"),
    ],
)
def test_tool_errors_become_one_line_parse_errors(name: str, message: str) -> None:
    text = fixture(name) if name else ""
    with pytest.raises(ParseError, match=message) as exc:
        slap.parse_output(text)
    assert "\n" not in str(exc.value)


def test_command_has_the_load_concurrency_engine_and_redacts_the_password() -> None:
    t = Endpoint(host="127.0.0.1", port=3306, user="u", password="secret", db="sbtest")
    cmd = slap.command(
        t, load="mixed", concurrency=[1, 4], engine="MyISAM", options=("--iterations=3",)
    )
    assert "--auto-generate-sql-load-type=mixed" in cmd
    assert "--concurrency=1,4" in cmd and "--engine=MyISAM" in cmd and "--protocol=tcp" in cmd
    assert cmd[-1] == "--iterations=3"
    assert "--password=***" in slap.redact(cmd) and "secret" not in " ".join(slap.redact(cmd))
    with pytest.raises(ParseError, match="not one of"):
        slap.command(t, load="delete", concurrency=[1])


@pytest.mark.integration
def test_slap_workloads_run_from_a_matrix(tmp_path, config_dir, workroot) -> None:
    m = matrix.from_dict(
        {
            "name": "slap",
            "servers": ["mariadb-10.11.18"],
            "workloads": ["slap_read", "slap_write", "slap_mixed"],
            "charsets": ["latin1"],
            "threads": [1, 2],
            "engines": ["MyISAM"],
            "repeats": 1,
            "duration_s": 1,
            "warmup_s": 0,
            "tables": 1,
            "table_size": 10,
        }
    )
    cat = catalog.read_catalog(config_dir / "versions.yaml")
    rd = runner.create(m, cat, tmp_path / "runs", "test")
    with ToolCommandLines() as tools:
        s = runner.Runner(
            rd=rd, catalog=cat, config_dir=config_dir, emit=lambda _: None, workroot=workroot
        ).run()
    # the password in a private option file, never on mariadb-slap's command line
    assert any("slap" in a[0] for a in tools.seen.values()), tools.seen
    assert tools.with_password() == [], tools.seen
    recs = [x for recs in rd.attempts().values() for x in recs]
    assert [x["reason"] for x in recs if x["status"] != "ok"] == []
    assert s.ok == 6
    for x in recs:
        assert x["tool"]["name"] == "slap"
        assert "Distrib" not in x["tool"]["version"] and x["tool"]["version"] != "unknown"
        assert x["result"]["qps"] > 0
        assert x["result"]["threads"] == x["cell"]["threads"]
        assert "--engine=MyISAM" in x["tool"]["command"]
        assert x["effective"]["table_engines"] is None  # no sysbench tables were prepared
