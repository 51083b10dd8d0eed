"""Matrix files: which servers, workloads and axes to benchmark (configs/matrices/*.yaml)."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from perftrack.core import paths, yamlfile
from perftrack.core.errors import ConfigError
from perftrack.planning import axes, workloads
from perftrack.planning import selection as selection_mod
from perftrack.servers import catalog as catalog_mod
from perftrack.servers import rules
from perftrack.servers.catalog import Catalog

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}\Z")  # \Z: no final newline
# Bounds keep a typo from planning a week-long night; the full article matrices fit.
LIMITS = {
    "threads": (1, 4096),
    "repeats": (1, 100),
    "duration_s": (1, 3600),
    "warmup_s": (0, 600),
    "tables": (1, 1000),
    "table_size": (1, 1_000_000_000),
}
MAX_CELLS = 100_000
# How long one server start serves (run/lifetime.py): `group`, a fresh server for every
# group of every round; `run`, each server x options x dataset started once and kept up
# for every round of the run (docs/benchmarks.md "Noise fidelity").
SERVER_LIFETIMES = ("group", "run")
DEFAULT_SERVER_LIFETIME = "group"
# Matrix keys of the configuration axes -> the axis name in configs/axes.yaml.
AXIS_KEYS = {
    "engines": "engine",
    "isolations": "isolation",
    "durabilities": "durability",
    "handshakes": "handshake",
    "dataset_sizes": "dataset_size",
}


@dataclass(frozen=True, kw_only=True)
class Matrix:
    name: str
    servers: tuple[str, ...]
    workloads: tuple[str, ...]
    charsets: tuple[str, ...]
    threads: tuple[int, ...]
    repeats: int = 5
    duration_s: int = 10
    warmup_s: int = 2
    tables: int = 2
    table_size: int = 10_000
    profile: str = "default"
    connection: str = "tcp"
    description: str = ""
    # Configuration axes (configs/axes.yaml); empty = not set, the server's own default.
    # `profiles` is set when `profile` lists several profiles (then `profile` is the first).
    profiles: tuple[str, ...] = ()
    engines: tuple[str, ...] = ()
    isolations: tuple[str, ...] = ()
    durabilities: tuple[str, ...] = ()
    handshakes: tuple[str, ...] = ()  # charset-axis modifier: skip / client
    dataset_sizes: tuple[str, ...] = ()  # small / large: table_size sized to the buffer pool
    # Run discipline: an oltp_read_only pass before (pre) and after (post) a group's writes.
    prepost: bool = False
    server_lifetime: str = DEFAULT_SERVER_LIFETIME  # one of SERVER_LIFETIMES
    # When `servers` came from selection rules: each server's rule and reason (not written
    # back: the rules live in the file, the plan records the resolved list).
    selection: tuple[selection_mod.Choice, ...] = ()
    selection_notes: tuple[str, ...] = ()  # rules the dates left empty tonight

    def to_dict(self) -> dict[str, Any]:
        d = {
            f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
            for f in fields(self)
            if f.name not in ("selection", "selection_notes")
        }
        if d.pop("profiles"):  # the file's form: `profile` lists them
            d["profile"] = list(self.profiles)
        for key in AXIS_KEYS:  # an axis not set is absent, as in the file
            if not d[key]:
                del d[key]
        if not d["prepost"]:
            del d["prepost"]
        if d["server_lifetime"] == "group":  # the default: plans stay as they were
            del d["server_lifetime"]
        if self.dataset_sizes:  # sized by the plan, not given (see _check_discipline)
            del d["table_size"]
        return d


def _names(where: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{where}: '{key}' must be a non-empty list")
    for v in value:
        if not isinstance(v, str) or not NAME_RE.match(v):
            raise ConfigError(
                f"{where}: '{key}' has {v!r}: use letters, digits, '.', '_', '+', '-'"
            )
    if len(set(value)) != len(value):
        raise ConfigError(f"{where}: '{key}' lists a value twice")
    return tuple(value)


def _int(where: str, key: str, value: Any) -> int:
    lo, hi = LIMITS[key]
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ConfigError(f"{where}: '{key}' must be a whole number from {lo} to {hi}")
    return value


def from_dict(data: Any, where: str = "matrix", cat: Catalog | None = None) -> Matrix:
    """A validated matrix; ``servers: {select: [...]}`` is resolved against ``cat`` (the
    default catalog when None)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: a matrix must be a mapping of keys to values")
    known = {f.name for f in fields(Matrix)} - {"profiles", "selection", "selection_notes"}
    unknown = sorted(set(map(str, data)) - known)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(known))}"
        )
    for key in ("name", "servers", "workloads", "charsets", "threads"):
        if key not in data:
            raise ConfigError(f"{where}: missing key '{key}'")
    name = data["name"]
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ConfigError(f"{where}: 'name' must be a short identifier")
    threads = data["threads"]
    if isinstance(threads, int):
        threads = [threads]
    if not isinstance(threads, list) or not threads:
        raise ConfigError(f"{where}: 'threads' must be a non-empty list of numbers")
    profiles = _names(where, "profile", data.get("profile", "default"))
    axis_values = {
        key: _names(where, key, data[key]) for key in AXIS_KEYS if data.get(key) is not None
    }
    chosen: tuple[selection_mod.Choice, ...] = ()
    notes: list[str] = []
    servers = data["servers"]
    if selection_mod.is_selection(servers):
        chosen = selection_mod.resolve(
            servers, cat or catalog_mod.read_catalog(), where, notes=notes
        )
        servers = [c.server_id for c in chosen]
    m = Matrix(
        name=name,
        servers=_names(where, "servers", servers),
        selection=chosen,
        selection_notes=tuple(notes),
        workloads=_names(where, "workloads", data["workloads"]),
        charsets=_names(where, "charsets", data["charsets"]),
        threads=tuple(_int(where, "threads", t) for t in threads),
        **{
            k: _int(where, k, data[k])
            for k in ("repeats", "duration_s", "warmup_s", "tables", "table_size")
            if k in data
        },
        profile=profiles[0],
        connection=str(data.get("connection", "tcp")),
        description=str(data.get("description", "")),
        profiles=profiles if len(profiles) > 1 else (),
        prepost=_bool(where, "prepost", data.get("prepost", False)),
        server_lifetime=str(data.get("server_lifetime", "group")),
        **axis_values,
    )
    for charset in m.charsets:
        rules.check_charset_value(charset, where)
    if m.connection not in ("tcp", "socket"):
        raise ConfigError(f"{where}: 'connection' must be tcp or socket")
    for w in m.workloads:
        workloads.check_loads(workloads.get(w), where)
    _check_discipline(m, data, where)
    if axis_values:
        known = axes.read_axes(paths.config_dir())
        for key, values in axis_values.items():
            for v in values:
                known.check(AXIS_KEYS[key], v, where)
    n = len(m.servers) * len(m.workloads) * len(m.charsets) * len(m.threads) * m.repeats
    for values in (m.profiles, *axis_values.values()):
        n *= max(1, len(values))
    if m.prepost:  # two oltp_read_only passes per thread count in every group
        n += 2 * n // len(m.workloads)
    if n > MAX_CELLS:
        raise ConfigError(f"{where}: {n} cells is more than {MAX_CELLS}; split the matrix")
    return m


