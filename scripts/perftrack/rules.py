"""Product/version rules in one table: what differs between MySQL/MariaDB releases.

Every version-dependent decision (how to initialise a datadir, the isolation variable's
name, default charset and collation, collations a release lacks, auth plugin, extra
start options) is a column of `RULES`; code asks `rules_for(product, version)` and never
compares versions itself. Sources: the MySQL and MariaDB reference manuals' "changes in
release" notes for each row's first version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ConfigError

Version = tuple[int, ...]

# Initialisation styles.
INIT_INSTALL_DB = "install_db"  # mysql_install_db / mariadb-install-db script
INIT_INSECURE = "initialize_insecure"  # mysqld --initialize-insecure (MySQL 5.7+)

ALL_UTF8MB4_LEGACY = frozenset(
    {"utf8mb4_general_ci", "utf8mb4_bin", "utf8mb4_unicode_ci", "utf8mb4_unicode_520_ci"}
)
LATIN1 = frozenset({"latin1_swedish_ci", "latin1_bin", "latin1_general_ci"})


@dataclass(frozen=True)
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

    def applies(self, product: str, version: Version) -> bool:
        if product != self.product or version < self.since:
            return False
        return self.until is None or version < self.until

    def default_collation_for(self, charset: str) -> str | None:
        if charset == "latin1":
            return "latin1_swedish_ci"
        if charset == "utf8mb4":
            return self.utf8mb4_default_collation
        return None


_MARIADB_INIT_OLD = ("--force",)  # 10.1's script wants resolveip without --force
_MARIADB_AUTH_NORMAL = ("--auth-root-authentication-method=normal",)  # root via socket, no pw
_MYSQL_START = ("--mysqlx=OFF", "--secure-file-priv=")
# MariaDB 11.4 generates TLS keys at start (~13 s here) unless told to skip SSL; the
# benchmark client talks plain TCP on loopback anyway.
_MARIADB_11_START = ("--skip-ssl",)

RULES: tuple[Rule, ...] = (
    Rule(
        "mariadb",
        (10, 1),
        (10, 4),
        INIT_INSTALL_DB,
        _MARIADB_INIT_OLD,
        (),
        "tx_isolation",
        "latin1",
        "latin1_swedish_ci",
        "utf8mb4_general_ci",
        LATIN1 | ALL_UTF8MB4_LEGACY,
        None,
        "MariaDB 10.1-10.3: mysql_install_db; root has no password",
    ),
    Rule(
        "mariadb",
        (10, 4),
        (11, 1),
        INIT_INSTALL_DB,
        _MARIADB_AUTH_NORMAL,
        (),
        "tx_isolation",
        "latin1",
        "latin1_swedish_ci",
        "utf8mb4_general_ci",
        LATIN1 | ALL_UTF8MB4_LEGACY,
        None,
        "MariaDB 10.4+: root would use unix_socket auth unless told otherwise",
    ),
    Rule(
        "mariadb",
        (11, 1),
        (11, 6),
        INIT_INSTALL_DB,
        _MARIADB_AUTH_NORMAL,
        (),
        "transaction_isolation",
        "latin1",
        "latin1_swedish_ci",
        "utf8mb4_general_ci",
        LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_uca1400_ai_ci"},
        None,
        "MariaDB 11.1 renamed tx_isolation to transaction_isolation",
    ),
    Rule(
        "mariadb",
        (11, 6),
        None,
        INIT_INSTALL_DB,
        _MARIADB_AUTH_NORMAL,
        (),
        "transaction_isolation",
        "utf8mb4",
        "utf8mb4_uca1400_ai_ci",
        "utf8mb4_uca1400_ai_ci",
        LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_uca1400_ai_ci"},
        None,
        "MariaDB 11.6 made utf8mb4/uca1400_ai_ci the server default",
    ),
    Rule(
        "mysql",
        (5, 7),
        (8, 0),
        INIT_INSECURE,
        (),
        (),
        "tx_isolation",
        "latin1",
        "latin1_swedish_ci",
        "utf8mb4_general_ci",
        LATIN1 | ALL_UTF8MB4_LEGACY,
        "mysql_native_password",
        "MySQL 5.7: latin1 default, query cache present",
    ),
    Rule(
        "mysql",
        (8, 0),
        (8, 4),
        INIT_INSECURE,
        (),
        _MYSQL_START,
        "transaction_isolation",
        "utf8mb4",
        "utf8mb4_0900_ai_ci",
        "utf8mb4_0900_ai_ci",
        LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_0900_ai_ci", "utf8mb4_0900_bin"},
        "caching_sha2_password",
        "MySQL 8.0: utf8mb4_0900_ai_ci default, binlog on, query cache removed",
    ),
    Rule(
        "mysql",
        (8, 4),
        None,
        INIT_INSECURE,
        (),
        _MYSQL_START,
        "transaction_isolation",
        "utf8mb4",
        "utf8mb4_0900_ai_ci",
        "utf8mb4_0900_ai_ci",
        LATIN1 | ALL_UTF8MB4_LEGACY | {"utf8mb4_0900_ai_ci", "utf8mb4_0900_bin"},
        "caching_sha2_password",
        "MySQL 8.4/9.x: mysql_native_password disabled (8.4) and removed (9.0)",
    ),
)

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


def parse_version(text: str) -> Version:
    m = _VERSION_RE.match(str(text))
    if not m:
        raise ConfigError(f"'{text}' is not a version: use MAJOR.MINOR or MAJOR.MINOR.PATCH")
    return tuple(int(g) for g in m.groups() if g is not None)


def rules_for(product: str, version: str) -> Rule:
    v = parse_version(version)
    for rule in RULES:
        if rule.applies(product, v):
            return rule
    known = sorted({r.product for r in RULES})
    raise ConfigError(
        f"no version rules for {product} {version}: perftrack knows {', '.join(known)} "
        "from MariaDB 10.1 and MySQL 5.7 on (add a row to perftrack/rules.py)"
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
        if collation is None:
            return f"charset {axis_value} is not one perftrack benchmarks (latin1, utf8mb4)"
        return axis_value, collation
    if axis_value not in rule.collations:
        return f"collation {axis_value} is not available on {rule.product} {_fmt(rule)}"
    return charset_of(axis_value), axis_value


def _fmt(rule: Rule) -> str:
    since = ".".join(map(str, rule.since))
    until = ".".join(map(str, rule.until)) if rule.until else ""
    return f"{since}–{until}" if until else f"{since}+"
