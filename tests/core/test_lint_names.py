"""scripts/lint_names.py: no bare run/load/make outside the CLI, no parameter of <= 2
letters outside the named numeric modules and helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

import lintscript

ROOT = Path(__file__).resolve().parents[2]


lint = lintscript.load("lint_names")

# A synthetic sample package: a bare `load`, two short parameters, and what may stay.
FIXTURE_PLANNING = """
def load(path):
    return path


def read_matrix(p, db, _):
    return p, db


def pct(x):
    return 100 * x
"""

FIXTURE_CLI = """
def run(db):
    return db
"""

FIXTURE_STORE = """
def rows(st, run_id):
    return st, run_id
"""


def _sample_tree(root: Path) -> Path:
    pkg = root / "scripts/perftrack"
    for name, text in (
        ("planning/matrix.py", FIXTURE_PLANNING),
        ("cli/run.py", FIXTURE_CLI),
        ("store/rows.py", FIXTURE_STORE),
    ):
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    return root


def test_the_tree_passes() -> None:
    assert [str(f) for f in lint.check(ROOT)] == []


def test_numeric_modules_are_real_modules() -> None:
    package_root = ROOT / "scripts/perftrack"
    for module in lint.NUMERIC_MODULES:
        assert (package_root / module).is_file(), f"NUMERIC_MODULES names {module}: gone"


def test_allowed_names_real_parameters() -> None:
    package_root = ROOT / "scripts/perftrack"
    for key in lint.ALLOWED:
        module, function, param = key.split(":")
        text = (package_root / module).read_text()
        assert f"def {function}(" in text and param in text, f"ALLOWED names {key}: gone"


def test_refuses_bare_names_and_short_parameters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _sample_tree(tmp_path)
    monkeypatch.setitem(lint.ALLOWED, "planning/matrix.py:pct:x", "numeric")
    assert lint.main(["lint_names.py", str(root)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "scripts/perftrack/planning/matrix.py:2: module-level function 'load': "
        "name what it runs/loads/makes",
        "scripts/perftrack/planning/matrix.py:6: parameter 'p' of read_matrix(): say what it is",
        "scripts/perftrack/store/rows.py:2: parameter 'st' of rows(): say what it is",
    ]


def test_a_numeric_helper_must_be_named_to_keep_its_letters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _sample_tree(tmp_path)
    assert lint.main(["lint_names.py", str(root)]) == 1
    assert "scripts/perftrack/planning/matrix.py:10: parameter 'x' of pct(): say what it is" in (
        capsys.readouterr().out.splitlines()
    )
