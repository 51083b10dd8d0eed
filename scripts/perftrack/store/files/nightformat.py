"""How a `results` night file stores its rows (schemas v10, v11): exactly, in fewer bytes.

A night's results file is most of what a night costs the git repository
(docs/benchmarks.md, "Budgets"). Since schema v10 it stores two things differently, and
since v11 a third, all without losing a bit (the views give back exactly the values
ingest wrote):

- `record_id` is null where it is `run_id:cell_id:attempt` (every record: core/record.py
  validates it); the view recomputes it. An id of another shape would be kept as it is.
- each DOUBLE column (and the `tps_series` list) is stored as a DECIMAL(18, s) with the
  smallest scale s ≤ MAX_SCALE at which every value of the file comes back as the same
  double (sysbench reports two decimals, the summaries are rounded: rows.py); a column
  with a value no scale holds exactly (or NaN, ±inf, -0.0) stays DOUBLE in that file. A
  DECIMAL is a Parquet INT64: small integers compress several times better than the
  mantissas of decimal fractions.

The views (nightfiles) combine files by column name and cast these columns back to
DOUBLE, so every reader sees the types of docs/schema.md whatever each file holds.
Files written by schemas v6 to v9 (full ids and doubles) read through the same views
unchanged.
"""

from __future__ import annotations

import functools

import duckdb

FORMAT_VERSION = 10  # the schema version that introduced this format
SECONDS_VERSION = 11  # ... and the one that stores whole-second timestamps as seconds
SECONDS_COLUMNS = ("started_s", "elapsed_s")  # in the files only, never in the views
_US = 1_000_000
RECORD_ID = "run_id || ':' || cell_id || ':' || CAST(attempt AS VARCHAR)"  # record.record_id


@functools.cache
def typed_columns(kind: str) -> tuple[str, ...]:
    """The columns of `results` of DuckDB type `kind` (DOUBLE, DOUBLE[]), in table order:
    rows.RESULT_COLUMNS, imported here, as rows imports this module's users."""
    from perftrack.store.files import rows

    return tuple(name for name, t in rows.RESULT_COLUMNS if t == kind)


MAX_SCALE = 6  # DECIMAL(18, 6) still holds ±10^12
WIDTH = 18  # the widest DECIMAL stored as a Parquet INT64


def _decimal(scale: int) -> str:
    return f"DECIMAL({WIDTH}, {scale})"


def _exact(column: str, scale: int, is_list: bool) -> str:
    """SQL: does every value of `column` come back from DECIMAL(18, scale) as itself?
    Compared as text, the shortest repr of a double: -0.0 and 0.0 differ there; NaN and
    ±inf do not cast at all."""
    c = f'"{column}"'
    kind = _decimal(scale) + ("[]" if is_list else "")
    back = f"TRY_CAST(TRY_CAST({c} AS {kind}) AS DOUBLE{'[]' if is_list else ''})"
    return (
        f"bool_and({c} IS NULL OR coalesce(CAST({back} AS VARCHAR) = CAST({c} AS VARCHAR), false))"
    )


def _whole(column: str) -> str:
    return f"epoch_us({column}) % {_US} = 0"


def _seconds(version: int) -> tuple[list[str], list[str]]:
    """(REPLACE items, added columns) storing whole-second timestamps as seconds (v11)."""
    if version < SECONDS_VERSION:
        return [], []
    started = _whole("started_at")
    both = f"{started} AND {_whole('finished_at')}"
    return [
        f"CASE WHEN {started} THEN NULL ELSE started_at END AS started_at",
        f"CASE WHEN {both} THEN NULL ELSE finished_at END AS finished_at",
    ], [
        f"CASE WHEN {started} THEN epoch_us(started_at) // {_US} END AS started_s",
        f"CASE WHEN {both} THEN (epoch_us(finished_at) - epoch_us(started_at)) // {_US} "
        "END AS elapsed_s",
    ]


def encoded_select(con: duckdb.DuckDBPyConnection, relation: str, version: int) -> str:
    """The SELECT list that writes `relation` (rows of `results`, in its column types) in
    the format of schema `version` (≥ 10): each DOUBLE column at the smallest exact scale,
    record_id null where it is derived, and since v11 whole-second timestamps as
    seconds."""
    names = {d[0] for d in con.execute(f"SELECT * FROM {relation} LIMIT 0").description}
    doubles, lists = typed_columns("DOUBLE"), typed_columns("DOUBLE[]")
    columns = [(c, c in lists) for c in (*doubles, *lists) if c in names]
    checks = [_exact(c, s, is_list) for c, is_list in columns for s in range(MAX_SCALE + 1)]
    row = con.execute(f"SELECT {', '.join(checks)} FROM {relation}").fetchone() or ()
    replace = [f"CASE WHEN record_id = {RECORD_ID} THEN NULL ELSE record_id END AS record_id"]
    for i, (c, is_list) in enumerate(columns):
        exact = row[i * (MAX_SCALE + 1) : (i + 1) * (MAX_SCALE + 1)]
        scale = next((s for s, ok in enumerate(exact) if ok), None)
        if scale is not None:
            kind = _decimal(scale) + ("[]" if is_list else "")
            replace.append(f'CAST("{c}" AS {kind}) AS "{c}"')
    times, added = _seconds(version)
    return ", ".join([f"* REPLACE ({', '.join(replace + times)})", *added])


def decoded_select(version: int) -> str:
    """The view's SELECT list over results files up to schema `version` (the newest of
    the files it reads, ≥ 10): record_id recomputed where a file left it null, every
    DOUBLE column cast back (a no-op on files written before v10), and since v11 the
    timestamps a file stored as seconds (the seconds' columns are left out)."""
    replace = [f"coalesce(record_id, {RECORD_ID}) AS record_id"]
    replace += [f'CAST("{c}" AS DOUBLE) AS "{c}"' for c in typed_columns("DOUBLE")]
    replace += [f'CAST("{c}" AS DOUBLE[]) AS "{c}"' for c in typed_columns("DOUBLE[]")]
    if version < SECONDS_VERSION:
        return f"* REPLACE ({', '.join(replace)})"
    replace += [
        f"coalesce(started_at, make_timestamp(started_s * {_US})) AS started_at",
        f"coalesce(finished_at, make_timestamp((started_s + elapsed_s) * {_US})) AS finished_at",
    ]
    return f"* EXCLUDE ({', '.join(SECONDS_COLUMNS)}) REPLACE ({', '.join(replace)})"
