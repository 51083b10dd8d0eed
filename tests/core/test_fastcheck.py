"""The compiled check of core/fastcheck.py only ever says "valid and finite" when jsonschema
(with perftrack's `pattern` and format checker) finds no error and no NaN or infinity is in
the document: so record.validate may skip jsonschema when it says so. Hypothesis mutates
run records and generates values against a schema of every keyword the compiler knows."""

from __future__ import annotations

import enum
import math
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fixtures.records.mutations import leaf_paths, mutate
from fixtures.records.synthetic import make_record
from perftrack.core import fastcheck, record


def base_record() -> dict[str, Any]:
    """A valid record with every optional part: many variables (one null), intervals with
    every field, cost and host objects."""
    rec = make_record(intervals=6)
    rec["variables"] |= {f"v{i}": str(i) for i in range(40)} | {"nothing": None}
    for i, x in enumerate(rec["result"]["intervals"]):
        x |= {"err_per_s": 0.0, "reconn_per_s": 0, "threads": 8, "lat_pct_ms": None if i else 1.0}
    rec["result"] |= {"cpu_us_per_txn": 12.5, "ipc": None}
    rec["cost"] = {
        "source": "proc",
        "pid": 42,
        "window_s": 30.0,
        "transactions": 100,
        "queries": None,
        "totals": {"cpu_user_us": 1000, "instructions": None},
        "unavailable": {"ipc": "no perf counters here"},
    }
    rec["host"] = {"steal_pct": 0.0, "noisy": False, "noisy_reason": None, "repeat_of": None}
    return rec


BASE = base_record()


def schema_errors(rec: Any) -> list[str]:
    return [e.message for e in record._validator().iter_errors(rec)]


def finite(obj: Any) -> bool:
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(finite(v) for v in obj.values())
    if isinstance(obj, list):
        return all(finite(v) for v in obj)
    return True


class Count(enum.IntEnum):
    ONE = 1


class Word(enum.StrEnum):
    TCP = "tcp"


NASTY = [
    float("nan"),
    float("inf"),
    float("-inf"),
    -0.0,
    3.0,
    2**63,
    2**63 - 1,
    10**400,
    1e308,
    True,
    False,
    None,
    "",
    "x" * 100_001,
    "8.0.36\n",
    "0123456789abcdef\n",
    "2024-01-01T00:00:00Z",
    "2024-13-01T00:00:00Z",
    Count.ONE,
    Word.TCP,
    (1, 2),
    [],
    {},
    [float("nan")],
    {"x": float("inf")},
]
json_scalars = st.one_of(
    st.sampled_from(NASTY),
    st.integers(),
    st.floats(),
    st.text(max_size=20),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,10}", fullmatch=True),
    st.none(),
    st.booleans(),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)
mutation = st.tuples(
    st.sampled_from(leaf_paths(BASE, items=2)),
    st.sampled_from(["replace", "delete", "extra"]),
    json_values,
)


def test_the_record_schema_compiles_and_a_full_record_passes_fast() -> None:
    fast = record._fast()
    assert fast is not None
    assert schema_errors(BASE) == []
    assert fast(BASE) is True  # not vacuous: the usual record takes the fast path
    assert fast(make_record(status="failed")) is True
    assert fast(make_record(status="skipped")) is True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations=st.lists(mutation, min_size=1, max_size=3))
@example(mutations=[(("result", "intervals", 1, "tps"), "replace", float("nan"))])
@example(mutations=[(("result", "intervals", 1, "threads"), "replace", 3.0)])
@example(mutations=[(("variables", "v3"), "replace", 5)])
@example(mutations=[(("cost", "totals", "cpu_user_us"), "replace", float("inf"))])
@example(mutations=[(("server", "version"), "replace", "8.0.36\n")])
@example(mutations=[(("cell", "threads"), "replace", Count.ONE)])
@example(mutations=[(("cell", "connection"), "replace", Word.TCP)])
@example(mutations=[(("result", "events"), "replace", 2**63)])
def test_fast_valid_means_the_schema_finds_nothing_and_all_is_finite(mutations) -> None:
    rec = BASE
    for path, how, value in mutations:
        try:
            rec = mutate(rec, path, how, value)
        except (KeyError, TypeError, IndexError):
            continue
    if record._fast()(rec):
        assert schema_errors(rec) == [], "the fast check passed a record the schema refuses"
        assert finite(rec), "the fast check passed a non-finite number"


