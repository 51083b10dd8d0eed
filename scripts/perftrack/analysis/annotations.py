"""Acknowledgements: configs/annotations.yaml marks known, expected changes.

An entry's `state` is what it makes of the alerts it matches (analysis/alerts.py):
`acknowledged` (the default: a real, expected change) or `false_positive` (no change at
all: noise, a broken run). The file's optional `alerts:` mapping holds the lifecycle's
settings (`expire_days`).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perftrack.core import yamlfile
from perftrack.core.errors import ConfigError

MATCH_KEYS = ("servers", "server", "workload", "collation", "threads", "profile", "runner_class")
ENTRY_KEYS = ("match", "reason", "link", "date", "state")
STATES = ("acknowledged", "false_positive")  # what a user may set; the default is the first
SETTING_KEYS = ("expire_days",)
DEFAULT_EXPIRE_DAYS = 90
MAX_EXPIRE_DAYS = 3650
MAX_REASON = 500
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}\Z")  # \Z: no final newline
LINK_RE = re.compile(r"^https://[^\s\"'<>]{1,500}\Z")


@dataclass(frozen=True, kw_only=True)
class Annotation:
    reason: str
    match: dict[str, Any] = field(default_factory=dict)
    link: str | None = None
    date: str | None = None
    state: str = STATES[0]

    def matches(self, subject: dict[str, Any]) -> bool:
        """True when every key of `match` equals the subject's value for it."""
        for key, want in self.match.items():
            if key == "servers":
                if [subject.get("base_server"), subject.get("new_server")] != list(want):
                    return False
            elif key == "server":
                if subject.get("server_id", subject.get("new_server")) != want:
                    return False
            elif subject.get(key) != want:
                return False
        return True


def _entry(raw: Any, where: str) -> Annotation:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: an annotation must be a mapping")
    unknown = sorted(set(map(str, raw)) - set(ENTRY_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; known: {', '.join(ENTRY_KEYS)}")
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON:
        raise ConfigError(f"{where}: 'reason' must be one line of 1 to {MAX_REASON} characters")
    if len(reason.strip().splitlines()) != 1:  # \r, \u2028 … break lines too
        raise ConfigError(f"{where}: 'reason' must be one line")
    match = raw.get("match")
    if not isinstance(match, dict) or not match:
        raise ConfigError(f"{where}: 'match' must name at least one of {', '.join(MATCH_KEYS)}")
    for key, value in match.items():
        if key not in MATCH_KEYS:
            raise ConfigError(f"{where}: unknown match key {key!r}; known: {', '.join(MATCH_KEYS)}")
        if key == "servers":
            ok = (
                isinstance(value, list)
                and len(value) == 2
                and all(isinstance(v, str) and ID_RE.match(v) for v in value)
            )
        elif key == "threads":
            ok = isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 4096
        else:
            ok = isinstance(value, str) and bool(ID_RE.match(value))
        if not ok:
            raise ConfigError(f"{where}: match {key!r} has an invalid value")
    link = raw.get("link")
    if link is not None and (not isinstance(link, str) or not LINK_RE.match(link)):
        raise ConfigError(f"{where}: 'link' must be an https:// URL")
    date = raw.get("date")
    if date is not None:
        if isinstance(date, dt.date):
            date = date.isoformat()
        try:
            dt.date.fromisoformat(str(date))
        except ValueError:
            raise ConfigError(f"{where}: 'date' must be YYYY-MM-DD") from None
    state = raw.get("state", STATES[0])
    if state not in STATES:
        raise ConfigError(f"{where}: 'state' must be one of {', '.join(STATES)}, not {state!r}")
    return Annotation(
        reason=reason.strip(),
        match=dict(match),
        link=link,
        date=None if date is None else str(date),
        state=str(state),
    )


@dataclass(frozen=True)
class AnnotationsFile:
    notes: list[Annotation] = field(default_factory=list)
    expire_days: int = DEFAULT_EXPIRE_DAYS  # alerts.expire_days


def _settings(raw: Any, where: str) -> int:
    if raw is None:
        return DEFAULT_EXPIRE_DAYS
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: 'alerts' must be a mapping (e.g. expire_days: 90)")
    unknown = sorted(set(map(str, raw)) - set(SETTING_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key alerts.{unknown[0]}; known: expire_days")
    days = raw.get("expire_days", DEFAULT_EXPIRE_DAYS)
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_EXPIRE_DAYS:
        raise ConfigError(
            f"{where}: alerts.expire_days must be a whole number of days, 1 to {MAX_EXPIRE_DAYS}"
        )
    return days


def load_file(path: Path) -> AnnotationsFile:
    """The whole file: the entries and the alert settings (defaults when absent)."""
    if not path.is_file():
        return AnnotationsFile()
    data = yamlfile.read_yaml(path)
    if data is None:
        return AnnotationsFile()
    if not isinstance(data, dict) or set(data) - {"annotations", "alerts"}:
        raise ConfigError(
            f"{path}: expected the keys 'annotations' (a list) and optionally 'alerts'"
        )
    days = _settings(data.get("alerts"), str(path))
    items = data.get("annotations")
    if items is None:
        return AnnotationsFile([], days)
    if not isinstance(items, list):
        raise ConfigError(f"{path}: 'annotations' must be a list")
    notes = [_entry(raw, f"{path}: annotation {i + 1}") for i, raw in enumerate(items)]
    return AnnotationsFile(notes, days)


def read_annotations(path: Path) -> list[Annotation]:
    return load_file(path).notes


def matching(notes: list[Annotation], subject: dict[str, Any]) -> Annotation | None:
    """The first annotation that matches the subject, if any."""
    for note in notes:
        if note.matches(subject):
            return note
    return None


def acknowledged(notes: list[Annotation], subject: dict[str, Any]) -> str | None:
    """The reason of the first annotation that matches the subject (whatever its state:
    acknowledged and false positive changes both do not fail checks), if any."""
    note = matching(notes, subject)
    return note.reason if note else None


def check_matched(notes: list[Annotation], subjects: list[dict[str, Any]]) -> None:
    """A ConfigError for the first annotation that matches none of the subjects (the
    verdicts and change points in the DB): a typo would otherwise acknowledge nothing."""
    for i, note in enumerate(notes):
        if not any(note.matches(s) for s in subjects):
            raise ConfigError(
                f"annotations.yaml: annotation {i + 1} ({note.reason[:60]!r}) matches no "
                "verdict or change point in the DB: fix its match (server ids, keys) or "
                "remove it"
            )
