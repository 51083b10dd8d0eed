"""Studies (configs/studies/<name>.yaml): one source article as a rerunnable matrix.

A study names its roles, the systems the article compared, in order: the first is the
baseline every other role is compared with (`base`, `new` in two-system articles; `mysql57`,
`mysql80`, `mysql56`, ... in the others). For each scale (`full`: the article's matrix, for
runners whose catalog has the article's servers; `local`: every axis kept, sized to finish
in minutes here) it names the server playing each role and the rest of the matrix.

Being a stand-in is a property of a study's role at a scale, not of a server (`Player`):
a role's server stands in when it is not the role's `full` server (the article's system);
it is a cross-product stand-in when its product differs from the role's (the `full`
catalog entry's), and a row measured on one is never graded (analysis/grading.py). Each
role says why its local server plays it (`stand_in`), `local_notes` what else the local
scale changes. A scale is one matrix, or `parts:` (a mapping of part name to
matrix keys, merged over the scale's shared keys) when the article's workloads cannot share
one matrix (article 004: sysbench read-write with its pre/post read passes, and TPC-C,
each sized by the dataset axis); each part is its own run. The report of a study's runs is
publish/study_report.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perftrack.core import yamlfile
from perftrack.core.errors import ConfigError
from perftrack.planning import matrix
from perftrack.servers.catalog import PRODUCT_NAMES, Catalog, Entry

STUDIES_DIR = "studies"
SCALES = ("full", "local")
ROLES = ("base", "new")  # the roles of a two-system study (the first role is the baseline)
ROLE_RE = re.compile(r"^[a-z][a-z0-9_]{0,30}\Z")
MAX_ROLES = 8
COMPARISONS = ("version", "charset", "durability", "isolation", "profile", "dataset_size", "phase")
# comparison -> the cell field it varies (the others stay equal)
AXIS_OF = {
    "charset": "collation",
    "durability": "durability",
    "isolation": "isolation",
    "profile": "profile",
    "dataset_size": "dataset_size",
    "phase": "phase",
}
KEYS = {
    "name",
    "title",
    "reference",
    "comparisons",
    "baseline_collation",
    "baseline_durability",
    "baselines",
    "claims",
    "stand_in_profiles",
    "roles",
    "local_notes",
    "scales",
}
ROLE_KEYS = ("article", *SCALES)
ROLE_OPTIONAL = ("stand_in",)  # why the local server plays the role (needed when it stands in)
# The cell fields a reference row is matched on (configs/studies/reference/README.md).


CLAIM_KINDS = ("up_to", "above", "below")


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A finding the article states in words (no numbers to transcribe): checked on our
    report rows whose comparison starts with `rows` and whose cells match `where`."""

    text: str
    rows: str  # a report comparison prefix: "version mysql80", "charset", ...
    where: tuple[tuple[str, tuple[str, ...]], ...]  # (cell field, value prefixes: any)
    kind: str  # up_to: the best ratio is about `value`; above / below: every ratio is > 1 / < 1
    value: float


@dataclass(frozen=True, kw_only=True)
class Player:
    """Who plays a study's role at a scale, and whether that is the article's system."""

    role: str
    system: str  # the article's system in words: "MySQL 5.7", "Percona Server 8.0.36"
    product: str  # the role's product: its `full` catalog entry's
    server: str  # the scale's server id
    server_name: str  # that server in words: "MariaDB 10.2.11"
    server_product: str
    article_server: bool  # the scale's server is the role's `full` one
    why: str = ""  # the role's `stand_in` text

    @property
    def stand_in(self) -> bool:
        return not self.article_server

    @property
    def cross_product(self) -> bool:
        """Another product's server: its results say nothing graded about the article's."""
        return self.server_product != self.product

    @property
    def label(self) -> str:
        """ "MariaDB 10.2.11 for MySQL 5.7" (a stand-in) or "MySQL 8.0.36" (the article's)."""
        return f"{self.server_name} for {self.system}" if self.stand_in else self.server_name

    @property
    def kind(self) -> str:
        if self.article_server:
            return "the article's system"
        if self.cross_product:
            return "a stand-in of another product: direction only"
        return "a stand-in of the same product: graded"


