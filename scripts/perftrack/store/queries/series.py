"""Results grouped by series: the values compare and detect reduce to verdicts.

A series is one hardware key, runner class and cell shape, including every configuration
axis (null when a cell does not set it: schema v5); `SERIES_COLS` is its one definition,
in the column order of the `verdicts` and `change_points` tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from perftrack.core import record
from perftrack.store.queries.base import QueryBase, marks
from perftrack.store.queries.points import NightlyPoints
from perftrack.store.queries.shapes import ValueRow

SERIES_COLS: tuple[str, ...] = (
    "hw_key",
    "runner_class",
    "workload",
    "threads",
    "collation",
    "profile",
    "tables",
    "table_size",
    "duration_s",
    "connection",
    *record.OPTIONAL_CELL_FIELDS,
)
RUN_COLS = ("hw_key", "runner_class")  # series columns of `runs`; the rest are of `results`
assert SERIES_COLS[: len(RUN_COLS)] == RUN_COLS  # a key: its run's columns first


# A cell re-measured because its window was noisy (runner, host.repeat_of) has two ok
# attempts: only the latest counts, so a repeat never weighs twice. Written as "at least
# the newest ok attempt above the first": DuckDB then joins the few re-measured cells,
# where `NOT EXISTS (… r2.attempt > r.attempt)` joined every result with every other of
# its cell (1.0 s of a scan that takes 0.1 s at 1,000 nights; the same rows either way).
def latest_attempt(source: str = "results") -> str:
    """The condition on a result `r` of `source` (SQL of results rows) that it is its
    cell's latest ok attempt in that source."""
    return (
        f"r.attempt >= coalesce((SELECT max(r2.attempt) FROM {source} r2 WHERE r2.attempt > 1 "
        "AND r2.status = 'ok' AND r2.run_id = r.run_id AND r2.cell_id = r.cell_id), r.attempt)"
    )


LATEST_ATTEMPT = latest_attempt()
# The words run/steady.py puts in a window's noisy_reason when its throughput still moved.
NOT_STEADY = "not steady"
# Result columns a metric may name (the record's result and cost fields).
METRIC_COLUMNS = frozenset((*record.RESULT_FIELDS, *record.COST_FIELDS)) - {"threads"}


def series_select(cols: tuple[str, ...] = SERIES_COLS) -> str:
    """`ru.hw_key, ru.runner_class, r.workload, …` over `results r JOIN runs ru`."""
    return ", ".join(("ru." if c in RUN_COLS else "r.") + _quoted(c) for c in cols)


# p95's window is throughput's answer (its rows carry their latency lists): series_samples
LATENCY_COLUMN = "latency_pct_ms"


def metric_column(column: str) -> str:
    if column not in METRIC_COLUMNS:
        raise ValueError(f"not a result column: {column!r}")
    return column


