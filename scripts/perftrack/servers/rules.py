"""Product/version rules in one table: what differs between MySQL/MariaDB releases.

Every version-dependent decision (how to initialise a datadir, the isolation variable's
name, default charset and collation, collations a release lacks, auth plugin, extra
start options, the redo log sizing option, whether the query cache exists, whether the
binary log is on by default, the state of mysql_native_password, options a release
removed, whether skip-character-set-client-handshake exists, the default buffer pool) is
a column of `RULES`; code asks `rules_for(product, version)` and never
compares versions itself. `servers/options.py` rewrites a profile's options for a release.
Sources: the MySQL and MariaDB reference manuals' "changes in release" notes for each
row's first version.

The `default` profile sets nothing: each release runs with its own defaults, so MySQL
8.0+ runs with the binary log on (`binlog_default`) and MariaDB / MySQL 5.7 without; the
effective `log_bin` is stored with every result, and the durability axis
(configs/axes.yaml) turns it on or off explicitly when a comparison needs like for like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from perftrack.core.errors import ConfigError

Version = tuple[int, ...]

# Initialisation styles.
INIT_INSTALL_DB = "install_db"  # mysql_install_db / mariadb-install-db script
INIT_INSECURE = "initialize_insecure"  # mysqld --initialize-insecure (MySQL 5.7+)

ALL_UTF8MB4_LEGACY = frozenset(
    {"utf8mb4_general_ci", "utf8mb4_bin", "utf8mb4_unicode_ci", "utf8mb4_unicode_520_ci"}
)
LATIN1 = frozenset({"latin1_swedish_ci", "latin1_bin", "latin1_general_ci"})

# Redo log sizing options. MySQL 8.0.30 replaced innodb_log_file_size x
# innodb_log_files_in_group with one total, innodb_redo_log_capacity (MySQL 8.0.30
# release notes, "InnoDB: redo log capacity").
REDO_LOG_FILE_SIZE = "innodb_log_file_size"
REDO_LOG_CAPACITY = "innodb_redo_log_capacity"
REDO_LOG_FILES_IN_GROUP = "innodb_log_files_in_group"

# States of the mysql_native_password plugin (MySQL 8.0.34 deprecated it, 8.4.0 left it
# disabled unless `mysql_native_password=ON`, 9.0.0 removed it).
NATIVE_DEFAULT = "default"  # the default plugin for new users (MySQL 5.7, MariaDB)
NATIVE_AVAILABLE = "available"  # loaded, not the default (MySQL 8.0: caching_sha2 is)
NATIVE_DISABLED = "disabled"  # present, off unless the option turns it on (8.4)
NATIVE_REMOVED = "removed"  # not in the server at all (9.0+)


@dataclass(frozen=True, kw_only=True)
class Rule:
    product: str
    since: Version  # first version this row applies to (inclusive)
    until: Version | None  # first version it no longer applies to (exclusive)
    init: str
    init_args: tuple[str, ...]  # extra args for the init step
    start_args: tuple[str, ...]  # extra args for every start
    isolation_var: str
    default_charset: str
    default_collation: str
    utf8mb4_default_collation: str
    collations: frozenset[str]  # collations the cell axes may ask for
    auth_plugin: str | None  # for the benchmark user; None = server default
    note: str
    # Storage engines the engine axis may ask for (configs/axes.yaml).
    engines: frozenset[str] = frozenset({"InnoDB", "MyISAM"})
    # my.cnf option that turns the binary log off (MySQL 8.0 made it on by default).
    binlog_off: str = "skip-log-bin"
    # my.cnf option that sets the isolation level at start. Every tracked release takes
    # `transaction-isolation`; MariaDB 10.11 refuses `tx_isolation=` in my.cnf (measured).
    isolation_option: str = "transaction-isolation"
    # Redo log sizing: the option this release sizes its redo log with, and how many files
    # of innodb_log_file_size make up the redo log (innodb_log_files_in_group's default).
    redo_log_option: str = REDO_LOG_FILE_SIZE
    redo_log_files: int = 2
    query_cache: bool = True  # the query cache exists (MySQL removed it in 8.0.3)
    binlog_default: bool = False  # the binary log is on with no option (MySQL 8.0+)
    native_password: str = NATIVE_DEFAULT  # state of mysql_native_password (NATIVE_*)
    # Options a profile may not set on this release: (name, why); see translate_options.
    removed_options: tuple[tuple[str, str], ...] = ()
    # File name of the official generic Linux tarball ({version} filled in); None: the
    # product publishes none perftrack knows (the catalog entry must give the URL).
    tarball_file: str | None = None
    # The server takes `skip-character-set-client-handshake` (every client gets the
    # server's charset/collation). MySQL 8.0.35 deprecated it, 8.3.0 removed it (MySQL
    # Server Version Reference, "Option and Variable Changes for MySQL 8.3"); MariaDB has it.
    client_handshake_option: bool = True
    # innodb_buffer_pool_size when nothing sets it: 128 MiB in every tracked release
    # (MariaDB 10.1+, MySQL 5.7+; MySQL sizes it itself only with innodb_dedicated_server).
    buffer_pool_default: int = 128 << 20
    # The variable holding the default storage engine (MySQL 5.5.3 renamed storage_engine).
    engine_var: str = "default_storage_engine"
    # `DROP USER IF EXISTS` exists (MySQL 5.7.8+, MariaDB 10.1.3+); older: plain DROP USER.
    drop_user_if_exists: bool = True
    # Why perftrack cannot run this release on a current runner (None: it can); every cell
    # of such a server is kept as a skipped cell with this reason.
    unsupported: str | None = None

    def applies(self, product: str, version: Version) -> bool:
        if product != self.product or version < self.since:
            return False
        return self.until is None or version < self.until

    def default_collation_for(self, charset: str) -> str | None:
        if charset == "latin1":
            return "latin1_swedish_ci"
        if charset == "utf8mb4":
            return self.utf8mb4_default_collation or None  # "": no utf8mb4 (MySQL < 5.5.3)
        return None


_MARIADB_INIT_OLD = ("--force",)  # 10.1's script wants resolveip without --force
_MARIADB_AUTH_NORMAL = ("--auth-root-authentication-method=normal",)  # root via socket, no pw
_MYSQL_START = ("--mysqlx=OFF", "--secure-file-priv=")
# MariaDB 11.4 generates TLS keys at start (~13 s here) unless told to skip SSL; the
# benchmark client talks plain TCP on loopback anyway.
_MARIADB_11_START = ("--skip-ssl",)
# Aria ships with every MariaDB release since 5.1 (MariaDB KB "Aria Storage Engine").
_MARIADB_ENGINES = frozenset({"InnoDB", "MyISAM", "Aria"})

# Options MySQL 8.0 removed (MySQL 8.0.3 / 8.0.0 release notes: "Features removed in MySQL
# 8.0"); the query cache's own options are handled by the `query_cache` column.
_REMOVED_IN_MYSQL_80 = (
    ("innodb_file_format", "it was removed in MySQL 8.0 (Barracuda is the only format)"),
    ("innodb_file_format_check", "it was removed in MySQL 8.0"),
    ("innodb_file_format_max", "it was removed in MySQL 8.0"),
    ("innodb_large_prefix", "it was removed in MySQL 8.0 (large prefixes are always on)"),
)
_REMOVED_IN_MYSQL_83 = (
    (
        "character_set_client_handshake",
        "it was removed in MySQL 8.3.0; use the handshake axis only where the rules allow it",
    ),
    (
        "skip_character_set_client_handshake",
        "it was removed in MySQL 8.3.0; use the handshake axis only where the rules allow it",
    ),
)
_REMOVED_IN_MYSQL_84 = (
    (
        "default_authentication_plugin",
        "it was removed in MySQL 8.4: use authentication_policy instead",
    ),
)
_REMOVED_IN_MYSQL_90 = (
    ("mysql_native_password", "the mysql_native_password plugin was removed in MySQL 9.0"),
)
# MySQL 4.1 / 5.0 (2004-2005): official x86_64 builds exist (mysql-max-5.0.15-linux-x86_64-
# glibc23.tar.gz), but perftrack reads every cell's effective settings back from
# information_schema (absent in 4.1) and creates its benchmark user and datadir in ways these
# releases predate (no --initialize, no CREATE USER before 5.0.2); nobody has run one under
# perftrack, so their cells are skipped with this reason instead of failing at random.
_MYSQL_4X_50 = (
    "MySQL 4.1/5.0 cannot be run by perftrack: its read-back of effective settings needs "
    "information_schema (4.1 has none) and its user/datadir setup predates 5.1; measure "
    "with a hand-run mysqlbench, or use the 003 study's local stand-ins"
)
# MySQL 5.1-5.6 tarballs: scripts/mysql_install_db (perl) initialises the datadir.
_MYSQL_OLD_INIT = ("--force", "--skip-name-resolve")
_MYSQL_51_TARBALL = "mysql-{version}-linux-x86_64-glibc23.tar.gz"
_MYSQL_55_TARBALL = "mysql-{version}-linux2.6-x86_64.tar.gz"
UTF8MB4_55 = frozenset({"utf8mb4_general_ci", "utf8mb4_bin", "utf8mb4_unicode_ci"})
# MySQL 5.7 packages default secure_file_priv to a directory (/var/lib/mysql-files) the
# server refuses to start without; perftrack's private datadir has none.
_MYSQL_57_START = ("--secure-file-priv=",)
# Official generic tarballs (dev.mysql.com/downloads): 5.7 is built for glibc 2.12 only;
# 8.0+ for glibc 2.28 (the build the runners use; glibc 2.17 builds exist too).
_MYSQL_57_TARBALL = "mysql-{version}-linux-glibc2.12-x86_64.tar.gz"  # and 5.6
_MYSQL_TARBALL = "mysql-{version}-linux-glibc2.28-x86_64.tar.xz"

RULES: tuple[Rule, ...] = (
    Rule(
        product="mysql",
        since=(4, 1),
        until=(5, 1),
        init=INIT_INSTALL_DB,
        init_args=_MYSQL_OLD_INIT,
        start_args=(),
        isolation_var="tx_isolation",
        default_charset="latin1",
        default_collation="latin1_swedish_ci",
        utf8mb4_default_collation="",
        collations=LATIN1,
        auth_plugin=None,
        note="MySQL 4.1/5.0: not runnable by perftrack (see unsupported)",
        engine_var="storage_engine",
        drop_user_if_exists=False,
        buffer_pool_default=8 << 20,
        unsupported=_MYSQL_4X_50,
    ),
    Rule(
        product="mysql",
        since=(5, 1),
        until=(5, 5),
        init=INIT_INSTALL_DB,
        init_args=_MYSQL_OLD_INIT,
        start_args=(),
        isolation_var="tx_isolation",
        default_charset="latin1",
        default_collation="latin1_swedish_ci",
        utf8mb4_default_collation="",  # utf8mb4 arrived in 5.5.3: utf8mb4 cells are skipped
        collations=LATIN1,
        auth_plugin=None,  # mysql_native_password is the only plugin; CREATE USER … IDENTIFIED BY
        note="MySQL 5.1: MyISAM default engine, storage_engine variable, no utf8mb4, 8 MiB pool",
        engine_var="storage_engine",
        drop_user_if_exists=False,
        buffer_pool_default=8 << 20,
        tarball_file=_MYSQL_51_TARBALL,
    ),
    Rule(
        product="mysql",
        since=(5, 5),
        until=(5, 6),
        init=INIT_INSTALL_DB,
        init_args=_MYSQL_OLD_INIT,
        start_args=(),
        isolation_var="tx_isolation",
        default_charset="latin1",
        default_collation="latin1_swedish_ci",
        utf8mb4_default_collation="utf8mb4_general_ci",
        collations=LATIN1 | UTF8MB4_55,
        auth_plugin=None,
        note="MySQL 5.5: InnoDB default engine, utf8mb4 without unicode_520",
        drop_user_if_exists=False,
        tarball_file=_MYSQL_55_TARBALL,
    ),
    Rule(
        product="mysql",
        since=(5, 6),
        until=(5, 7),
        init=INIT_INSTALL_DB,
        init_args=_MYSQL_OLD_INIT,
        start_args=_MYSQL_57_START,
        isolation_var="tx_isolation",
        default_charset="latin1",
        default_collation="latin1_swedish_ci",
        utf8mb4_default_collation="utf8mb4_general_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY,
        auth_plugin=None,
        note="MySQL 5.6: scripts/mysql_install_db, no DROP USER IF EXISTS",
        drop_user_if_exists=False,
        tarball_file=_MYSQL_57_TARBALL,
    ),
    Rule(
        product="mariadb",
        since=(10, 1),
        until=(10, 4),
        init=INIT_INSTALL_DB,
        init_args=_MARIADB_INIT_OLD,
        start_args=(),
        isolation_var="tx_isolation",
        default_charset="latin1",
        default_collation="latin1_swedish_ci",
        utf8mb4_default_collation="utf8mb4_general_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY,
        auth_plugin=None,
        note="MariaDB 10.1-10.3: mysql_install_db; root has no password",
        engines=_MARIADB_ENGINES,
    ),
    Rule(
        product="mariadb",
        since=(10, 4),
        until=(10, 5),
        init=INIT_INSTALL_DB,
        init_args=_MARIADB_AUTH_NORMAL,
        start_args=(),
        isolation_var="tx_isolation",
        default_charset="latin1",
        default_collation="latin1_swedish_ci",
        utf8mb4_default_collation="utf8mb4_general_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY,
        auth_plugin=None,
        note="MariaDB 10.4+: root would use unix_socket auth unless told otherwise",
        engines=_MARIADB_ENGINES,
    ),
    Rule(
        product="mariadb",
        since=(10, 5),
        until=(11, 1),
        init=INIT_INSTALL_DB,
        init_args=_MARIADB_AUTH_NORMAL,
        start_args=(),
        isolation_var="tx_isolation",
        default_charset="latin1",
        default_collation="latin1_swedish_ci",
        utf8mb4_default_collation="utf8mb4_general_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY,
        auth_plugin=None,
        note="MariaDB 10.5: one redo log file (innodb_log_files_in_group is gone)",
        engines=_MARIADB_ENGINES,
        redo_log_files=1,
    ),
    Rule(
        product="mariadb",
        since=(11, 1),
        until=(11, 4),
        init=INIT_INSTALL_DB,
        init_args=_MARIADB_AUTH_NORMAL,
        start_args=(),
        isolation_var="transaction_isolation",
        default_charset="latin1",
        default_collation="latin1_swedish_ci",
        utf8mb4_default_collation="utf8mb4_general_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_uca1400_ai_ci"},
        auth_plugin=None,
        note="MariaDB 11.1 renamed tx_isolation to transaction_isolation",
        engines=_MARIADB_ENGINES,
        redo_log_files=1,
    ),
    Rule(
        product="mariadb",
        since=(11, 4),
        until=(11, 6),
        init=INIT_INSTALL_DB,
        init_args=_MARIADB_AUTH_NORMAL,
        start_args=_MARIADB_11_START,
        isolation_var="transaction_isolation",
        default_charset="latin1",
        default_collation="latin1_swedish_ci",
        utf8mb4_default_collation="utf8mb4_general_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_uca1400_ai_ci"},
        auth_plugin=None,
        note="MariaDB 11.4 generates TLS keys at start unless SSL is skipped",
        engines=_MARIADB_ENGINES,
        redo_log_files=1,
    ),
    Rule(
        product="mariadb",
        since=(11, 6),
        until=None,
        init=INIT_INSTALL_DB,
        init_args=_MARIADB_AUTH_NORMAL,
        start_args=_MARIADB_11_START,
        isolation_var="transaction_isolation",
        default_charset="utf8mb4",
        default_collation="utf8mb4_uca1400_ai_ci",
        utf8mb4_default_collation="utf8mb4_uca1400_ai_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_uca1400_ai_ci"},
        auth_plugin=None,
        note="MariaDB 11.6 made utf8mb4/uca1400_ai_ci the server default",
        engines=_MARIADB_ENGINES,
        redo_log_files=1,
    ),
    Rule(
        product="mysql",
        since=(5, 7),
        until=(8, 0),
        init=INIT_INSECURE,
        init_args=(),
        start_args=_MYSQL_57_START,
        isolation_var="tx_isolation",
        default_charset="latin1",
        default_collation="latin1_swedish_ci",
        utf8mb4_default_collation="utf8mb4_general_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY,
        auth_plugin="mysql_native_password",
        note="MySQL 5.7: latin1 default, query cache present",
        tarball_file=_MYSQL_57_TARBALL,
    ),
    Rule(
        product="mysql",
        since=(8, 0),
        until=(8, 0, 30),
        init=INIT_INSECURE,
        init_args=(),
        start_args=_MYSQL_START,
        isolation_var="transaction_isolation",
        default_charset="utf8mb4",
        default_collation="utf8mb4_0900_ai_ci",
        utf8mb4_default_collation="utf8mb4_0900_ai_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_0900_ai_ci", "utf8mb4_0900_bin"},
        auth_plugin="caching_sha2_password",
        note="MySQL 8.0: utf8mb4_0900_ai_ci default, binlog on, query cache removed",
        binlog_off="disable-log-bin",
        query_cache=False,
        binlog_default=True,
        native_password=NATIVE_AVAILABLE,
        tarball_file=_MYSQL_TARBALL,
        removed_options=_REMOVED_IN_MYSQL_80,
    ),
    Rule(
        product="mysql",
        since=(8, 0, 30),
        until=(8, 3),
        init=INIT_INSECURE,
        init_args=(),
        start_args=_MYSQL_START,
        isolation_var="transaction_isolation",
        default_charset="utf8mb4",
        default_collation="utf8mb4_0900_ai_ci",
        utf8mb4_default_collation="utf8mb4_0900_ai_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_0900_ai_ci", "utf8mb4_0900_bin"},
        auth_plugin="caching_sha2_password",
        note="MySQL 8.0.30: redo log sized by innodb_redo_log_capacity",
        binlog_off="disable-log-bin",
        redo_log_option=REDO_LOG_CAPACITY,
        query_cache=False,
        binlog_default=True,
        native_password=NATIVE_AVAILABLE,
        tarball_file=_MYSQL_TARBALL,
        removed_options=_REMOVED_IN_MYSQL_80,
    ),
    Rule(
        product="mysql",
        since=(8, 3),
        until=(8, 4),
        init=INIT_INSECURE,
        init_args=(),
        start_args=_MYSQL_START,
        isolation_var="transaction_isolation",
        default_charset="utf8mb4",
        default_collation="utf8mb4_0900_ai_ci",
        utf8mb4_default_collation="utf8mb4_0900_ai_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_0900_ai_ci", "utf8mb4_0900_bin"},
        auth_plugin="caching_sha2_password",
        note="MySQL 8.3: skip-character-set-client-handshake removed",
        binlog_off="disable-log-bin",
        redo_log_option=REDO_LOG_CAPACITY,
        query_cache=False,
        binlog_default=True,
        native_password=NATIVE_AVAILABLE,
        tarball_file=_MYSQL_TARBALL,
        removed_options=_REMOVED_IN_MYSQL_80 + _REMOVED_IN_MYSQL_83,
        client_handshake_option=False,
    ),
    Rule(
        product="mysql",
        since=(8, 4),
        until=(9, 0),
        init=INIT_INSECURE,
        init_args=(),
        start_args=_MYSQL_START,
        isolation_var="transaction_isolation",
        default_charset="utf8mb4",
        default_collation="utf8mb4_0900_ai_ci",
        utf8mb4_default_collation="utf8mb4_0900_ai_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_0900_ai_ci", "utf8mb4_0900_bin"},
        auth_plugin="caching_sha2_password",
        note="MySQL 8.4: mysql_native_password disabled unless mysql_native_password=ON",
        binlog_off="disable-log-bin",
        redo_log_option=REDO_LOG_CAPACITY,
        query_cache=False,
        binlog_default=True,
        native_password=NATIVE_DISABLED,
        tarball_file=_MYSQL_TARBALL,
        removed_options=_REMOVED_IN_MYSQL_80 + _REMOVED_IN_MYSQL_83 + _REMOVED_IN_MYSQL_84,
        client_handshake_option=False,
    ),
    Rule(
        product="mysql",
        since=(9, 0),
        until=None,
        init=INIT_INSECURE,
        init_args=(),
        start_args=_MYSQL_START,
        isolation_var="transaction_isolation",
        default_charset="utf8mb4",
        default_collation="utf8mb4_0900_ai_ci",
        utf8mb4_default_collation="utf8mb4_0900_ai_ci",
        collations=LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_0900_ai_ci", "utf8mb4_0900_bin"},
        auth_plugin="caching_sha2_password",
        note="MySQL 9.0: mysql_native_password removed",
        binlog_off="disable-log-bin",
        redo_log_option=REDO_LOG_CAPACITY,
        query_cache=False,
        binlog_default=True,
        native_password=NATIVE_REMOVED,
        tarball_file=_MYSQL_TARBALL,
        removed_options=(
            _REMOVED_IN_MYSQL_80
            + _REMOVED_IN_MYSQL_83
            + _REMOVED_IN_MYSQL_84
            + _REMOVED_IN_MYSQL_90
        ),
        client_handshake_option=False,
    ),
)
# Percona Server follows the rules of the MySQL release it is built from.
RULE_PRODUCT = {"percona": "mysql"}

# ASCII digits only (\d also matches other scripts' digits); \Z: no final newline.
_VERSION_RE = re.compile(r"^([0-9]+)\.([0-9]+)(?:\.([0-9]+))?\Z")


def parse_version(text: str) -> Version:
    m = _VERSION_RE.match(str(text))
    if not m:
        raise ConfigError(f"{text!r} is not a version: use MAJOR.MINOR or MAJOR.MINOR.PATCH")
    return tuple(int(g) for g in m.groups() if g is not None)


def rules_for(product: str, version: str) -> Rule:
    v = parse_version(version)
    family = RULE_PRODUCT.get(product, product)
    for rule in RULES:
        if rule.applies(family, v):
            return rule
    known = sorted({r.product for r in RULES})
    raise ConfigError(
        f"no version rules for {product} {version}: perftrack knows {', '.join(known)} "
        "from MariaDB 10.1 and MySQL 4.1 on (add a row to perftrack/servers/rules.py)"
    )


def charset_of(collation: str) -> str:
    return collation.split("_", 1)[0]


def resolve_collation(rule: Rule, axis_value: str) -> tuple[str, str] | str:
    """Map a charset axis value to (charset, collation), or a skip reason (str).

    The value is either a charset (`latin1`, `utf8mb4`: the release's default collation
    for it) or an explicit collation name (`utf8mb4_unicode_ci`).
    """
    if "_" not in axis_value:
        collation = rule.default_collation_for(axis_value)
        if collation is None and axis_value in AXIS_CHARSETS:
            return (
                f"charset {axis_value} does not exist on {rule.product} {describe_versions(rule)}"
            )
        if collation is None:
            return (
                f"charset {axis_value} is not one perftrack benchmarks ({', '.join(AXIS_CHARSETS)})"
            )
        return axis_value, collation
    if axis_value not in rule.collations:
        return (
            f"collation {axis_value} is not available on {rule.product} {describe_versions(rule)}"
        )
    return charset_of(axis_value), axis_value


# The charsets the charset axis takes by name (each release's default collation for it).
AXIS_CHARSETS = ("latin1", "utf8mb4")


def known_charset_values() -> tuple[str, ...]:
    """Every value the charset axis accepts on some release: a charset, or a collation one
    of the rules rows has. A value outside this set is a typo, not a skip."""
    collations = sorted(set().union(*(r.collations for r in RULES)))
    return (*AXIS_CHARSETS, *collations)


def check_charset_value(value: str, where: str) -> None:
    """ConfigError (one line, the valid values) for a charset-axis value no release has."""
    if value not in known_charset_values():
        raise ConfigError(
            f"{where}: charset {value!r} is not a charset or collation perftrack knows; "
            f"valid: {', '.join(known_charset_values())}"
        )


def describe_versions(rule: Rule) -> str:
    """The versions a rules row covers, e.g. ``8.0.30–8.3``, ``9.0+``."""
    since = ".".join(map(str, rule.since))
    until = ".".join(map(str, rule.until)) if rule.until else ""
    return f"{since}–{until}" if until else f"{since}+"