@dataclass(frozen=True, kw_only=True)
class Study:
    name: str
    title: str
    path: Path
    reference: Path
    comparisons: tuple[str, ...]
    roles: dict[str, dict[str, str]]  # role -> {article, full, local, stand_in}
    scales: dict[str, dict[str, Any]]
    local_notes: str = ""  # what else the local scale changes (profiles, sizes, rounds)
    baseline_collation: str = "latin1_swedish_ci"
    baseline_durability: str = "binlog_nosync"
    # comparison -> the value every other value of that axis is compared with (isolation:
    # RR, profile: default, ...); charset and durability also take the two keys above.
    baselines: dict[str, tuple[str, ...]] | None = None
    claims: tuple[Claim, ...] = ()
    # a local scale's stand-in profile -> the article's profile it stands for (004)
    stand_in_profiles: dict[str, str] | None = None

    @property
    def role_names(self) -> tuple[str, ...]:
        """The roles in file order; the first is the baseline."""
        return tuple(self.roles)

    @property
    def base_role(self) -> str:
        return self.role_names[0]

    def role_of_server(self, scale: str) -> dict[str, str]:
        return {self.server(r, scale): r for r in self.role_names}

    def servers(self, scale: str) -> list[str]:
        return [self.server(r, scale) for r in self.role_names]

    def parts(self, scale: str) -> tuple[str, ...]:
        """The scale's part names ("" for a one-matrix scale)."""
        self._check_scale(scale)
        return tuple(self.scales[scale].get("parts") or {"": None})

    def _check_scale(self, scale: str) -> None:
        if scale not in self.scales:
            raise ConfigError(
                f"study {self.name} has no scale '{scale}'; scales: {', '.join(self.scales)}"
            )

    def baseline(self, comparison: str) -> tuple[str, ...]:
        """The axis value(s) every other value is compared with: one per scale where the
        scales name it differently (profile `default` at full, `local-default` at local)."""
        if self.baselines and comparison in self.baselines:
            return self.baselines[comparison]
        if comparison == "charset":
            return (self.baseline_collation,)
        return (self.baseline_durability,)

    def matrix_name(self, scale: str, part: str = "") -> str:
        return f"study-{self.name}-{scale}" + (f"-{part}" if part else "")

    def server(self, role: str, scale: str) -> str:
        return self.roles[role][scale]

    def matrix(self, scale: str, part: str = "") -> matrix.Matrix:
        self._check_scale(scale)
        shared = {k: v for k, v in self.scales[scale].items() if k != "parts"}
        parts = self.scales[scale].get("parts") or {}
        if part and part not in parts:
            known = ", ".join(parts) or "none"
            raise ConfigError(
                f"study {self.name} scale {scale} has no part '{part}'; parts: {known}"
            )
        data = {
            **shared,
            **(parts.get(part) or {}),
            "name": self.matrix_name(scale, part),
            "servers": self.servers(scale),
            "description": self.title,
        }
        where = f"{self.path} (scale {scale}" + (f", part {part})" if part else ")")
        return matrix.from_dict(data, where=where)

    def matrices(self, scale: str) -> list[matrix.Matrix]:
        return [self.matrix(scale, p) for p in self.parts(scale)]


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


def read_study(name: str, config_dir: Path) -> Study:
    name = resolve(name, config_dir)
    path = config_dir / STUDIES_DIR / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(
            f"unknown study '{name}'; known: {', '.join(known(config_dir)) or 'none'} "
            f"(files in {config_dir / STUDIES_DIR})"
        )
    data = yamlfile.read_yaml(path)
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
    if not isinstance(roles, dict) or not 2 <= len(roles) <= MAX_ROLES:
        raise ConfigError(
            f"{where}: 'roles' must map 2 to {MAX_ROLES} role names to servers (the first is "
            "the baseline)"
        )
    for role, body in roles.items():
        if not isinstance(role, str) or not ROLE_RE.match(role):
            raise ConfigError(f"{where}: role name {role!r}: lowercase letters, digits and _")
        if not isinstance(body, dict) or not all(
            isinstance(body.get(k), str)
            for k in (*ROLE_KEYS, *(k for k in ROLE_OPTIONAL if k in body))
        ):
            raise ConfigError(
                f"{where}: roles.{role} needs article, full and local (text), and stand_in "
                "(text) where the local server is not the full one"
            )
        extra = sorted(set(map(str, body)) - {*ROLE_KEYS, *ROLE_OPTIONAL})
        if extra:
            raise ConfigError(f"{where}: roles.{role}: unknown key {extra[0]!r}")
        if body["local"] != body["full"] and not body.get("stand_in", "").strip():
            raise ConfigError(
                f"{where}: roles.{role}: local server {body['local']} is not the article's "
                f"({body['full']}): say why it stands in (roles.{role}.stand_in)"
            )
    for scale in SCALES:
        ids = [str(b[scale]) for b in roles.values()]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"{where}: two roles use the same {scale} server; each needs its own")
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
        roles={r: {k: " ".join(str(v).split()) for k, v in b.items()} for r, b in roles.items()},
        scales=scales,
        local_notes=" ".join(str(data.get("local_notes", "")).split()),
        baseline_collation=str(data.get("baseline_collation", "latin1_swedish_ci")),
        baseline_durability=str(data.get("baseline_durability", "binlog_nosync")),
        baselines=_baselines(data.get("baselines"), comparisons, where),
        claims=_claims(data.get("claims"), where),
        stand_in_profiles=_text_map(data.get("stand_in_profiles"), "stand_in_profiles", where),
    )
    for scale in scales:
        parts = scales[scale].get("parts") if isinstance(scales[scale], dict) else None
        if parts is not None and (not isinstance(parts, dict) or not parts):
            raise ConfigError(f"{where}: scales.{scale}.parts must map part names to matrix keys")
        for part in parts or ():
            if not isinstance(part, str) or not ROLE_RE.match(part):
                raise ConfigError(f"{where}: part name {part!r}: lowercase letters, digits and _")
        st.matrices(scale)  # validates every scale's matrices now
    return st


