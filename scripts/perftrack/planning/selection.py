"""Server selection by rule: a matrix names what it tracks, the catalog says what exists.

A matrix's ``servers`` is either a list of catalog ids or a mapping ``{select: [RULE…]}``.
Each rule picks catalog entries and says why (``why``, shown by `perftrack plan`):

- ``id: ID`` — one fixed server (an anchor, the control server);
- ``product`` (mysql, mariadb, percona) with optional ``series`` ("8.0", "8.4", or a major
  alone, "9": every 9.x release), optional ``provider`` (docker, tarball, …) and
  ``newest: N`` (default 1): the N newest releases of that product/series. ``newest: 2`` is
  "the newest release and its predecessor": when the new-tags flow merges 8.4.4 into the
  catalog, the next night's rule picks 8.4.4 and 8.4.3 with no matrix edit; a series that
  stops getting releases keeps its newest ones.

Rules are applied in order; a server picked twice keeps its first reason. A rule that
selects nothing is an error naming the file and the rule (a typo or a missing catalog
entry), not an empty night.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perftrack.core.errors import ConfigError
from perftrack.servers import rules
from perftrack.servers.catalog import PRODUCTS, PROVIDER_SECTIONS, Catalog, Entry

RULE_KEYS = ("id", "product", "series", "provider", "newest", "why")
MAX_NEWEST = 20


@dataclass(frozen=True)
class Choice:
    server_id: str
    why: str  # the rule's reason
    rule: str  # the rule in words


def is_selection(value: Any) -> bool:
    return isinstance(value, dict)


def resolve(spec: Any, cat: Catalog, where: str) -> tuple[Choice, ...]:
    """The servers a ``{select: [...]}`` mapping picks from ``cat``, in rule order."""
    if set(map(str, spec)) != {"select"} or not isinstance(spec["select"], list):
        raise ConfigError(f"{where}: 'servers' must be a list of ids or {{select: [rules]}}")
    if not spec["select"]:
        raise ConfigError(f"{where}: 'servers.select' lists no rule")
    chosen: dict[str, Choice] = {}
    for n, raw in enumerate(spec["select"]):
        here = f"{where}: servers.select[{n}]"
        for e, text in _apply(raw, cat, here):
            chosen.setdefault(e.id, Choice(e.id, str(raw["why"]).strip(), text))
    return tuple(chosen.values())


def _apply(raw: Any, cat: Catalog, here: str) -> list[tuple[Entry, str]]:
    if not isinstance(raw, dict):
        raise ConfigError(f"{here}: a rule must be a mapping ({', '.join(RULE_KEYS)})")
    unknown = sorted(set(map(str, raw)) - set(RULE_KEYS))
    if unknown:
        raise ConfigError(f"{here}: unknown key {unknown[0]!r}; known: {', '.join(RULE_KEYS)}")
    if not isinstance(raw.get("why"), str) or not raw["why"].strip():
        raise ConfigError(f"{here}: 'why' (the reason shown by `perftrack plan`) is required")
    if "id" in raw:
        extra = sorted(set(raw) - {"id", "why"})
        if extra:
            raise ConfigError(f"{here}: 'id' picks one server; remove {extra[0]!r}")
        try:
            return [(cat.get(str(raw["id"])), f"id {raw['id']}")]
        except ConfigError as err:
            raise ConfigError(f"{here}: {err}") from None
    product = raw.get("product")
    if product not in PRODUCTS:
        raise ConfigError(f"{here}: 'product' must be one of {', '.join(PRODUCTS)} (or use 'id')")
    series = raw.get("series")
    if series is not None and (not isinstance(series, str) or not _series_ok(series)):
        raise ConfigError(f"{here}: 'series' must be quoted MAJOR or MAJOR.MINOR, e.g. \"8.4\"")
    provider = raw.get("provider")
    if provider is not None and provider not in PROVIDER_SECTIONS:
        raise ConfigError(
            f"{here}: unknown provider {provider!r}; known: {', '.join(PROVIDER_SECTIONS)}"
        )
    newest = raw.get("newest", 1)
    if isinstance(newest, bool) or not isinstance(newest, int) or not 1 <= newest <= MAX_NEWEST:
        raise ConfigError(f"{here}: 'newest' must be a whole number from 1 to {MAX_NEWEST}")
    hits = [
        e
        for e in cat
        if e.product == product
        and (provider is None or e.provider == provider)
        and (series is None or _in_series(e.version, series))
    ]
    text = f"newest {newest} of {product}" + (f" {series}" if series else "")
    text += f" ({provider})" if provider else ""
    if not hits:
        raise ConfigError(f"{here}: the rule '{text}' selects no server of {cat.path}")
    hits.sort(key=lambda e: (rules.parse_version(e.version), e.id), reverse=True)
    return [(e, text) for e in hits[:newest]]


def _series_ok(series: str) -> bool:
    try:
        return len(rules.parse_version(series + ".0" if "." not in series else series)) >= 2
    except ConfigError:
        return False


def _in_series(version: str, series: str) -> bool:
    want = series.split(".")
    return version.split(".")[: len(want)] == want
