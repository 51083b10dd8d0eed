"""perftrack.publish.printake (a PR's catalog as hostile data) and
perftrack.publish.prconclusion (what the PR is told), without GitHub: the rules and
decisions on hand-made inputs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from perftrack.publish import prcheck, prconclusion, printake
from perftrack.servers import catalog

BASE = catalog.read_catalog()
DIGEST = "sha256:" + "a" * 64
SHA = "b" * 64


def _head(extra: str) -> str:
    return BASE.path.read_text() + extra


def _load(text: str) -> catalog.Catalog:
    path = BASE.path.parent / ".test-merged-versions.yaml"  # beside configs/releases.yaml
    try:
        path.write_text(text)
        return catalog.read_catalog(path)
    finally:
        path.unlink()


def _changed(server_id: str, old: str, new: str) -> str:
    """The base catalog with one line of one entry's block changed."""
    text = BASE.path.read_text()
    start = text.index(f"- id: {server_id}\n")
    end = text.find("\n  - ", start)
    end = len(text) if end < 0 else end
    block = text[start:end]
    assert old in block, block
    return text[:start] + block.replace(old, new, 1) + text[end:]


NOTE = "notes: bookworm-security; same layout as mariadb-10.11.18"


def test_a_changed_entry_is_checked_like_an_added_one() -> None:
    """Changing an existing entry to a download of the PR's own, or to unsafe options, is
    refused, not a green 'no servers added'; a change within the rules is benchmarked
    against its predecessor, as an added server is."""
    hostile = _changed(
        "mysql-8.0.40-tarball", "url: https://downloads.mysql.com/", "url: https://evil.example/"
    )
    with pytest.raises(
        printake.Refused,
        match=re.escape("changed entry 'mysql-8.0.40-tarball': tarball url 'https://evil.example/"),
    ):
        printake.catalog_changes(BASE, hostile)
    unsafe = _changed("mariadb-10.11.19", NOTE, NOTE + "\n    server_options: [init_file=init.sql]")
    with pytest.raises(printake.Refused, match="server option 'init_file' is not allowed"):
        printake.catalog_changes(BASE, unsafe)
    fine = _changed("mariadb-10.11.19", NOTE, NOTE + "\n    server_options: [sync_binlog=1]")
    changes = printake.catalog_changes(BASE, fine)
    assert [c.id for c in changes.changed] == ["mariadb-10.11.19"]
    assert (changes.added, changes.removed) == ((), ())
    assert changes.summary() == "0 server(s) added: none; 1 changed: mariadb-10.11.19"
    merged = _load(printake.merged_text(BASE, changes, 7))
    assert merged.ids == BASE.ids
    assert merged.get("mariadb-10.11.19").server_options == (("sync_binlog", "1"),)
    assert all(merged.get(e.id) == e for e in BASE if e.id != "mariadb-10.11.19")
    # the bench job pairs the changed entry with its predecessor, as an added one
    assert prcheck.added_pairs(BASE, merged) == [
        prcheck.Pair("mariadb-10.11.19", "mariadb-10.11.18")
    ]


def test_an_entry_of_a_provider_a_pr_may_not_use_cannot_be_changed() -> None:
    moved = _changed("mysql-9.7.4", "suite: sid", "suite: mallory")
    with pytest.raises(
        printake.Refused, match=re.escape("changed entry 'mysql-9.7.4': provider 'debian-chroot'")
    ):
        printake.catalog_changes(BASE, moved)


def test_a_removed_entry_still_named_by_a_config_is_refused(tmp_path: Path) -> None:
    text = BASE.path.read_text()
    start = text.index("- id: mariadb-10.11.18\n")
    end = text.index("\n  - ", start)
    without_control = text[:start] + text[end + len("\n  ") :]
    with pytest.raises(
        printake.Refused, match=re.escape("removed entry 'mariadb-10.11.18' is still named in")
    ):
        printake.catalog_changes(BASE, without_control)
    configs = tmp_path / "configs"
    configs.mkdir()  # a configs/ where nothing names it: the removal passes, and is listed
    changes = printake.catalog_changes(BASE, without_control, configs)
    assert changes.removed == ("mariadb-10.11.18",)
    assert "1 removed: mariadb-10.11.18" in changes.summary()
    assert "mariadb-10.11.18" not in _load(printake.merged_text(BASE, changes, 7)).ids


