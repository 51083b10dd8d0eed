"""Configuration axes (configs/axes.yaml): engine, isolation, durability, handshake
(a charset-axis modifier) and dataset size.

Each axis is a named value set. A cell carries the value name (or None: axis not set,
the server keeps its default). This module turns a value into server options and
sysbench prepare options (translated by the release's rules row), says when a server
cannot take a value (a skipped cell), reads the effective values back with SQL, and
lists mismatches, which fail the cell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from perftrack.core import yamlfile
from perftrack.core.errors import ConfigError
from perftrack.servers import options, rules

AXES_FILE = "axes.yaml"
AXIS_NAMES = ("engine", "isolation", "durability", "handshake", "dataset_size")
DURABILITY_KEYS = {"description", "binlog", "sync_binlog", "innodb_flush_log_at_trx_commit"}
HANDSHAKE_OPTION = "skip-character-set-client-handshake"
# The benchmark connection's charset variables (read back by drivers/probe.py).
CONNECTION_VARS = (
    "character_set_client",
    "character_set_connection",
    "character_set_results",
    "collation_connection",
)
# Data + index bytes per row after `prepare` (ANALYZE TABLE, information_schema), measured
# on MariaDB 10.11 with 2 x 100k rows, latin1 and utf8mb4 alike (sysbench fills c and pad
# with ASCII): oltp's sbtest 242 B, tpcb's pgbench_accounts 131 B. Datasets not listed
# (tpcc: sized by warehouses) cannot take the dataset_size axis.
ROW_BYTES = {"oltp": 242, "tpcb": 131}
BUFFER_POOL_OPTION = "innodb_buffer_pool_size"
ISOLATION_LEVELS = ("REPEATABLE-READ", "READ-COMMITTED", "READ-UNCOMMITTED", "SERIALIZABLE")
# binlog on needs a server id on MySQL 5.7 (refuses to start without one); 1 is arbitrary.
BINLOG_ON = {"log-bin": "binlog", "server-id": "1"}


@dataclass(frozen=True)
class Durability:
    binlog: bool | None
    sync_binlog: int | None
    flush_at_commit: int | None
    description: str


@dataclass(frozen=True, kw_only=True)
class Axes:
    engines: dict[str, str]  # name -> description
    isolations: dict[str, str]  # name -> level (REPEATABLE-READ, ...)
    durabilities: dict[str, Durability]
    handshakes: dict[str, bool] = field(default_factory=dict)  # name -> skip the handshake
    dataset_sizes: dict[str, float] = field(default_factory=dict)  # name -> x buffer pool

    def values(self, axis: str) -> list[str]:
        by_axis: dict[str, dict[str, Any]] = {
            "engine": self.engines,
            "isolation": self.isolations,
            "durability": self.durabilities,
            "handshake": self.handshakes,
            "dataset_size": self.dataset_sizes,
        }
        return list(by_axis[axis])

    def check(self, axis: str, value: str, where: str) -> None:
        known = self.values(axis)
        if value not in known:
            raise ConfigError(
                f"{where}: unknown {axis} '{value}'; known: {', '.join(known)} "
                f"(configs/{AXES_FILE})"
            )


def _mapping(data: Any, key: str, where: str) -> dict[str, Any]:
    v = data.get(key) if isinstance(data, dict) else None
    if not isinstance(v, dict) or not v:
        raise ConfigError(f"{where}: '{key}' must be a mapping of value names")
    for name, body in v.items():
        if not isinstance(body, dict):
            raise ConfigError(f"{where}: {key}.{name} must be a mapping")
    return v


def _int_or_none(value: Any, what: str, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: {what} must be a whole number")
    return value


def read_axes(config_dir: Path) -> Axes:
    path = config_dir / AXES_FILE
    where = str(path)
    data = yamlfile.read_yaml(path)
    engines = {
        str(k): str(b.get("description", "")) for k, b in _mapping(data, "engine", where).items()
    }
    isolations: dict[str, str] = {}
    for name, body in _mapping(data, "isolation", where).items():
        if body.get("level") not in ISOLATION_LEVELS:
            raise ConfigError(f"{where}: isolation.{name}.level must be one of {ISOLATION_LEVELS}")
        isolations[str(name)] = body["level"]
    durabilities: dict[str, Durability] = {}
    for name, body in _mapping(data, "durability", where).items():
        unknown = sorted(set(map(str, body)) - DURABILITY_KEYS)
        if unknown:
            raise ConfigError(f"{where}: durability.{name}: unknown key '{unknown[0]}'")
        binlog = body.get("binlog")
        if binlog is not None and not isinstance(binlog, bool):
            raise ConfigError(f"{where}: durability.{name}.binlog must be on or off")
        durabilities[str(name)] = Durability(
            binlog=binlog,
            sync_binlog=_int_or_none(body.get("sync_binlog"), f"{name}.sync_binlog", where),
            flush_at_commit=_int_or_none(
                body.get("innodb_flush_log_at_trx_commit"),
                f"{name}.innodb_flush_log_at_trx_commit",
                where,
            ),
            description=str(body.get("description", "")),
        )
    handshakes: dict[str, bool] = {}
    for name, body in _mapping(data, "handshake", where).items():
        if not isinstance(body.get("skip"), bool):
            raise ConfigError(f"{where}: handshake.{name}.skip must be true or false")
        handshakes[str(name)] = body["skip"]
    sizes: dict[str, float] = {}
    for name, body in _mapping(data, "dataset_size", where).items():
        factor = body.get("pool_factor")
        if isinstance(factor, bool) or not isinstance(factor, int | float) or factor <= 0:
            raise ConfigError(f"{where}: dataset_size.{name}.pool_factor must be a number > 0")
        if math.isclose(factor, 1.0, rel_tol=0.2):
            raise ConfigError(
                f"{where}: dataset_size.{name}.pool_factor {factor} is too close to 1: "
                "a dataset must clearly fit (< 0.8) or clearly not fit (> 1.2)"
            )
        sizes[str(name)] = float(factor)
    return Axes(
        engines=engines,
        isolations=isolations,
        durabilities=durabilities,
        handshakes=handshakes,
        dataset_sizes=sizes,
    )


class AxisCell(Protocol):
    charset: str
    collation: str
    engine: str | None
    isolation: str | None
    durability: str | None
    handshake: str | None
    dataset_size: str | None


def skip_reason(rule: rules.Rule, engine: str | None, handshake_skip: bool = False) -> str | None:
    """Why a server cannot take the cell's axis values (None: it can)."""
    if engine is not None and engine not in rule.engines:
        return f"storage engine {engine} is not available on {rule.product} ({rule.note})"
    if handshake_skip and not rule.client_handshake_option:
        return (
            f"{HANDSHAKE_OPTION} is not available on {rule.product} "
            f"{'.'.join(map(str, rule.since))}+ (removed in MySQL 8.3.0)"
        )
    return None


