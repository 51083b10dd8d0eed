"""Fixtures for the site tests: synthetic DBs (labelled synthetic), built sites, and a
real browser (Debian's chromium driven by Playwright).

Screenshots go to test-artifacts/site/ at the top of the checkout (gitignored), so a
person can look at what the pages show after a run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from site_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    DESKTOP,
    HOSTILE_REASON,
    HOSTILE_VERSION,
    PHONE,
    Tab,
    synthetic_studies,
)

from fixtures.records.synthetic import make_record
from fixtures.records.synthetic_history import build_db
from perftrack.publish.site import build
from perftrack.store import store


@pytest.fixture(scope="session")
def history_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SYNTHETIC: 12 nights, hardware change on night 8, the newest version 10% slower
    from night 5 on; threads 1 and 4, 3 repeats."""
    db = tmp_path_factory.mktemp("synthetic-history") / "results.duckdb"
    build_db(db, 12, repeats=3, threads=(1, 4), hw_change_night=8, regression_night=5)
    return db


@pytest.fixture(autouse=True)
def _history_db_left_closed(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that reads the shared `history_db` leaves no connection open on it: DuckDB
    refuses a connection configured as the store's (`store.open_db`) while another one
    configured otherwise is open, so a leak would fail some later, innocent test of the
    same worker (it did, in CI). Checked here, the error names the test that leaked."""
    yield
    if "history_db" in request.fixturenames:
        with store.open_db(request.getfixturevalue("history_db"), write=False):
            pass


@pytest.fixture(scope="session")
def empty_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("empty") / "results.duckdb"
    with store.open_db(db, write=True):
        pass
    return db


@pytest.fixture(scope="session")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SYNTHETIC: two versions, the newer reporting a VERSION() string full of HTML."""
    db = tmp_path_factory.mktemp("hostile") / "results.duckdb"
    recs = []
    for rep in range(3):
        for i, (sid, ver, tps) in enumerate(
            (
                ("synthetic-mysql-8.0.36", "8.0.36", 1000.0),
                ("synthetic-mysql-8.4.0", "8.4.0", 900.0),
            )
        ):
            rec = make_record(
                run_id="synthetic-hostile",
                cell=rep * 2 + i,
                server_id=sid,
                version=ver,
                tps=tps + rep,
            )
            rec["cell"]["repeat"] = rep + 1
            if ver == "8.4.0":
                rec["server"]["version_string"] = HOSTILE_VERSION
            recs.append(rec)
    with store.open_db(db, write=True) as st:
        st.ingest(recs)
    return db


def write_hostile_annotations(path: Path) -> Path:
    """configs/annotations.yaml-style file acknowledging the pair, with an HTML reason."""
    doc = {
        "annotations": [
            {
                "match": {"servers": ["synthetic-mysql-8.0.36", "synthetic-mysql-8.4.0"]},
                "reason": HOSTILE_REASON,
                "date": "2026-01-01",
            }
        ]
    }
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def sites(
    tmp_path_factory: pytest.TempPathFactory, history_db: Path, empty_db: Path, hostile_db: Path
) -> dict[str, Path]:
    """One built site per DB: history, empty, hostile (with a hostile annotation)."""
    root = tmp_path_factory.mktemp("sites")
    notes = write_hostile_annotations(root / "annotations.yaml")
    return {
        "history": build.build(
            history_db, root / "history", studies_dir=synthetic_studies(root / "cfg")
        ).out,
        "empty": build.build(empty_db, root / "empty").out,
        "hostile": build.build(hostile_db, root / "hostile", annotations_path=notes).out,
    }


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/setup-system.sh (Debian package chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _tab(browser: Any, viewport: dict[str, int]) -> Iterator[Tab]:
    ctx = browser.new_context(viewport=viewport, accept_downloads=True)
    page = ctx.new_page()
    tab = Tab(page)
    page.on("console", lambda m: tab.console.append((m.type, m.text)))
    page.on("pageerror", lambda e: tab.errors.append(str(e)))
    page.on("request", lambda r: tab.requests.append(r.url))

    def on_dialog(d: Any) -> None:
        tab.dialogs.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", on_dialog)
    try:
        yield tab
    finally:
        ctx.close()


@pytest.fixture
def tab(browser: Any) -> Iterator[Tab]:
    yield from _tab(browser, DESKTOP)


@pytest.fixture
def phone_tab(browser: Any) -> Iterator[Tab]:
    yield from _tab(browser, PHONE)