def _text_map(raw: Any, key: str, where: str) -> dict[str, str] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise ConfigError(f"{where}: '{key}' maps names to names (text)")
    return {str(k): v for k, v in raw.items()}


def _claims(raw: Any, where: str) -> tuple[Claim, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: 'claims' must be a list")
    out = []
    for n, c in enumerate(raw):
        here = f"{where}: claims[{n}]"
        if not isinstance(c, dict):
            raise ConfigError(f"{here} must be a mapping")
        kinds = [k for k in CLAIM_KINDS if k in c]
        extra = sorted(set(map(str, c)) - {"text", "rows", "where", *CLAIM_KINDS})
        if extra or len(kinds) != 1 or not isinstance(c.get("text"), str):
            raise ConfigError(
                f"{here}: needs text, rows, where and one of {', '.join(CLAIM_KINDS)}"
                + (f" (unknown key {extra[0]!r})" if extra else "")
            )
        cond = c.get("where") or {}
        if isinstance(cond, dict):
            cond = {k: v if isinstance(v, list) else [v] for k, v in cond.items()}
        value = c[kinds[0]]
        if (
            not isinstance(cond, dict)
            or isinstance(value, bool)
            or not isinstance(value, int | float)
        ):
            raise ConfigError(f"{here}: 'where' is a mapping and {kinds[0]} a number")
        if kinds[0] != "up_to" and value != 1:
            raise ConfigError(
                f"{here}: {kinds[0]} says which side is faster, so its value is 1; "
                "give up_to for the size of an effect"
            )
        out.append(
            Claim(
                text=" ".join(c["text"].split()),
                rows=str(c.get("rows", "")),
                where=tuple((str(k), tuple(str(x) for x in v)) for k, v in cond.items()),
                kind=kinds[0],
                value=float(value),
            )
        )
    return tuple(out)


def _baselines(
    raw: Any, comparisons: tuple[str, ...], where: str
) -> dict[str, tuple[str, ...]] | None:
    if raw is None:
        missing = [c for c in comparisons if c not in ("version", "charset", "durability")]
        if missing:
            raise ConfigError(f"{where}: comparison '{missing[0]}' needs baselines.{missing[0]}")
        return None
    if not isinstance(raw, dict) or not all(
        isinstance(v, str) or (isinstance(v, list) and v and all(isinstance(x, str) for x in v))
        for v in raw.values()
    ):
        raise ConfigError(f"{where}: 'baselines' maps comparisons to a value or a list of them")
    for c in comparisons:
        if c not in ("version", "charset", "durability") and c not in raw:
            raise ConfigError(f"{where}: comparison '{c}' needs baselines.{c}")
    bad = sorted(set(map(str, raw)) - set(AXIS_OF))
    if bad:
        raise ConfigError(f"{where}: baselines.{bad[0]} is not an axis comparison")
    return {str(k): (v,) if isinstance(v, str) else tuple(v) for k, v in raw.items()}


def players(study: Study, scale: str, catalog: Catalog) -> dict[str, Player]:
    """Each role's player at the scale, from the catalog: the role's product is its `full`
    entry's, the server's its own entry's. One-line error for an id the catalog lacks."""
    study._check_scale(scale)
    out = {}
    for role in study.role_names:
        body = study.roles[role]
        full, here = (_entry(study, role, k, catalog) for k in ("full", scale))
        version = body["article"].split()[-1] if body["article"].split() else body["article"]
        out[role] = Player(
            role=role,
            system=f"{PRODUCT_NAMES[full.product]} {version}",
            product=full.product,
            server=here.id,
            server_name=f"{PRODUCT_NAMES[here.product]} {here.version}",
            server_product=here.product,
            article_server=here.id == full.id,
            why=body.get("stand_in", ""),
        )
    return out


def _entry(study: Study, role: str, key: str, catalog: Catalog) -> Entry:
    sid = study.roles[role][key]
    if sid not in catalog:
        raise ConfigError(
            f"{study.path}: roles.{role}.{key}: server '{sid}' is not in {catalog.path.name}; "
            f"a role's product and its player's come from the catalog"
        )
    return catalog.get(sid)


def check_servers(study: Study, scale: str, catalog: Catalog) -> None:
    """One-line error if the catalog lacks a server the scale needs."""
    for role in study.role_names:
        sid = study.server(role, scale)
        if sid not in catalog:
            raise ConfigError(
                f"{study.path}: roles.{role}.{scale}: study {study.name} needs server '{sid}' "
                f"as {role} "
                f"(article: {study.roles[role]['article']}), which configs/versions.yaml does not "
                f"have: add it on a runner whose providers can supply it, or use --scale local"
            )
