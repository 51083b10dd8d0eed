"""The cache: checksums, atomic trees with a completion marker, locking, safe unzip."""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from perftrack.core.errors import FetchError
from perftrack.servers import cache

KEY = "srv-1.2.3-0123456789ab"
LINK_MODE = stat.S_IFLNK | 0o777
UNIX = 3  # zipfile create_system for Unix


# --- cache directory and checksums --------------------------------------------------------


def test_cache_dir_prefers_argument_then_env_then_default(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PERFTRACK_CACHE", str(tmp_path / "env"))
    assert cache.cache_dir(tmp_path / "arg") == tmp_path / "arg"
    assert (tmp_path / "arg").is_dir()
    assert cache.cache_dir() == tmp_path / "env"
    monkeypatch.delenv("PERFTRACK_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "perftrack"


def test_cache_dir_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(FetchError, match="cannot create the cache directory"):
        cache.cache_dir(blocker / "sub")


def test_sha256_file(tmp_path: Path) -> None:
    data = os.urandom(3 * cache.HASH_CHUNK_BYTES + 17)
    path = tmp_path / "blob"
    path.write_bytes(data)
    assert cache.sha256_file(path) == hashlib.sha256(data).hexdigest()


def test_verify_accepts_the_right_checksum(tmp_path: Path) -> None:
    path = tmp_path / "x.deb"
    path.write_bytes(b"payload")
    digest = hashlib.sha256(b"payload").hexdigest()
    assert cache.verify(path, digest, "x 1.0") == digest
    assert path.exists()


def test_checksum_mismatch_removes_the_file_and_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "x.deb"
    path.write_bytes(b"tampered")
    expected = "0" * 64
    with pytest.raises(FetchError) as info:
        cache.verify(path, expected, "x 1.0")
    message = str(info.value)
    assert message.startswith("checksum mismatch for x 1.0: expected " + expected)
    assert f"got {hashlib.sha256(b'tampered').hexdigest()}" in message
    assert "the download was removed" in message
    assert "configs/versions.yaml" in message
    assert not path.exists()


def test_entry_key_changes_with_any_checksum() -> None:
    one = cache.entry_key("s", ["a" * 64, "b" * 64])
    assert one.startswith("s-")
    assert one == cache.entry_key("s", ["a" * 64, "b" * 64])
    assert one != cache.entry_key("s", ["a" * 64, "c" * 64])


# --- atomic trees -------------------------------------------------------------------------


class Builder:
    """A build function that records its calls and writes one file."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.calls = 0
        self.fail = fail

    def __call__(self, tree: Path, scratch: Path) -> None:
        self.calls += 1
        assert tree.is_dir() and not any(tree.iterdir())
        assert scratch.name.startswith(f"tmp-{KEY}-")
        (scratch / "download.bin").write_bytes(b"d")
        (tree / "bin").mkdir()
        (tree / "bin" / "mysqld").write_text("#!/bin/sh\n")
        if self.fail is not None:
            raise self.fail


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.glob("tmp-*"))


def test_ensure_tree_builds_once_then_reuses(tmp_path: Path) -> None:
    build = Builder()
    tree, built = cache.ensure_tree(tmp_path, KEY, build)
    assert built
    assert tree == tmp_path / "servers" / KEY
    assert cache.is_complete(tree)
    assert (tree / "bin" / "mysqld").is_file()
    inode = tree.stat().st_ino
    again, built_again = cache.ensure_tree(tmp_path, KEY, build)
    assert (again, built_again) == (tree, False)
    assert build.calls == 1
    assert again.stat().st_ino == inode
    assert leftovers(tmp_path) == []


def test_interrupted_build_is_removed_and_redone(tmp_path: Path) -> None:
    # What a crash between extraction and the marker leaves behind: an unmarked tree and
    # a scratch directory of the dead process.
    half = cache.tree_path(tmp_path, KEY)
    (half / "usr").mkdir(parents=True)
    (half / "usr" / "truncated").write_bytes(b"\0" * 10)
    (tmp_path / f"tmp-{KEY}-dead").mkdir()
    (tmp_path / f"tmp-{KEY}-dead" / "part.deb").write_bytes(b"x")
    messages: list[str] = []
    build = Builder()
    tree, built = cache.ensure_tree(tmp_path, KEY, build, messages.append)
    assert built and build.calls == 1
    assert not (tree / "usr").exists()
    assert (tree / "bin" / "mysqld").is_file()
    assert cache.is_complete(tree)
    assert leftovers(tmp_path) == []
    assert any("removing the incomplete" in m for m in messages)


def test_other_keys_scratch_dirs_are_left_alone(tmp_path: Path) -> None:
    other = tmp_path / "tmp-other-1.0-abc-xyz"
    other.mkdir()
    cache.ensure_tree(tmp_path, KEY, Builder())
    assert other.is_dir()


def test_failed_build_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="boom"):
        cache.ensure_tree(tmp_path, KEY, Builder(fail=FetchError("boom")))
    assert not cache.tree_path(tmp_path, KEY).exists()
    assert leftovers(tmp_path) == []


def test_os_error_during_build_becomes_fetch_error(tmp_path: Path) -> None:
    disk_full = OSError(28, "No space left on device")
    with pytest.raises(FetchError, match="No space left on device; free some space"):
        cache.ensure_tree(tmp_path, KEY, Builder(fail=disk_full))
    assert leftovers(tmp_path) == []


def test_second_process_waits_for_the_first_and_reuses_its_tree(tmp_path: Path) -> None:
    """flock conflicts between separate opens, so two threads stand in for two processes."""
    first_building = threading.Event()
    second_waiting = threading.Event()
    results: dict[str, tuple[Path, bool]] = {}

    def slow_build(tree: Path, scratch: Path) -> None:
        first_building.set()
        assert second_waiting.wait(30), "the second fetch never queued on the lock"
        (tree / "done").write_text("1")

    def first() -> None:
        results["first"] = cache.ensure_tree(tmp_path, KEY, slow_build)

    def second_progress(message: str) -> None:
        if message.startswith("waiting for another perftrack process"):
            second_waiting.set()

    def second() -> None:
        assert first_building.wait(30)
        results["second"] = cache.ensure_tree(
            tmp_path, KEY, Builder(fail=AssertionError("must not build twice")), second_progress
        )

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert results["first"][1] is True
    assert results["second"] == (results["first"][0], False)
    assert (results["second"][0] / "done").read_text() == "1"


# --- running tools ------------------------------------------------------------------------


def test_find_tool_missing(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FetchError, match="nosuchtool not found on PATH; install it"):
        cache.find_tool("nosuchtool", "install it")


def test_run_tool_passes_arguments_verbatim(tmp_path: Path) -> None:
    odd = "a b; $(echo no) `x` *"
    out = cache.run_tool(
        [sys.executable, "-c", "import sys; print(sys.argv[1])", odd],
        cwd=tmp_path,
        timeout_s=30,
        failure_hint="unused",
    )
    assert out.strip() == odd


def test_run_tool_failure_names_command_reason_and_hint(tmp_path: Path) -> None:
    script = "import sys; print('W: a warning', file=sys.stderr); print('E: it broke', file=sys.stderr); sys.exit(100)"  # noqa: E501
    with pytest.raises(FetchError) as info:
        cache.run_tool([sys.executable, "-c", script], tmp_path, 30, "run `apt-get update`")
    message = str(info.value)
    assert "failed: E: it broke; run `apt-get update`" in message
    assert message.startswith("`python")


def test_run_tool_timeout(tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="took longer than 0 s; try again"):
        cache.run_tool(
            [sys.executable, "-c", "import time; time.sleep(5)"], tmp_path, 0.2, "try again"
        )


# --- safe zip extraction ------------------------------------------------------------------


def make_zip(path: Path, members: list[tuple[str, bytes, int | None]]) -> Path:
    """A zip with (name, data, unix mode or None) members; names are written verbatim."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name)
            if mode is not None:
                info.create_system = UNIX
                info.external_attr = mode << 16
            zf.writestr(info, data)
    return path


def test_extracts_files_dirs_and_modes(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "ok.jar",
        [
            ("top/", b"", stat.S_IFDIR | 0o755),
            ("top/bin/mysqld", b"ELF", stat.S_IFREG | 0o755),
            ("top/share/english/errmsg.sys", b"msgs", stat.S_IFREG | 0o644),
            ("top/weird", b"w", stat.S_IFREG | 0o6777),  # setuid + world-writable: dropped
            ("top/nomode.txt", b"n", None),
            ("top/link", b"share/english/errmsg.sys", LINK_MODE),
        ],
    )
    dest = tmp_path / "out"
    cache.safe_extract_zip(archive, dest)
    assert (dest / "top" / "bin" / "mysqld").read_bytes() == b"ELF"
    assert os.access(dest / "top" / "bin" / "mysqld", os.X_OK)
    assert (dest / "top" / "share" / "english" / "errmsg.sys").read_bytes() == b"msgs"
    assert stat.S_IMODE((dest / "top" / "weird").stat().st_mode) == 0o755
    assert (dest / "top" / "nomode.txt").read_bytes() == b"n"
    assert (dest / "top" / "link").is_symlink()
    assert (dest / "top" / "link").read_bytes() == b"msgs"


@pytest.mark.parametrize(
    ("name", "complaint"),
    [
        ("../evil", "contains '..'"),
        ("top/../../evil", "contains '..'"),
        ("/tmp/evil-absolute", "absolute member"),
        ("\\\\server\\evil", "absolute member"),
        ("C:/evil", "absolute member"),
    ],
)
def test_refuses_members_outside_the_target(tmp_path: Path, name: str, complaint: str) -> None:
    archive = make_zip(tmp_path / "bad.zip", [("fine.txt", b"ok", None), (name, b"evil", None)])
    dest = tmp_path / "dest" / "out"
    with pytest.raises(FetchError) as info:
        cache.safe_extract_zip(archive, dest)
    assert complaint in str(info.value)
    assert repr(name) in str(info.value)
    assert not (tmp_path / "dest" / "evil").exists()
    assert not (tmp_path / "evil").exists()
    assert not Path("/tmp/evil-absolute").exists()


@pytest.mark.parametrize("target", ["../../outside", "/etc/passwd", "a/../../.."])
def test_refuses_symlinks_escaping_the_target(tmp_path: Path, target: str) -> None:
    archive = make_zip(tmp_path / "link.zip", [("top/escape", target.encode(), LINK_MODE)])
    dest = tmp_path / "out"
    with pytest.raises(FetchError, match="refusing symlink member 'top/escape'"):
        cache.safe_extract_zip(archive, dest)
    assert not (dest / "top" / "escape").is_symlink()


def test_refuses_writing_through_a_symlinked_directory(tmp_path: Path) -> None:
    # A pre-existing symlink inside the destination that leads out of it.
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "sub").symlink_to(outside)
    archive = make_zip(tmp_path / "through.zip", [("sub/evil", b"x", None)])
    with pytest.raises(FetchError, match="refusing member 'sub/evil'"):
        cache.safe_extract_zip(archive, dest)
    assert not (outside / "evil").exists()


def test_not_a_zip(tmp_path: Path) -> None:
    junk = tmp_path / "junk.jar"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(FetchError, match=re.escape("junk.jar is not a valid zip archive")):
        cache.safe_extract_zip(junk, tmp_path / "out")


def test_evict_removes_least_recently_used_datasets_beyond_the_bound(tmp_path: Path) -> None:
    """datasets/ keeps the newest trees within the byte bound; `keep` and trees another
    process holds the lock of are never removed, nor are incomplete (building) ones."""
    import fcntl

    base = tmp_path / cache.DATASETS_DIR
    for i, name in enumerate(["old", "mid", "new", "held"]):
        tree = base / name
        tree.mkdir(parents=True)
        (tree / "data").write_bytes(b"x" * 1000)
        cache.mark_complete(tree)
        os.utime(tree / cache.COMPLETE_MARKER, (1000 + i, 1000 + i))
    (base / "building").mkdir()  # no marker: another run is still building it
    (base / "building" / "data").write_bytes(b"x" * 5000)
    (tmp_path / cache.LOCKS_DIR).mkdir()
    with open(tmp_path / cache.LOCKS_DIR / "held.lock", "a+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        removed = cache.evict(tmp_path, cache.DATASETS_DIR, 1500, keep={"old"})
    assert removed == ["mid", "new"]  # "old" kept, "held" locked: both stay
    assert sorted(p.name for p in base.iterdir()) == ["building", "held", "old"]
    assert cache.evict(tmp_path, cache.DATASETS_DIR, 10_000, keep=set()) == []


def test_dataset_cache_bound_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv(cache.ENV_DATASET_CACHE_GB, "1.5")
    assert cache.dataset_cache_limit() == 1_500_000_000
    monkeypatch.setenv(cache.ENV_DATASET_CACHE_GB, "lots")
    with pytest.raises(FetchError, match="PERFTRACK_DATASET_CACHE_GB='lots' is not a number"):
        cache.dataset_cache_limit()
