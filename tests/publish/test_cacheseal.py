"""The publish job's read cache between nights (publish/cacheseal.py): a restored entry is
used only with the seal of the publish job's own key, for the exact data/ tree; a forged
or changed one is removed and reported in one line (the night files are read afresh)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clirun import perftrack
from perftrack.publish import cacheseal

SECRET = "s" * 64
KEY = "perftrack-publish-" + "ab" * 20


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(cacheseal.ENV_KEY, SECRET)
    root = tmp_path / "data" / ".results-cache"
    (root / "answers").mkdir(parents=True)
    (root / "results-202601.parquet").write_bytes(b"PAR1 month")
    (root / "answers" / "window.json").write_text('{"rows": []}\n')
    assert cacheseal.seal(root, KEY).startswith(f"sealed {root} (2 files)")
    return root


def test_a_sealed_cache_is_kept(cache: Path) -> None:
    assert (
        cacheseal.verify(cache, KEY)
        == f"read cache {cache} verified: sealed by this workflow for {KEY}"
    )
    assert (cache / "answers" / "window.json").is_file()


def _forge_answer(c: Path) -> None:
    (c / "answers" / "window.json").write_text('{"rows": [["forged"]]}\n')


FORGERIES: dict[str, tuple[Callable[[Path], None], str]] = {
    "changed answer": (_forge_answer, "its files are not the ones this job sealed"),
    "added file": (
        lambda c: (c / "answers" / "extra.json").write_text("{}"),
        "its files are not the ones this job sealed",
    ),
    "removed file": (
        lambda c: (c / "results-202601.parquet").unlink(),
        "its files are not the ones this job sealed",
    ),
    "symlink": (
        lambda c: (c / "answers" / "link.json").symlink_to("/etc/hostname"),
        "its files are not the ones this job sealed",
    ),
    "resealed without the key": (
        lambda c: (c / cacheseal.SEAL).write_text('{"version": 1, "key": "x", "mac": "00"}'),
        "it was sealed for 'x'",
    ),
    "no seal": (lambda c: (c / cacheseal.SEAL).unlink(), "it carries no seal of this job's"),
    "bad seal": (lambda c: (c / cacheseal.SEAL).write_text("[]"), "not one this job writes"),
}


@pytest.mark.parametrize("forgery", FORGERIES, ids=list(FORGERIES))
def test_a_forged_cache_is_removed_and_reported(cache: Path, forgery: str) -> None:
    forge, reason = FORGERIES[forgery]
    forge(cache)
    line = cacheseal.verify(cache, KEY)
    assert line.startswith("restored read cache ignored and removed: ") and reason in line
    assert "\n" not in line
    assert not cache.exists()


def test_another_key_or_tree_is_not_this_jobs(cache: Path, monkeypatch) -> None:
    assert "sealed for" in cacheseal.verify(cache, KEY[:-2] + "cd")  # another data/ tree
    assert not cache.exists()


def test_a_seal_made_with_another_secret_is_refused(cache: Path, monkeypatch) -> None:
    monkeypatch.setenv(cacheseal.ENV_KEY, "t" * 64)
    assert "not the ones this job sealed" in cacheseal.verify(cache, KEY)


def test_without_the_secret_nothing_is_sealed_or_trusted(cache: Path, monkeypatch) -> None:
    monkeypatch.delenv(cacheseal.ENV_KEY)
    assert cacheseal.seal(cache, KEY).startswith("not sealed: PERFTRACK_CACHE_KEY is not set")
    assert "PERFTRACK_CACHE_KEY is not set" in cacheseal.verify(cache, KEY)
    assert not cache.exists()


def test_the_cli_reports_in_the_job_summary(cache: Path, tmp_path: Path) -> None:
    _forge_answer(cache)
    summary = tmp_path / "summary.md"
    res = perftrack(
        "cache", "verify", str(cache), "--for", KEY, "--summary", str(summary),
        env={cacheseal.ENV_KEY: SECRET},
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "restored read cache ignored and removed" in res.stdout
    assert "Read cache: restored read cache ignored and removed" in summary.read_text()
    assert not cache.exists()