def buffer_pool_bytes(rule: rules.Rule, profile: dict[str, str | None]) -> int:
    """The buffer pool a profile declares, else the release's default."""
    for name, value in profile.items():
        if options.option_key(name) == BUFFER_POOL_OPTION:
            return options.size_bytes(name, value)
    return rule.buffer_pool_default


def dataset_rows(factor: float, pool_bytes: int, tables: int, dataset: str) -> int:
    """Rows per table that make `tables` tables of `dataset` about factor x the pool."""
    if dataset not in ROW_BYTES:
        raise ConfigError(
            f"the dataset_size axis cannot size the '{dataset}' dataset (known row sizes: "
            f"{', '.join(ROW_BYTES)}); set tables/table_size for it instead"
        )
    return max(1, round(factor * pool_bytes / (tables * ROW_BYTES[dataset])))


def dataset_class(data_bytes: int, pool_bytes: int, axes: Axes) -> str:
    """The dataset_size value the measured bytes are: the one on the same side of 1."""
    fits = data_bytes <= pool_bytes
    for name, factor in axes.dataset_sizes.items():
        if (factor < 1) == fits:
            return name
    return "fits" if fits else "exceeds"


def server_options(cell: AxisCell, rule: rules.Rule, axes: Axes) -> dict[str, str | None]:
    """my.cnf options for the cell's isolation and durability, in the release's names."""
    opts: dict[str, str | None] = {}
    if cell.handshake is not None and axes.handshakes[cell.handshake]:
        opts[HANDSHAKE_OPTION] = None
    if cell.isolation is not None:
        opts[rule.isolation_option] = axes.isolations[cell.isolation]
    if cell.durability is not None:
        d = axes.durabilities[cell.durability]
        if d.binlog is True:
            opts.update(BINLOG_ON)
        elif d.binlog is False:
            opts[rule.binlog_off] = None
        if d.sync_binlog is not None:
            opts["sync_binlog"] = str(d.sync_binlog)
        if d.flush_at_commit is not None:
            opts["innodb_flush_log_at_trx_commit"] = str(d.flush_at_commit)
    return opts


def prepare_options(cell: AxisCell) -> tuple[str, ...]:
    """sysbench prepare options for the cell's engine."""
    return (f"--mysql-storage-engine={cell.engine}",) if cell.engine else ()


def read_back_sql() -> str:
    return "SELECT @@log_bin, @@sync_binlog, @@innodb_flush_log_at_trx_commit"


def durability_effective(row: tuple[Any, ...]) -> dict[str, str | None]:
    """The durability settings of `read_back_sql()`'s row, as record strings."""
    log_bin = row[0]
    return {
        "log_bin": None if log_bin is None else ("ON" if str(log_bin) in ("1", "ON") else "OFF"),
        "sync_binlog": None if row[1] is None else str(row[1]),
        "innodb_flush_log_at_trx_commit": None if row[2] is None else str(row[2]),
    }


def mismatches(
    cell: AxisCell, eff: dict[str, Any], axes: Axes, *, tables: bool = True
) -> list[str]:
    """`name=effective (want wanted)` for every axis value the server did not take.

    Without prepared tables (`tables=False`: slap groups) the engine is checked by the
    driver against the engine the tool reports instead.
    """
    want: dict[str, str] = {}
    if cell.engine is not None and tables:
        want["table_engines"] = cell.engine
    if cell.isolation is not None:
        want["transaction_isolation"] = axes.isolations[cell.isolation]
    if cell.durability is not None:
        d = axes.durabilities[cell.durability]
        if d.binlog is not None:
            want["log_bin"] = "ON" if d.binlog else "OFF"
        if d.sync_binlog is not None:
            want["sync_binlog"] = str(d.sync_binlog)
        if d.flush_at_commit is not None:
            want["innodb_flush_log_at_trx_commit"] = str(d.flush_at_commit)
    if cell.handshake is not None and axes.handshakes[cell.handshake]:
        want["character_set_client"] = cell.charset
        want["character_set_connection"] = cell.charset
        want["character_set_results"] = cell.charset
        want["collation_connection"] = cell.collation
    if cell.dataset_size is not None and tables:
        want["dataset_size"] = cell.dataset_size
    return [
        f"{k}={eff.get(k)} (want {v})"
        for k, v in want.items()
        if str(eff.get(k) or "").lower() != v.lower()
    ]
