"""docs/architecture.md lists every module of scripts/perftrack once (issue 40 item 5):
its "Module index" table is checked against the package, so a new module without its
line, or a line for a module that is gone, fails here with the rows to paste."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "scripts" / "perftrack"
DOC = REPO / "docs" / "architecture.md"
ROW = re.compile(r"^\| `([\w/]+\.py)` \| (.+) \|$")


def modules() -> list[str]:
    return sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    )


def row(module: str) -> str:
    """The index line of a module: its path and its docstring's first paragraph."""
    doc = ast.get_docstring(ast.parse((PACKAGE / module).read_text())) or ""
    first = " ".join(doc.strip().split("\n\n")[0].split()).replace("|", "/")
    if len(first) > 140:
        first = first[: first[:140].rfind(" ")] + " …"
    return f"| `{module}` | {first} |"


def indexed() -> list[str]:
    text = DOC.read_text()
    assert "\n## Module index\n" in text, f"{DOC.name} has no '## Module index' section"
    section = text.split("\n## Module index\n", 1)[1].split("\n## ", 1)[0]
    return [m.group(1) for line in section.splitlines() if (m := ROW.match(line))]


def test_every_module_is_in_the_architecture_docs_index_once() -> None:
    listed, present = indexed(), modules()
    twice = sorted(m for m, n in Counter(listed).items() if n > 1)
    assert not twice, f"listed more than once in {DOC.name}: {twice}"
    missing = [m for m in present if m not in listed]
    assert not missing, f"add to {DOC.name}'s Module index:\n" + "\n".join(map(row, missing))
    gone = sorted(set(listed) - set(present))
    assert not gone, f"no such module any more, remove from {DOC.name}: {gone}"
    assert listed == sorted(listed), "keep the Module index in path order"
    for module in present:  # every module says what it is: the line is its docstring's
        assert row(module).split(" | ", 1)[1] != " |", f"{module} has no docstring"
