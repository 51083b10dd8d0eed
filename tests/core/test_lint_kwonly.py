"""scripts/lint_kwonly.py: records of five or more fields are built by keyword."""

from __future__ import annotations

from pathlib import Path

import pytest

import lintscript

ROOT = Path(__file__).resolve().parents[2]


lint = lintscript.load("lint_kwonly")

# A synthetic sample tree: one record left positional, one kw_only record built by position
# (named Request, like urllib's, whose positional call is not ours and is let through).
FIXTURE_MODELS = """
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class Wide:
    a: int
    b: int
    c: int
    d: int
    e: int


@dataclass(frozen=True, kw_only=True)
class Request:
    a: int
    b: int
    c: int
    d: int
    e: int = 0


@dataclass
class Narrow:  # four fields: a ClassVar is not a field
    a: int
    b: int
    c: int
    d: int
    KIND: ClassVar[str] = "narrow"


def make() -> Request:
    return Request(1, 2, c=3, d=4)


@dataclass(frozen=True, kw_only=True)
class Built:
    a: int
    b: int
    c: int
    d: int
    e: int

    @classmethod
    def of(cls, a: int) -> "Built":
        return cls(a, b=a, c=a, d=a, e=a)
"""

FIXTURE_CALLER = """
from urllib.request import Request

from perftrack.pkg import models
from perftrack.pkg.models import Request as K

ok = K(a=1, b=2, c=3, d=4)
bad = models.Request(1, 2, 3, 4)
also_bad = K(5, b=2, c=3, d=4)
unrelated = Request("http://127.0.0.1/", None, {}, None, False, "GET")
"""


def _sample_tree(root: Path) -> Path:
    pkg = root / "scripts/perftrack/pkg"
    pkg.mkdir(parents=True)
    (root / "scripts/perftrack/__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text(FIXTURE_MODELS)
    (root / "tests").mkdir()
    (root / "tests/test_caller.py").write_text(FIXTURE_CALLER)
    return root


def test_the_tree_passes() -> None:
    assert [str(f) for f in lint.check(ROOT)] == []


def test_refuses_a_positional_record_and_positional_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _sample_tree(tmp_path)
    assert lint.main(["lint_kwonly.py", str(root)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "scripts/perftrack/pkg/models.py:7: Wide is not kw_only (dataclass of ≥5 fields)",
        "scripts/perftrack/pkg/models.py:34: Request built by position (kw_only)",
        "scripts/perftrack/pkg/models.py:47: Built built by position (kw_only)",
        "tests/test_caller.py:8: Request built by position (kw_only)",
        "tests/test_caller.py:9: Request built by position (kw_only)",
    ]
