"""The runner fleet (configs/runners.yaml): runner classes, which class runs which series,
and the control server.

A *runner class* is a set of GitHub Actions runner labels on identical hardware
(`runs-on: [self-hosted, linux, x64, mysql-bench]`). Every series (workload × threads ×
charset × profile, all servers) is pinned to exactly one class by the `series:` rules
(first match wins; no match: the default class), so a series never mixes hardware.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perftrack.core import yamlfile
from perftrack.core.errors import ConfigError
from perftrack.planning.cells import Cell
from perftrack.planning.matrix import NAME_RE

# GitHub runner labels: letters, digits, '.', '_', '-' (no spaces, no expressions).
LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\Z")
DEFAULT_CLASS = "bench-default"
DEFAULT_LABELS = ("self-hosted", "linux", "x64", "mysql-bench")
# A series rule matches on these cell fields (each a list; absent = any value).
RULE_KEYS = {"workloads": "workload", "threads": "threads", "charsets": "charset_axis"}
RULE_KEYS_PROFILE = "profiles"
# `preflight:` (perftrack.host.preflight) and `noise_limits:` (perftrack.run.sampler) are
# read there.
TOP_KEYS = {"control_server", "classes", "default_class", "series", "preflight", "noise_limits"}


@dataclass(frozen=True)
class SeriesRule:
    runner_class: str
    match: dict[str, tuple[Any, ...]]

    def matches(self, cell: Cell) -> bool:
        return all(getattr(cell, attr) in values for attr, values in self.match.items())


@dataclass(frozen=True, kw_only=True)
class Fleet:
    classes: dict[str, tuple[str, ...]]  # class name -> runner labels
    default_class: str
    rules: tuple[SeriesRule, ...] = ()
    control_server: str | None = None
    source: str = "built-in default"

    def class_of(self, cell: Cell) -> str:
        for rule in self.rules:
            if rule.matches(cell):
                return rule.runner_class
        return self.default_class

    def labels(self, runner_class: str) -> list[str]:
        return list(self.classes[runner_class])


def _fail(where: str, msg: str) -> ConfigError:
    return ConfigError(f"{where}: {msg}")


def _classes(raw: Any, where: str) -> dict[str, tuple[str, ...]]:
    if raw is None:
        return {DEFAULT_CLASS: DEFAULT_LABELS}
    if not isinstance(raw, dict) or not raw:
        raise _fail(where, "'classes' must map class names to {labels: [...]}")
    out: dict[str, tuple[str, ...]] = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise _fail(where, f"runner class name {name!r} must be a short identifier")
        if not isinstance(spec, dict) or set(spec) - {"labels", "description"}:
            raise _fail(where, f"class '{name}' must be a mapping with 'labels' (and description)")
        labels = spec.get("labels")
        if not isinstance(labels, list) or not labels:
            raise _fail(where, f"class '{name}': 'labels' must be a non-empty list")
        for label in labels:
            if not isinstance(label, str) or not LABEL_RE.match(label):
                raise _fail(where, f"class '{name}': label {label!r} is not a runner label")
        out[name] = tuple(labels)
    return out


def _rule(raw: Any, index: int, classes: dict[str, tuple[str, ...]], where: str) -> SeriesRule:
    at = f"series[{index}]"
    if not isinstance(raw, dict) or "class" not in raw:
        raise _fail(where, f"{at} must be a mapping with 'class' and match keys")
    unknown = set(raw) - {"class", *RULE_KEYS, RULE_KEYS_PROFILE}
    if unknown:
        raise _fail(where, f"{at}: unknown key {sorted(unknown)[0]!r}")
    if raw["class"] not in classes:
        raise _fail(where, f"{at}: class {raw['class']!r} is not under 'classes'")
    match: dict[str, tuple[Any, ...]] = {}
    for key, value in raw.items():
        if key == "class":
            continue
        values = value if isinstance(value, list) else [value]
        if not values:
            raise _fail(where, f"{at}: '{key}' is empty")
        attr = "profile" if key == RULE_KEYS_PROFILE else RULE_KEYS[key]
        match[attr] = tuple(values)
    return SeriesRule(raw["class"], match)


def from_dict(data: Any, where: str) -> Fleet:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise _fail(where, "must be a mapping")
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise _fail(where, f"unknown key {sorted(unknown)[0]!r}; known: {', '.join(TOP_KEYS)}")
    classes = _classes(data.get("classes"), where)
    default = data.get("default_class", next(iter(classes)))
    if default not in classes:
        raise _fail(where, f"default_class {default!r} is not under 'classes'")
    series = data.get("series") or []
    if not isinstance(series, list):
        raise _fail(where, "'series' must be a list of rules")
    control = data.get("control_server")
    if control is not None and (not isinstance(control, str) or not NAME_RE.match(control)):
        raise _fail(where, "'control_server' must be a server id")
    return Fleet(
        classes=classes,
        default_class=default,
        rules=tuple(_rule(r, i, classes, where) for i, r in enumerate(series)),
        control_server=control,
        source=where,
    )


def read_fleet(config_dir: Path) -> Fleet:
    path = config_dir / "runners.yaml"
    if not path.is_file():
        return from_dict({}, str(path))
    return from_dict(yamlfile.read_yaml(path), str(path))
