"""A JSON Schema compiled into a fast, conservative check: True only when jsonschema finds
no error AND the document holds no NaN or infinity.

jsonschema walks a run record in ~0.5-1 ms (650 variables, 60 intervals, a dozen `$ref`s);
a night's ingest reads ~4,000 records. `compile_check(schema, conforms)` turns the
schema, once, into nested Python closures, and the bulky parts (an object's many
additional values, an array of objects of one shape) into whole-column checks done by C
builtins (`set(map(type, …))`, `min`, `max`, `sum`, `map(len, …)`).

The check never decides that a document is invalid, and it never makes a message: False
means "not known to be valid", and the caller runs jsonschema for the exact verdict and
its message (core/record.py). So every answer it gives must be one jsonschema gives:

- only exact JSON types (`str`, `int`, `float`, `bool`, `None`, `dict`, `list`) pass a
  `type`; a subclass (an IntEnum, a StrEnum) or a float meant as an integer (`3.0`) is
  "not known", as is any float that is NaN or infinite;
- a keyword it does not know, `enum`/`const` of anything but strings and null, or a
  `$ref` other than `#/$defs/NAME` makes the schema uncompilable (`compile_check`
  returns None: every document then goes through jsonschema);
- `pattern` means what perftrack's validator makes it mean (`strict_pattern`: `$` is the
  end of the string, as in ECMA-262), `format` is the validator's own format checker.

tests/core/test_fastcheck.py holds it to that against jsonschema (hypothesis).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

Check = Callable[[Any], bool]  # one value: True only if valid and finite
Many = Callable[[Sequence[Any]], bool]  # a column of values against one schema

# Keywords without effect on validity here (annotations, and `$defs` reached by `$ref`).
_ANNOTATIONS = frozenset(
    {"description", "title", "$schema", "$id", "$defs", "$comment", "examples", "default"}
)
_NUMBER_KEYS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_STRING_KEYS = frozenset({"maxLength", "minLength", "pattern", "format"})
_OBJECT_KEYS = frozenset(
    {
        "properties",
        "required",
        "additionalProperties",
        "propertyNames",
        "maxProperties",
        "minProperties",
    }
)
_ARRAY_KEYS = frozenset({"items", "maxItems", "minItems"})
_KNOWN = (
    _ANNOTATIONS
    | _NUMBER_KEYS
    | _STRING_KEYS
    | _OBJECT_KEYS
    | _ARRAY_KEYS
    | {"type", "enum", "const", "anyOf", "$ref"}
)
# A column of values against a schema of only these is checked by C builtins.
_SIMPLE = _ANNOTATIONS | _NUMBER_KEYS | {"type", "maxLength", "minLength"}
_PYTYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
    "object": (dict,),
    "array": (list,),
}


class Unsupported(Exception):
    """A part of the schema this module does not compile."""


def strict_pattern(pattern: str) -> re.Pattern[str]:
    """A JSON Schema `pattern` as ECMA-262 means it: a final `$` is the end of the string
    (Python's `$` also matches before a final newline, "abc\\n")."""
    return re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern)


def compile_check(schema: dict[str, Any], conforms: Callable[[Any, str], bool]) -> Check | None:
    """The schema's check, or None if some part of it is not compilable. `conforms` is
    the validator's format checker (`FormatChecker.conforms`)."""
    try:
        return _Compiler(schema, conforms).one(schema)
    except Unsupported:
        return None


def finite(value: Any) -> bool:
    """No NaN or infinity anywhere in `value` (which holds only JSON types)."""
    t = type(value)
    if t is float:
        return math.isfinite(value)
    if t is dict:
        return all(map(finite, value.values()))
    if t is list:
        return all(map(finite, value))
    return t is str or t is int or t is bool or value is None


def _is_number(value: Any) -> bool:
    """jsonschema's "number" type (bool is not one)."""
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


def _bound(name: str, limit: Any) -> Check:
    """A numeric keyword; a number other than int or float is "not known"."""
    compare: Callable[[Any], bool] = {
        "minimum": lambda v: v >= limit,
        "maximum": lambda v: v <= limit,
        "exclusiveMinimum": lambda v: v > limit,
        "exclusiveMaximum": lambda v: v < limit,
    }[name]

    def ok(value: Any) -> bool:
        t = type(value)
        if t is int or t is float:
            return compare(value)
        return not _is_number(value)

    return ok


