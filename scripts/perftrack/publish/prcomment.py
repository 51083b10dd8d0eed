"""One PR comment, created once and then updated: the PR check's verdict table.

The comment is found by a hidden marker (an HTML comment GitHub does not render) *and*
its author, so a comment someone else wrote with the marker in it is never edited.
GitHub REST API: list ``GET /repos/{repo}/issues/{pr}/comments`` (paginated),
``POST`` to create, ``PATCH /repos/{repo}/issues/comments/{id}`` to update.

Standard library only (plus perftrack.core.errors): the commenting job runs it as
``PYTHONPATH=scripts python3 -m perftrack.publish.prcomment --body FILE`` without installing
perftrack. Everything comes from the environment a workflow sets: ``GITHUB_REPOSITORY``,
``PR_NUMBER``, ``GITHUB_TOKEN``, ``PERFTRACK_GITHUB_API_URL`` (tests) or
``GITHUB_API_URL``; ``PERFTRACK_COMMENT_AUTHOR`` (default ``github-actions[bot]``, the
author of comments made with the workflow token).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perftrack.core.errors import ConfigError, EnvironmentProblem, PerftrackError

MARKER = "<!-- perftrack-pr-check -->"
DEFAULT_API = "https://api.github.com"
DEFAULT_AUTHOR = "github-actions[bot]"
REPO_RE = re.compile(r"^[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}\Z")
AUTHOR_RE = re.compile(r"^[A-Za-z0-9-]{1,39}(?:\[bot\])?\Z")
PR_RE = re.compile(r"^[1-9][0-9]{0,9}\Z")
MAX_BODY = 65_000  # GitHub refuses comments over 65,536 characters
MAX_PAGES = 30
TIMEOUT_S = 30
LINK_NEXT_RE = re.compile(r'<([^<>\s]+)>\s*;\s*rel="next"')


@dataclass(frozen=True, kw_only=True)
class CommentTarget:
    api: str
    repository: str
    pr: int
    token: str
    author: str = DEFAULT_AUTHOR


def api_url(value: str | None) -> str:
    url = (value or DEFAULT_API).rstrip("/")
    parsed = urllib.parse.urlsplit(url)
    loopback = parsed.hostname in ("127.0.0.1", "localhost", "::1")
    if parsed.scheme != "https" and not (parsed.scheme == "http" and loopback):
        raise ConfigError(f"API URL {url!r} must be https:// (http only on 127.0.0.1)")
    return url


def target_from_env(
    pr_number: str | None = None, env: dict[str, str] | None = None
) -> CommentTarget:
    env = dict(os.environ if env is None else env)
    repository = env.get("GITHUB_REPOSITORY", "")
    if not REPO_RE.match(repository):
        raise ConfigError(f"GITHUB_REPOSITORY={repository!r} is not OWNER/NAME")
    number = pr_number or env.get("PR_NUMBER", "")
    if not PR_RE.match(number):
        raise ConfigError(f"PR number {number!r} is not a positive whole number (set PR_NUMBER)")
    token = env.get("GITHUB_TOKEN", "")
    if not token:
        raise ConfigError("GITHUB_TOKEN is not set: the job needs `pull-requests: write`")
    author = env.get("PERFTRACK_COMMENT_AUTHOR") or DEFAULT_AUTHOR
    if not AUTHOR_RE.match(author):
        raise ConfigError(f"PERFTRACK_COMMENT_AUTHOR={author!r} is not a GitHub login")
    api = api_url(env.get("PERFTRACK_GITHUB_API_URL") or env.get("GITHUB_API_URL"))
    return CommentTarget(api=api, repository=repository, pr=int(number), token=token, author=author)


def _request(
    target: CommentTarget, method: str, url: str, body: dict[str, Any] | None = None
) -> tuple[object, str]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/vnd.github+json")
    req.add_header("X-GitHub-Api-Version", "2022-11-28")
    req.add_header("Authorization", f"Bearer {target.token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
            raw = resp.read()
            link = resp.headers.get("Link") or ""
    except urllib.error.HTTPError as err:
        hint = " (does the job have `pull-requests: write`?)" if err.code in (401, 403) else ""
        raise EnvironmentProblem(
            f"GitHub answered HTTP {err.code} to {method} {url}{hint}"
        ) from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", None) or err
        raise EnvironmentProblem(f"cannot reach the GitHub API at {target.api}: {reason}") from None
    try:
        return (json.loads(raw) if raw else None), link
    except ValueError:
        raise EnvironmentProblem(f"GitHub's answer to {method} {url} is not JSON") from None


def find_comment(target: CommentTarget) -> int | None:
    """The id of our earlier comment on the PR (marker and author), if any."""
    url: str | None = (
        f"{target.api}/repos/{target.repository}/issues/{target.pr}/comments?per_page=100"
    )
    for _ in range(MAX_PAGES):
        if url is None:
            return None
        data, link = _request(target, "GET", url)
        if not isinstance(data, list):
            raise EnvironmentProblem("GitHub's list of PR comments is not a JSON list")
        for c in data:
            if not isinstance(c, dict):
                continue
            login = (c.get("user") or {}).get("login")
            if (
                login == target.author
                and MARKER in str(c.get("body") or "")
                and isinstance(c.get("id"), int)
            ):
                return int(c["id"])
        m = LINK_NEXT_RE.search(link)
        url = m.group(1) if m else None
        if url is not None and not url.startswith(target.api + "/"):
            raise EnvironmentProblem(f"GitHub's next page is not on {target.api}: refused")
    return None


def with_marker(body: str) -> str:
    body = body.replace(MARKER, "")
    if len(body) > MAX_BODY:
        body = body[:MAX_BODY] + "\n\n… (cut: the full report is in the run's artifacts)\n"
    return f"{MARKER}\n{body}"


def upsert(target: CommentTarget, body: str) -> tuple[str, int]:
    """Create the comment, or update the one we made before: ("created"|"updated", id)."""
    text = with_marker(body)
    existing = find_comment(target)
    if existing is not None:
        url = f"{target.api}/repos/{target.repository}/issues/comments/{existing}"
        _request(target, "PATCH", url, {"body": text})
        return "updated", existing
    data, _ = _request(
        target,
        "POST",
        f"{target.api}/repos/{target.repository}/issues/{target.pr}/comments",
        {"body": text},
    )
    cid = data.get("id") if isinstance(data, dict) else None
    if not isinstance(cid, int):
        raise EnvironmentProblem("GitHub's answer to the new comment has no id")
    return "created", cid


def read_body(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read the comment body {path}: {err}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m perftrack.publish.prcomment", description=__doc__
    )
    parser.add_argument("--body", type=Path, required=True, help="markdown file")
    parser.add_argument("--pr", help="PR number (default: $PR_NUMBER)")
    args = parser.parse_args(argv)
    try:
        action, cid = upsert(target_from_env(args.pr), read_body(args.body))
    except PerftrackError as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        return err.exit_code
    print(f"PR comment {cid} {action}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
