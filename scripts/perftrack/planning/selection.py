"""Server selection by rule: a matrix names what it tracks, the catalog says what exists,
the release table (configs/releases.yaml, servers/releases.py) says which line each release
is on and whether that line is supported.

A matrix's ``servers`` is either a list of catalog ids or a mapping ``{select: [RULE…]}``.
Each rule picks catalog entries and says why (``why``, shown by `perftrack plan`):

- ``id: ID`` — one fixed server (the control server, a study's system);
- ``product`` (mysql, mariadb, percona) with optional ``provider`` (docker, tarball, …),
  ``newest: N`` (default 1) and one of
  - ``lines:`` which release lines, each taken separately: ``innovation`` (MySQL's
    innovation track), ``lts`` (every supported LTS line), ``newest-lts`` (the newest
    supported LTS line the catalog has a release of), ``eol`` (every line past its end of
    life), or one line by name (``"8.4"``); ``newest_lines: K`` keeps the K newest of those
    lines (by GA date) that the catalog has a release of;
  - ``series`` ("8.0", or a major alone, "9"): releases of that series (no line needed);
  - neither: the product's N newest releases.
  ``newest: N`` is per line: "the newest release and its predecessor" of each. When the
  new-tags flow merges 8.4.10 or 27.1.0 into the catalog, the next night's rules pick it
  with no matrix edit; a line reaching its end of life moves from ``lts`` to ``eol`` by
  its date in the table.

Rules are applied in order; a server picked twice keeps its first reason. A rule that
selects nothing is an error naming the file and the rule (a typo, or a catalog with no
release of the kind of line the rule asks for), not an empty night — except when only the
dates left it empty (no Percona release of the one supported LTS line after 8.4 ended):
then it is a note in the plan, and the night goes on.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from perftrack.core.errors import ConfigError
from perftrack.servers import releases, rules
from perftrack.servers.catalog import PRODUCTS, PROVIDER_SECTIONS, Catalog, Entry

RULE_KEYS = ("id", "product", "lines", "series", "provider", "newest", "newest_lines", "why")
MAX_NEWEST = 20
# `lines:` selectors besides a line's own name.
LTS_LINES = "lts"
NEWEST_LTS = "newest-lts"
EOL_LINES = "eol"
INNOVATION = releases.INNOVATION
SELECTORS = (INNOVATION, LTS_LINES, NEWEST_LTS, EOL_LINES)
_SELECTOR_WORDS = {
    INNOVATION: "{product}'s innovation track",
    LTS_LINES: "each supported {product} LTS line",
    NEWEST_LTS: "the newest supported {product} LTS line",
    EOL_LINES: "each {product} end-of-life line",
}


@dataclass(frozen=True, kw_only=True)
class Choice:
    server_id: str
    why: str  # the rule's reason
    rule: str  # the rule in words
    line: str = ""  # the release line's label ("MySQL 8.4 LTS"), "" when on none


def is_selection(value: Any) -> bool:
    return isinstance(value, dict)


def resolve(
    spec: Any,
    cat: Catalog,
    where: str,
    today: dt.date | None = None,
    notes: list[str] | None = None,
) -> tuple[Choice, ...]:
    """The servers a ``{select: [...]}`` mapping picks from ``cat``, in rule order; lines
    are supported or not as of ``today`` (default: today). A rule left empty by the dates
    alone adds a line to ``notes``."""
    if set(map(str, spec)) != {"select"} or not isinstance(spec["select"], list):
        raise ConfigError(f"{where}: 'servers' must be a list of ids or {{select: [rules]}}")
    if not spec["select"]:
        raise ConfigError(f"{where}: 'servers.select' lists no rule")
    table = releases.read_releases(releases.beside(cat.path))
    today = today or dt.date.today()
    chosen: dict[str, Choice] = {}
    for n, raw in enumerate(spec["select"]):
        here = f"{where}: servers.select[{n}]"
        for e, text in _apply(raw, cat, table, today, here, notes if notes is not None else []):
            line = table.line_of(e.product, e.version)
            chosen.setdefault(
                e.id,
                Choice(
                    server_id=e.id,
                    why=str(raw["why"]).strip(),
                    rule=text,
                    line=line.label if line else "",
                ),
            )
    return tuple(chosen.values())


def _apply(
    raw: Any, cat: Catalog, table: releases.Releases, today: dt.date, here: str, notes: list[str]
) -> list[tuple[Entry, str]]:
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
    newest = _count(raw, "newest", here)
    hits = [
        e
        for e in cat
        if e.product == product
        and (provider is None or e.provider == provider)
        and (series is None or _in_series(e.version, series))
    ]
    suffix = f" ({provider})" if provider else ""
    if "lines" in raw:
        if series is not None:
            raise ConfigError(f"{here}: use 'lines' or 'series', not both")
        groups, words = _by_line(raw, product, hits, table, today, here)
        text = f"newest {newest} of {words}{suffix}"
    else:
        if "newest_lines" in raw:
            raise ConfigError(f"{here}: 'newest_lines' needs 'lines'")
        groups = [hits]
        text = f"newest {newest} of {product}" + (f" {series}" if series else "") + suffix
    picked = [(e, text) for group in groups for e in _newest_first(group)[:newest]]
    if not picked and "lines" in raw and _by_line(raw, product, hits, table, None, here)[0]:
        notes.append(f"{here}: the rule '{text}' selects no server on {today} (its lines' dates)")
    elif not picked:
        raise ConfigError(f"{here}: the rule '{text}' selects no server of {cat.path}")
    return picked


def _by_line(
    raw: dict,
    product: str,
    hits: list[Entry],
    table: releases.Releases,
    today: dt.date | None,
    here: str,
) -> tuple[list[list[Entry]], str]:
    """The rule's entries grouped by release line (newest line first), and its words;
    ``today`` None: every line of the selector's kind, whatever its dates."""
    want = raw["lines"]
    names = {line.name for line in table.lines_of(product)}
    if not isinstance(want, str) or want not in (*SELECTORS, *names):
        raise ConfigError(
            f"{here}: 'lines' must be one of {', '.join(SELECTORS)} or a {product} line of "
            f'{releases.display(table.path)} (quoted, e.g. "8.4"); got {want!r}'
        )
    lines = [line for line in table.lines_of(product) if _line_matches(line, want, today)]
    groups = [
        [e for e in hits if table.line_of(e.product, e.version) == line]
        for line in sorted(lines, key=lambda line: line.ga, reverse=True)
    ]
    groups = [g for g in groups if g]
    keep = len(groups)
    if want == NEWEST_LTS:
        keep = 1
    elif "newest_lines" in raw:
        keep = _count(raw, "newest_lines", here)
    words = _SELECTOR_WORDS.get(want, "{product} line " + want).format(product=product)
    if "newest_lines" in raw:
        words = f"each of the {keep} newest {words.removeprefix('each ')}s"
    return groups[:keep], words


def _line_matches(line: releases.Line, want: str, today: dt.date | None) -> bool:
    if want == INNOVATION:
        return line.kind == releases.INNOVATION
    if want in (LTS_LINES, NEWEST_LTS):
        return line.kind == releases.LTS and (today is None or line.supported(today))
    if want == EOL_LINES:
        return line.eol is not None and (today is None or line.ended(today))
    return line.name == want


def _count(raw: dict, key: str, here: str, default: int = 1) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_NEWEST:
        raise ConfigError(f"{here}: '{key}' must be a whole number from 1 to {MAX_NEWEST}")
    return value


def _newest_first(entries: list[Entry]) -> list[Entry]:
    return sorted(entries, key=lambda e: (rules.parse_version(e.version), e.id), reverse=True)


def _series_ok(series: str) -> bool:
    try:
        return len(rules.parse_version(series + ".0" if "." not in series else series)) >= 2
    except ConfigError:
        return False


def _in_series(version: str, series: str) -> bool:
    want = series.split(".")
    return version.split(".")[: len(want)] == want
