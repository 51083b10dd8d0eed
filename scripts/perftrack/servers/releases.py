"""Release lines, ``configs/releases.yaml``: which lines of each product exist, their kind and
dates, which line a version is on, and whether that line (or release) is still supported.

The one table of the release model. MySQL's versions come in two forms: ``X.Y.Z`` (5.7.44,
8.4.9, 9.7.4) and, for innovation releases from July 2026 on, calendar versions ``YY.M.P``
(26.7.0, 26.10.0, 27.1.0, …). Both order as tuples of integers (26.10.0 > 26.7.0 > 9.7.4 >
8.4.9: `rules.parse_version`); this module says which line each is on. The catalog refuses
an entry whose version is on no line, `perftrack tags check` adds the newest release of each
supported line first, and the nightly's rules choose servers by line (`lines:` in a
matrix's ``servers.select``, planning/selection.py). A new innovation release (27.1.0) or
LTS patch joins with no edit anywhere; a new line is one row here.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perftrack.core import paths, yamlfile
from perftrack.core.errors import ConfigError
from perftrack.servers import rules

RELEASES_FILENAME = "releases.yaml"
PRODUCTS = ("mysql", "mariadb")  # Percona Server follows MySQL's lines (rules.RULE_PRODUCT)
# Products whose every catalog entry must be on a line: MySQL's (and Percona Server's), the
# release model perftrack tracks. A MariaDB entry of a line the table lacks (a rolling
# 12.x series) is listed with "no release line" and runs all the same.
STRICT_PRODUCTS = ("mysql",)
LINE_KEYS = ("product", "line", "kind", "label", "ga")
OPTIONAL_KEYS = ("eol", "series", "calendar_from")

LTS = "lts"
SERIES = "series"
INNOVATION = "innovation"
ROLLING = "rolling"
KINDS = (LTS, SERIES, INNOVATION, ROLLING)

# A line's name: MAJOR.MINOR, or `innovation` (MySQL's innovation track).
LINE_NAME_RE = re.compile(r"^(?:[0-9]{1,2}\.[0-9]{1,2}|innovation)\Z")
SERIES_RE = re.compile(r"^[0-9]{1,2}\.[0-9]{1,2}\Z")
LAST_MONTH = 12  # calendar versions YY.M.P: M is the month of the release


@dataclass(frozen=True, kw_only=True)
class Line:
    """One release line of one product."""

    product: str
    name: str  # "8.4", "innovation"
    kind: str  # one of KINDS
    label: str  # "MySQL 8.4 LTS"
    ga: dt.date
    eol: dt.date | None
    series: tuple[rules.Version, ...]  # the MAJOR.MINOR series it holds
    calendar_from: rules.Version | None = None  # (YY, M): calendar versions from here on

    def holds(self, version: rules.Version) -> bool:
        if version[:2] in self.series:
            return True
        return self.calendar_from is not None and _is_calendar(version, self.calendar_from)

    def ended(self, today: dt.date) -> bool:
        return self.eol is not None and self.eol <= today

    def supported(self, today: dt.date) -> bool:
        """GA and not past its end of life (the innovation track as a whole, not a release)."""
        return self.ga <= today and not self.ended(today)


def _is_calendar(version: rules.Version, start: rules.Version) -> bool:
    return len(version) == 3 and version[:2] >= start and 1 <= version[1] <= LAST_MONTH


@dataclass(frozen=True)
class Releases:
    """Every line of ``configs/releases.yaml``, in file order."""

    path: Path
    lines: tuple[Line, ...]

    def lines_of(self, product: str) -> tuple[Line, ...]:
        family = rules.RULE_PRODUCT.get(product, product)
        return tuple(line for line in self.lines if line.product == family)

    def line_of(self, product: str, version: str) -> Line | None:
        """The line ``version`` of ``product`` is on, or None."""
        v = rules.parse_version(version)
        return next((line for line in self.lines_of(product) if line.holds(v)), None)

    def refuses(self, product: str, version: str) -> bool:
        """Whether a catalog entry of ``version`` must be refused: a strict product's version
        on no line."""
        strict = rules.RULE_PRODUCT.get(product, product) in STRICT_PRODUCTS
        return strict and self.line_of(product, version) is None

    def require_line(self, product: str, version: str) -> Line:
        """The line of ``version``; `ConfigError` saying which forms exist otherwise."""
        line = self.line_of(product, version)
        if line is None:
            raise ConfigError(self.no_line_message(product, version))
        return line

    def no_line_message(self, product: str, version: str) -> str:
        family = rules.RULE_PRODUCT.get(product, product)
        v = rules.parse_version(version)
        forms = []
        for line in self.lines_of(product):
            names = [".".join(map(str, s)) for s in line.series]
            if line.calendar_from is not None:
                yy, m = line.calendar_from
                names.append(f"YY.M.P from {yy}.{m}.0 (M 1-{LAST_MONTH})")
            innovation = line.kind == INNOVATION
            forms.append(f"{line.name}: {', '.join(names)}" if innovation else line.name)
        calendar = any(line.calendar_from for line in self.lines_of(product))
        bad_month = calendar and len(v) == 3 and v[1] > LAST_MONTH
        month = f" ({v[1]} is not a month)" if bad_month else ""
        return (
            f"{product} {version} is on no release line of {family} in {display(self.path)}"
            f"{month}: its lines are {'; '.join(forms) or 'none'} (a new line is a row there)"
        )

    def status(
        self, product: str, version: str, known: Iterable[str] = (), today: dt.date | None = None
    ) -> str:
        """Whether ``version`` is supported ``today``, in words: ``supported until 2032-04-30``,
        ``end of life 2026-04-30``, ``superseded by 26.10.0`` (an innovation release once a
        newer one of ``known`` exists), ``no release line``."""
        today = today or dt.date.today()
        line = self.line_of(product, version)
        if line is None:
            return "no release line"
        if line.ended(today):
            return f"end of life {line.eol}"
        if line.ga > today:
            return "not yet GA"
        if line.kind == INNOVATION:
            v = rules.parse_version(version)
            newer = [k for k in known if line.holds(rules.parse_version(k))]
            newer = [k for k in newer if rules.parse_version(k) > v]
            if newer:
                return f"superseded by {max(newer, key=rules.parse_version)}"
            return "supported until the next innovation release"
        return f"supported until {line.eol}" if line.eol else "supported"

    def supported(
        self, product: str, version: str, known: Iterable[str] = (), today: dt.date | None = None
    ) -> bool:
        return self.status(product, version, known, today).startswith("supported")


# The checkout's own table: for a configs directory of the user's that has none.
CHECKOUT_PATH = Path(__file__).resolve().parents[3] / "configs" / RELEASES_FILENAME


def default_path() -> Path:
    """The configs directory's table (`paths.config_dir`), else the checkout's."""
    here = paths.config_dir() / RELEASES_FILENAME
    return here if here.is_file() else CHECKOUT_PATH


def beside(catalog_path: Path) -> Path:
    """The release table next to a catalog file, else `default_path`."""
    here = Path(catalog_path).parent / RELEASES_FILENAME
    return here if here.is_file() else default_path()


_CACHE: dict[tuple[Path, int, int], Releases] = {}


def read_releases(path: Path | None = None) -> Releases:
    """Read and validate a release table (default: the configs directory's)."""
    path = default_path() if path is None else Path(path)
    try:
        st = path.stat()
    except OSError:
        raise ConfigError(f"{display(path)}: no such file (the release lines table)") from None
    key = (path.resolve(), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        _CACHE[key] = Releases(path=path, lines=parse(yamlfile.read_yaml(path), path))
    return _CACHE[key]


# --- validation ----------------------------------------------------------------------------


def parse(data: Any, path: Path) -> tuple[Line, ...]:
    where = display(path)
    if not isinstance(data, dict) or set(data) != {"lines"} or not isinstance(data["lines"], list):
        raise ConfigError(f"{where}: expected one key, 'lines:', a list of release lines")
    out = tuple(_line(raw, n, where) for n, raw in enumerate(data["lines"]))
    _check_unique(out, where)
    return out


def _line(raw: Any, index: int, where: str) -> Line:
    here = f"{where}: lines[{index}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{here} must be a mapping ({', '.join(LINE_KEYS)})")
    unknown = sorted(set(map(str, raw)) - {*LINE_KEYS, *OPTIONAL_KEYS})
    if unknown:
        known = ", ".join((*LINE_KEYS, *OPTIONAL_KEYS))
        raise ConfigError(f"{here}: unknown key {unknown[0]!r}; known: {known}")
    missing = [k for k in LINE_KEYS if k not in raw]
    if missing:
        raise ConfigError(f"{here}: missing {missing[0]!r}")
    product, name, kind = (str(raw[k]) for k in ("product", "line", "kind"))
    if product not in PRODUCTS:
        raise ConfigError(f"{here}: unknown product {product!r}; known: {', '.join(PRODUCTS)}")
    here = f"{where}: line {product} {name}"
    if not LINE_NAME_RE.match(name):
        raise ConfigError(f'{here}: a line is named MAJOR.MINOR (quoted, "8.4") or innovation')
    if kind not in KINDS:
        raise ConfigError(f"{here}: unknown kind {kind!r}; known: {', '.join(KINDS)}")
    if (name == INNOVATION) != (kind == INNOVATION):
        raise ConfigError(f"{here}: only the line named innovation is of kind innovation")
    label = raw["label"]
    if not isinstance(label, str) or not label.strip():
        raise ConfigError(f"{here}: 'label' must be a non-empty string")
    ga = _date(raw["ga"], f"{here}: ga")
    eol = None if raw.get("eol") is None else _date(raw["eol"], f"{here}: eol")
    if eol is not None and eol <= ga:
        raise ConfigError(f"{here}: its dates overlap: end of life {eol} is not after GA {ga}")
    series_raw = raw.get("series", [] if kind == INNOVATION else [name])
    if not isinstance(series_raw, list) or not all(
        isinstance(s, str) and SERIES_RE.match(s) for s in series_raw
    ):
        raise ConfigError(f"{here}: 'series' must be a list of quoted MAJOR.MINOR, e.g. [\"9.6\"]")
    calendar = raw.get("calendar_from")
    start = None
    if calendar is not None:
        if kind != INNOVATION:
            raise ConfigError(f"{here}: 'calendar_from' belongs to the innovation line only")
        if not isinstance(calendar, str) or not SERIES_RE.match(calendar):
            raise ConfigError(f"{here}: 'calendar_from' must be a quoted YY.M, e.g. \"26.7\"")
        start = rules.parse_version(calendar)
        if not 1 <= start[1] <= LAST_MONTH:
            raise ConfigError(f"{here}: 'calendar_from' {calendar}: {start[1]} is not a month")
    return Line(
        product=product,
        name=name,
        kind=kind,
        label=label.strip(),
        ga=ga,
        eol=eol,
        series=tuple(rules.parse_version(s) for s in series_raw),
        calendar_from=start,
    )


def _check_unique(lines: tuple[Line, ...], where: str) -> None:
    names: set[tuple[str, str]] = set()
    owner: dict[tuple[str, object], str] = {}
    for line in lines:
        if (line.product, line.name) in names:
            raise ConfigError(f"{where}: the line {line.product} {line.name} is listed twice")
        names.add((line.product, line.name))
        keys: list[object] = list(line.series)
        if line.calendar_from is not None:
            keys.append("calendar")
        for key in keys:
            other = owner.setdefault((line.product, key), line.name)
            if other != line.name:
                shown = ".".join(map(str, key)) if isinstance(key, tuple) else "YY.M.P"
                raise ConfigError(
                    f"{where}: {line.product} {shown} is on two lines ({other} and {line.name})"
                )


def _date(value: Any, what: str) -> dt.date:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"{what} {value!r} is not a date (YYYY-MM-DD)") from None


def display(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
