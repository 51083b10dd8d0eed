"""The rows the named queries return, typed: one TypedDict per table or answer.

A row is still the dict DuckDB's columns make (`QueryBase._rows`), so a reader indexes it
as before; the type checker (mypy --strict, `make lint`) now knows its keys and their
types. `SeriesKey` is the series (the columns of `series.SERIES_COLS`) every keyed table
starts with; a column an older schema lacks is simply absent from an older DB's rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypedDict


class CellShape(TypedDict):
    """A cell's shape as the tables store it (the identity of core/cell.py without the
    server, warm-up and repeat): what a series and a run's cell have in common."""

    workload: str
    threads: int
    collation: str
    profile: str
    tables: int
    table_size: int
    duration_s: int
    connection: str
    engine: str | None
    isolation: str | None
    durability: str | None
    handshake: str | None
    dataset_size: str | None
    phase: str | None


class SeriesKey(CellShape):
    """The columns of a series (series.SERIES_COLS): hardware, runner class, cell shape."""

    hw_key: str
    runner_class: str


def series_key(values: Mapping[str, Any]) -> SeriesKey:
    """The series columns of a row or key (every column of series.SERIES_COLS), typed; the
    optional cell fields an older schema's rows lack are None."""
    return SeriesKey(
        hw_key=values["hw_key"],
        runner_class=values["runner_class"],
        workload=values["workload"],
        threads=values["threads"],
        collation=values["collation"],
        profile=values["profile"],
        tables=values["tables"],
        table_size=values["table_size"],
        duration_s=values["duration_s"],
        connection=values["connection"],
        engine=values.get("engine"),
        isolation=values.get("isolation"),
        durability=values.get("durability"),
        handshake=values.get("handshake"),
        dataset_size=values.get("dataset_size"),
        phase=values.get("phase"),
    )


class AlertFinding(SeriesKey):
    """What detect finds of an alert tonight (or carries over), before the one rule
    (analysis/alerts.py) gives it its state."""

    alert_id: str
    kind: str
    metric: str
    server_id: str
    base_server: str | None
    run_id: str | None
    change_at: datetime | None
    ratio: float | None
    before_value: float | None
    after_value: float | None
    fixed_by: str | None
    first_seen_at: datetime
    last_seen_at: datetime


class AlertRow(AlertFinding):
    """A row of `alerts` (schema v7): one change detect reported, with its state."""

    state: str
    reason: str | None
    link: str | None
    news_at: datetime
    state_since: datetime
    checked_at: datetime


class VerdictRow(SeriesKey):
    """A row of `verdicts`: one version pair of one series, compared."""

    verdict_id: str
    metric: str
    base_server: str
    new_server: str
    base_version_string: str | None
    new_version_string: str | None
    n_base: int
    n_new: int
    median_base: float
    median_new: float
    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    threshold: float
    verdict: str
    acknowledged: str | None
    variables_diff: str | None  # JSON text
    last_result_at: datetime | None
    computed_at: datetime
    unsteady: int | None


class ChangePointRow(SeriesKey):
    """A row of `change_points`: one step found in a series' nightly points."""

    series_key: str
    metric: str
    server_id: str
    run_id: str
    at_time: datetime
    before_value: float | None
    after_value: float | None
    rel_change: float | None
    p_value: float | None
    is_control: bool
    environment: bool
    acknowledged: str | None
    computed_at: datetime
    rel_low: float | None
    rel_high: float | None
    scope: str | None
    series_count: int | None


class ValueRow(SeriesKey):
    """One ok value of a metric (series_values): its series, server and round."""

    server_id: str
    product: str
    version: str
    version_string: str | None
    stand_in: str | None
    value: float
    latency_pct_ms: float | None
    run_id: str
    round: int


class RunValueRow(TypedDict):
    """One ok value of a run (run_values): the rounds of a sequential comparison."""

    run_id: str
    server_id: str
    value: float
    collation: str
    charset: str
    profile: str
    table_size: int
    engine: str | None
    isolation: str | None
    durability: str | None
    handshake: str | None
    dataset_size: str | None
    phase: str | None


class ServerSummary(TypedDict):
    """A server as the site lists it (server_summaries)."""

    server: str
    product: str
    version: str
    version_string: str | None
    results: int


class HardwareRow(TypedDict):
    """A row of `hardware`: one machine, by its key."""

    hw_key: str
    cpu_model: str | None
    cores: int | None
    mem_gib: float | None
    kernel: str | None


class SiteSeries(TypedDict):
    """A series as the site shows it (results.SITE_SERIES, the collation named `coll`)."""

    runner_class: str
    hw_key: str
    profile: str
    tables: int
    table_size: int
    duration_s: int
    connection: str
    engine: str | None
    isolation: str | None
    durability: str | None
    handshake: str | None
    dataset_size: str | None
    phase: str | None
    workload: str
    threads: int
    coll: str


class NewestRepeats(SiteSeries):
    """A site series' newest run on one server (newest_repeats): its ok repeats."""

    server: str
    run_id: str
    run_at: datetime
    tps: list[float]  # sorted
    p95: list[float | None]


class NewestCost(SiteSeries):
    """A site series' newest run on one server (newest_cost): its ok repeats' costs."""

    server: str
    run_id: str
    n: int
    noisy: int
    cpu_us_per_txn: float | None  # the median of its repeats
    # each cost column asked for (and cpu_us_per_txn): its repeats' values; None: none has one
    costs: dict[str, list[float] | None]


class RemeasureRow(SeriesKey):
    """A row of `remeasures` (store/remeasures.py): one paired sequence's outcome, its
    rounds' run ids read back from their JSON."""

    remeasure_id: str
    source: str
    base_server: str
    new_server: str
    metric: str
    n_base: int
    n_new: int
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    threshold: float | None
    verdict: str
    run_ids: list[str]
    measured_at: datetime


class RunOverview(TypedDict):
    """A run with its machine and its results' counts by status (runs_overview)."""

    run_id: str
    runner_class: str
    hw_key: str
    cpu_model: str | None
    cores: int | None
    mem_gib: float | None
    kernel: str | None
    first_started_at: datetime
    last_finished_at: datetime
    perftrack_version: str | None
    ok: int
    failed: int
    skipped: int


class RunServer(TypedDict):
    """A server a run measured, with its count of results (run_servers)."""

    run_id: str
    server: str
    product: str
    version: str
    version_string: str | None
    provider: str
    source_sha256: str | None
    results: int


class RunCell(CellShape):
    """A cell a run measured on one server: its repeats' medians (run_cells)."""

    run_id: str
    server: str
    charset: str
    n: int
    ok: int
    tps: float | None
    p95_ms: float | None


class RunEffective(TypedDict):
    """A server's effective settings in one run, collation and profile (run_effective)."""

    run_id: str
    server: str
    collation: str
    profile: str
    effective: str  # JSON text


class RunFailure(TypedDict):
    """A result of a run that is not ok, with its reason (run_failures)."""

    run_id: str
    record_id: str
    status: str
    server: str
    workload: str
    threads: int
    collation: str
    reason: str | None
    error_log_tail: str | None


class RunVarset(TypedDict):
    """The variable set a server ran with, per collation and profile (run_varsets)."""

    run_id: str
    server: str
    profile: str
    collation: str
    varset: str
