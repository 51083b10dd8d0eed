"""Paired re-measurements of a version pair in the results DB: table `remeasures`.

`perftrack compare A B --until-conclusive` (and `bisect`'s steps, which run the same
rounds) measures B against A paired: interleaved rounds, one value of each server per
round, on one machine. Each round is a run ingested like any other (the `results` rows,
with the machine's hardware key); when the sequence ends, its outcome is one row here:
the cell those rounds measured (its series key, read back from the ingested rows: the
same columns `verdicts` and `alerts` are keyed by; for explain's first stage, whose
rounds are not ingested, the key of its A and B records, `key_of_record`), the pair, n
per side and the verdict with its ratio and interval, and the rounds' run ids.
`perftrack detect` joins the newest row of a cell and pair to the alert of that cell and
pair (analysis/alerts.py): a paired measurement supersedes the unpaired verdict
(docs/alerts.md, "Re-measured paired").

The table is created here if missing (CREATE TABLE IF NOT EXISTS, inside the write lock
of `open_db(write=True)`), not by a schema migration, as `explanations` is: a DB without
it is a DB in which nothing was re-measured.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from perftrack.store import store
from perftrack.store.queries.series import SERIES_COLS
from perftrack.store.queries.shapes import RemeasureRow, SeriesKey, series_key

TABLE = "remeasures"
_TYPES = {
    "threads": "INTEGER",
    "tables": "INTEGER",
    "table_size": "BIGINT",
    "duration_s": "INTEGER",
}
_SERIES_DDL = "".join(f'    "{c}" {_TYPES.get(c, "VARCHAR")},\n' for c in SERIES_COLS)
TABLE_SQL = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    remeasure_id VARCHAR PRIMARY KEY,
    source VARCHAR NOT NULL,
    base_server VARCHAR NOT NULL,
    new_server VARCHAR NOT NULL,
{_SERIES_DDL}    metric VARCHAR NOT NULL,
    n_base INTEGER NOT NULL,
    n_new INTEGER NOT NULL,
    ratio DOUBLE,
    ci_low DOUBLE,
    ci_high DOUBLE,
    p_value DOUBLE,
    threshold DOUBLE,
    verdict VARCHAR NOT NULL,
    run_ids JSON NOT NULL,
    measured_at TIMESTAMP NOT NULL
)
"""


@dataclass(frozen=True, kw_only=True)
class Remeasure:
    """One paired sequence's outcome: NEW against BASE on one cell (`key`: SERIES_COLS)."""

    source: str  # what measured it: `until-conclusive` (compare, bisect), `explain`
    base_server: str
    new_server: str
    key: SeriesKey
    metric: str
    n_base: int
    n_new: int
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    threshold: float | None
    verdict: str
    run_ids: tuple[str, ...]
    measured_at: datetime

    def remeasure_id(self) -> str:
        raw = [self.source, self.base_server, self.new_server, *map(str, self.run_ids)]
        return hashlib.sha256(json.dumps(raw).encode()).hexdigest()[:16]


def series_keys(results: store.Store, run_ids: Sequence[str]) -> list[SeriesKey]:
    """The distinct series keys (SERIES_COLS) of the ok results of these runs."""
    if not run_ids:
        return []
    cols = ", ".join(
        f'{"ru" if c in ("hw_key", "runner_class") else "r"}."{c}"' for c in SERIES_COLS
    )
    marks = ", ".join("?" for _ in run_ids)
    rows = results.con.execute(
        f"""SELECT DISTINCT {cols} FROM results r JOIN runs ru USING (run_id)
            WHERE r.run_id IN ({marks}) AND r.status = 'ok' ORDER BY ALL""",
        list(run_ids),
    ).fetchall()
    return [series_key(dict(zip(SERIES_COLS, r, strict=True))) for r in rows]


# edge: records in: a run record
def key_of_record(rec: dict[str, Any]) -> SeriesKey:
    """The series key (SERIES_COLS) of a run record, as ingest would store it: for rounds
    that are not ingested (explain's, whose B+g arms are not releases)."""
    own = {c: rec["cell"].get(c) for c in SERIES_COLS if c not in ("hw_key", "runner_class")}
    return series_key(
        {"hw_key": rec["hardware"]["key"], "runner_class": rec["runner_class"], **own}
    )


def save(db: Path, remeasure: Remeasure) -> str:
    """Store one outcome (again: replaced, by its id); its id."""
    rid = remeasure.remeasure_id()
    d = asdict(remeasure)
    values = [
        rid,
        remeasure.source,
        remeasure.base_server,
        remeasure.new_server,
        *(remeasure.key.get(c) for c in SERIES_COLS),
        remeasure.metric,
        remeasure.n_base,
        remeasure.n_new,
        *(d[c] for c in ("ratio", "ci_low", "ci_high", "p_value", "threshold")),
        remeasure.verdict,
        json.dumps(list(remeasure.run_ids)),
        remeasure.measured_at,
    ]
    with store.open_db(db, write=True) as st:
        st.con.execute(TABLE_SQL)
        st.con.execute(f"DELETE FROM {TABLE} WHERE remeasure_id = ?", [rid])
        st.con.execute(f"INSERT INTO {TABLE} VALUES ({', '.join('?' for _ in values)})", values)
    return rid


def _has_table(results: store.Store) -> bool:
    row = results.con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [TABLE]
    ).fetchone()
    return bool(row and row[0])


def newest(results: store.Store, metric: str) -> dict[tuple[Any, ...], RemeasureRow]:
    """The newest re-measurement of each cell and pair of `metric`, keyed by
    (*series key, base server, new server); {} when nothing was re-measured."""
    if not _has_table(results):
        return {}
    cur = results.con.execute(
        f"""SELECT * FROM {TABLE} WHERE metric = ?
            QUALIFY row_number() OVER (
                PARTITION BY {", ".join(f'"{c}"' for c in SERIES_COLS)}, base_server, new_server
                ORDER BY measured_at DESC, remeasure_id) = 1""",
        [metric],
    )
    names = [d[0] for d in cur.description]
    out: dict[tuple[Any, ...], RemeasureRow] = {}
    for row in cur.fetchall():
        d = dict(zip(names, row, strict=True))
        d["run_ids"] = json.loads(d["run_ids"])
        out[(*(d[c] for c in SERIES_COLS), d["base_server"], d["new_server"])] = cast(
            RemeasureRow,
            d,  # the table's columns (test_shapes), run_ids decoded
        )
    return out
