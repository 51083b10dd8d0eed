"""Which changed server variables `perftrack explain` may set on B to A's value.

From A's and B's effective variables (`SHOW GLOBAL VARIABLES`), every variable whose value
differs is either a *candidate* (B is started with A's value, in B's option name) or *left
out* with the reason: it exists in one release only, it holds a path or a version string,
the server sizes it from the machine or from other settings, it cannot be set at startup,
the cell itself sets it, or B's version rules refuse it. Pure: no server, no DB.

A candidate B still refuses at startup is found by starting B (`explain.refused`), not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from perftrack.core.errors import ConfigError
from perftrack.servers import options as server_options
from perftrack.servers.rules import Rule

# Set by perftrack for every cell of both servers (run/server.py's fixed my.cnf lines and
# the cell's axes): a difference here is the probe's, never the releases'.
SET_BY_CELL = frozenset(
    {
        "port",
        "report_port",  # = port unless set
        "socket",
        "bind_address",
        "skip_name_resolve",
        "log_error",
        "pid_file",
        "lc_messages_dir",
        "tmpdir",
        "character_set_server",
        "collation_server",
        "character_set_database",
        "collation_database",
    }
)
# Paths: recognised by their value (`_is_path`) and by this explicit list of names whose
# value names a file or directory of one installation (or a file spec, such as
# innodb_data_file_path's ibdata1:12M:autoextend), never by a name's suffix alone:
# innodb_adaptive_hash_index (ON/OFF) ends in `_index` and is the best-known default that
# changed between MariaDB 10.2 and 10.5. Names from MySQL 5.7-9.x and MariaDB 10.1-11.x.
PATH_NAMES = frozenset(
    {
        "aria_log_dir_path",
        "basedir",
        "caching_sha2_password_private_key_path",
        "caching_sha2_password_public_key_path",
        "character_sets_dir",
        "datadir",
        "general_log_file",
        "hostname",
        "init_file",
        "innodb_data_file_path",
        "innodb_data_home_dir",
        "innodb_doublewrite_dir",
        "innodb_log_group_home_dir",
        "innodb_temp_data_file_path",
        "innodb_temp_tablespaces_dir",
        "innodb_tmpdir",
        "innodb_undo_directory",
        "lc_messages_dir",
        "log_basename",
        "log_bin_basename",
        "log_bin_index",
        "log_error",
        "mysqlx_socket",
        "pid_file",
        "plugin_dir",
        "relay_log",
        "relay_log_basename",
        "relay_log_index",
        "relay_log_info_file",
        "secure_file_priv",
        "sha256_password_private_key_path",
        "sha256_password_public_key_path",
        "slow_query_log_file",
        "socket",
        "ssl_ca",
        "ssl_capath",
        "ssl_cert",
        "ssl_crl",
        "ssl_crlpath",
        "ssl_key",
        "tmpdir",
    }
)
# A value that names a file: absolute or relative to the datadir, or a file name with one
# of the extensions servers give their logs, sockets, indexes and keys.
_FILE_EXTENSIONS = (".log", ".err", ".pid", ".sock", ".index", ".cnf", ".pem", ".key", ".crt")
# A value that is never a path: a switch or a number (with an optional size suffix).
_SWITCH_OR_NUMBER = re.compile(
    r"^(?:ON|OFF|YES|NO|TRUE|FALSE|-?[0-9]+(?:\.[0-9]+)?[KMGT]?)\Z", re.I
)
# Version strings and build descriptions: they differ between any two releases.
# Explicit names, and the build descriptions `version_*` (version_comment,
# version_compile_os, …): `tls_version` ends in `_version` but is a setting (the TLS
# protocols the server accepts), so no suffix decides.
VERSION_NAMES = frozenset(
    {"innodb_version", "protocol_version", "license", "version", "wsrep_patch_version"}
)
VERSION_PREFIXES = ("version_",)
# Sized by the server from the machine (CPU count, RAM, open-file limit) or derived from
# other settings at startup: A's number says where A ran, not what A's release chose.
#   open_files_limit   from ulimit -n and max_connections/table caches
#   thread_pool_size   MariaDB: the number of CPUs
#   innodb_buffer_pool_instances, innodb_page_cleaners   MySQL: from the pool size / CPUs
#   innodb_log_buffer_size (MySQL 8.0.x with innodb_dedicated_server), host_cache_size
#   (from max_connections), table_open_cache_instances (MySQL: CPUs), back_log (from
#   max_connections), innodb_open_files (from table_open_cache), and every
#   performance_schema_* sizing variable (autosized from max_connections and the caches)
SIZED_BY_MACHINE = frozenset(
    {
        "open_files_limit",
        "thread_pool_size",
        "innodb_buffer_pool_instances",
        "innodb_page_cleaners",
        "host_cache_size",
        "table_open_cache_instances",
        "back_log",  # 50 + max_connections / 5 unless set
        "innodb_open_files",  # from table_open_cache unless set
    }
)
SIZED_PREFIXES = ("performance_schema_",)
# ... except the instrument class counts: fixed defaults of each release (200 mutex
# classes, …), never autosized, so a release's change of them is tried like any other.
FIXED_SUFFIXES = ("_classes",)
# Read-only: reported by the server, not options (a my.cnf line naming them stops it).
NOT_STARTUP = frozenset(
    {
        "character_set_system",
        "lower_case_file_system",
        "system_time_zone",
        "server_uuid",
        "server_uid",  # MariaDB: a hash of the datadir's server id
        "large_page_size",
        "large_files_support",
        "in_transaction",
        "error_count",
        "warning_count",
        "last_insert_id",
        "identity",
        "insert_id",
        "timestamp",
        "rand_seed1",
        "rand_seed2",
        "external_user",
        "proxy_user",
        "wsrep_provider_version",
        "last_gtid",
        "gtid_binlog_pos",
        "gtid_binlog_state",
        "gtid_current_pos",
        "gtid_executed",
        "gtid_purged",
        "hostname",
    }
)
NOT_STARTUP_PREFIXES = ("have_",)
# Startup options whose value is not the variable's: `log-bin` takes a file name, and
# `log_bin=OFF` would turn the binary log *on* with the base name OFF.
NOT_BY_VALUE = {
    "log_bin": "the startup option log-bin takes a base name, not ON/OFF: set it in a profile",
    "relay_log": "the startup option takes a base name: set it in a profile",
}


@dataclass(frozen=True)
class Candidate:
    """A differing variable B can be started with at A's value."""

    name: str  # the variable as B shows it
    option: str  # the my.cnf option to give B (B's name, translated by the version rules)
    a_value: str | None
    b_value: str | None

    @property
    def setting(self) -> str:
        return f"{self.option}={'' if self.a_value is None else self.a_value}"


