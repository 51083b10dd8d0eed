"""Study pages: one per `configs/studies/*.yaml`, our ratios next to the article's.

Reads the study files' keys the site needs and ignores the rest: `title`, `stand_in`,
`comparisons` (`version` and/or `charset`), `baseline_collation`, `roles` (`base`/`new`,
each with the article's version name and our `full` / `local` server ids) and
`reference` (a CSV of the article's published numbers, relative to the study file:
version, workload, threads, collation, engine, durability, value, unit).

Ratios are throughput ratios (higher = faster): for a unit where lower is better
(`seconds`) the article's ratio is inverted so both columns mean the same thing. Our
ratio comes from the site's summary (median of the newest run per series): the `full`
server when the DB has it, else the `local` stand-in (the row says which).
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perftrack.core import yamlfile
from perftrack.core.errors import ConfigError

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
LOWER_IS_BETTER_UNITS = frozenset({"seconds", "ms", "s"})
KEY_FIELDS = ("workload", "threads", "collation", "engine", "durability")


@dataclass(frozen=True)
class Study:
    name: str  # file stem: the page is study-NAME.html
    title: str
    stand_in: str | None
    comparisons: tuple[str, ...]
    baseline_collation: str | None
    roles: dict[str, dict[str, Any]]
    reference: list[dict[str, str]] = field(default_factory=list)


def load_all(directory: Path | None) -> list[Study]:
    if directory is None or not directory.is_dir():
        return []
    return [load(p) for p in sorted(directory.glob("*.yaml"))]


def load(path: Path) -> Study:
    if not NAME_RE.match(path.stem):
        raise ConfigError(f"{path}: study file names are letters, digits, '.', '_' and '-'")
    doc = yamlfile.load(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("title"), str):
        raise ConfigError(f"{path}: a study needs a 'title:'")
    roles = doc.get("roles") if isinstance(doc.get("roles"), dict) else {}
    reference: list[dict[str, str]] = []
    ref = doc.get("reference")
    if isinstance(ref, str):
        ref_path = path.parent / ref
        try:
            with ref_path.open(encoding="utf-8", newline="") as f:
                reference = list(csv.DictReader(f))
        except OSError as exc:
            raise ConfigError(
                f"{path}: reference {ref_path} cannot be read ({exc.strerror})"
            ) from None
    stand_in = doc.get("stand_in")
    return Study(
        name=path.stem,
        title=doc["title"],
        stand_in=" ".join(str(stand_in).split()) if stand_in else None,
        comparisons=tuple(str(c) for c in doc.get("comparisons") or ()),
        baseline_collation=doc.get("baseline_collation"),
        roles={k: v for k, v in roles.items() if isinstance(v, dict)},
        reference=reference,
    )


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def _speed_ratio(new: float | None, base: float | None, unit: str) -> float | None:
    if not new or not base:
        return None
    return base / new if unit in LOWER_IS_BETTER_UNITS else new / base


def _key(row: dict[str, Any], drop: str | None = None) -> tuple[Any, ...]:
    return tuple((row.get(k) or None) for k in KEY_FIELDS if k != drop)


class _Ours:
    """Median throughput lookups in the site's summary rows."""

    def __init__(self, summary: list[dict[str, Any]]) -> None:
        self.by_server: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in summary:
            self.by_server[r["server"]].append(r)

    def pick(self, role: dict[str, Any]) -> tuple[str | None, str]:
        for scale in ("full", "local"):
            sid = role.get(scale)
            if isinstance(sid, str) and sid in self.by_server:
                return sid, scale
        return None, ""

    def find(self, server: str, want: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            r
            for r in self.by_server.get(server, [])
            if all(
                not want.get(k) or str(r.get(k)) == str(want[k])
                for k in ("workload", "threads", "collation")
            )
        ]


def _counterpart(row: dict[str, str], candidates: list[dict[str, str]]) -> dict[str, str] | None:
    """The base-version row for a new-version row: same cell, where an empty field (the
    release's own default, e.g. durability) matches anything; exact matches first."""
    exact = [c for c in candidates if _key(c) == _key(row)]
    if exact:
        return exact[0]
    for c in candidates:
        if all(not c.get(k) or not row.get(k) or c[k] == row[k] for k in KEY_FIELDS):
            return c
    return None


def _same_series(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a[k] == b[k] for k in ("runner_class", "profile", "dataset", "workload", "threads"))


def rows(study: Study, summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The study's comparisons: the article's ratio and ours, one row each."""
    ours = _Ours(summary)
    out: list[dict[str, Any]] = []
    base_role, new_role = study.roles.get("base", {}), study.roles.get("new", {})
    if "version" in study.comparisons:
        base_v, new_v = str(base_role.get("article")), str(new_role.get("article"))
        base_refs = [r for r in study.reference if r.get("version") == base_v]
        base_sid, scale = ours.pick(base_role)
        new_sid, _ = ours.pick(new_role)
        for n in (r for r in study.reference if r.get("version") == new_v):
            b = _counterpart(n, base_refs)
            if b is None:
                continue
            want = dict(zip(KEY_FIELDS, _key(n), strict=True))
            mine = None
            if base_sid and new_sid:
                for x in ours.find(new_sid, want):
                    y = next((y for y in ours.find(base_sid, want) if _same_series(x, y)), None)
                    if y and y["collation"] == x["collation"] and y["tps"]:
                        mine = x["tps"] / y["tps"]
                        break
            out.append(
                {
                    "comparison": f"{new_v} vs {base_v}",
                    **want,
                    "unit": n.get("unit"),
                    "article": _speed_ratio(_number(n["value"]), _number(b["value"]), n["unit"]),
                    "ours": mine,
                    "our_servers": f"{new_sid} vs {base_sid} ({scale})" if mine else None,
                }
            )
    if "charset" in study.comparisons and study.baseline_collation:
        for role in (base_role, new_role):
            version = str(role.get("article"))
            sid, scale = ours.pick(role)
            refs = [r for r in study.reference if r.get("version") == version]
            base_rows = {
                _key(r, "collation"): r
                for r in refs
                if r.get("collation") == study.baseline_collation
            }
            for r in refs:
                coll = r.get("collation")
                b = base_rows.get(_key(r, "collation"))
                if not coll or coll == study.baseline_collation or b is None:
                    continue
                want = dict(zip(KEY_FIELDS, _key(r), strict=True))
                mine = None
                if sid:
                    for x in ours.find(sid, want):
                        base_want = {**want, "collation": study.baseline_collation}
                        y = next((y for y in ours.find(sid, base_want) if _same_series(x, y)), None)
                        if y and y["tps"]:
                            mine = x["tps"] / y["tps"]
                            break
                out.append(
                    {
                        "comparison": f"{coll} vs {study.baseline_collation} on {version}",
                        **want,
                        "unit": r.get("unit"),
                        "article": _speed_ratio(
                            _number(r["value"]), _number(b["value"]), r["unit"]
                        ),
                        "ours": mine,
                        "our_servers": f"{sid} ({scale})" if mine else None,
                    }
                )
    return out
