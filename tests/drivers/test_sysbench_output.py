"""Tests for the sysbench 1.0.20 output parser, against real captured outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perftrack.core.errors import ParseError
from perftrack.drivers.sysbench_output import NO_SUMMARY_REASON, parse_output

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sysbench"
HEADER = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()


def parse_fixture(name: str) -> dict[str, Any]:
    result = parse_output(fixture_text(name), source=name)
    json.dumps(result, allow_nan=False)  # JSON-serialisable, no NaN/inf
    return result


ALL_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.txt"))


def test_fixture_dir_is_populated() -> None:
    assert len(ALL_FIXTURES) >= 10


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_fixture_parses_with_consistent_status(name: str) -> None:
    result = parse_fixture(name)
    assert result["sysbench_version"] == "1.0.20"
    assert result["kind"] == name.split("_")[0].removesuffix(".txt")
    assert (result["status"] == "ok") == (result["reason"] is None)


def test_point_select_intervals() -> None:
    r = parse_fixture("run_point_select_intervals.txt")
    assert (r["kind"], r["status"], r["reason"]) == ("run", "ok", None)
    assert r["tps"] == 34488.02
    assert r["qps"] == 34488.02
    assert r["threads"] == 2
    assert r["events"] == 103583
    assert (r["reads"], r["writes"], r["other"]) == (103583, 0, 0)
    assert r["total_time_s"] == 3.0029
    assert (r["latency_min_ms"], r["latency_avg_ms"], r["latency_max_ms"]) == (0.02, 0.06, 11.58)
    assert (r["latency_pct"], r["latency_pct_ms"]) == (95.0, 0.10)
    assert (r["errors_per_s"], r["reconnects_per_s"]) == (0.0, 0.0)
    assert r["histogram"] is None
    assert [i["t"] for i in r["intervals"]] == [1.0, 2.0, 3.0]
    assert r["intervals"][0] == {
        "t": 1.0,
        "threads": 2,
        "tps": 46468.49,
        "qps": 46468.49,
        "lat_pct": 95.0,
        "lat_pct_ms": 0.07,
        "err_per_s": 0.0,
        "reconn_per_s": 0.0,
        "queue_length": None,
        "concurrency": None,
    }
    assert r["intervals"][2]["tps"] == 29023.54


def test_read_write_counts_reads_writes_other() -> None:
    r = parse_fixture("run_read_write.txt")
    assert r["status"] == "ok"
    assert (r["tps"], r["qps"]) == (617.09, 12341.78)
    assert (r["reads"], r["writes"], r["other"]) == (25956, 7416, 3708)
    assert r["events"] == 1854
    assert r["latency_pct_ms"] == 7.17
    assert len(r["intervals"]) == 3
    assert r["intervals"][1]["qps"] == 12559.68


def test_histogram() -> None:
    r = parse_fixture("run_histogram.txt")
    assert r["status"] == "ok"
    assert r["tps"] == 47319.41
    assert r["intervals"] == []
    hist = r["histogram"]
    assert hist[0] == [0.024, 4]
    assert hist[1] == [0.025, 1345]
    assert hist[-1] == [5.090, 1]
    assert len(hist) == 274
    # sysbench prints bucket values rounded to 3 decimals, so values repeat; kept as printed
    assert hist[2] == [0.025, 12364]
    assert sum(count for _, count in hist) == r["events"] == 94825


def test_events_limited_run() -> None:
    r = parse_fixture("run_events_limited.txt")
    assert r["status"] == "ok"
    assert r["events"] == 5000
    assert r["total_time_s"] == 0.2039
    assert r["tps"] == 24440.17
    assert r["intervals"] == []


def test_percentile_99() -> None:
    r = parse_fixture("run_percentile_99.txt")
    assert (r["latency_pct"], r["latency_pct_ms"]) == (99.0, 0.13)
    assert [i["lat_pct"] for i in r["intervals"]] == [99.0, 99.0, 99.0]
    assert [i["lat_pct_ms"] for i in r["intervals"]] == [0.08, 0.20, 0.07]


def test_percentile_disabled() -> None:
    r = parse_fixture("run_percentile_0.txt")
    assert r["status"] == "ok"
    assert r["latency_pct"] == 0.0
    assert r["latency_pct_ms"] is None  # "percentile stats: disabled"
    assert r["latency_avg_ms"] == 0.04
    # interval lines still say "lat (ms,0%): 0.00"; that 0.00 is not a latency
    assert [i["lat_pct_ms"] for i in r["intervals"]] == [None, None]
    assert r["intervals"][1]["tps"] == 61584.31


def test_errors_ignored() -> None:
    r = parse_fixture("run_errors_ignored.txt")
    assert r["status"] == "ok"
    assert r["threads"] == 8
    assert r["errors_per_s"] == 259.79
    assert r["reconnects_per_s"] == 0.0
    assert [i["err_per_s"] for i in r["intervals"]] == [275.62, 255.93, 247.97]


def test_rate_limited_queue_lines() -> None:
    r = parse_fixture("run_rate_limited.txt")
    assert r["status"] == "ok"
    assert r["tps"] == 2009.48
    assert len(r["intervals"]) == 2
    assert (r["intervals"][0]["queue_length"], r["intervals"][0]["concurrency"]) == (0, 2)
    assert (r["intervals"][1]["queue_length"], r["intervals"][1]["concurrency"]) == (0, 1)


def test_warning_before_header() -> None:
    r = parse_fixture("run_deprecated_option_warning.txt")
    assert r["status"] == "ok"
    assert r["warnings"] == ["--max-time is deprecated, use --time instead"]
    assert r["tps"] == 60113.52
    assert len(r["intervals"]) == 1


def test_server_killed_mid_run() -> None:
    r = parse_fixture("run_server_killed.txt")
    assert r["status"] == "failed"
    assert r["reason"] == (
        "server connection lost: FATAL: mysql_stmt_execute() returned error 2013 "
        "(Lost connection to server during query)"
    )
    assert r["error_code"] == 2013
    assert [i["tps"] for i in r["intervals"]] == [579.46, 709.31]
    assert r["tps"] is None and r["events"] is None and r["latency_pct_ms"] is None
    assert r["latency_pct"] == 95.0  # known from the interval lines
    assert r["threads"] == 2


def test_connection_killed_mid_run() -> None:
    r = parse_fixture("run_connection_killed.txt")
    assert r["status"] == "failed"
    assert r["reason"].startswith("server connection lost: FATAL: mysql_stmt_execute()")
    assert len(r["intervals"]) == 2


def test_reconnect_segfault_has_no_summary() -> None:
    r = parse_fixture("run_reconnect_segfault.txt")
    assert r["status"] == "failed"
    assert r["reason"] == NO_SUMMARY_REASON == "run ended without a summary (killed?)"
    assert r["fatal"] == []
    assert len(r["intervals"]) == 1
    assert r["intervals"][0]["tps"] == 46127.36


def test_deadlock_fatal() -> None:
    r = parse_fixture("run_deadlock_fatal.txt")
    assert r["status"] == "failed"
    assert r["reason"] == (
        "sysbench reported FATAL: mysql_stmt_execute() returned error 1213 "
        "(Deadlock found when trying to get lock; try restarting transaction)"
    )
    assert r["error_code"] == 1213
    assert r["intervals"] == []


def test_connect_refused() -> None:
    r = parse_fixture("run_connect_refused.txt")
    assert r["status"] == "failed"
    assert r["reason"] == (
        "cannot connect to server: FATAL: unable to connect to MySQL server on host "
        "'127.0.0.1', port 33098, aborting..."
    )
    assert r["error_code"] == 2002


def test_prepare() -> None:
    r = parse_fixture("prepare.txt")
    assert (r["kind"], r["status"], r["reason"]) == ("prepare", "ok", None)
    assert r["tables"] == ["sbtest1", "sbtest2"]
    assert "tps" not in r


def test_prepare_failed_one_line_reason() -> None:
    r = parse_fixture("prepare_table_exists.txt")
    assert (r["kind"], r["status"]) == ("prepare", "failed")
    assert r["reason"] == (
        "sysbench reported FATAL: mysql_drv_query() returned error 1050 "
        "(Table 'sbtest1' already exists)"
    )
    assert "\n" not in r["reason"]
    assert r["error_code"] == 1050


def test_cleanup() -> None:
    r = parse_fixture("cleanup.txt")
    assert (r["kind"], r["status"], r["tables"]) == ("cleanup", "ok", ["sbtest1"])


def test_crlf_line_endings() -> None:
    text = fixture_text("run_read_write.txt").replace("\n", "\r\n")
    assert parse_output(text)["tps"] == 617.09


# --- not sysbench output, or cut too early to tell ---


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\n",
        "hello world\nthis is not a benchmark\n",
        "\x00\x01\x02\xff\xfe binary \x00",
        "sysbench 1.0",  # header cut mid-line
        HEADER + "\n",  # header only
        HEADER + "\n\ninvalid option: --bogus=1\n",
        "transactions:                        5000   (24440.17 per sec.)\n",  # no header
    ],
)
def test_not_sysbench_output_raises(text: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_output(text, source="saved.log")
    message = str(err.value)
    assert message.startswith("saved.log: ")
    assert "sysbench" in message
    assert "\n" not in message


def test_other_sysbench_version_raises() -> None:
    text = fixture_text("run_read_write.txt").replace("sysbench 1.0.20", "sysbench 1.1.0-df89d34")
    with pytest.raises(ParseError, match=r"1\.1\.0.*1\.0\.x"):
        parse_output(text, source="x.txt")


def test_two_outputs_in_one_file_raise() -> None:
    text = fixture_text("prepare.txt") + fixture_text("run_read_write.txt")
    with pytest.raises(ParseError, match="2 sysbench outputs"):
        parse_output(text)


def test_truncated_before_summary_fails() -> None:
    text = fixture_text("run_point_select_intervals.txt")
    cut = text[: text.index("SQL statistics:")]
    r = parse_output(cut)
    assert (r["status"], r["reason"]) == ("failed", NO_SUMMARY_REASON)
    assert len(r["intervals"]) == 3
    assert r["tps"] is None


def test_truncated_inside_summary_fails() -> None:
    text = fixture_text("run_point_select_intervals.txt")
    cut = text[: text.index("Latency (ms):")]
    r = parse_output(cut)
    assert r["status"] == "failed"
    assert r["reason"].startswith("run summary is incomplete")
    assert "latency_avg_ms" in r["reason"]
    assert r["tps"] == 34488.02  # what was printed is kept


@pytest.mark.parametrize("name", ["run_point_select_intervals.txt", "run_histogram.txt"])
def test_every_line_prefix_is_parse_error_or_failed_until_complete(name: str) -> None:
    lines = fixture_text(name).splitlines(keepends=True)
    complete_at = next(i for i, line in enumerate(lines) if "th percentile:" in line) + 1
    for n in range(len(lines) + 1):
        text = "".join(lines[:n])
        try:
            r = parse_output(text)
        except ParseError:
            assert n < 4, f"prefix of {n} lines raised"  # before 'Running the test...'
            continue
        assert r["status"] == ("ok" if n >= complete_at else "failed"), n


# --- property: never anything but ParseError ---

SYSBENCH_LINES = (
    fixture_text("run_errors_ignored.txt").splitlines()
    + fixture_text("run_histogram.txt").splitlines()[12:20]
)
line_strategy = st.one_of(st.sampled_from(SYSBENCH_LINES), st.text(max_size=80))


def check_total(text: str) -> None:
    try:
        result = parse_output(text, source="fuzz")
    except ParseError as err:
        assert "\n" not in str(err)
        return
    assert result["status"] in ("ok", "failed")
    assert result["kind"] in ("run", "prepare", "cleanup")
    json.dumps(result, allow_nan=False)


@settings(max_examples=300, deadline=None, database=None)
@given(st.text())
def test_arbitrary_text_only_raises_parse_error(text: str) -> None:
    check_total(text)


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(line_strategy, max_size=40), st.booleans())
def test_sysbench_like_text_only_raises_parse_error(lines: list[str], with_header: bool) -> None:
    check_total("\n".join(([HEADER] if with_header else []) + lines))