# Why a differing variable is left out: one stable word per reason (Left.kind), which the
# test of every catalog pair's real variables checks against its reviewed table.
ONLY_IN_A = "only-in-a"
ONLY_IN_B = "only-in-b"
NULL_IN_A = "null-in-a"
SET_BY_PERFTRACK = "set-by-cell"
NOT_SETTABLE_BY_VALUE = "not-by-value"
VERSION_STRING = "version-string"
READ_ONLY = "read-only"
PATH = "path"
SIZED = "sized"
NOT_ONE_LINE = "not-one-line"
RULES_REFUSE = "rules-refuse"
RULES_DROP = "rules-drop"
# Each kind in a summary line (a kind's own reasons may name the variable)
KIND_LABELS = {
    ONLY_IN_A: "only in A (B has no such variable)",
    ONLY_IN_B: "only in B (new in B's release)",
    NULL_IN_A: "NULL in A (nothing to set)",
    SET_BY_PERFTRACK: "set by perftrack for every cell",
    NOT_SETTABLE_BY_VALUE: "not settable by value",
    VERSION_STRING: "version strings",
    READ_ONLY: "read-only (not settable at startup)",
    PATH: "paths of one installation",
    SIZED: "sized by the server from the machine or from other settings",
    NOT_ONE_LINE: "not writable as one my.cnf line",
    RULES_REFUSE: "refused by the version rules for B",
    RULES_DROP: "dropped by the version rules for B",
}