def test_a_pr_changing_data_is_refused() -> None:
    printake.refuse_data_changes(["configs/versions.yaml", "docs/x.md", "database/x"])
    with pytest.raises(printake.Refused, match=r"changes data/results\.duckdb and 1 more: data/"):
        printake.refuse_data_changes(
            ["configs/versions.yaml", "data/results.duckdb", "data/results/2026/x.parquet"]
        )


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
        printake.catalog_changes(BASE, _head(entry))


def test_an_official_pinned_release_is_accepted_and_rewritten_from_its_values() -> None:
    entry = (
        "  - id: mysql-9.2.0\n    product: mysql\n    version: 9.2.0\n    provider: docker\n"
        f"    image: mysql:9.2.0\n    digest: {DIGEST}\n"
        "    server_options: [innodb_flush_log_at_trx_commit=2, log-bin=binlog]\n"
        "    # a comment the merged file does not carry over\n"
    )
    changes = printake.catalog_changes(BASE, _head(entry))
    (added,) = changes.added
    assert (changes.changed, changes.removed) == ((), ())
    text = printake.merged_text(BASE, changes, 42)
    assert "pull request #42" in text
    assert "a comment the merged file" not in text
    merged = _load(text)
    assert merged.ids == (*BASE.ids, "mysql-9.2.0")
    assert all(merged.get(e.id) == e for e in BASE)
    assert merged.get("mysql-9.2.0") == added


def test_too_many_servers_and_too_large_a_file() -> None:
    many = "".join(
        f"  - {{id: m{i}, product: mysql, version: 9.1.{i}, provider: docker,"
        f" image: 'mysql:9.1.{i}', digest: '{DIGEST}'}}\n"
        for i in range(11)
    )
    with pytest.raises(printake.Refused, match="at most 10"):
        printake.catalog_changes(BASE, _head(many))
    with pytest.raises(printake.Refused, match="KiB"):
        printake.catalog_changes(BASE, _head("#" * printake.MAX_CATALOG_BYTES))


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


def test_intake_refuses_a_pr_changing_data_before_reading_its_catalog_github_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """printake's main against GitHub's API replayed on 127.0.0.1: a PR whose files include
    data/ is refused with one line (the PR check fails), its catalog never fetched."""
    from replay import Replay

    head = "c" * 40
    (tmp_path / "request.json").write_text('{"pr": 42}')
    with Replay() as api:
        api.add(
            "GET",
            "/repos/o/r/pulls/42",
            {"number": 42, "state": "open", "head": {"sha": head}, "base": {"ref": "main"}},
        )
        files = [{"filename": f"docs/{i}.md"} for i in range(100)]
        api.add("GET", "/repos/o/r/pulls/42/files?per_page=100&page=1", files)
        api.add(
            "GET",
            "/repos/o/r/pulls/42/files?per_page=100&page=2",
            [{"filename": "configs/versions.yaml"}, {"filename": "data/results.duckdb"}],
        )
        for key, value in {
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_TOKEN": "t",
            "PERFTRACK_GITHUB_API_URL": api.url,
        }.items():
            monkeypatch.setenv(key, value)
        out = tmp_path / "gh-output"
        code = printake.main(
            [
                "--request",
                str(tmp_path / "request.json"),
                "--head-sha",
                head,
                "--out",
                str(tmp_path / "intake"),
                "--github-output",
                str(out),
            ]
        )
    assert code == 0
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert outputs["refused"].startswith("the pull request changes data/results.duckdb: data/")
    assert outputs["added"] == "0" and outputs["pr"] == "42"
    assert not any("contents/" in r.path for r in api.requests)
    assert not (tmp_path / "intake").exists()
