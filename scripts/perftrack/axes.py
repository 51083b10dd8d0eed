"""Configuration axes (configs/axes.yaml): engine, isolation, durability.

Each axis is a named value set. A cell carries the value name (or None: axis not set,
the server keeps its default). This module turns a value into server options and
sysbench prepare options (translated by the release's rules row), says when a server
cannot take a value (a skipped cell), reads the effective values back with SQL, and
lists mismatches, which fail the cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from . import rules, yamlfile
from .errors import ConfigError

AXES_FILE = "axes.yaml"
AXIS_NAMES = ("engine", "isolation", "durability")
DURABILITY_KEYS = {"description", "binlog", "sync_binlog", "innodb_flush_log_at_trx_commit"}
ISOLATION_LEVELS = ("REPEATABLE-READ", "READ-COMMITTED", "READ-UNCOMMITTED", "SERIALIZABLE")
# binlog on needs a server id on MySQL 5.7 (refuses to start without one); 1 is arbitrary.
BINLOG_ON = {"log-bin": "binlog", "server-id": "1"}


@dataclass(frozen=True)
class Durability:
    binlog: bool | None
    sync_binlog: int | None
    flush_at_commit: int | None
    description: str


@dataclass(frozen=True)
class Axes:
    engines: dict[str, str]  # name -> description
    isolations: dict[str, str]  # name -> level (REPEATABLE-READ, ...)
    durabilities: dict[str, Durability]

    def values(self, axis: str) -> list[str]:
        by_axis: dict[str, dict[str, Any]] = {
            "engine": self.engines,
            "isolation": self.isolations,
            "durability": self.durabilities,
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


def _int_or_none(v: Any, what: str, where: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ConfigError(f"{where}: {what} must be a whole number")
    return v


def load(config_dir: Path) -> Axes:
    path = config_dir / AXES_FILE
    where = str(path)
    data = yamlfile.load(path)
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
    return Axes(engines, isolations, durabilities)


class AxisCell(Protocol):
    engine: str | None
    isolation: str | None
    durability: str | None


def skip_reason(rule: rules.Rule, engine: str | None) -> str | None:
    """Why a server cannot take the cell's axis values (None: it can)."""
    if engine is not None and engine not in rule.engines:
        return f"storage engine {engine} is not available on {rule.product} ({rule.note})"
    return None


def server_options(cell: AxisCell, rule: rules.Rule, axes: Axes) -> dict[str, str | None]:
    """my.cnf options for the cell's isolation and durability, in the release's names."""
    opts: dict[str, str | None] = {}
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
    return [
        f"{k}={eff.get(k)} (want {v})"
        for k, v in want.items()
        if str(eff.get(k) or "").lower() != v.lower()
    ]
