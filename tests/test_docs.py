"""docs/benchmarks.md reads as the current figures (issue 40 item 6): at most 400 lines,
every section with the command that measured it, the dated history left to git's log; and
every place that cites one of its sections by name names a section that exists."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "docs" / "benchmarks.md"
MAX_LINES = 400
# What may cite a section of benchmarks.md: the other docs, the README, the code, the
# benchmarks and the tests.
CITING = ["docs", "README.md", "scripts", "benchmarks", "tests"]
# `docs/benchmarks.md, "Name"`, `docs/benchmarks.md "Name"`, `docs/benchmarks.md ("Name")`,
# `docs/benchmarks.md, section(s) "Name" (and "Other")`, on one line or across lines.
CITATION = re.compile(r'benchmarks\.md(?:,? sections?)?,? \(?"([^"]+)"(?: and "([^"]+)")?')


def sections(text: str) -> dict[str, str]:
    """Each `## ` section's title and body."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def has_command(body: str) -> bool:
    """A fenced block with a non-empty line in it, or a `command:` line."""
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", body, flags=re.MULTILINE | re.DOTALL)
    if any(block.strip() for block in fenced):
        return True
    return bool(re.search(r"^command: \S", body, flags=re.MULTILINE))


def cited_names(path: Path) -> list[str]:
    """The section names `path` cites in benchmarks.md, with line breaks (and a comment's
    `#` after them) read as spaces."""
    text = re.sub(r"\s*\n\s*(?:#(?!#)\s*)?", " ", path.read_text(errors="replace"))
    return [name for match in CITATION.finditer(text) for name in match.groups() if name]


def citing_files() -> list[Path]:
    found: list[Path] = []
    for entry in CITING:
        root = REPO / entry
        paths = [root] if root.is_file() else sorted(root.rglob("*"))
        found += [
            p
            for p in paths
            if p.is_file()
            and p.suffix in {".md", ".py"}
            and p.resolve() not in {BENCHMARKS, Path(__file__).resolve()}
        ]
    return found


def test_benchmarks_md_is_at_most_400_lines() -> None:
    lines = BENCHMARKS.read_text().splitlines()
    assert len(lines) <= MAX_LINES, (
        f"docs/benchmarks.md has {len(lines)} lines (at most {MAX_LINES}): keep the newest "
        "figure of each topic, the dated history stays in `git log -p docs/benchmarks.md`"
    )


def test_benchmarks_md_points_at_its_history_in_git() -> None:
    head = "\n".join(BENCHMARKS.read_text().splitlines()[:5])
    assert "git log -p docs/benchmarks.md" in head


def test_every_benchmarks_section_has_its_command() -> None:
    found = sections(BENCHMARKS.read_text())
    assert len(found) >= 10, sorted(found)
    missing = [title for title, body in found.items() if not has_command(body)]
    assert not missing, f"sections of docs/benchmarks.md without a command: {missing}"


def test_every_cited_section_of_benchmarks_md_exists() -> None:
    titles = list(sections(BENCHMARKS.read_text()))
    cited = {
        (str(path.relative_to(REPO)), name.lstrip("# ").strip())
        for path in citing_files()
        for name in cited_names(path)
    }
    assert len(cited) >= 10, cited  # the docs and the code do cite it
    dangling = sorted(
        (where, name) for where, name in cited if not any(t.startswith(name) for t in titles)
    )
    assert not dangling, f"cited sections missing from docs/benchmarks.md: {dangling}"


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """The helpers see a section without a command, and citations across lines."""
    text = "# T\n\n## With\n\n```sh\nmake demo\n```\n\n## Without\n\nprose only\n"
    found = sections(text)
    assert [has_command(body) for body in found.values()] == [True, False]
    assert has_command("x\ncommand: make demo\n")
    assert not has_command("```sh\n```\n")
    sample = tmp_path / "citing.py"
    sample.write_text(
        '# see docs/benchmarks.md, sections "A b" and\n# "C d"; docs/benchmarks.md ("## E")\n'
    )
    assert cited_names(sample) == ["A b", "C d", "## E"]
