"""A SYNTHETIC results DB (test fixture, never real measurements) whose detects left
alerts of every kind of state for the Regressions page and its feed: three series whose
new release is 30% slower, found on three different nights, one acknowledged, and a
fourth marked a false positive (closed)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from fixtures.records.synthetic import make_record
from perftrack.analysis import annotations, detect
from perftrack.store import store

OLD, NEW = "synthetic-mysql-8.0.35", "synthetic-mysql-8.0.36"
NIGHT1 = datetime(2026, 3, 1, 6, 0)  # the alerts' clock on the first detect (naive UTC)
# threads of each series -> the night (1-based) its regression is first detected
SERIES_NIGHT = {8: 1, 1: 2, 16: 3, 32: 3}
ACKED, FALSE_POSITIVE = 1, 32  # threads of the acknowledged and the false-positive series


def _releases(threads: int) -> list[dict]:
    rng = np.random.default_rng(threads)
    recs = []
    for rep in range(6):
        for i, (sid, level) in enumerate(((OLD, 1000.0), (NEW, 700.0))):
            recs.append(
                make_record(
                    run_id=f"synthetic-pair-t{threads}",
                    cell=1000 * threads + rep * 10 + i,
                    server_id=sid,
                    version=sid.rsplit("-", 1)[1],
                    threads=threads,
                    tps=level * (1 + rng.normal(0, 0.01)),
                )
            )
    return recs


def write_notes(path: Path) -> Path:
    path.write_text(
        "annotations:\n"
        f"  - match: {{servers: [{OLD}, {NEW}], threads: {ACKED}}}\n"
        "    reason: SYNTHETIC <b>expected</b> cost\n"
        "    link: https://example.org/release-notes\n"
        f"  - match: {{servers: [{OLD}, {NEW}], threads: {FALSE_POSITIVE}}}\n"
        "    reason: SYNTHETIC throttled runner\n"
        "    state: false_positive\n",
        encoding="utf-8",
    )
    return path


def build_db(db: Path, notes_path: Path) -> Path:
    notes = annotations.read_annotations(write_notes(notes_path))
    for night in (1, 2, 3):
        with store.open_db(db, write=True) as st:
            for threads, first in SERIES_NIGHT.items():
                if first == night:
                    st.ingest(_releases(threads))
            detect.detect_and_store(st, notes, None, now=NIGHT1 + timedelta(days=night - 1))
    return db