# A schema with every keyword the compiler knows, for generated values of any shape.
TOY = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["a"],
    "maxProperties": 9,
    "properties": {
        "a": {"type": "integer", "minimum": 0, "maximum": 10},
        "b": {"type": ["string", "null"], "maxLength": 3, "minLength": 1, "pattern": "^[a-z]+$"},
        "c": {"anyOf": [{"$ref": "#/$defs/word"}, {"type": "null"}]},
        "d": {"enum": ["x", "y", None]},
        "e": {
            "type": "array",
            "maxItems": 4,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["t"],
                "properties": {
                    "t": {"type": "number", "exclusiveMinimum": 0},
                    "u": {"type": ["number", "null"], "exclusiveMaximum": 5},
                },
            },
        },
        "f": {
            "type": "object",
            "propertyNames": {"pattern": "^[a-z]{1,3}$"},
            "additionalProperties": {"type": ["number", "boolean"], "maximum": 1e9},
        },
        "g": {"const": "k"},
        "h": {"type": "string", "format": "date-time"},
        "i": {"description": "anything at all"},
        "j": {"type": "array", "items": {"type": "string", "maxLength": 2}},
    },
    "$defs": {"word": {"type": "string", "pattern": "^[a-z]{1,4}$"}},
}
TOY_KEYS = [*TOY["properties"], "zz"]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=st.dictionaries(st.sampled_from(TOY_KEYS), json_values, max_size=5))
@example(doc={"a": 1, "e": [{"t": 1}, {"t": float("nan")}]})
@example(doc={"a": 1, "e": [{"t": 1, "u": None}, {"t": 2, "u": 5}]})
@example(doc={"a": 1, "f": {"x": 1e308, "y": 1e308, "z": True}})
@example(doc={"a": 1, "f": {"x": float("inf"), "y": float("-inf")}})
@example(doc={"a": 1, "b": "ab\n"})
@example(doc={"a": 1, "i": [{"x": float("nan")}]})
@example(doc={"a": 1, "j": ["ab", None]})
def test_toy_schema_fast_valid_means_jsonschema_valid(doc) -> None:
    fast = fastcheck.compile_check(TOY, record._validator().format_checker.conforms)
    assert fast is not None
    validator = record._Validator(TOY, format_checker=record._validator().format_checker)
    if fast(doc):
        assert list(validator.iter_errors(doc)) == []
        assert finite(doc)


def test_toy_schema_usual_documents_pass_fast() -> None:
    fast = fastcheck.compile_check(TOY, record._validator().format_checker.conforms)
    doc = {
        "a": 3,
        "b": "ab",
        "c": "word",
        "d": None,
        "e": [{"t": 0.5, "u": None}, {"t": 2, "u": 4.5}],
        "f": {"x": 1, "y": 2.5, "z": False},
    }
    assert fast(doc) is True
    assert fast(doc | {"g": "k", "h": "2024-01-01T00:00:00Z", "i": {"n": [1]}}) is True
    assert fast(doc | {"h": "2024-13-01T00:00:00Z"}) is False
    assert fast(doc | {"a": 3.0}) is False  # an integer to JSON Schema: "not known"
    assert jsonschema.Draft202012Validator(TOY).is_valid(doc | {"a": 3.0})


@pytest.mark.parametrize(
    "schema",
    [
        {"oneOf": [{"type": "string"}]},
        {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
        {"$ref": "other.json#/x"},
        {"$ref": "#/$defs/missing"},
        {"enum": [1, 2]},
        {"const": 1.0},
        {"type": "decimal"},
        {"type": "array", "prefixItems": [{"type": "string"}]},
    ],
)
def test_a_keyword_it_does_not_know_leaves_everything_to_jsonschema(schema) -> None:
    assert fastcheck.compile_check(schema, lambda _v, _f: True) is None
