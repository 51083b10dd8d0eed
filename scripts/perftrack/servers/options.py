"""A profile's my.cnf options in the names and units each release understands.

The version rules (`servers/rules.py`) say what a release has; this module rewrites a
profile for one release with them: renamed options, the query cache where it no longer
exists, the redo log's total size in the release's own option, options a release removed.
"""

from __future__ import annotations

import re

from perftrack.core.errors import ConfigError
from perftrack.servers.rules import (
    REDO_LOG_CAPACITY,
    REDO_LOG_FILE_SIZE,
    REDO_LOG_FILES_IN_GROUP,
    Rule,
    describe_versions,
)

# Option names a profile may use on any release, and the startup option every tracked
# release accepts for them: MySQL 8.0.3 removed tx_isolation/tx_read_only, MariaDB 10.11
# refuses `tx_isolation=` in my.cnf (measured), and `transaction-isolation` /
# `transaction-read-only` are startup options of MySQL 5.7+ and MariaDB 10.1+.
RENAMED_OPTIONS = {
    "tx_isolation": "transaction-isolation",
    "tx_read_only": "transaction-read-only",
}
QUERY_CACHE_PREFIX = "query_cache_"
# query_cache_type values that turn the cache on (ON/1 always, DEMAND/2 on request).
QUERY_CACHE_ON = frozenset({"1", "on", "2", "demand"})
# innodb_log_files_in_group's default in every release that had it (MySQL 5.7-8.0.29,
# MariaDB 10.1-10.4); MySQL 8.0.30+ multiplies innodb_log_file_size by it the same way
# when innodb_redo_log_capacity is not set.
LEGACY_REDO_LOG_FILES = 2
_REDO_OPTIONS = (REDO_LOG_FILE_SIZE, REDO_LOG_CAPACITY, REDO_LOG_FILES_IN_GROUP)
_SIZE_RE = re.compile(r"^(\d+)([KMGT]?)$", re.IGNORECASE)
_SIZE_UNITS = (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10))


def option_key(name: str) -> str:
    """An option name as the server matches it: '-' and '_' are the same, case-blind."""
    return name.replace("-", "_").lower()


def translate_options(rule: Rule, options: dict[str, str | None]) -> dict[str, str | None]:
    """A profile's [mysqld] options in the names and units ``rule``'s release understands.

    - tx_isolation / tx_read_only become transaction-isolation / transaction-read-only;
    - the query cache's options are dropped where there is no query cache (MySQL 8.0+),
      unless they turn it on: then `ConfigError` (the cell cannot be what it asks for);
    - redo log size keeps its *total*: innodb_redo_log_capacity on MySQL 8.0.30+,
      innodb_log_file_size (x the release's number of files) elsewhere;
    - an option the release removed (``removed_options``) is a `ConfigError` saying why.
    """
    removed = dict(rule.removed_options)
    out: dict[str, str | None] = {}
    for name, value in options.items():
        key = option_key(name)
        if key in removed:
            raise ConfigError(
                f"option {name} cannot be used on {rule.product} {describe_versions(rule)}: "
                f"{removed[key]}; remove it from the profile"
            )
        if key.startswith(QUERY_CACHE_PREFIX) and not rule.query_cache:
            if key == "query_cache_type" and str(value).lower() in QUERY_CACHE_ON:
                raise ConfigError(
                    f"{name}={value} asks for the query cache, which {rule.product} "
                    f"{describe_versions(rule)} does not have (removed in MySQL 8.0.3); use a "
                    "profile without it for this server"
                )
            continue  # a disabled cache that does not exist: nothing to set
        if key in _REDO_OPTIONS:
            continue  # below, as one total
        out[RENAMED_OPTIONS.get(key, name)] = value
    out.update(_redo_log_options(rule, options))
    return out


def _redo_log_options(rule: Rule, options: dict[str, str | None]) -> dict[str, str]:
    given = {option_key(k): v for k, v in options.items() if option_key(k) in _REDO_OPTIONS}
    size, capacity = given.get(REDO_LOG_FILE_SIZE), given.get(REDO_LOG_CAPACITY)
    files_text = given.get(REDO_LOG_FILES_IN_GROUP)
    if size is not None and capacity is not None:
        raise ConfigError(
            f"the profile sets both {REDO_LOG_FILE_SIZE} and {REDO_LOG_CAPACITY}: set one "
            f"(perftrack converts it to what each release uses)"
        )
    if capacity is not None and files_text is not None:
        raise ConfigError(
            f"{REDO_LOG_FILES_IN_GROUP} has no meaning with {REDO_LOG_CAPACITY}: remove it"
        )
    files = _whole_number(REDO_LOG_FILES_IN_GROUP, files_text) if files_text else None
    if capacity is not None:
        total = _size_bytes(REDO_LOG_CAPACITY, capacity)
    elif size is not None:
        total = _size_bytes(REDO_LOG_FILE_SIZE, size) * (files or _files_meant(rule))
    else:
        return {}  # innodb_log_files_in_group alone: no size to keep
    if rule.redo_log_option == REDO_LOG_CAPACITY:
        return {REDO_LOG_CAPACITY: _format_size(total)}
    out = {REDO_LOG_FILE_SIZE: _format_size(total // rule.redo_log_files)}
    if rule.redo_log_files > 1:
        out[REDO_LOG_FILES_IN_GROUP] = str(rule.redo_log_files)
    return out


def _files_meant(rule: Rule) -> int:
    """How many files an innodb_log_file_size without innodb_log_files_in_group means."""
    if rule.redo_log_option == REDO_LOG_FILE_SIZE:
        return rule.redo_log_files  # this release's own meaning: pass it through unchanged
    return LEGACY_REDO_LOG_FILES


def size_bytes(name: str, value: str | None) -> int:
    """A my.cnf size (bytes, or a number with K, M, G, T) in bytes; ConfigError if not."""
    return _size_bytes(name, value)


def _size_bytes(name: str, value: str | None) -> int:
    m = _SIZE_RE.match(str(value or "").strip())
    if not m:
        raise ConfigError(f"{name}={value} is not a size: use bytes or a number with K, M, G, T")
    factor = dict(_SIZE_UNITS).get(m.group(2).upper(), 1)
    return int(m.group(1)) * factor


def _whole_number(name: str, value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{name}={value} must be a whole number of at least 1")
    return int(value)


def _format_size(size: int) -> str:
    for suffix, factor in _SIZE_UNITS:
        if size >= factor and size % factor == 0:
            return f"{size // factor}{suffix}"
    return str(size)
