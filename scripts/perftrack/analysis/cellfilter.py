"""Cell filters: the options that narrow a comparison to some of its cells (`compare`,
`advise`), one definition of what each option matches and of the refusal when one
matches nothing (naming the option the user typed and the values there are)."""

from __future__ import annotations

from typing import Any

from perftrack.analysis import compare
from perftrack.core.errors import ConfigError

# option (as typed, without "--", "_" for "-") -> the series column it filters
COLUMNS = {
    "workload": "workload",
    "threads": "threads",
    "charset": "collation",
    "profile": "profile",
    "tables": "tables",
    "table_size": "table_size",
    "duration": "duration_s",
    "runner_class": "runner_class",
    "handshake": "handshake",
}
SHOWN_VALUES = 12  # known values named in a refusal


def option(name: str) -> str:
    return "--" + name.replace("_", "-")


def matches(key: dict[str, object], name: str, value: Any) -> bool:
    """The cell `key` has `value` for option `name`; a charset matches its collations
    (`--charset utf8mb4` keeps utf8mb4_0900_ai_ci)."""
    have = key.get(COLUMNS[name])
    if name == "charset":
        return bool(have == value) or str(have).split("_")[0] == value
    return bool(have == value)


def select(tables: list[compare.Table], want: dict[str, object], where: str) -> list[compare.Table]:
    """The tables whose cell matches every given filter (None: not given). A filter that
    no table matches, or filters that no table matches together: one-line ConfigError."""
    given = {k: v for k, v in want.items() if v is not None}
    if not given or not tables:
        return tables
    for name, value in given.items():
        if not any(matches(t.key, name, value) for t in tables):
            known = [str(v) for v in sorted({t.key.get(COLUMNS[name]) for t in tables}, key=_order)]
            if name == "charset":  # the charsets first, then their collations
                known = sorted({k.split("_")[0] for k in known}) + known
            more = ", …" if len(known) > SHOWN_VALUES else ""
            raise ConfigError(
                f"no results match {option(name)} {value} in {where}; "
                f"{option(name)} values with results: {', '.join(known[:SHOWN_VALUES])}{more}"
            )
    kept = [t for t in tables if all(matches(t.key, k, v) for k, v in given.items())]
    if not kept:
        said = " ".join(f"{option(k)} {v}" for k, v in given.items())
        raise ConfigError(f"no results match {said} together in {where}")
    return kept


def _order(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float) else (1, str(value))
