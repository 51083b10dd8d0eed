"""The PR check's conclusion: regression, infrastructure failure, refused catalog, or pass.

One place decides what the PR is told, so that a benchmark that could not run is never
shown as a regression and never passes silently:

- ``catalog refused: …`` — the PR's catalog broke a rule of `perftrack.publish.printake`;
- ``infrastructure failure: …`` — GitHub could not be asked, the benchmark job did not
  finish (preflight refused a noisy host, a step failed, the runner was lost or the job
  cancelled), cells failed, or nothing comparable came out;
- ``N unacknowledged regression(s)`` — confirmed regressions (with any infrastructure
  failure named beside them);
- otherwise a pass.

The PR is told twice: the one PR comment (`perftrack.publish.prcomment`), whose first line is the
headline, and a commit status ``perftrack/pr-check`` on the PR's head commit (``error``
for an infrastructure failure, ``failure`` for a regression or a refused catalog), which
branch protection can require. Standard library only, like prcomment: the GitHub-hosted
job runs ``PYTHONPATH=scripts python3 -m perftrack.publish.prconclusion conclude …``.

``cells --runs DIR --out FILE`` (in the benchmark job) counts the run records by status.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perftrack.core.errors import ConfigError, PerftrackError
from perftrack.publish import prcomment

STATUS_CONTEXT = "perftrack/pr-check"
MAX_DESCRIPTION = 140  # GitHub truncates longer commit status descriptions
SHA_RE = re.compile(r"^[0-9a-f]{40}\Z")
STEP_NAMES = {
    "sweep": "sweeping what killed jobs left on the runner",
    "preflight": "preflight (the runner's noise check)",
    "diff": "pairing the added servers",
    "run": "the benchmark run",
    "report": "ingest and verdicts",
}


@dataclass(frozen=True)
class Conclusion:
    state: str  # commit status: success | failure | error
    headline: str

    @property
    def passed(self) -> bool:
        return self.state == "success"


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def count_cells(runs: Path) -> dict[str, object]:
    """Run records under ``runs`` by status, with the first failure's reason."""
    counts: dict[str, int] = {}
    first = ""
    for path in sorted(runs.glob("*/records/*.json")) if runs.is_dir() else []:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            counts["unreadable"] = counts.get("unreadable", 0) + 1
            continue
        status = str(record.get("status") or "unknown")
        counts[status] = counts.get(status, 0) + 1
        if status == "failed" and not first:
            server = (record.get("server") or {}).get("id") or record.get("server_id") or "?"
            first = f"{server}: {record.get('reason') or 'no reason recorded'}"
    return {"counts": counts, "first_failure": _one_line(first)}


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _failure_reason(report: Path, step: str) -> str:
    err = report / f"{step}.err"
    try:
        lines = [ln for ln in err.read_text(encoding="utf-8").splitlines() if ln.strip()]
    except OSError:
        return ""
    errors = [ln for ln in lines if ln.startswith("error:")]
    return _one_line((errors or lines or [""])[-1])


