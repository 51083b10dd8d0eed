"""The tables `perftrack detect` derives from `results`: noise, verdicts, change points.

Read here by compare, planning, the site and the PR check; written only by
`replace_derived`, in one transaction of a store opened for writing (under its lock).
Also the variable-set diff a verdict carries (`server_variables`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import duckdb

from perftrack.core.errors import DatabaseError
from perftrack.store.files.dbfile import first_line
from perftrack.store.files.rows import insert_rows
from perftrack.store.queries.alerts import ALERTS_TABLE
from perftrack.store.queries.base import QueryBase
from perftrack.store.queries.shapes import ChangePointRow, VerdictRow

DERIVED_TABLES = ("noise", "verdicts", "change_points")
# How each stored verdict was computed and what an inconclusive one needs (issue 37):
# whether it is paired (per-round ratios) and the rounds a side that would decide it
# (stats.rounds_needed). Created when detect first writes it (CREATE TABLE IF NOT EXISTS,
# in replace_derived's transaction), not by a schema migration, as `explanations`: a DB
# without it is one whose verdicts predate it, and its rows then show neither.
VERDICT_ROUNDS_TABLE = "verdict_rounds"
VERDICT_ROUNDS_SQL = """
CREATE TABLE IF NOT EXISTS verdict_rounds (
    verdict_id VARCHAR NOT NULL,
    metric VARCHAR NOT NULL,
    paired BOOLEAN NOT NULL,
    rounds_needed INTEGER
)
"""
NoiseKey = tuple[str, str, str, str]  # runner_class, hw_key, workload, metric


class VerdictQueries(QueryBase):
    def noise_cv(self) -> dict[NoiseKey, float]:
        """The stored A/A CV (median) per runner class, hardware, workload and metric."""
        try:
            rows = self._tuples(
                "SELECT runner_class, hw_key, workload, metric, cv_median FROM noise"
            )
        except duckdb.Error:  # an older DB without the table: thresholds come from the data
            return {}
        return {(r[0], r[1], r[2], r[3]): float(r[4]) for r in rows}

    def noise_spread(self) -> dict[NoiseKey, float]:
        """The stored paired A/A spread (the standard deviation of per-round log-ratios of a
        server against itself) per runner class, hardware, workload and metric; none from a
        DB before schema v7 or where too few A/A pairs were measured."""
        try:
            rows = self._tuples(
                "SELECT runner_class, hw_key, workload, metric, paired_spread FROM noise "
                "WHERE paired_spread IS NOT NULL"
            )
        except duckdb.Error:  # before schema v7: thresholds come from the pairs themselves
            return {}
        return {(r[0], r[1], r[2], r[3]): float(r[4]) for r in rows}

    def stored_noise(self, metric: str) -> tuple[list[tuple[Any, ...]], Any]:
        """The noise table's rows of a metric (in its column order: detect.compute_noise's
        tuples) and when they were computed (the newest computed_at; None without rows)."""
        rows = self._tuples(
            "SELECT * FROM noise WHERE metric = ? ORDER BY runner_class, hw_key, workload",
            [metric],
        )
        return rows, max((r[8] for r in rows), default=None)

    def verdict_columns(self) -> list[str]:
        """The columns of `verdicts`, in table order (detect writes rows positionally)."""
        return [d[0] for d in self.con.execute("SELECT * FROM verdicts LIMIT 0").description]

    def verdicts_freshness(self, metric: str) -> tuple[Any, Any, Any]:
        """(newest computed_at, newest last_result_at of the metric's verdicts, newest
        finished_at of any result): whether detect ran after the newest result. The
        newest result is read once per read-only store (a scan of every night file's
        finished_at; the site build asks five times)."""
        row = self._one(
            "SELECT max(computed_at), max(last_result_at) FROM verdicts WHERE metric = ?",
            [metric],
        )
        computed, seen = row if row else (None, None)
        newest = self._kept(
            "newest_finished",
            lambda: (self._one("SELECT max(finished_at) FROM results") or (None,))[0],
        )
        return computed, seen, newest

    def stored_verdicts(self, metric: str) -> list[VerdictRow]:
        return self._rows(VerdictRow, "SELECT * FROM verdicts WHERE metric = ?", [metric])

    def verdict_rounds(self, metric: str) -> dict[str, tuple[bool, int | None]]:
        """verdict_id -> (paired, rounds a side that would decide it) of the metric's
        stored verdicts; {} when detect has not written them (VERDICT_ROUNDS_TABLE)."""
        has = self._one(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
            [VERDICT_ROUNDS_TABLE],
        )
        if not has or not has[0]:
            return {}
        rows = self._tuples(
            "SELECT verdict_id, paired, rounds_needed FROM verdict_rounds WHERE metric = ?",
            [metric],
        )
        return {vid: (bool(paired), needed) for vid, paired, needed in rows}

    def change_points(self, metric: str) -> list[ChangePointRow]:
        """The stored change points of a metric, oldest first."""
        return self._rows(
            ChangePointRow,
            "SELECT * FROM change_points WHERE metric = ? ORDER BY at_time",
            [metric],
        )

    def variables_diff(
        self, set_a: str, set_b: str
    ) -> list[tuple[str, str | None, str | None, str]]:
        """(name, value in a, value in b, added/removed/changed) for every variable that
        differs between two stored variable sets, by name. A set is stored once under the
        hash of its content and never changes, so each pair is read once per open store
        (detect asks for the same few pairs for each of its hundreds of verdicts)."""
        if set_a == set_b:
            return []
        cache: dict[tuple[str, str], Any] = self.__dict__.setdefault("_variables_diffs", {})
        if (set_a, set_b) not in cache:
            cache[(set_a, set_b)] = self._variables_diff(set_a, set_b)
        return list(cache[(set_a, set_b)])

    def _variables_diff(
        self, set_a: str, set_b: str
    ) -> list[tuple[str, str | None, str | None, str]]:
        sets = self._variable_sets(set_a, set_b)
        xa, xb = sets[set_a], sets[set_b]
        out: list[tuple[str, str | None, str | None, str]] = []
        for name in sorted(xa.keys() | xb.keys()):
            if name not in xa:
                out.append((name, None, xb[name], "added"))
            elif name not in xb:
                out.append((name, xa[name], None, "removed"))
            elif xa[name] != xb[name]:
                out.append((name, xa[name], xb[name], "changed"))
        return out

    def variable_sets(self, *wanted: str) -> dict[str, dict[str, str | None]]:
        """Stored variable sets by hash ({} for a hash not stored): what a server reported
        (`SHOW GLOBAL VARIABLES`, without the volatile ones, store/files/variables.py)."""
        sets = self._variable_sets(*wanted)
        return {h: dict(sets[h]) for h in wanted}

    def _variable_sets(self, *wanted: str) -> dict[str, dict[str, str | None]]:
        """Stored variable sets (hash -> {name: value}; {} for a hash not stored): every
        set in one query the first time, then any set stored since (a set never changes
        under its hash). A few dozen sets of a few hundred variables, where a query per
        pair of sets cost the site build a third of a second."""
        sets: dict[str, dict[str, str | None]] = self.__dict__.setdefault("_variable_sets_read", {})
        missing = [h for h in wanted if h not in sets]
        if missing:
            where = "" if not sets else "WHERE varset_hash IN (SELECT unnest(?::VARCHAR[]))"
            for h, name, value in self._tuples(
                f"SELECT varset_hash, name, value FROM server_variables {where}",
                [missing] if sets else [],
            ):
                sets.setdefault(h, {})[name] = value
            for h in missing:
                sets.setdefault(h, {})
        return sets

    def _column_types(self, table: str) -> list[tuple[str, str]]:
        """(name, type) of a table's columns in table order; JSON travels as VARCHAR."""
        rows = self._tuples(
            "SELECT column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = current_database() AND schema_name = 'main' "
            "AND table_name = ? ORDER BY column_index",
            [table],
        )
        return [(name, "VARCHAR" if kind == "JSON" else kind) for name, kind in rows]

    def replace_derived(self, metric: str, tables: Mapping[str, Sequence[tuple[Any, ...]]]) -> None:
        """Replace each derived table's rows of `metric` by `tables[name]` (rows in table
        column order), all in one transaction: readers see the old rows or the new. The
        alerts (schema v7) are written here too, with the verdicts they came from."""
        if not self.write:
            raise RuntimeError("replace_derived needs a store opened with write=True")
        unknown = set(tables) - {*DERIVED_TABLES, ALERTS_TABLE, VERDICT_ROUNDS_TABLE}
        if unknown:
            raise ValueError(f"not a derived table: {sorted(unknown)}")
        self.con.begin()
        try:
            for table, rows in tables.items():
                if table == VERDICT_ROUNDS_TABLE:
                    self.con.execute(VERDICT_ROUNDS_SQL)
                self.con.execute(f"DELETE FROM {table} WHERE metric = ?", [metric])
                # one statement, a typed list per column (executemany: one per row, ~1 ms
                # each: seconds for a year's change points)
                insert_rows(self.con, table, self._column_types(table), rows)
            self.con.commit()
        except duckdb.Error as exc:
            self.con.rollback()
            raise DatabaseError(
                f"writing {', '.join(tables)} failed and was rolled back ({first_line(exc)})"
            ) from None
        except BaseException:
            self.con.rollback()
            raise
