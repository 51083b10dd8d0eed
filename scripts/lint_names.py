"""Names say what they do (issue 40 item 6).

Two checks over ``scripts/perftrack``, plain ``ast``:

(a) no module-level function called ``run``, ``load`` or ``make`` outside ``cli/``
    (``matrix.read_matrix``, not ``matrix.load``: the call site says what happens);
(b) no function parameter of two letters or fewer, except
    - ``_`` (a parameter that is not used),
    - the words in SHORT_WORDS (``db``: the results DB, as the ``--db`` option says),
    - the parameters named in ALLOWED (``module:function:parameter``, short numeric
      code whose letters are the maths' own, and CLI arguments whose name is their
      help text), each with its reason,
    - the modules in NUMERIC_MODULES, short numeric code as a whole.

One line per finding (``path:line: ...``); exit 1 on findings.
Usage: ``python scripts/lint_names.py [ROOT]`` (ROOT: the repository, default this
script's parent's parent).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

BARE_NAMES = ("run", "load", "make")
MAX_SHORT = 2
SHORT_WORDS = {"_", "db"}

# Modules of short numeric code, whose parameters keep the letters of their maths.
NUMERIC_MODULES: dict[str, str] = {
    "analysis/stats.py": "the statistics: samples a and b, n, z, p, df, an interval lo..hi",
    "analysis/steps.py": "step detection over a series y[lo:hi]: t, k, w, z, n, se",
}

# "package/module.py:function:parameter" -> why the short name stays.
ALLOWED: dict[str, str] = {
    "analysis/compare.py:versus:cv": "numeric: the coefficient of variation",
    "analysis/medians.py:order_k:n": "numeric: the number of values",
    "publish/archive.py:redirect_request:fp": "urllib's HTTPRedirectHandler signature",
    "cli/explain.py:explain_cmd:a": "CLI argument: its name is the A its help and usage show",
    "cli/explain.py:explain_cmd:b": "CLI argument: its name is the B its help and usage show",
    "experiments/bisect.py:_tree:lo": "numeric: the bounds of a halving interval",
    "experiments/bisect.py:_tree:hi": "numeric: the bounds of a halving interval",
    "experiments/looks.py:log_threshold:cv": "numeric: the coefficient of variation",
    "experiments/looks.py:log_threshold:z": "numeric: the normal quantile",
    "experiments/looks.py:log_verdict:t": "numeric: the log-scale threshold t, band [e^-t, e^t]",
    "experiments/looks.py:decide:a": "numeric: the samples of side A",
    "experiments/looks.py:decide:b": "numeric: the samples of side B",
    "experiments/looks.py:decide:cv": "numeric: the coefficient of variation",
    "experiments/looks.py:_pooled_cv:a": "numeric: the samples of side A",
    "experiments/looks.py:_pooled_cv:b": "numeric: the samples of side B",
    "planning/dispatch.py:_int:lo": "numeric: the bounds an integer must lie in",
    "planning/dispatch.py:_int:hi": "numeric: the bounds an integer must lie in",
    "planning/pairing.py:root:x": "numeric: a union-find node",
    "run/sampler.py:_delta:a": "numeric: a counter's two readings, a then b",
    "run/sampler.py:_delta:b": "numeric: a counter's two readings, a then b",
    "run/sampler.py:_per:x": "numeric: x per n",
    "run/sampler.py:_per:n": "numeric: x per n",
    "run/sampler.py:pct:x": "numeric: a fraction as a percentage",
    "servers/providers/tarball.py:redirect_request:fp": "urllib's HTTPRedirectHandler signature",
}


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One refusal: where, and what is wrong."""

    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = fn.args
    extra = [x for x in (a.vararg, a.kwarg) if x is not None]
    return [*a.posonlyargs, *a.args, *a.kwonlyargs, *extra]


def check_file(path: Path, package_root: Path) -> list[Finding]:
    """The findings of one module of the package."""
    rel = path.relative_to(package_root).as_posix()
    package = rel.split("/")[0]
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[Finding] = []
    shown = f"scripts/perftrack/{rel}"
    if package != "cli":
        found.extend(
            Finding(
                path=shown,
                line=node.lineno,
                what=f"module-level function '{node.name}': name what it runs/loads/makes",
            )
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in BARE_NAMES
        )
    if rel in NUMERIC_MODULES:
        return found
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for arg in _params(node):
            name = arg.arg
            if len(name) > MAX_SHORT or name in SHORT_WORDS:
                continue
            if f"{rel}:{node.name}:{name}" in ALLOWED:
                continue
            found.append(
                Finding(
                    path=shown,
                    line=arg.lineno,
                    what=f"parameter '{name}' of {node.name}(): say what it is",
                )
            )
    return found


def check(root: Path) -> list[Finding]:
    """All findings under root (a repository checkout)."""
    package_root = root / "scripts" / "perftrack"
    found: list[Finding] = []
    for path in sorted(package_root.rglob("*.py")):
        found.extend(check_file(path, package_root))
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    findings = check(root)
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
