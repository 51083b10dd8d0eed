"""scripts/lint_edges.py: `dict[str, Any]` only at the JSON edges (issue 40 item 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import lintscript

ROOT = Path(__file__).resolve().parents[2]


lint = lintscript.load("lint_edges")

# A synthetic sample package: an untyped hand-off in analysis, the same line marked as an
# edge (on the line, and on a comment line above), and a module that is an edge.
ANALYSIS = """from typing import Any


def hand_off(row: dict[str, Any]) -> float:
    return row["tps"]


def to_json(x: int) -> dict[str, Any]:  # edge: CLI --json out
    return {"x": x}


# edge: CLI --json out
def also_json(x: int) -> dict[str, Any]:
    return {"x": x}


def key(k: dict[str, object]) -> str:
    return str(k)
"""
RUNNER = """from typing import Any

RECORD: dict[str, Any] = {}
"""


def _sample(tmp_path: Path) -> Path:
    pkg = tmp_path / "scripts" / "perftrack"
    (pkg / "analysis").mkdir(parents=True)
    (pkg / "run").mkdir()
    (pkg / "analysis" / "sample.py").write_text(ANALYSIS)
    (pkg / "run" / "runner.py").write_text(RUNNER)
    return tmp_path


def test_an_untyped_dict_away_from_an_edge_is_refused_and_marked_or_edge_ones_are_not(
    tmp_path: Path,
):
    findings, edges = lint.scan(_sample(tmp_path))
    assert [f.split(": ", 1)[0] for f in findings] == ["scripts/perftrack/analysis/sample.py:4"]
    assert "use a typed row" in findings[0]
    assert edges == {"CLI --json out": 2, "records out": 1}


def test_the_command_exits_1_on_a_finding_and_counts_with_count(tmp_path: Path):
    root = _sample(tmp_path)
    script = str(ROOT / "scripts/lint_edges.py")
    bad = subprocess.run([sys.executable, script, str(root)], capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stdout.count("\n") == 1
    counted = subprocess.run(
        [sys.executable, script, "--count", str(root)], capture_output=True, text=True
    )
    assert "3  in all (1 away from an edge)" in counted.stdout


def test_the_package_has_no_untyped_dict_away_from_an_edge():
    findings, edges = lint.scan(ROOT)
    assert findings == []
    assert sum(edges.values()) > 0  # the edges are still found (the scan reads the package)
