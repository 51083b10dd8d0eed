"""`dict[str, Any]` only at the JSON edges (issue 40 item 2).

Data crosses the stages as typed rows (store/queries/shapes.py, the dataclasses of each
stage); an untyped ``dict[str, Any]`` belongs only where JSON or YAML comes in or goes
out. This check lists every line of ``scripts/perftrack`` that writes ``dict[str, Any]``
and refuses it unless

(a) its module is one of `EDGES`, the modules that read or write such a file (each with
    the edge it is), or
(b) the line, or a comment line right above it, carries ``# edge: <what>`` naming the
    JSON it is (a store method that returns a record, the CLI's ``--json`` output, …).

A value that is only compared or printed is ``dict[str, object]``: the type checker then
checks every use. One line per finding (``path:line: ...``); exit 1 on findings; with
``--count``, the lines per edge instead.
Usage: ``python scripts/lint_edges.py [--count] [ROOT]`` (ROOT: the repository, default
this script's parent's parent).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

UNTYPED = "dict[str, Any]"
MARK = re.compile(r"#\s*edge:\s*(\S.*)$")

# module (under scripts/perftrack, a prefix) -> the JSON or YAML it reads or writes
EDGES: dict[str, str] = {
    "run/": "records out: the run record JSON the runner writes",
    "drivers/": "records out: a benchmark's parsed output, into the record",
    "host/": "records out: the host fingerprint of a record",
    "core/record.py": "records in/out: the record JSON and its schema",
    "core/fastcheck.py": "records in: the record's JSON schema, compiled",
    "core/hardware.py": "records out: the hardware fingerprint JSON",
    "store/files/rows.py": "records in: a record's JSON into table rows",
    "store/files/variables.py": "records in: a record's server variables",
    "store/files/codecheck.py": "SQL syntax tree JSON (json_serialize_sql)",
    "publish/study_runs.py": "records in: a study's run records",
    "publish/study_report.py": "records in: a study's run records",
    "publish/archive.py": "records in and GitHub API JSON (releases)",
    "publish/site/": "site data out: the JSON the site's pages load",
    "store/queries/histtable.py": "site data out: the history table the site writes",
    "store/queries/history.py": "site data out: the history table's labels",
    "analysis/levels.py": "site data out: the history's steps",
    "analysis/headline.py": "site data out: the headline rows of the site and --json",
    "analysis/annotations.py": "YAML in: configs/annotations.yaml's match fields",
    "planning/": "YAML in: matrices, studies, axes; plan.json out",
    "cli/celloptions.py": "CLI options in: the cell options as a matrix spec",
    "cli/app.py": "CLI --json out",
    "cli/analysis.py": "CLI --json out",
    "publish/prcheck.py": "GitHub PR JSON: the PR matrix and check summary",
    "publish/prcomment.py": "GitHub API JSON",
    "publish/prconclusion.py": "GitHub PR JSON",
    "publish/printake.py": "GitHub PR JSON: a catalog entry as the PR sends it",
    "publish/job_summary.py": "plan.json and alerts.json in (a night's files)",
}


def edge_of(module: str, line: str, above: str = "") -> str | None:
    """The edge a line with `dict[str, Any]` is at (`above`: the line before it), or None
    (a finding)."""
    mark = MARK.search(line) or (MARK.search(above) if above.lstrip().startswith("#") else None)
    if mark:
        return mark.group(1).strip()
    return next((what for prefix, what in EDGES.items() if module.startswith(prefix)), None)


def scan(root: Path) -> tuple[list[str], Counter[str]]:
    """(findings, lines per edge) over scripts/perftrack."""
    package = root / "scripts" / "perftrack"
    findings: list[str] = []
    edges: Counter[str] = Counter()
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            if UNTYPED not in line:
                continue
            edge = edge_of(module, line, lines[number - 2] if number > 1 else "")
            if edge is None:
                findings.append(
                    f"{path.relative_to(root)}:{number}: {UNTYPED} away from a JSON edge: "
                    "use a typed row (store/queries/shapes.py, a dataclass), "
                    "dict[str, object] for values only compared or printed, or mark the "
                    "line `# edge: <the JSON it is>`"
                )
            else:
                edges[edge.split(":")[0]] += 1
    return findings, edges


def main(argv: list[str]) -> int:
    count = "--count" in argv
    args = [a for a in argv if a != "--count"]
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    findings, edges = scan(root)
    if count:
        for edge, n in edges.most_common():
            print(f"{n:5d}  {edge}")
        print(f"{sum(edges.values()):5d}  in all ({len(findings)} away from an edge)")
    else:
        for f in findings:
            print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
