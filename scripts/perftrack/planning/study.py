"""Studies (configs/studies/<name>.yaml): one source article as a rerunnable matrix.

A study names two roles, `base` and `new` (the article's older and newer release), and
for each scale (`full`: the article's matrix, for runners whose catalog has the article's
servers; `local`: every axis kept, sized to finish in minutes here, with labelled
stand-in servers) the server playing each role and the rest of the matrix. The report of
a study's run is publish/study_report.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perftrack.core import yamlfile
from perftrack.core.errors import ConfigError
from perftrack.planning import matrix
from perftrack.servers.catalog import Catalog

STUDIES_DIR = "studies"
SCALES = ("full", "local")
ROLES = ("base", "new")
COMPARISONS = ("version", "charset", "durability")
# comparison -> the cell field it varies (the others stay equal)
AXIS_OF = {"charset": "collation", "durability": "durability"}
KEYS = {
    "name",
    "title",
    "reference",
    "comparisons",
    "baseline_collation",
    "baseline_durability",
    "roles",
    "stand_in",
    "scales",
}
# The cell fields a reference row is matched on (configs/studies/reference/README.md).


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    path: Path
    reference: Path
    comparisons: tuple[str, ...]
    roles: dict[str, dict[str, str]]  # role -> {article, full, local}
    scales: dict[str, dict[str, Any]]
    stand_in: str = ""
    baseline_collation: str = "latin1_swedish_ci"
    baseline_durability: str = "binlog_nosync"

    def baseline(self, comparison: str) -> str:
        return self.baseline_collation if comparison == "charset" else self.baseline_durability

    def matrix_name(self, scale: str) -> str:
        return f"study-{self.name}-{scale}"

    def server(self, role: str, scale: str) -> str:
        return self.roles[role][scale]

    def matrix(self, scale: str) -> matrix.Matrix:
        if scale not in self.scales:
            raise ConfigError(
                f"study {self.name} has no scale '{scale}'; scales: {', '.join(self.scales)}"
            )
        data = {
            **self.scales[scale],
            "name": self.matrix_name(scale),
            "servers": [self.server("base", scale), self.server("new", scale)],
            "description": self.title,
        }
        return matrix.from_dict(data, where=f"{self.path} (scale {scale})")


def known(config_dir: Path) -> list[str]:
    return sorted(p.stem for p in (config_dir / STUDIES_DIR).glob("*.yaml"))


def resolve(name: str, config_dir: Path) -> str:
    """The study's full name: `name` itself, or the one study whose name starts with it
    (`000` for 000_charset_57_vs_80)."""
    names = known(config_dir)
    if name in names:
        return name
    hits = [n for n in names if n.startswith(name)] if name else []
    if len(hits) > 1:
        raise ConfigError(f"study '{name}' is ambiguous: {', '.join(hits)}")
    return hits[0] if hits else name


def load(name: str, config_dir: Path) -> Study:
    name = resolve(name, config_dir)
    path = config_dir / STUDIES_DIR / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(
            f"unknown study '{name}'; known: {', '.join(known(config_dir)) or 'none'} "
            f"(files in {config_dir / STUDIES_DIR})"
        )
    data = yamlfile.load(path)
    where = str(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: a study must be a mapping")
    unknown = sorted(set(map(str, data)) - KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key '{unknown[0]}'; known: {', '.join(sorted(KEYS))}")
    for key in ("name", "reference", "roles", "scales"):
        if key not in data:
            raise ConfigError(f"{where}: missing key '{key}'")
    if data["name"] != name:
        raise ConfigError(f"{where}: 'name' must be the file's name ({name})")
    roles = data["roles"]
    if not isinstance(roles, dict) or set(roles) != set(ROLES):
        raise ConfigError(f"{where}: 'roles' must have exactly base and new")
    for role, body in roles.items():
        if not isinstance(body, dict) or not all(
            isinstance(body.get(k), str) for k in ("article", *SCALES)
        ):
            raise ConfigError(f"{where}: roles.{role} needs article, full and local (text)")
    scales = data["scales"]
    if not isinstance(scales, dict) or not set(scales) <= set(SCALES) or not scales:
        raise ConfigError(f"{where}: 'scales' must map {' and/or '.join(SCALES)} to a matrix")
    comparisons = tuple(data.get("comparisons") or ("version",))
    bad = [c for c in comparisons if c not in COMPARISONS]
    if bad:
        raise ConfigError(
            f"{where}: unknown comparison '{bad[0]}'; known: {', '.join(COMPARISONS)}"
        )
    reference = path.parent / str(data["reference"])
    if not reference.is_file():
        raise ConfigError(f"{where}: reference file {reference} does not exist")
    st = Study(
        name=name,
        title=str(data.get("title", name)),
        path=path,
        reference=reference,
        comparisons=comparisons,
        roles={r: {k: str(v) for k, v in b.items()} for r, b in roles.items()},
        scales=scales,
        stand_in=" ".join(str(data.get("stand_in", "")).split()),
        baseline_collation=str(data.get("baseline_collation", "latin1_swedish_ci")),
        baseline_durability=str(data.get("baseline_durability", "binlog_nosync")),
    )
    for scale in scales:
        st.matrix(scale)  # validates every scale's matrix now
    return st


def check_servers(st: Study, scale: str, catalog: Catalog) -> None:
    """One-line error if the catalog lacks a server the scale needs."""
    for role in ROLES:
        sid = st.server(role, scale)
        if sid not in catalog:
            raise ConfigError(
                f"study {st.name} (scale {scale}) needs server '{sid}' as {role} "
                f"(article: {st.roles[role]['article']}), which configs/versions.yaml does not "
                f"have: add it on a runner whose providers can supply it, or use --scale local"
            )
