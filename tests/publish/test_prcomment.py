"""The PR comment: GitHub's comment endpoints replayed by a local server on 127.0.0.1 that
records every request (api.github.com is unreachable here; the answers follow the
documented shapes of the issue-comment endpoints)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from perftrack import cli
from perftrack.core.errors import ConfigError
from perftrack.publish import prcomment
from replay import Replay

REPO = Path(__file__).resolve().parents[2]
REPOSITORY = "perftrack/perftrack"


@pytest.fixture
def replayed(monkeypatch):
    with Replay() as r:
        monkeypatch.setenv("PERFTRACK_GITHUB_API_URL", r.url)
        monkeypatch.setenv("GITHUB_REPOSITORY", REPOSITORY)
        monkeypatch.setenv("GITHUB_TOKEN", "ghs_test-token")
        monkeypatch.setenv("PR_NUMBER", "42")
        monkeypatch.delenv("PERFTRACK_COMMENT_AUTHOR", raising=False)
        yield r


def test_replayed_comment_is_created_then_the_same_one_updated(
    replayed, tmp_path: Path, capsys
) -> None:
    # Someone else's comment quoting the marker must never be edited.
    replayed.comment_user = "mallory"
    t = prcomment.target_from_env()
    prcomment.upsert(t, "quoting " + prcomment.MARKER)
    replayed.comment_user = "github-actions[bot]"
    replayed.requests.clear()

    body = tmp_path / "comment.md"
    body.write_text("| verdict |\n|---|\n| unchanged |\n")
    assert cli.main(["pr", "comment", "--body", str(body)]) == 0
    assert "created" in capsys.readouterr().out
    body.write_text("| verdict |\n|---|\n| regression |\n")
    assert cli.main(["pr", "comment", "--body", str(body)]) == 0
    assert "updated" in capsys.readouterr().out

    ours = [c for c in replayed.comments.values() if c["user"]["login"] != "mallory"]
    assert len(ours) == 1
    assert ours[0]["body"].startswith(prcomment.MARKER + "\n")
    assert "| regression |" in ours[0]["body"]
    theirs = [c for c in replayed.comments.values() if c["user"]["login"] == "mallory"]
    assert theirs[0]["body"] == prcomment.MARKER + "\nquoting "  # untouched since
    methods = [(r.method, r.path.split("?")[0]) for r in replayed.requests]
    assert methods == [
        ("GET", f"/repos/{REPOSITORY}/issues/42/comments"),
        ("POST", f"/repos/{REPOSITORY}/issues/42/comments"),
        ("GET", f"/repos/{REPOSITORY}/issues/42/comments"),
        ("PATCH", f"/repos/{REPOSITORY}/issues/comments/{ours[0]['id']}"),
    ]
    assert all(r.headers["Authorization"] == "Bearer ghs_test-token" for r in replayed.requests)


def test_replayed_comment_without_installing_perftrack(replayed, tmp_path: Path) -> None:
    """The commenting job runs the module with the system python and PYTHONPATH=scripts."""
    body = tmp_path / "c.md"
    body.write_text("hello\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO / "scripts"),
        "PERFTRACK_GITHUB_API_URL": replayed.url,
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_TOKEN": "t",
        "PR_NUMBER": "7",
    }
    for _ in range(2):
        done = subprocess.run(
            ["/usr/bin/python3", "-m", "perftrack.publish.prcomment", "--body", str(body)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    assert len(replayed.comments) == 1
    assert [r.method for r in replayed.requests] == ["GET", "POST", "GET", "PATCH"]


def test_replayed_forbidden_is_a_one_line_error(replayed, tmp_path: Path, capsys) -> None:
    replayed.add("GET", f"/repos/{REPOSITORY}/issues/42/comments?per_page=100", {}, 403)
    body = tmp_path / "c.md"
    body.write_text("x")
    assert cli.main(["pr", "comment", "--body", str(body)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: GitHub answered HTTP 403") and "pull-requests: write" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("env", "complaint"),
    [
        ({"GITHUB_REPOSITORY": "a/b/c"}, "is not OWNER/NAME"),
        ({"PR_NUMBER": "42; rm -rf /"}, "not a positive whole number"),
        ({"PR_NUMBER": "0"}, "not a positive whole number"),
        ({"GITHUB_TOKEN": ""}, "GITHUB_TOKEN is not set"),
        ({"PERFTRACK_GITHUB_API_URL": "http://evil.example"}, "must be https://"),
    ],
)
def test_bad_environment_is_refused(env: dict[str, str], complaint: str) -> None:
    base = {
        "GITHUB_REPOSITORY": REPOSITORY,
        "PR_NUMBER": "42",
        "GITHUB_TOKEN": "t",
        "PERFTRACK_GITHUB_API_URL": "http://127.0.0.1:9",
    }
    with pytest.raises(ConfigError, match=complaint):
        prcomment.target_from_env(env={**base, **env})


def test_long_body_is_cut_below_githubs_limit() -> None:
    text = prcomment.with_marker("x" * 100_000)
    assert len(text) < 65_536 and text.startswith(prcomment.MARKER)


def test_module_help_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "perftrack.publish.prcomment", "--help"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "--body" in done.stdout
