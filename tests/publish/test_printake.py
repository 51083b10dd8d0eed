"""perftrack.publish.printake (a PR's catalog as hostile data) and
perftrack.publish.prconclusion (what the PR is told), without GitHub: the rules and
decisions on hand-made inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perftrack.publish import prconclusion, printake
from perftrack.servers import catalog

BASE = catalog.load()
DIGEST = "sha256:" + "a" * 64
SHA = "b" * 64


def _head(extra: str) -> str:
    return BASE.path.read_text() + extra


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        (
            "  - {id: x, product: mysql, version: 9.1.0, provider: path, basedir: /tmp/x}\n",
            "provider 'path' is not allowed",
        ),
        (
            "  - {id: x, product: mysql, version: 9.1.0, provider: docker,"
            f" image: 'mallory/mysql:9.1.0', digest: '{DIGEST}'}}\n",
            "is not the official mysql image",
        ),
        (
            "  - {id: x, product: mysql, version: 9.1.0, provider: docker, image: 'mysql:9.1.0',"
            " digest: unpinned}\n",
            "needs its digest",
        ),
        (
            "  - {id: x, product: mysql, version: 9.1.0, provider: tarball, tarball: {url:"
            f" 'https://evil.example/mysql-9.1.0-linux.tar.xz', sha256: {SHA}}}}}\n",
            "is not on dev.mysql.com",
        ),
        (
            "  - {id: x, product: mysql, version: 9.1.0, provider: docker, image: 'mysql:9.1.0',"
            f" digest: '{DIGEST}', server_options: [init_connect=x]}}\n",
            "server option 'init_connect' is not allowed",
        ),
        (
            "  - {id: x, product: mysql, version: 9.1.0, provider: docker, image: 'mysql:9.1.0',"
            f" digest: '{DIGEST}', server_options: [sync_binlog=1a]}}\n",
            "has a value not allowed",
        ),
        ("  - {id: x, product: mysql, version: 9.1.0}\n", "x"),  # the catalog's own checks
        ("\n: [unbalanced\n", "versions.yaml"),
    ],
)
def test_hostile_entries_are_refused(entry: str, complaint: str) -> None:
    with pytest.raises(printake.Refused, match=complaint):
        printake.added_entries(BASE, _head(entry))


def test_an_official_pinned_release_is_accepted_and_rewritten_from_its_values() -> None:
    entry = (
        "  - id: mysql-9.2.0\n    product: mysql\n    version: 9.2.0\n    provider: docker\n"
        f"    image: mysql:9.2.0\n    digest: {DIGEST}\n"
        "    server_options: [innodb_flush_log_at_trx_commit=2, log-bin=binlog]\n"
        "    # a comment the merged file does not carry over\n"
    )
    (added,) = printake.added_entries(BASE, _head(entry))
    text = printake.merged_text(BASE, [added], 42)
    assert "added by pull request #42" in text
    assert "a comment the merged file" not in text
    assert text.startswith(BASE.path.read_text().rstrip("\n"))


def test_too_many_servers_and_too_large_a_file() -> None:
    many = "".join(
        f"  - {{id: m{i}, product: mysql, version: 9.1.{i}, provider: docker,"
        f" image: 'mysql:9.1.{i}', digest: '{DIGEST}'}}\n"
        for i in range(11)
    )
    with pytest.raises(printake.Refused, match="at most 10"):
        printake.added_entries(BASE, _head(many))
    with pytest.raises(printake.Refused, match="KiB"):
        printake.added_entries(BASE, _head("#" * printake.MAX_CATALOG_BYTES))


def test_request_file_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "request.json"
    for bad in ('{"pr": "1; rm -rf /"}', '{"pr": 0}', "[]", "not json"):
        path.write_text(bad)
        with pytest.raises(printake.Refused):
            printake.read_request(path)
    path.write_text('{"pr": 42}')
    assert printake.read_request(path) == "42"


# --- the conclusion --------------------------------------------------------------------------


def _report(tmp: Path, verdicts: dict | None = None, cells: dict | None = None, **err: str):
    if verdicts is not None:
        (tmp / "verdicts.json").write_text(json.dumps(verdicts))
    if cells is not None:
        (tmp / "cells.json").write_text(json.dumps(cells))
    for step, text in err.items():
        (tmp / f"{step}.err").write_text(text)
    return tmp


OK = {"INTAKE_RESULT": "success", "REFUSED": "", "ADDED": "1", "BENCH_RESULT": "success"}
LINE = {"verdict": "regression"}


@pytest.mark.parametrize(
    ("env", "verdicts", "cells", "errors", "state", "headline"),
    [
        (
            {},
            {"regressions": 0, "lines": [LINE]},
            {"counts": {"measured": 8}},
            {},
            "success",
            "no unacknowledged regression",
        ),
        (
            {},
            {"regressions": 2, "lines": [LINE]},
            {"counts": {"measured": 8}},
            {},
            "failure",
            "2 unacknowledged regression(s)",
        ),
        (
            {"BENCH_RESULT": "failure", "FAILED_STEP": "preflight"},
            None,
            None,
            {"preflight": "error: noisy host, not benchmarking: CPU busy 99%\n"},
            "error",
            "infrastructure failure: the benchmark job ended 'failure' in preflight (the runner's"
            " noise check): error: noisy host, not benchmarking: CPU busy 99%",
        ),
        (
            {"BENCH_RESULT": "failure"},
            None,
            None,
            {},
            "error",
            "infrastructure failure: the benchmark job ended 'failure' in an unknown step",
        ),
        ({"BENCH_RESULT": "cancelled"}, None, None, {}, "error", "ended 'cancelled'"),
        (
            {},
            {"regressions": 0, "lines": [], "not_run": ["x vs y: no comparable results"]},
            {"counts": {"failed": 8}, "first_failure": "x: server did not start"},
            {},
            "error",
            "infrastructure failure: 8 of 8 cells failed (x: server did not start)",
        ),
        (
            {"BENCH_RESULT": "failure", "FAILED_STEP": "run"},
            {"regressions": 1, "lines": [LINE]},
            {"counts": {"measured": 6, "failed": 2}},
            {},
            "failure",
            "1 unacknowledged regression(s); infrastructure failure:",
        ),
        (
            {"INTAKE_RESULT": "failure"},
            None,
            None,
            {},
            "error",
            "infrastructure failure: the intake job",
        ),
        (
            {"REFUSED": "entry 'x': provider 'path'"},
            None,
            None,
            {},
            "failure",
            "catalog refused: entry 'x'",
        ),
        ({"ADDED": "0", "BENCH_RESULT": "skipped"}, None, None, {}, "success", "no servers added"),
    ],
)
def test_conclusion(tmp_path, env, verdicts, cells, errors, state, headline) -> None:
    report = _report(tmp_path, verdicts, cells, **errors)
    c = prconclusion.decide({**OK, **env}, report)
    assert c.state == state
    assert headline in c.headline, c.headline
    if state == "error":
        assert "regression" not in c.headline


def test_cells_are_counted_from_the_records(tmp_path: Path) -> None:
    rec = tmp_path / "run1" / "records"
    rec.mkdir(parents=True)
    (rec / "a.json").write_text(json.dumps({"status": "measured", "server": {"id": "s"}}))
    (rec / "b.json").write_text(
        json.dumps({"status": "failed", "reason": "did not start", "server": {"id": "s"}})
    )
    assert prconclusion.count_cells(tmp_path) == {
        "counts": {"measured": 1, "failed": 1},
        "first_failure": "s: did not start",
    }
    assert prconclusion.count_cells(tmp_path / "nosuch") == {"counts": {}, "first_failure": ""}
