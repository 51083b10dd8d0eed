"""Records of five or more fields are built by keyword (issue 40 item 1).

Two checks, plain ``ast``:

(a) every ``@dataclass`` in ``scripts/perftrack`` with five or more fields
    (``ClassVar`` excluded) is declared ``kw_only=True``, unless it is named in
    PENDING below with its reason;
(b) no call in ``scripts``, ``tests`` or ``benchmarks`` passes positional
    arguments to such a class: ``Name(...)`` where ``Name`` is the class (defined
    in the same module, or imported from perftrack), or ``module.Name(...)``
    where ``module`` is a perftrack module.

One line per finding (``path:line: Class ...``); exit 1 on findings.
Usage: ``python scripts/lint_kwonly.py [ROOT]`` (ROOT: the repository, default
this script's parent's parent).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

MIN_FIELDS = 5

# "module.Class" -> reason. Classes defined in packages other engineers were
# changing when the conversion was made; convert them, then drop them here.
PENDING: dict[str, str] = {
    "perftrack.analysis.advise.Estimate": "not yet converted: analysis",
    "perftrack.analysis.advise.ReleaseAdvice": "not yet converted: analysis",
    "perftrack.analysis.alerts.Found": "not yet converted: analysis",
    "perftrack.analysis.annotations.Annotation": "not yet converted: analysis",
    "perftrack.analysis.axis.AxisResult": "not yet converted: analysis",
    "perftrack.analysis.changepoints.Change": "not yet converted: analysis",
    "perftrack.analysis.changepoints.Signal": "not yet converted: analysis",
    "perftrack.analysis.compare.Row": "not yet converted: analysis",
    "perftrack.analysis.compare.Table": "not yet converted: analysis",
    "perftrack.analysis.detect.DetectCounts": "not yet converted: analysis",
    "perftrack.analysis.stats.Comparison": "not yet converted: analysis",
    "perftrack.analysis.steps.Step": "not yet converted: analysis",
    "perftrack.experiments.conclude.Request": "not yet converted: experiments",
    "perftrack.experiments.conclude.Round": "not yet converted: experiments",
    "perftrack.experiments.conclude.Sequence": "not yet converted: experiments",
    "perftrack.experiments.explain.Search": "not yet converted: experiments",
    "perftrack.experiments.explain.Lab": "not yet converted: experiments",
    "perftrack.experiments.explanation.Group": "not yet converted: experiments",
    "perftrack.experiments.explanation.Explanation": "not yet converted: experiments",
    "perftrack.publish.prcheck.Line": "not yet converted: publish",
    "perftrack.publish.prcomment.CommentTarget": "not yet converted: publish",
    "perftrack.publish.publish.Result": "not yet converted: publish",
    "perftrack.publish.site.build.BuildResult": "not yet converted: publish",
    "perftrack.publish.site.export.SiteData": "not yet converted: publish",
    "perftrack.publish.site.source.Page": "not yet converted: publish",
    "perftrack.publish.study_report.Side": "not yet converted: publish",
    "perftrack.publish.study_report.ReportRow": "not yet converted: publish",
    "perftrack.store.queries.points.NightlyPoints": "not yet converted: store",
    "perftrack.store.files.rows.IntervalSummary": "not yet converted: store",
    "perftrack.store.files.rows.PreparedRecord": "not yet converted: store",
}

SCAN_DIRS = ("scripts", "tests", "benchmarks")


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One refusal: where, which class, and what is wrong."""

    path: str
    line: int
    cls: str
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.cls} {self.what}"


def _module_name(path: Path, package_root: Path) -> str:
    parts = list(path.relative_to(package_root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _dataclass_decorator(node: ast.ClassDef) -> ast.expr | None:
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Name) and target.id == "dataclass":
            return dec
        if isinstance(target, ast.Attribute) and target.attr == "dataclass":
            return dec
    return None


def _is_kw_only(dec: ast.expr) -> bool:
    if not isinstance(dec, ast.Call):
        return False
    return any(
        k.arg == "kw_only" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in dec.keywords
    )


def _field_count(node: ast.ClassDef) -> int:
    count = 0
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if "ClassVar" in ast.unparse(stmt.annotation):
            continue
        count += 1
    return count


@dataclass(frozen=True, kw_only=True)
class WideClass:
    """A dataclass of five or more fields, where it is defined."""

    module: str
    name: str
    path: str
    line: int
    fields: int
    kw_only: bool

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.name}"


def find_wide_classes(root: Path) -> list[WideClass]:
    """Every dataclass of >= MIN_FIELDS fields under scripts/perftrack."""
    package_root = root / "scripts"
    found: list[WideClass] = []
    for path in sorted((package_root / "perftrack").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        module = _module_name(path, package_root)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            dec = _dataclass_decorator(node)
            if dec is None:
                continue
            fields = _field_count(node)
            if fields < MIN_FIELDS:
                continue
            found.append(
                WideClass(
                    module=module,
                    name=node.name,
                    path=str(path.relative_to(root)),
                    line=node.lineno,
                    fields=fields,
                    kw_only=_is_kw_only(dec),
                )
            )
    return found


def _declaration_findings(wide: list[WideClass]) -> list[Finding]:
    return [
        Finding(
            path=w.path, line=w.line, cls=w.name, what="is not kw_only (dataclass of ≥5 fields)"
        )
        for w in wide
        if not w.kw_only and w.qualname not in PENDING
    ]


def positional_calls(
    root: Path, path: Path, checked: list[WideClass]
) -> list[tuple[ast.Call, str]]:
    """Calls in one file passing positional arguments to a checked class, with its name."""
    tree = ast.parse(path.read_text(), filename=str(path))
    by_name = {w.name for w in checked}
    package_root = root / "scripts"
    own_module = _module_name(path, package_root) if path.is_relative_to(package_root) else ""
    names: dict[str, str] = {w.name: w.name for w in checked if w.module == own_module}
    modules: set[str] = set()  # local names bound to a perftrack module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("perftrack"):
            for alias in node.names:
                local = alias.asname or alias.name
                if alias.name in by_name:
                    names[local] = alias.name
                else:
                    modules.add(local)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("perftrack"):
                    modules.add(alias.asname or alias.name.split(".")[0])
    calls: list[tuple[ast.Call, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in names:
            calls.append((node, names[func.id]))
        elif isinstance(func, ast.Attribute) and func.attr in by_name:
            base = func.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in modules:
                calls.append((node, func.attr))
    return sorted(calls, key=lambda c: (c[0].lineno, c[0].col_offset))


def check(root: Path) -> list[Finding]:
    """All findings under root (a repository checkout)."""
    wide = find_wide_classes(root)
    findings = _declaration_findings(wide)
    checked = [w for w in wide if w.qualname not in PENDING]
    for top in SCAN_DIRS:
        for path in sorted((root / top).rglob("*.py")):
            if ".venv" in path.parts:
                continue
            findings.extend(
                Finding(
                    path=str(path.relative_to(root)),
                    line=call.lineno,
                    cls=cls,
                    what="built by position (kw_only)",
                )
                for call, cls in positional_calls(root, path, checked)
            )
    return findings


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    findings = check(root)
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
