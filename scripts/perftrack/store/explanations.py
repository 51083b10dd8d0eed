"""Explanations (`perftrack explain A B`) in the results DB: table `explanations`.

One row per explanation: the pair, the cell, the one-sentence conclusion, the isolated
settings with their shares, and the whole result as JSON. The table is created here if
missing (CREATE TABLE IF NOT EXISTS, inside the write lock of `open_db(write=True)`), not
by a schema migration: it holds derived results only, nothing else reads it yet, and a
DB without it is simply a DB without explanations.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

from perftrack.store import store

TABLE_SQL = """
CREATE TABLE IF NOT EXISTS explanations (
    explanation_id VARCHAR PRIMARY KEY,
    base_server VARCHAR NOT NULL,
    new_server VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    threads INTEGER NOT NULL,
    metric VARCHAR NOT NULL,
    conclusion VARCHAR NOT NULL,
    isolated JSON NOT NULL,
    result JSON NOT NULL,
    machine_s DOUBLE NOT NULL,
    computed_at TIMESTAMP NOT NULL
)
"""


class IsolatedSetting(TypedDict):
    """A group of settings an explanation isolated, with its share of the A→B gap."""

    settings: list[str]  # option=value, as A has it
    share: float
    share_low: float
    share_high: float


class StoredExplanation(TypedDict):
    """The newest explanation of a pair on one workload × threads (`latest`)."""

    workload: str
    threads: int
    metric: str
    conclusion: str
    isolated: list[IsolatedSetting]
    computed_at: str


# edge: explain --json's document, stored as is
def isolated_settings(result: dict[str, Any]) -> list[IsolatedSetting]:
    """The isolated groups of a `explanation.to_json` result: settings and share."""
    out: list[IsolatedSetting] = []
    for g in result["groups"]:
        if g["label"] in result["isolated"]:
            out.append(
                {
                    "settings": [f"{s['option']}={s['a_value']}" for s in g["settings"]],
                    "share": g["share"],
                    "share_low": g["share_low"],
                    "share_high": g["share_high"],
                }
            )
    return out


# edge: explain --json's document, stored as is
def save(db: Path, result: dict[str, Any]) -> str:
    """Store one explanation (an `explanation.to_json` dict); its id."""
    now = datetime.now(UTC).replace(tzinfo=None)
    eid = hashlib.sha256(
        json.dumps([result["a"], result["b"], result["cell"], now.isoformat()]).encode()
    ).hexdigest()[:16]
    with store.open_db(db, write=True) as st:
        st.con.execute(TABLE_SQL)
        st.con.execute(
            "INSERT INTO explanations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                eid,
                result["a"],
                result["b"],
                result["cell"]["workload"],
                result["cell"]["threads"],
                result["cell"]["metric"],
                result["conclusion"],
                json.dumps(isolated_settings(result)),
                json.dumps(result),
                result["machine_s"],
                now,
            ],
        )
    return eid


def _has_table(con: Any, name: str) -> bool:
    return bool(
        con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]
        ).fetchone()[0]
    )


def latest(results: store.Store, base: str, new: str) -> list[StoredExplanation]:
    """The newest explanation of base → new per workload × threads (none: [])."""
    con = results.con
    if not _has_table(con, "explanations"):
        return []
    rows = con.execute(
        """SELECT workload, threads, metric, conclusion, isolated, computed_at
           FROM explanations WHERE base_server = ? AND new_server = ?
           QUALIFY row_number() OVER (PARTITION BY workload, threads, metric
                                      ORDER BY computed_at DESC) = 1
           ORDER BY workload, threads""",
        [base, new],
    ).fetchall()
    return [
        {
            "workload": w,
            "threads": t,
            "metric": m,
            "conclusion": c,
            "isolated": json.loads(i),
            "computed_at": str(at),
        }
        for w, t, m, c, i, at in rows
    ]


def state(results: store.Store) -> str:
    """A digest of every stored explanation: it changes when one is added (what the site
    build compares before it reuses a run's detail file, which shows the newest ones)."""
    if not _has_table(results.con, "explanations"):
        return ""
    rows = results.con.execute(
        "SELECT explanation_id, computed_at FROM explanations ORDER BY ALL"
    ).fetchall()
    return hashlib.sha256(json.dumps(rows, default=str).encode()).hexdigest()


def stored_verdicts(
    results: store.Store, base: str, new: str, workload: str, threads: int
) -> list[tuple[str, float | None]]:
    """`perftrack detect`'s verdicts of new against base on this workload and threads:
    (verdict, the lower end of the ratio's interval)."""
    con = results.con
    if not _has_table(con, "verdicts"):
        return []
    rows = con.execute(
        """SELECT verdict, ci_low FROM verdicts WHERE base_server = ? AND new_server = ?
           AND workload = ? AND threads = ? AND metric = 'tps'""",
        [base, new, workload, threads],
    ).fetchall()
    return [(r[0], r[1]) for r in rows]