class SeriesQueries(QueryBase):
    def columns_with_values(self, columns: Sequence[str]) -> set[str]:
        """The result columns of `columns` that hold at least one value (one scan)."""
        cols = [metric_column(c) for c in columns]
        if not cols:
            return set()
        row = self._one("SELECT " + ", ".join(f"count({c})" for c in cols) + " FROM results")
        return {c for c, n in zip(cols, row or (), strict=False) if n}

    def series_values(
        self,
        column: str,
        *,
        run_id: str | None = None,
        servers: list[str] | None = None,
        recent: int | None = None,
    ) -> list[ValueRow]:
        """Every ok value of `column` (latest attempt of a cell), oldest first: the series
        columns, server_id, product, version, version_string, stand_in, value,
        latency_pct_ms, and run_id and repeat (the round it was measured in: two servers'
        values of one run and repeat are a pair). `recent`: only each server's newest that
        many values per series."""
        sql, args = self._values_sql(column, run_id, servers, recent)
        return self._rows(
            ValueRow,
            f"SELECT * EXCLUDE (started_at, cell_id, attempt) FROM ({sql}) ORDER BY started_at",
            args,
        )

    def series_samples(
        self,
        column: str,
        *,
        run_id: str | None = None,
        servers: list[str] | None = None,
        recent: int | None = None,
    ) -> list[tuple[Any, ...]]:
        """The values of `series_values` (the same selection) as one row per series and
        server, in order of their oldest value: the series columns, server_id, product,
        version, version_string, stand_in (of its oldest value), then its values, their
        latency_pct_ms (None where not measured), run_ids and repeats, each a list oldest
        first. compare reads these: a dict per value was ~1.4 s of detect at 1,000 nights.
        Asked once per read-only store (`_kept`): the site's pages share one answer."""
        key = ("series_samples", column, run_id, tuple(servers or ()), recent)
        if column == LATENCY_COLUMN and not self.write and self._same_selection("tps", column):
            # the same rows as throughput's: their latency lists, from throughput's answer
            kept = self.series_samples("tps", run_id=run_id, servers=servers, recent=recent)
            return self._kept(key, lambda: [(*s[:-4], s[-3], s[-3], *s[-2:]) for s in kept])
        return self._kept(key, lambda: self._samples(column, run_id, servers, recent))

    def series_samples_of(
        self, columns: Sequence[str], *, recent: int
    ) -> dict[str, list[tuple[Any, ...]]]:
        """`series_samples(c, recent=recent)` of each column (every series' comparisons'
        window), in one query where the columns pick the rows of the first (the heatmap's
        metrics: one window, not one a metric, was ~3 s of the site build at the nightly's
        size); each kept as series_samples keeps it, so compare's later asks read it. p95's
        window stays throughput's answer (series_samples), and a writer asks each alone."""
        cols = [metric_column(c) for c in columns]
        joint = [c for c in cols if c != LATENCY_COLUMN]
        writer = self.write or not joint  # a writer asks each column alone
        same = [] if writer else [c for c in joint[1:] if self._same_selection(joint[0], c)]
        out = self._joint_samples(joint[0], same, recent) if same else {}
        for c in cols:
            if c not in out:
                out[c] = self.series_samples(c, recent=recent)
        return out

    def _joint_samples(
        self, first: str, same: list[str], recent: int
    ) -> dict[str, list[tuple[Any, ...]]]:
        """`series_samples(c, recent=recent)` of `first` and of each of `same` (columns whose
        rows `first`'s pick), from one kept query, each kept as series_samples keeps it."""
        both = self._kept(
            ("series_samples_of", first, tuple(same), recent),
            lambda: self._samples(first, None, None, recent, same),
        )
        at = len(SERIES_COLS) + 5  # the values' list: after the series, server and its four

        def of(column: int) -> Callable[[], list[tuple[Any, ...]]]:  # (first, *same)[column]
            own = at + 3 + column if column else at  # the others' lists follow the round's

            def rows() -> list[tuple[Any, ...]]:
                return [(*s[:at], s[own], *s[at + 1 : at + 4]) for s in both]

            return rows

        return {
            c: self._kept(("series_samples", c, None, (), recent), of(column))
            for column, c in enumerate((first, *same))
        }

    def _same_selection(self, metric_a: str, metric_b: str) -> bool:
        """No ok result has a value of one of the two columns and not of the other: the
        two columns' series_values pick the same rows. A count rolled forward night by
        night (a scan of every result was 0.3-0.7 s of detect at ten years), asked once per
        read-only store (series_samples asks it before looking for its answer)."""
        ca, cb = metric_column(metric_a), metric_column(metric_b)

        def differing(source: str) -> str:  # its ok rows with one of the two and not the other
            return (
                f"SELECT CAST(count(*) AS BIGINT) AS n FROM {source} "
                f"WHERE status = 'ok' AND ({ca} IS NULL) <> ({cb} IS NULL)"
            )

        def count() -> tuple[Any, ...] | None:  # counts add up night by night
            name, before = self._rolling(
                differing, lambda rows: f"SELECT CAST(sum(n) AS BIGINT) AS n FROM {rows}"
            )
            return self._one(before(f"SELECT n FROM {name}"))

        row = self._kept(("same_selection", ca, cb), count)
        return row is not None and row[0] == 0

    def _samples(
        self,
        column: str,
        run_id: str | None,
        servers: list[str] | None,
        recent: int | None,
        also: Sequence[str] = (),
    ) -> list[tuple[Any, ...]]:
        """series_samples' rows; with `also` (columns picking the same rows), each row
        ends with their values' lists too, in that order."""
        before = None
        args: list[Any] = []
        if recent is not None and not run_id and not servers:
            # the comparisons' window of every series: rolled forward night by night (the
            # newest of the kept window's and the night's newest)
            name, before = self._rolling(
                lambda source: self._values_sql(column, None, None, recent, source, also)[0],
                lambda rows: f"SELECT * FROM {rows} r {_newest(recent)}",
                lambda kept, added: not self._replaces(added, kept),
            )
            sql = f"SELECT * FROM {name}"
        else:
            sql, args = self._values_sql(column, run_id, servers, recent, also=also)

        cols = ", ".join(f'"{c}"' for c in (*SERIES_COLS, "server_id"))
        first = ", ".join(
            f"arg_min({c}, started_at)"
            for c in ("product", "version", "version_string", "stand_in")
        )
        # one order for every list: by time, then the row's run and cell (equal times stay
        # aligned; the latest attempt of a cell is one row). Not record_id: the view makes
        # it from these for every row of the history, before the window drops most of them.
        lists = ", ".join(
            f'list("{c}" ORDER BY started_at, run_id, cell_id)'
            for c in ("value", "latency_pct_ms", "run_id", "round", *_also_names(also))
        )
        return self._answer(  # detect's and then the site build's (store/files/answers.py)
            f"""SELECT {cols}, {first}, {lists} FROM ({sql}) GROUP BY {cols}
                ORDER BY min(started_at), {cols}""",
            args,
            before,
        )

    def _replaces(self, added: str, kept: str) -> bool:
        """Does an added result (`added`: SQL of results) replace a kept row of the window
        (`kept`): a later ok attempt of its cell, which `latest_attempt` would take?"""
        row = self._one(f"""
            SELECT count(*) FROM {added} n JOIN {kept} k USING (run_id, cell_id)
            WHERE n.status = 'ok' AND n.attempt > 1 AND n.attempt > k.attempt""")
        return bool(row and row[0])

    def _values_sql(
        self,
        column: str,
        run_id: str | None,
        servers: list[str] | None,
        recent: int | None,
        source: str = "results",
        also: Sequence[str] = (),
    ) -> tuple[str, list[Any]]:
        """The selection of series_values and series_samples, with started_at and
        cell_id (their order) and attempt; of the results `source` (SQL) holds. `also`:
        columns selected as well, as `_also_names` (the rows are picked by `column`)."""
        col = metric_column(column)
        extra = "".join(
            f", r.{metric_column(c)} AS {n}" for c, n in zip(also, _also_names(also), strict=True)
        )
        where = ["r.status = 'ok'", f"r.{col} IS NOT NULL", latest_attempt(source)]
        args: list[Any] = []
        if run_id:
            where.append("r.run_id = ?")
            args.append(run_id)
        if servers:
            where.append(f"s.server_id IN ({marks(servers)})")
            args += servers
        sql = f"""SELECT {series_select()},
                       s.server_id, s.product, s.version, s.version_string, s.stand_in,
                       r.{col} AS value, r.latency_pct_ms, r.run_id, r."repeat" AS round,
                       r.started_at, r.cell_id, r.attempt{extra}
                FROM {source} r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
                WHERE {" AND ".join(where)}"""
        if recent is not None:
            sql = f"SELECT * FROM ({sql}) r {_newest(int(recent))}"
        return sql, args

    def noise_samples(self, column: str, recent_runs: int) -> list[tuple[Any, ...]]:
        """(runner_class, hw_key, workload, [values]): one row per run, server and series,
        its repeats' values in repeat order, over each runner class's newest `recent_runs`
        runs; rows in one order (the noise sums them: in DuckDB's order of the moment, the
        paired spread differed between two detects in the last digits)."""
        return self.noise_samples_of([column], recent_runs)[column]

    def noise_samples_of(
        self, columns: Sequence[str], recent_runs: int
    ) -> dict[str, list[tuple[Any, ...]]]:
        """`noise_samples` of each column, in one query when every column picks the same
        rows as the first (detect's throughput and p95: one scan, not two)."""
        first, *rest = (metric_column(c) for c in columns)
        one = [c for c in rest if self._same_selection(first, c)]
        out = self._noise_lists(first, [first, *one], recent_runs)
        for c in rest:
            if c not in out:
                out |= self._noise_lists(c, [c], recent_runs)
        return out

    def _noise_lists(
        self, picked_by: str, columns: list[str], recent_runs: int
    ) -> dict[str, list[tuple[Any, ...]]]:
        lists = ", ".join(f'list(r.{c} ORDER BY r."repeat")' for c in columns)
        rows = self._tuples(f"""
            SELECT ru.runner_class, ru.hw_key, r.workload, {lists}
            FROM results r JOIN runs ru USING (run_id)
            WHERE r.status = 'ok' AND r.{picked_by} IS NOT NULL AND {LATEST_ATTEMPT}
              AND r.run_id IN (SELECT run_id FROM runs QUALIFY row_number() OVER (
                  PARTITION BY runner_class, hw_key ORDER BY last_finished_at DESC
              ) <= {int(recent_runs)})
            GROUP BY ru.runner_class, ru.hw_key, r.run_id, r.server_key, {series_select()}
            ORDER BY ru.runner_class, ru.hw_key, r.run_id, r.server_key, {series_select()}
        """)
        return {c: [(*r[:3], r[3 + i]) for r in rows] for i, c in enumerate(columns)}

    def series_unsteady(self) -> dict[tuple[Any, ...], int]:
        """(series…, server_id) -> how many of its results (each cell's latest ok attempt)
        measured a window whose throughput was still moving (run/steady.py; the record's
        `result.steady` false, stored as a `noisy_reason` naming it). Only those few rows
        pass the first filter, so the latest-attempt check joins them alone."""
        rows = self._tuples(f"""
            SELECT {series_select()}, s.server_id, count(*) AS n
            FROM results r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
            WHERE r.noisy_reason LIKE '%{NOT_STEADY}%' AND r.status = 'ok' AND {LATEST_ATTEMPT}
            GROUP BY ALL""")
        return {tuple(row[:-1]): int(row[-1]) for row in rows}

    def series_varsets(self) -> dict[tuple[Any, ...], str]:
        """(series…, server_id) -> the server's most common variable set in that series (of
        two as common, the first by hash). Asked once per read-only store (`_kept`)."""
        return self._kept("series_varsets", self._varsets)

    def _varsets(self) -> dict[tuple[Any, ...], str]:
        def counts(source: str) -> str:  # per series, server and set: its results
            return f"""
                SELECT {series_select()}, s.server_id, r.varset_hash, count(*) AS n
                FROM {source} r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
                WHERE r.status = 'ok' AND r.varset_hash IS NOT NULL GROUP BY ALL"""

        name, before = self._rolling(  # counts add up night by night
            counts,
            lambda rows: (
                f"SELECT * EXCLUDE (n), CAST(sum(n) AS BIGINT) AS n FROM {rows} GROUP BY ALL"
            ),
        )
        rows = self._tuples(before(f"SELECT * FROM {name} ORDER BY n DESC, varset_hash"))
        out: dict[tuple[Any, ...], str] = {}
        for row in rows:
            out.setdefault(tuple(row[: len(SERIES_COLS) + 1]), row[len(SERIES_COLS) + 1])
        return out

    def nightly_points(self, column: str) -> NightlyPoints:
        """(series…, server_id) -> [(run_id, first started_at, median value)], oldest first:
        one point per run (the median over its repeats), as arrays (store/queries/points.py).

        Grouped by the run, the server and a hash of the result's series columns, fetched
        as numbers: a row of 17 key columns per point, fetched into Python, was 1.4 s of
        detect at 1,000 nights (now 0.6). The hash names a key exactly when no two keys
        share it; they are checked, and grouped by the columns themselves if two do."""
        col = metric_column(column)
        own = SERIES_COLS[len(RUN_COLS) :]  # the result's series columns
        cols = ", ".join("r." + _quoted(c) for c in own)
        picked = f"r.status = 'ok' AND r.{col} IS NOT NULL"

        def distinct(source: str) -> str:  # the keys of a results source
            return f"SELECT DISTINCT hash({cols}) AS h, {cols} FROM {source} r WHERE {picked}"

        name, before = self._rolling(distinct, lambda rows: f"SELECT DISTINCT * FROM {rows}")
        keys = self._tuples(before(f"SELECT * FROM {name} ORDER BY {', '.join(map(_quoted, own))}"))
        hashes = np.array([k[0] for k in keys], dtype=np.uint64)
        by_hash = _each_its_own(hashes)  # else two keys share one: grouped by the columns
        group = f"hash({cols})" if by_hash else cols

        def points(source: str) -> str:  # per run, server and key: its first time, median
            return f"""
                SELECT r.run_id, s.server_id, {group}{" AS h" if by_hash else ""},
                       epoch_us(min(r.started_at)) AS t, median(r.{col}) AS v
                FROM {source} r JOIN servers s USING (server_key)
                WHERE {picked} AND {latest_attempt(source)}
                GROUP BY r.run_id, s.server_id, {group}"""

        def own_runs(kept: str, added: str) -> bool:  # a run's points need all its rows
            shared = self._one(
                f"SELECT count(*) FROM (SELECT DISTINCT run_id FROM {added}) "
                f"JOIN (SELECT DISTINCT run_id FROM {kept}) USING (run_id)"
            )
            return not (shared and shared[0])

        sql = f"""
            WITH ri AS (SELECT run_id, row_number() OVER (ORDER BY run_id) - 1 AS ri FROM runs),
                 si AS (SELECT server_id, row_number() OVER (ORDER BY server_id) - 1 AS si
                        FROM (SELECT DISTINCT server_id FROM servers))
            SELECT {"p.h" if by_hash else _key_number(own)} AS k, ri.ri, si.si, p.t, p.v
            FROM {{points}} p JOIN ri USING (run_id) JOIN si USING (server_id)"""
        if by_hash:  # rolled forward night by night (store/files/rolling.py)
            name, before = self._rolling(points, lambda rows: f"SELECT * FROM {rows}", own_runs)
            sql = before(sql.replace("{points}", name))
        else:
            sql = sql.replace("{points}", f"({points('results')})")
        a = self.con.execute(sql).fetchnumpy()
        if by_hash:  # each point's key: the index of its hash among the keys'
            order = np.argsort(hashes)
            ki = order[np.searchsorted(hashes[order], np.asarray(a["k"], dtype=np.uint64))]
        else:
            ki = np.asarray(a["k"], dtype=np.int64)
        runs = self._tuples("SELECT run_id, hw_key, runner_class FROM runs ORDER BY run_id")
        servers = [r[0] for r in self._tuples("SELECT DISTINCT server_id FROM servers ORDER BY 1")]
        ri, si = (np.asarray(a[c], dtype=np.int64) for c in ("ri", "si"))
        # a point's key: its run's class columns, its result's series columns, its server
        classes = sorted({r[1:] for r in runs}, key=repr)
        class_of = {c: i for i, c in enumerate(classes)}
        run_class = np.array([class_of[r[1:]] for r in runs], dtype=np.int64)
        n_k, n_s = len(keys), len(servers)
        combined = (run_class[ri] * n_k + ki) * n_s + si
        found, key = np.unique(combined, return_inverse=True)
        return NightlyPoints(
            series_keys=[
                (*classes[c // (n_k * n_s)], *keys[c // n_s % n_k][1:], servers[c % n_s])
                for c in found.tolist()
            ],
            runs=[r[0] for r in runs],
            key=key.reshape(-1),
            run=ri,
            at=np.asarray(a["t"], dtype=np.int64),
            value=np.asarray(a["v"], dtype=float),
            at_of=_from_epoch_us,
        )

    def series_last_run(self) -> dict[tuple[Any, ...], tuple[datetime, str]]:
        """(series…, server_id) -> when that server last finished an ok cell of it, and
        that cell's run id. Asked once per read-only store (`_kept`)."""
        return self._kept("series_last_run", self._last_run)

    def _last_run(self) -> dict[tuple[Any, ...], tuple[datetime, str]]:
        def last(source: str) -> str:  # per series and server: its newest finish, its run
            return f"""
                SELECT {series_select()}, s.server_id, max(r.finished_at) AS last_at,
                       arg_max(r.run_id, r.finished_at) AS last_run
                FROM {source} r JOIN runs ru USING (run_id) JOIN servers s USING (server_key)
                WHERE r.status = 'ok' GROUP BY ALL"""

        name, before = self._rolling(  # the newest of the kept one and the night's
            last,
            lambda rows: (
                "SELECT * EXCLUDE (last_at, last_run), max(last_at) AS last_at, "
                f"arg_max(last_run, last_at) AS last_run FROM {rows} GROUP BY ALL"
            ),
        )
        rows = self._tuples(before(f"SELECT * FROM {name}"))
        return {tuple(r[:-2]): (r[-2], r[-1]) for r in rows}

    def server_last_result(self) -> dict[str, datetime]:
        """server_id -> when its newest result (any status) finished."""

        def newest(source: str) -> str:  # per server key: its newest finish
            return f"SELECT server_key, max(finished_at) AS last_at FROM {source} GROUP BY 1"

        name, before = self._rolling(  # the newest of the kept one and the night's
            newest,
            lambda rows: f"SELECT server_key, max(last_at) AS last_at FROM {rows} GROUP BY 1",
        )
        return dict(
            self._tuples(
                before(
                    f"SELECT s.server_id, max(k.last_at) FROM {name} k "
                    "JOIN servers s USING (server_key) GROUP BY 1"
                )
            )
        )


EPOCH = datetime(1970, 1, 1)


def _from_epoch_us(micros: int) -> datetime:
    """A TIMESTAMP's Python value (naive, UTC) from DuckDB's epoch_us of it."""
    return EPOCH + timedelta(microseconds=micros)


def _newest(recent: int) -> str:
    """The window over rows `r` of `_values_sql`'s columns: each server's newest `recent`
    values of each series (the one definition: `_values_sql` and the rolled window)."""
    key = ", ".join("r." + _quoted(c) for c in (*SERIES_COLS, "server_id"))
    return f"QUALIFY row_number() OVER (PARTITION BY {key} ORDER BY r.started_at DESC) <= {recent}"


def _also_names(also: Sequence[str]) -> list[str]:
    """The names `_values_sql` gives the columns `also` selects besides its own."""
    return [f"value_{i}" for i in range(1, len(also) + 1)]


def _quoted(column: str) -> str:
    return '"collation"' if column == "collation" else column


def _key_number(own: Sequence[str]) -> str:
    """The key's index among the keys in the order of its columns (`p`'s columns): for
    when two keys share a hash (never seen; kept exact)."""
    return "dense_rank() OVER (ORDER BY " + ", ".join(f"p.{_quoted(c)}" for c in own) + ") - 1"


def _each_its_own(hashes: np.ndarray) -> bool:
    """No two keys share a hash."""
    return len(np.unique(hashes)) == len(hashes)