class _Compiler:
    def __init__(self, root: dict[str, Any], conforms: Callable[[Any, str], bool]) -> None:
        self.root = root
        self.conforms = conforms
        self.refs: dict[str, Check] = {}

    # --- one value ---

    def one(self, node: Any) -> Check:
        if node is True:
            return finite
        if node is False:
            return lambda _v: False
        if not isinstance(node, dict) or not set(node) <= _KNOWN:
            raise Unsupported(str(node)[:80])
        checks: list[Check] = []
        typed = False  # does some check here pin the value's JSON type?
        if "$ref" in node:
            checks.append(self.ref(node["$ref"]))
            typed = True
        if "type" in node:
            checks.append(self.type_check(node["type"]))
            typed = True
        if "const" in node:
            checks.append(self.members([node["const"]]))
            typed = True
        if "enum" in node:
            checks.append(self.members(node["enum"]))
            typed = True
        if "anyOf" in node:
            alternatives = [self.one(a) for a in node["anyOf"]]
            checks.append(lambda v: any(a(v) for a in alternatives))
            typed = True
        checks += [_bound(k, node[k]) for k in _NUMBER_KEYS & node.keys()]
        checks += self.string_checks(node)
        if _ARRAY_KEYS & node.keys() or "array" in _types(node):
            checks.append(self.array_check(node))
        if _OBJECT_KEYS & node.keys() or "object" in _types(node):
            checks.append(self.object_check(node))
        if not typed:  # a value of any type: nothing above looked inside it
            checks.append(finite)
        if len(checks) == 1:
            return checks[0]
        return lambda v: all(check(v) for check in checks)

    def ref(self, ref: Any) -> Check:
        if not isinstance(ref, str) or not ref.startswith("#/$defs/") or ref.count("/") != 2:
            raise Unsupported(f"$ref {ref!r}")
        name = ref.removeprefix("#/$defs/")
        if name not in self.refs:
            target = self.root.get("$defs", {}).get(name)
            if target is None:
                raise Unsupported(f"$ref {ref!r}")
            self.refs[name] = lambda v: compiled(v)  # a recursive reference finds itself
            compiled = self.one(target)
            self.refs[name] = compiled
        return self.refs[name]

    def type_check(self, spec: Any) -> Check:
        names = [spec] if isinstance(spec, str) else spec
        if not isinstance(names, list) or not set(names) <= _PYTYPES.keys():
            raise Unsupported(f"type {spec!r}")
        allowed = frozenset(t for n in names for t in _PYTYPES[n])

        def ok(value: Any) -> bool:
            t = type(value)
            return t in allowed and (t is not float or math.isfinite(value))

        return ok

    def members(self, values: Any) -> Check:
        if not isinstance(values, list) or not all(v is None or type(v) is str for v in values):
            raise Unsupported(f"enum {values!r}")
        strings = frozenset(v for v in values if v is not None)
        null = None in values
        return lambda v: (type(v) is str and v in strings) or (v is None and null)

    def string_checks(self, node: dict[str, Any]) -> list[Check]:
        checks: list[Check] = []
        if "maxLength" in node:
            most = node["maxLength"]
            checks.append(lambda v: not isinstance(v, str) or len(v) <= most)
        if "minLength" in node:
            least = node["minLength"]
            checks.append(lambda v: not isinstance(v, str) or len(v) >= least)
        if "pattern" in node:
            search = strict_pattern(node["pattern"]).search
            checks.append(lambda v: not isinstance(v, str) or search(v) is not None)
        if "format" in node:
            fmt, conforms = node["format"], self.conforms
            checks.append(lambda v: conforms(v, fmt))
        return checks

    def array_check(self, node: dict[str, Any]) -> Check:
        items = self.many(node.get("items", True))
        most, least = node.get("maxItems", math.inf), node.get("minItems", 0)

        def ok(value: Any) -> bool:
            if not isinstance(value, list):
                return True
            return type(value) is list and least <= len(value) <= most and items(value)

        return ok

    def object_check(self, node: dict[str, Any]) -> Check:
        props = {k: self.one(s) for k, s in node.get("properties", {}).items()}
        required = frozenset(node.get("required", ()))
        extra = node.get("additionalProperties", True)
        others = None if extra is False else self.many(extra)
        names = self.one(node["propertyNames"]) if "propertyNames" in node else None
        most, least = node.get("maxProperties", math.inf), node.get("minProperties", 0)

        def ok(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            if (
                type(value) is not dict
                or not least <= len(value) <= most
                or not required.issubset(value)
            ):
                return False
            for key, check in props.items():
                if key in value and not check(value[key]):
                    return False
            if others is None:
                if not value.keys() <= props.keys():
                    return False
            elif not others(
                [x for k, x in value.items() if k not in props] if props else [*value.values()]
            ):
                return False
            return names is None or all(map(names, value))

        return ok

    # --- a column of values ---

    def many(self, node: Any) -> Many:
        """All of `values` pass `node`: by C builtins where the schema allows."""
        if _simple(node):
            return self.simple_column(node)
        one = self.one(node)
        if isinstance(node, dict) and _types(node) == {"object"} and node.get("properties"):
            return self.object_column(node, one)
        return lambda values: all(map(one, values))

    def simple_column(self, node: dict[str, Any]) -> Many:
        self.type_check(node["type"])  # known type names
        names = _types(node)
        allowed = frozenset(t for n in names for t in _PYTYPES[n])
        most, least = node.get("maxLength"), node.get("minLength")
        bounds = [_bound(k, node[k]) for k in sorted(_NUMBER_KEYS & node.keys())]

        def ok(values: Sequence[Any]) -> bool:
            kinds = set(map(type, values))
            if not kinds <= allowed:
                return False
            if str in kinds and (most is not None or least is not None):
                strings = values if len(kinds) == 1 else [v for v in values if type(v) is str]
                lengths = [*map(len, strings)]
                if (most is not None and max(lengths) > most) or (
                    least is not None and min(lengths) < least
                ):
                    return False
            if float in kinds or (int in kinds and bounds):
                nums = (
                    values
                    if kinds <= {int, float}
                    else [v for v in values if type(v) is int or type(v) is float]
                )
                try:  # a NaN or an infinity makes the sum one (so does an overflow: "not known")
                    if float in kinds and not math.isfinite(sum(nums)):
                        return False
                except OverflowError:
                    return False
                low, high = min(nums), max(nums)
                return all(b(low) and b(high) for b in bounds)
            return True

        return ok

    def object_column(self, node: dict[str, Any], one: Check) -> Many:
        """Objects of one shape (the usual interval series), checked column by column."""
        props = node["properties"]
        required = frozenset(node.get("required", ()))
        extra = node.get("additionalProperties", True)
        if (
            not all(map(_simple, props.values()))
            or extra is not False
            or set(node)
            - _ANNOTATIONS
            - {
                "type",
                "properties",
                "required",
                "additionalProperties",
            }
        ):
            return lambda values: all(map(one, values))
        columns = {k: self.simple_column(s) for k, s in props.items()}

        def ok(values: Sequence[Any]) -> bool:
            if not values:
                return True
            if set(map(type, values)) != {dict}:
                return all(map(one, values))
            shapes = set(map(tuple, values))
            if len(shapes) != 1:
                return all(map(one, values))
            (keys,) = shapes
            if not required.issubset(keys) or not set(keys) <= columns.keys():
                return False
            if not keys:
                return True
            if len(keys) == 1:
                cols: Any = [[*map(itemgetter(keys[0]), values)]]
            else:
                cols = zip(*map(itemgetter(*keys), values), strict=True)
            return all(columns[k](col) for k, col in zip(keys, cols, strict=True))

        return ok


def _simple(node: Any) -> bool:
    """A schema a column of scalars is checked against by C builtins (`simple_column`)."""
    return (
        isinstance(node, dict)
        and set(node) <= _SIMPLE
        and "type" in node
        and not _types(node) & {"object", "array"}
    )


def _types(node: dict[str, Any]) -> set[str]:
    spec = node.get("type", [])
    names = [spec] if isinstance(spec, str) else spec
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise Unsupported(f"type {spec!r}")
    return set(names)
