"""Server profiles: my.cnf fragments under configs/profiles/<name>.cnf."""

from __future__ import annotations

import re
from pathlib import Path

from perftrack.core.errors import ConfigError

OPTION_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,99}\Z")  # \Z: no final newline
VALUE_RE = re.compile(r"^[A-Za-z0-9_.,:/+%-]{0,200}\Z")
# How mysqld reads an option name (my_getopt): case-insensitive, '_' and '-' alike, these
# prefixes modify the name after them, and a unique abbreviation of a name is that name.
# MariaDB 10.11 takes `bind=0.0.0.0` and `loose-bind-address=0.0.0.0` as bind-address.
OPTION_PREFIXES = ("loose-", "skip-", "enable-", "disable-", "maximum-")
# Real option names that are also abbreviations of a reserved one (mysqld takes an exact
# name over an abbreviation): `lc-messages` vs `lc-messages-dir`.
EXACT_OPTIONS = frozenset({"lc-messages"})
# perftrack owns these: a profile that sets them would break isolation or cleanup.
RESERVED = frozenset(
    {
        "basedir",
        "datadir",
        "socket",
        "port",
        "bind-address",
        "bind_address",
        "log-error",
        "log_error",
        "pid-file",
        "pid_file",
        "user",
        "lc-messages-dir",
        "lc_messages_dir",
        "character-set-server",
        "character_set_server",
        "collation-server",
        "collation_server",
        "skip-networking",
        "skip_networking",
        "tmpdir",
    }
)


# The one absolute path an option value may name: the server writes nothing that stays.
NULL_DEVICE = "/dev/null"


def path_outside(value: str) -> bool:
    """Whether an option value names a path outside the server's datadir: absolute (but
    /dev/null) or climbing out with `..`. mysqld reads a relative file name (`log-bin=binlog`,
    `general_log_file=general.log`) in its datadir, which perftrack owns and removes; a
    file written elsewhere would outlive the server, or overwrite a file of the host."""
    return (value.startswith("/") and value != NULL_DEVICE) or ".." in value.split("/")


def _forms(key: str) -> list[str]:
    """`key` as mysqld reads it: lower case, '-' for '_', with and without each of the
    option prefixes (`loose-skip-networking` is also `skip-networking` and `networking`)."""
    name = key.lower().replace("_", "-")
    names = [name]
    while name.startswith(OPTION_PREFIXES):
        name = name.split("-", 1)[1]
        names.append(name)
    return names


def reserved_as(key: str) -> str | None:
    """The reserved option mysqld would take `key` for (mysqld accepts unambiguous
    prefixes of option names), or None."""
    reserved = sorted({form for r in RESERVED for form in _forms(r)})
    for n in _forms(key):
        for r in reserved:
            if r == n or (r.startswith(n) and n not in EXACT_OPTIONS):
                return r
    return None


def parse(text: str, where: str) -> dict[str, str | None]:
    options: dict[str, str | None] = {}
    section = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if section != "mysqld":
            raise ConfigError(f"{where}:{n}: options must be in the [mysqld] section")
        key, sep, value = (p.strip() for p in line.partition("="))
        if not OPTION_RE.match(key):
            raise ConfigError(f"{where}:{n}: '{key}' is not an option name")
        owned = reserved_as(key)
        if owned:
            raise ConfigError(f"{where}:{n}: '{key}' sets {owned}, which perftrack sets; remove it")
        if sep and not VALUE_RE.match(value):
            raise ConfigError(
                f"{where}:{n}: value of '{key}' has characters a my.cnf value here may not have"
            )
        if sep and path_outside(value):
            raise ConfigError(
                f"{where}:{n}: value of '{key}' is a path outside the server's datadir "
                f"(a relative name is the datadir's; {NULL_DEVICE} discards)"
            )
        options[key] = value if sep else None
    return options


def read_profile(name: str, config_dir: Path) -> dict[str, str | None]:
    path = config_dir / "profiles" / f"{name}.cnf"
    if not path.is_file():
        known = sorted(p.stem for p in (config_dir / "profiles").glob("*.cnf"))
        raise ConfigError(
            f"unknown profile '{name}'; known: {', '.join(known) or 'none'} "
            f"(files in {config_dir / 'profiles'})"
        )
    return parse(path.read_text(encoding="utf-8", errors="replace"), str(path))
