"""The Regressions page's data and the Atom feed, built from a SYNTHETIC DB whose detects
left open, acknowledged and false-positive alerts (regressions_db.py)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from regressions_db import NEW, OLD, build_db

from perftrack.publish.site import build, columns

ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(scope="module")
def alerts_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("regressions")
    return build_db(root / "results.duckdb", root / "annotations.yaml"), root


def test_page_data_lists_open_alerts_newest_first(alerts_db: tuple[Path, Path]) -> None:
    db, root = alerts_db
    site = build.build(db, root / "site").out
    data = columns.read_data_file(site / "data" / "regressions.js")
    rows = data["open"]
    assert [(r["threads"], r["state"], r["first_seen"]) for r in rows] == [
        (16, "new", "2026-03-03T06:00:00Z"),
        (1, "acknowledged", "2026-03-02T06:00:00Z"),
        (8, "new", "2026-03-01T06:00:00Z"),
    ]
    assert data["closed"] == {"false_positive": 1}
    r = rows[0]
    assert r["change"] == f"{OLD} → {NEW}" and r["ratio"] == pytest.approx(0.7, abs=0.03)
    # the run page with the pair's why selected (explanation or ranked settings diff)
    assert r["run_href"].startswith("runs.html#run=synthetic-pair-t16&previous=")
    assert "&workload=" in r["run_href"] and "&threads=16" in r["run_href"]
    # no stored explanation: the exact command that computes one, for the alert's cell
    assert r["why"]["explanations"] == []
    assert r["why"]["command"] == (
        f"perftrack explain {OLD} {NEW} --workload {r['workload']} --threads 16 "
        f"--charset {r['collation']} --profile default"
    )
    assert r["history_href"].startswith("history.html#runner_class=synthetic&profile=default&")
    assert "&threads=16" in r["history_href"]
    assert rows[1]["reason"] == "SYNTHETIC <b>expected</b> cost"
    assert "regressions.html" in (site / "index.html").read_text()  # in the navigation


def entries(feed: Path) -> tuple[ET.Element, list[ET.Element]]:
    root = ET.parse(feed).getroot()
    return root, root.findall(f"{ATOM}entry")


def test_atom_feed_is_valid_and_its_ids_are_stable_across_builds(
    alerts_db: tuple[Path, Path],
) -> None:
    db, root = alerts_db
    first = build.build(db, root / "feed-a").out / "regressions.atom"
    second = build.build(db, root / "feed-b").out / "regressions.atom"
    feed, items = entries(first)
    assert feed.tag == f"{ATOM}feed"
    # RFC 4287: a feed has id, title, updated, an author (or every entry has one)
    assert feed.findtext(f"{ATOM}id") == "tag:perftrack,2026:regressions"
    assert feed.findtext(f"{ATOM}title")
    assert feed.findtext(f"{ATOM}updated") == "2026-03-03T06:00:00Z"
    assert feed.find(f"{ATOM}author/{ATOM}name") is not None
    assert {(x.get("rel"), x.get("href")) for x in feed.findall(f"{ATOM}link")} == {
        ("self", "regressions.atom"),
        ("alternate", "regressions.html"),
    }
    assert len(items) == 3  # the open alerts; the false positive is closed
    for e in items:
        assert e.findtext(f"{ATOM}id").startswith("tag:perftrack,2026:alert:")
        assert e.findtext(f"{ATOM}title") and e.findtext(f"{ATOM}updated").endswith("Z")
        rels = [x.get("rel") for x in e.findall(f"{ATOM}link")]
        assert rels.count("alternate") == 1 and "related" in rels
    assert [e.find(f"{ATOM}category").get("term") for e in items] == [
        "new",
        "acknowledged",
        "new",
    ]
    ids = [e.findtext(f"{ATOM}id") for e in items]
    assert len(set(ids)) == 3
    assert ids == [e.findtext(f"{ATOM}id") for e in entries(second)[1]]
    assert first.read_bytes() == second.read_bytes()  # nothing in it depends on the build


def test_a_db_without_alerts_gives_an_empty_valid_feed(tmp_path: Path) -> None:
    from perftrack.store import store

    db = tmp_path / "empty.duckdb"
    with store.open_db(db, write=True):
        pass
    site = build.build(db, tmp_path / "site").out
    feed, items = entries(site / "regressions.atom")
    assert items == [] and feed.findtext(f"{ATOM}updated") == "1970-01-01T00:00:00Z"
    assert columns.read_data_file(site / "data" / "regressions.js")["open"] == []
