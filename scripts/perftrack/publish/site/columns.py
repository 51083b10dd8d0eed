"""Compact column encoding of a data set, and the `data/*.js` files that carry it.

A data set is a list of flat rows (dicts). On disk it is stored column by column; a
column whose values repeat (workload, version, collation, …) is stored as a dictionary
plus integer codes. The page's JavaScript (`site/assets/data.js`) turns it back into rows.

Data files are JavaScript that assigns JSON to a global, not JSON fetched at run time:
browsers refuse `fetch()` of `file://` URLs, and the site must open from `file://`.
The payload is `json.dumps` output with every non-ASCII character and `<`, `>`, `&`
escaped, so no value can end a script or change its meaning wherever it is loaded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# A string column is dictionary-coded when its distinct values are at most this share of
# its rows: below that the codes plus the dictionary are smaller than the strings repeated.
DICT_MAX_DISTINCT_FRACTION = 0.5
# Floats are rounded to this many significant digits (1 part in a million): far below the
# run-to-run noise this tool measures (A/A CV 10-20%, docs/benchmarks.md); keeps files small.
FLOAT_SIGNIFICANT_DIGITS = 6
GLOBAL_NAME = "PERFTRACK_DATA"  # the window property data files add their data sets to


def _round(value: Any) -> Any:
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None  # JSON has no NaN/Infinity
        return float(f"{value:.{FLOAT_SIGNIFICANT_DIGITS}g}")
    return value


def encode(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> dict[str, Any]:
    """Rows → {"n": rows, "columns": {name: list | {"dict": [...], "codes": [...]}}}."""
    names = list(columns) if columns is not None else (list(rows[0]) if rows else [])
    out: dict[str, Any] = {}
    n = len(rows)
    for name in names:
        values = [_round(r.get(name)) for r in rows]
        distinct = {v for v in values if isinstance(v, str)}
        strings_only = all(v is None or isinstance(v, str) for v in values)
        if strings_only and distinct and len(distinct) <= max(1, n * DICT_MAX_DISTINCT_FRACTION):
            dictionary = sorted(distinct)
            index = {v: i for i, v in enumerate(dictionary)}
            codes = [-1 if v is None else index[v] for v in values]
            out[name] = {"dict": dictionary, "codes": codes}
        else:
            out[name] = values
    return {"n": n, "columns": out}


def decode(encoded: dict[str, Any]) -> list[dict[str, Any]]:
    """The inverse of `encode` (used by `site png` and the tests)."""
    cols = encoded["columns"]
    plain: dict[str, list[Any]] = {}
    for name, col in cols.items():
        if isinstance(col, dict):
            d = col["dict"]
            plain[name] = [None if c < 0 else d[c] for c in col["codes"]]
        else:
            plain[name] = col
    return [{k: v[i] for k, v in plain.items()} for i in range(encoded["n"])]


def script_json(value: Any) -> str:
    """JSON that is safe inside a <script>: no raw <, >, &, U+2028/9 or non-ASCII."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def script_json_text(text: str) -> str:
    """JSON text written by another encoder (DuckDB's) made as safe as `script_json`'s."""
    if not text.isascii():  # re-encoded: non-ASCII escaped, U+2028/9 among them
        return script_json(json.loads(text))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def write_data_file(path: Path, name: str, value: Any) -> int:
    """Write `data/NAME.js` that adds `value` as PERFTRACK_DATA[NAME]; returns bytes written."""
    return write_data_text(path, name, script_json(value))


def write_data_text(path: Path, name: str, json_text: str) -> int:
    """`write_data_file` of a value already in `script_json` form; returns bytes written."""
    text = f"(window.{GLOBAL_NAME}=window.{GLOBAL_NAME}||{{}})[{script_json(name)}]={json_text};\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="ascii")
    return len(text)


def read_data_file(path: Path) -> Any:
    """The value a data file assigns (for `site png` and the tests)."""
    text = path.read_text(encoding="ascii")
    start = text.index("]=") + 2
    return json.loads(text[start:].rstrip().rstrip(";"))
