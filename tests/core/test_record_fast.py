"""record.validate's fast path (the schema compiled by core/fastcheck.py) decides exactly
as the JSON Schema does (same verdict, same message), here for `variables` and
`result.intervals`, the bulky parts it checks column by column."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from perftrack.core import record
from perftrack.core.errors import RecordError

FIXTURE = Path(__file__).parents[1] / "fixtures" / "records" / "synthetic-run-fixture"


def a_record() -> dict:
    rec = json.loads(next(iter(sorted(FIXTURE.glob("*.json")))).read_text())
    rec["variables"] = {f"v{i}": str(i) for i in range(300)} | {"nothing": None}
    rec["result"]["intervals"] = [
        {"t": i + 1, "tps": 100.0 + i, "qps": 2000.0, "lat_pct_ms": 1.5, "threads": 2}
        for i in range(30)
    ]
    return rec


def full_schema_message(rec: dict) -> str | None:
    errors = sorted(record._validator().iter_errors(rec), key=lambda e: list(e.absolute_path))
    return None if not errors else record._field(errors[0].absolute_path)


MUTATIONS = [
    ("variables", "x", 5),
    ("variables", "x", True),
    ("variables", "x", ["a"]),
    ("variables", "x", "a" * 100_001),
    ("interval", "tps", -1),
    ("interval", "tps", "100"),
    ("interval", "t", True),
    ("interval", "threads", 2.5),
    ("interval", "threads", 100_001),
    ("interval", "lat_pct_ms", None),  # allowed
    ("interval", "threads", 3.0),  # an integer to JSON Schema
    ("interval", "bogus", 1),
    ("interval-drop", "qps", None),
]


@pytest.mark.parametrize(("where", "key", "value"), MUTATIONS)
def test_fast_check_agrees_with_the_schema(where, key, value):
    rec = a_record()
    if where == "variables":
        rec["variables"][key] = value
    elif where == "interval":
        rec["result"]["intervals"][7][key] = value
    else:
        del rec["result"]["intervals"][7][key]
    expected = full_schema_message(copy.deepcopy(rec))
    if expected is None:
        assert record.validate(rec) is rec
    else:
        with pytest.raises(RecordError) as err:
            record.validate(rec)
        assert f"field '{expected}'" in str(err.value)


def test_a_valid_record_passes_and_other_errors_still_surface():
    rec = a_record()
    assert full_schema_message(rec) is None
    assert record.validate(rec) is rec
    rec["cell"]["threads"] = 0
    with pytest.raises(RecordError, match="cell/threads"):
        record.validate(rec)
    rec = a_record()
    rec["result"]["intervals"] = "not a list"
    with pytest.raises(RecordError, match="result/intervals"):
        record.validate(rec)
