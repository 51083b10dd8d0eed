"""Which changed server variables `perftrack explain` may set on B to A's value.

From A's and B's effective variables (`SHOW GLOBAL VARIABLES`), every variable whose value
differs is either a *candidate* (B is started with A's value, in B's option name) or *left
out* with the reason: it exists in one release only, it holds a path or a version string,
the server sizes it from the machine or from other settings, it cannot be set at startup,
the cell itself sets it, or B's version rules refuse it. Pure: no server, no DB.

A candidate B still refuses at startup is found by starting B (`explain.refused`), not here.
"""

from __future__ import annotations

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
# Paths: the value names a file or directory of one installation.
PATH_NAMES = frozenset(
    {"datadir", "basedir", "socket", "tmpdir", "plugin_dir", "character_sets_dir", "hostname"}
)
PATH_SUFFIXES = ("_file", "_dir", "_path", "_basename", "_index", "_home_dir", "_directory")
# Version strings and build descriptions: they differ between any two releases.
VERSION_NAMES = frozenset({"innodb_version", "protocol_version", "license", "version"})
VERSION_PREFIXES = ("version",)
VERSION_SUFFIXES = ("_comment", "_version")
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


@dataclass(frozen=True)
class Left:
    """A differing variable not tried, and why."""

    name: str
    a_value: str | None
    b_value: str | None
    reason: str


def _reason(name: str, a: str | None, b: str | None) -> str | None:
    """Why a variable present on both sides is not a candidate (None: it is one)."""
    if a is None:
        return "A's value is NULL: nothing to set"
    if name in SET_BY_CELL:
        return "set by perftrack for every cell"
    if name in NOT_BY_VALUE:
        return NOT_BY_VALUE[name]
    if (
        name in VERSION_NAMES
        or name.startswith(VERSION_PREFIXES)
        or name.endswith(VERSION_SUFFIXES)
    ):
        return "a version string"
    if name in NOT_STARTUP or name.startswith(NOT_STARTUP_PREFIXES):
        return "read-only: not settable at startup"
    if name in PATH_NAMES or name.endswith(PATH_SUFFIXES) or _is_path(a) or _is_path(b):
        return "path-like: names a file or directory of one installation"
    if name in SIZED_BY_MACHINE or name.startswith(SIZED_PREFIXES):
        return "sized by the server from the machine or from other settings"
    if "\n" in a or "#" in a:
        return "A's value cannot be written as one my.cnf line"
    return None


def _is_path(value: str | None) -> bool:
    return bool(value) and str(value).startswith("/")


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
            left.append(Left(name, av, None, f"only in A: {rule_b.product} B has no {name}"))
            continue
        if name not in a:
            left.append(Left(name, None, bv, "only in B: new in B's release"))
            continue
        why = _reason(name, av, bv)
        if why is None:
            try:
                translated = server_options.translate_options(rule_b, {a_name.get(name, name): av})
            except ConfigError as exc:
                why = f"the version rules refuse it: {exc}"
            else:
                if len(translated) != 1:
                    why = "the version rules drop it for B's release"
                else:
                    ((option, value),) = translated.items()
                    cands.append(Candidate(name, option, value, bv))
                    continue
        left.append(Left(name, av, bv, why))
    return cands, left
