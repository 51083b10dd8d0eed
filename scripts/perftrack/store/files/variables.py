"""The server variables a record's rows keep: which are left out (they differ between two
starts of one server), the content hash of a set, and each distinct set worked out once
per ingest. Sets are stored once by hash (`server_variables`); docs/schema.md."""

from __future__ import annotations

import hashlib
import json
from typing import Any

# Hex digits kept from a sha256 for server keys (rows) and variable-set hashes: 64 bits, so
# a collision among even millions of distinct sets is vanishingly unlikely (birthday bound).
KEY_HEX_DIGITS = 16

# SHOW GLOBAL VARIABLES entries that differ between two starts of the same binary with the
# same configuration: paths under per-cell temp dirs and the provider cache, ports, ids,
# host names and GTID positions. They say nothing about performance, and keeping them would
# make every cell's set unique and defeat storing each set once. Names from MySQL 5.7-9.x,
# Percona Server and MariaDB 10.x-11.x.
VOLATILE_VARIABLES: frozenset[str] = frozenset(
    {
        "admin_port",
        "aria_log_dir_path",
        "basedir",
        "character_sets_dir",
        "datadir",
        "general_log_file",
        "gtid_binlog_pos",
        "gtid_binlog_state",
        "gtid_current_pos",
        "gtid_executed",
        "gtid_purged",
        "gtid_slave_pos",
        "hostname",
        "innodb_data_home_dir",
        "innodb_doublewrite_dir",
        "innodb_log_group_home_dir",
        "innodb_temp_tablespaces_dir",
        "innodb_tmpdir",
        "innodb_undo_directory",
        "lc_messages_dir",
        "log_basename",
        "log_bin_basename",
        "log_bin_index",
        "log_error",
        "mysqlx_port",
        "mysqlx_socket",
        "pid_file",
        "plugin_dir",
        "port",
        "relay_log",
        "relay_log_basename",
        "relay_log_index",
        "relay_log_info_file",
        "report_host",
        "report_port",
        "secure_file_priv",
        "server_uid",  # MariaDB 10.11+: random per datadir
        "server_uuid",
        "slow_query_log_file",
        "socket",
        "timestamp",
        "tmpdir",
    }
)


def stored_variables(variables: dict[str, str | None] | None) -> dict[str, str | None]:
    """The variables kept for a record: all but VOLATILE_VARIABLES, sorted by name."""
    kept = {k: v for k, v in (variables or {}).items() if k.lower() not in VOLATILE_VARIABLES}
    return dict(sorted(kept.items()))


def varset_hash(variables: dict[str, str | None]) -> str | None:
    """Content hash of a stored variable set; None for an empty set.

    sha256 over the lines `name=<JSON of value>\\n` sorted by name (JSON so that a null
    and the string "null", or values with newlines, cannot collide), first 16 hex digits.
    """
    if not variables:
        return None
    # json's C string encoder is exactly json.dumps(str, ensure_ascii=False), ~10x faster:
    # a 650-variable set is hashed once per record (measured: 2 ms -> 0.3 ms).
    text = "".join(
        f"{k}={_json_str(v) if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}\n"
        for k, v in sorted(variables.items())
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_HEX_DIGITS]


_json_str = json.encoder.encode_basestring


_Stored = tuple[dict[str, str | None], str | None]  # stored variables, their hash


class VariableSets:
    """`stored_variables` and `varset_hash` of each distinct set, computed once per ingest.

    The cells of a night share a handful of sets (one synthetic night of the nightly
    matrix: 3,960 records, 22 sets), and filtering, sorting and hashing 650 variables is
    most of what preparing a record costs. A set is known again by its exact content
    (every name and value a plain `str`, or a null value; compared in order): the
    record's whole set first (the cells of one server start), then the stored set (the
    per-start values such as `port` and `server_uuid` left out: every start of a
    server with one configuration), which saves the hash. A set of anything else is
    computed afresh each time.
    """

    def __init__(self) -> None:
        self._by_record: dict[tuple[tuple[str, str | None], ...], _Stored] = {}
        self._by_stored: dict[tuple[tuple[str, str | None], ...], _Stored] = {}

    def stored(self, variables: dict[str, str | None] | None) -> _Stored:
        """(the stored variables, their hash) of a record's variables."""
        if not variables or not _plain(variables):
            kept = stored_variables(variables)
            return kept, varset_hash(kept)
        key = tuple(variables.items())
        known = self._by_record.get(key)
        if known is None:
            kept = stored_variables(variables)
            content = tuple(kept.items())
            known = self._by_stored.get(content)
            if known is None:
                known = self._by_stored[content] = (kept, varset_hash(kept))
            self._by_record[key] = known
        return known


def _plain(variables: dict[str, Any]) -> bool:
    """Names and values of exactly `str` (or None values): equality is then content."""
    return set(map(type, variables)) <= {str} and set(map(type, variables.values())) <= {
        str,
        type(None),
    }