def _bool(where: str, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: '{key}' must be true or false")
    return value


def _check_discipline(matrix: Matrix, data: dict[str, Any], where: str) -> None:
    """prepost needs writes to the oltp tables and fresh data in every group; dataset_sizes
    sizes one dataset itself."""
    if matrix.server_lifetime not in SERVER_LIFETIMES:
        raise ConfigError(
            f"{where}: 'server_lifetime' must be {' or '.join(SERVER_LIFETIMES)}, "
            f"not {matrix.server_lifetime!r}"
        )
    if matrix.prepost and matrix.server_lifetime != "group":
        raise ConfigError(
            f"{where}: 'prepost' measures reads on freshly prepared data in every group, "
            "which a server kept up for the run does not have: use server_lifetime: group"
        )
    if matrix.prepost and not any(
        workloads.get(w).writes and workloads.get(w).dataset == workloads.DEFAULT_DATASET
        for w in matrix.workloads
    ):
        raise ConfigError(
            f"{where}: 'prepost' runs {workloads.PREPOST_WORKLOAD} before and after the writes to "
            "sysbench's oltp tables: add a workload that writes them (e.g. oltp_read_write)"
        )
    if not matrix.dataset_sizes:
        return
    if "table_size" in data:
        raise ConfigError(
            f"{where}: 'dataset_sizes' sizes table_size to the buffer pool: remove "
            "'table_size' (or 'dataset_sizes')"
        )
    sized = {workloads.get(w).dataset for w in matrix.workloads if workloads.get(w).tool != "slap"}
    if matrix.prepost:
        sized.add(workloads.DEFAULT_DATASET)
    if len(sized) > 1:
        raise ConfigError(
            f"{where}: 'dataset_sizes' sizes one dataset, but the workloads read "
            f"{', '.join(sorted(sized))}: split the matrix"
        )
    for dataset in sized:
        if dataset not in axes.ROW_BYTES:
            raise ConfigError(
                f"{where}: 'dataset_sizes' cannot size the '{dataset}' dataset (row sizes "
                f"are known for {', '.join(axes.ROW_BYTES)}): set tables/table_size instead"
            )


def read_matrix(path: Path) -> Matrix:
    return from_dict(yamlfile.read_yaml(path), where=str(path))