def decide(env: dict[str, str], report: Path) -> Conclusion:
    """The conclusion from the jobs' results (env) and the report directory."""
    intake = env.get("INTAKE_RESULT", "")
    refused = env.get("REFUSED", "")
    added = env.get("ADDED", "0")
    bench = env.get("BENCH_RESULT", "")
    if intake != "success":
        return Conclusion("error", f"infrastructure failure: the intake job ended {intake!r}")
    if refused:
        return Conclusion("failure", _one_line(f"catalog refused: {refused}"))
    if added == "0":
        return Conclusion("success", "no servers added: nothing to benchmark")
    verdicts = _read_json(report / "verdicts.json")
    infra: list[str] = []
    if bench != "success":
        step = env.get("FAILED_STEP", "")
        what = STEP_NAMES.get(step, "an unknown step (runner lost or job cancelled?)")
        reason = _failure_reason(report, step) if step in STEP_NAMES else ""
        infra.append(
            f"the benchmark job ended {bench!r} in {what}" + (f": {reason}" if reason else "")
        )
    cells = _read_json(report / "cells.json") or {}
    counts = cells.get("counts") or {}
    failed = int(counts.get("failed", 0)) if isinstance(counts, dict) else 0
    if failed:
        total = sum(int(v) for v in counts.values())
        first = cells.get("first_failure") or ""
        infra.append(f"{failed} of {total} cells failed" + (f" ({first})" if first else ""))
    if verdicts is not None and not verdicts.get("lines") and not infra:
        infra.append("no comparable results: " + "; ".join(verdicts.get("not_run") or []))
    if verdicts is None and not infra:
        infra.append("the benchmark job left no report")
    regressions = int((verdicts or {}).get("regressions") or 0)
    parts = []
    if regressions:
        parts.append(f"{regressions} unacknowledged regression(s)")
    if infra:
        parts.append("infrastructure failure: " + "; ".join(infra))
    if regressions:
        return Conclusion("failure", _one_line("; ".join(parts), 400))
    if infra:
        return Conclusion("error", _one_line(parts[0], 400))
    acked = int((verdicts or {}).get("acknowledged") or 0)
    extra = f" ({acked} acknowledged)" if acked else ""
    return Conclusion("success", f"no unacknowledged regression{extra}")


def comment_body(conclusion: Conclusion, report: Path, run_url: str) -> str:
    mark = {"success": "✅", "failure": "❌", "error": "⚠️"}[conclusion.state]
    out = [f"**perftrack PR check: {mark} {conclusion.headline}**", ""]
    if conclusion.state == "error":
        out += [
            "This is not a verdict on the change: the benchmark could not run as planned. "
            "Re-run the check; if it keeps failing, the runner needs an operator.",
            "",
        ]
    with contextlib.suppress(OSError):
        out.append((report / "comment.md").read_text(encoding="utf-8"))
    if run_url:
        out += ["", f"Run: {run_url}"]
    return "\n".join(out) + "\n"


def post_status(
    target: prcomment.CommentTarget, sha: str, conclusion: Conclusion, run_url: str
) -> None:
    if not SHA_RE.match(sha):
        raise ConfigError(f"HEAD_SHA {sha[:50]!r} is not a commit id")
    body = {
        "state": conclusion.state,
        "description": _one_line(conclusion.headline, MAX_DESCRIPTION),
        "context": STATUS_CONTEXT,
    }
    if run_url.startswith("https://") or run_url.startswith("http://127.0.0.1"):
        body["target_url"] = run_url
    prcomment._request(
        target, "POST", f"{target.api}/repos/{target.repository}/statuses/{sha}", body
    )


def conclude(report: Path, body_out: Path, env: dict[str, str]) -> int:
    c = decide(env, report)
    run_url = env.get("RUN_URL", "")
    body = comment_body(c, report, run_url)
    body_out.write_text(body, encoding="utf-8")
    pr = env.get("PR_NUMBER", "")
    if pr:
        t = prcomment.target_from_env(pr, env)
        action, cid = prcomment.upsert(t, body)
        print(f"PR comment {cid} {action}")
    sha = env.get("HEAD_SHA", "")
    if sha:
        t = prcomment.target_from_env(pr or "1", env)  # the status needs no PR number
        post_status(t, sha, c, run_url)
        print(f"status {STATUS_CONTEXT} on {sha[:12]}: {c.state}")
    prefix = "" if c.passed else "::error::"
    print(f"{prefix}{c.headline}")
    return 0 if c.passed else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perftrack.publish.prconclusion")
    sub = parser.add_subparsers(dest="command", required=True)
    cells = sub.add_parser("cells", help="count the run records by status")
    cells.add_argument("--runs", type=Path, required=True)
    cells.add_argument("--out", type=Path, required=True)
    fin = sub.add_parser("conclude", help="comment and commit status (env: see the module)")
    fin.add_argument("--report", type=Path, required=True)
    fin.add_argument("--body-out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "cells":
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(count_cells(args.runs)) + "\n", encoding="utf-8")
            return 0
        return conclude(args.report, args.body_out, dict(os.environ))
    except PerftrackError as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
