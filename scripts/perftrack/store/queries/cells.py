"""Cells of given servers, as a study's report and page read them: counted, and the
records of the cells its matrices plan (publish/study_runs.py says which: `planned_cells`).

The filter runs in DuckDB: a study's servers include ones the nightly matrix runs every
night, whose other cells (other workloads, threads, lengths, profiles) would otherwise
leave the DB as Python dicts only to be dropped (1.7M of them at 1,000 nights).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from perftrack.core import record
from perftrack.store.queries.base import QueryBase, marks

# The results columns a planned cell set may constrain: the cell's fields.
CELL_COLUMNS = (
    "workload",
    "threads",
    "collation",
    "profile",
    "tables",
    "duration_s",
    *record.OPTIONAL_CELL_FIELDS,
)
# A union of cell sets: a cell is in it when one set holds the value of each field it names.
CellSets = Sequence[Mapping[str, Sequence[Any]]]


class CellQueries(QueryBase):
    def cell_counts(self, server_ids: list[str]) -> dict[str, int]:
        """How many cells (the latest attempt of each) each of these servers has, for the
        ones with results: what picks the scale a study page shows."""
        if not server_ids:
            return {}
        # A cell's id includes its server (planning/cells.py IDENTITY), so counting the
        # distinct (run, cell) pairs of a server counts its cells' latest attempts.
        rows = self._tuples(
            f"""SELECT s.server_id, count(DISTINCT (r.run_id, r.cell_id))
                FROM results r JOIN servers s USING (server_key)
                WHERE s.server_id IN ({marks(server_ids)}) GROUP BY 1""",
            server_ids,
        )
        return {sid: int(n) for sid, n in rows}

    # edge: records out: the stored record JSON
    def cell_records(self, server_ids: list[str], cells: CellSets) -> list[dict[str, Any]]:
        """The latest attempt of every cell of these servers that is in `cells`, shaped
        like run records (run_id, server.id, status, reason, cell fields with repeat,
        result.qps), in (run, cell) order: what a study page and `study report --from-db`
        read. Values are compared with `=` (a cell set never lists NULL)."""
        if not server_ids or not cells:
            return []
        where, params = _cells_sql(cells)
        axes = ", ".join(f"r.{a}" for a in record.OPTIONAL_CELL_FIELDS)
        # Every attempt of a cell has the cell's fields: filtering before the window keeps
        # the same latest attempts.
        cur = self.con.execute(
            f"""SELECT r.run_id, s.server_id, r.status, r.reason, r.qps, r.workload, r.threads,
                       r."collation", r.profile, r.tables, r.duration_s, r."repeat", {axes}
                FROM results r JOIN servers s USING (server_key)
                WHERE s.server_id IN ({marks(server_ids)}) AND ({where})
                QUALIFY row_number() OVER (PARTITION BY r.run_id, r.cell_id
                                           ORDER BY r.attempt DESC) = 1
                ORDER BY r.run_id, r.cell_id""",
            [*server_ids, *params],
        )
        out = []
        for row in cur.fetchall():
            run_id, sid, status, reason, qps, workload, threads, coll, profile, tables, *rest = row
            dur, repeat, *ax = rest
            cell = {
                "workload": workload,
                "threads": threads,
                "collation": coll,
                "profile": profile,
                "tables": tables,
                "duration_s": dur,
                "repeat": repeat,
                **dict(zip(record.OPTIONAL_CELL_FIELDS, ax, strict=True)),
            }
            out.append(
                {
                    "run_id": run_id,
                    "server": {"id": sid},
                    "status": status,
                    "reason": reason,
                    "cell": cell,
                    "result": {"qps": qps},
                }
            )
        return out


def _cells_sql(cells: CellSets) -> tuple[str, list[Any]]:
    """The union of cell sets as a WHERE condition on `results r`, and its parameters."""
    terms: list[str] = []
    params: list[Any] = []
    for cell_set in cells:
        conds = []
        for col, values in cell_set.items():
            if col not in CELL_COLUMNS:
                raise ValueError(f"not a cell field: {col!r}")
            if not values:
                conds.append("false")  # no value allowed: no cell
                continue
            conds.append(f'r."{col}" IN ({marks(values)})')
            params.extend(values)
        terms.append("(" + (" AND ".join(conds) or "true") + ")")
    return " OR ".join(terms), params