@dataclass(frozen=True, kw_only=True)
class Left:
    """A differing variable not tried, and why (``kind``: one of the words above)."""

    name: str
    a_value: str | None
    b_value: str | None
    kind: str
    reason: str


def _reason(name: str, a_value: str | None, b_value: str | None) -> tuple[str, str] | None:
    """Why a variable present on both sides is not a candidate, as (kind, words); None: it
    is one."""
    if a_value is None:
        return NULL_IN_A, "A's value is NULL: nothing to set"
    if name in SET_BY_CELL:
        return SET_BY_PERFTRACK, "set by perftrack for every cell"
    if name in NOT_BY_VALUE:
        return NOT_SETTABLE_BY_VALUE, NOT_BY_VALUE[name]
    if name in VERSION_NAMES or name.startswith(VERSION_PREFIXES):
        return VERSION_STRING, "a version string"
    if name in NOT_STARTUP or name.startswith(NOT_STARTUP_PREFIXES):
        return READ_ONLY, "read-only: not settable at startup"
    if name in PATH_NAMES or _is_path(a_value) or _is_path(b_value):
        return PATH, "path-like: names a file or directory of one installation"
    if name in SIZED_BY_MACHINE or (
        name.startswith(SIZED_PREFIXES) and not name.endswith(FIXED_SUFFIXES)
    ):
        return SIZED, "sized by the server from the machine or from other settings"
    if "\n" in a_value or "#" in a_value:
        return NOT_ONE_LINE, "A's value cannot be written as one my.cnf line"
    return None


def _is_path(value: str | None) -> bool:
    """Whether a value names a file or directory (never a switch or a number)."""
    if not value or _SWITCH_OR_NUMBER.match(value):
        return False
    return value.startswith(("/", "./", "../", "~")) or value.lower().endswith(_FILE_EXTENSIONS)


def _rename_map(names: set[str]) -> dict[str, str]:
    """A's old name -> B's new name, for the renames the version rules know."""
    return {
        old: server_options.option_key(new)
        for old, new in server_options.RENAMED_OPTIONS.items()
        if old in names
    }


def select(
    a_vars: dict[str, str | None], b_vars: dict[str, str | None], rule_b: Rule
) -> tuple[list[Candidate], list[Left]]:
    """The differing variables of A and B: candidates, and those left out with a reason."""
    a = {server_options.option_key(k): v for k, v in a_vars.items()}
    b = {server_options.option_key(k): v for k, v in b_vars.items()}
    a_name: dict[str, str] = {}  # B's name -> A's, where a rename joined them
    for old, new in _rename_map(set(a) - set(b)).items():
        if new in b and new not in a:
            a[new] = a.pop(old)
            a_name[new] = old
    cands: list[Candidate] = []
    left: list[Left] = []
    for name in sorted(set(a) | set(b)):
        av, bv = a.get(name), b.get(name)
        if name in a and name in b and av == bv:
            continue
        if name not in b:
            left.append(
                Left(
                    name=name,
                    a_value=av,
                    b_value=None,
                    kind=ONLY_IN_A,
                    reason=f"only in A: {rule_b.product} B has no {name}",
                )
            )
            continue
        if name not in a:
            left.append(
                Left(
                    name=name,
                    a_value=None,
                    b_value=bv,
                    kind=ONLY_IN_B,
                    reason="only in B: new in B's release",
                )
            )
            continue
        why = _reason(name, av, bv)
        if why is None:
            try:
                translated = server_options.translate_options(rule_b, {a_name.get(name, name): av})
            except ConfigError as exc:
                why = RULES_REFUSE, f"the version rules refuse it: {exc}"
            else:
                if len(translated) != 1:
                    why = RULES_DROP, "the version rules drop it for B's release"
                else:
                    ((option, value),) = translated.items()
                    cands.append(Candidate(name, option, value, bv))
                    continue
        kind, reason = why
        left.append(Left(name=name, a_value=av, b_value=bv, kind=kind, reason=reason))
    return cands, left
