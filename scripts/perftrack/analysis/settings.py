"""Server setting values compared as the server means them: `0` and `0.000000` are one
number, `ON`, `TRUE` and `1` one switch, `utf8` and `utf8mb3` one charset (MySQL and
MariaDB renamed utf8 to utf8mb3 and report the new name). A settings diff that lists
those as changes buries the real ones (issue 37: `expire_logs_days: 0 → 0.000000`)."""

from __future__ import annotations

import math
from typing import Any

SWITCHES = {"on": "1", "true": "1", "yes": "1", "off": "0", "false": "0", "no": "0"}
# charset (and collation prefix) aliases -> the name servers report today
CHARSET_ALIASES = {"utf8": "utf8mb3"}


def normalise(value: Any) -> Any:
    """The value as compared: a float for a number, "1"/"0" for a switch, the current
    name for a charset alias or a collation of one; else the text as given."""
    if value is None:
        return None
    text = str(value).strip()
    if text.lower() in SWITCHES:
        text = SWITCHES[text.lower()]
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        if math.isfinite(number):
            return number
    head, sep, rest = text.partition("_")
    if head.lower() in CHARSET_ALIASES:
        return CHARSET_ALIASES[head.lower()] + sep + rest
    return text


def same(first: Any, second: Any) -> bool:
    """Whether two values of one setting mean the same after normalisation."""
    na, nb = normalise(first), normalise(second)
    if isinstance(na, float) and isinstance(nb, float):
        return math.isclose(na, nb, rel_tol=1e-9, abs_tol=1e-12)
    return bool(na == nb)


def changed(diff: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The entries of a {name: [old, new]} diff whose values really differ."""
    return {k: v for k, v in diff.items() if not same(v[0], v[1])}
