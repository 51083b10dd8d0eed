"""The one cache directory where providers keep extracted servers.

Layout (``$PERFTRACK_CACHE``, default ``~/.cache/perftrack``)::

    servers/<key>/            an extracted tree; valid only when it holds ``.complete``
    datasets/<key>/datadir    a prepared dataset template (runner.py): a cleanly stopped
                              datadir, copied for every group that reads it, kept across
                              runs and nights; least recently used ones are evicted
    locks/<key>.lock          flock taken while <key> is checked or built
    tmp-<key>-XXXX/           scratch space of a build in progress (downloads, extraction)

A tree is built in ``tmp-<key>-XXXX``, moved into place with one ``os.rename`` and only
then marked ``.complete``; a directory without the marker is a build that was interrupted
and is removed before building again. The per-key lock keeps two processes from building
the same tree at once (the second waits, then reuses the first one's result).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from gzip import BadGzipFile
from lzma import LZMAError
from pathlib import Path

from perftrack.core.errors import FetchError
from perftrack.core.files import HASH_CHUNK_BYTES, sha256_file

ENV_CACHE = "PERFTRACK_CACHE"
DEFAULT_CACHE = Path("~/.cache/perftrack")
SERVERS_DIR = "servers"
DATASETS_DIR = "datasets"
ENV_DATASET_CACHE_GB = "PERFTRACK_DATASET_CACHE_GB"
DEFAULT_DATASET_CACHE_GB = 20.0  # bound of datasets/: the least recently used go first
LOCKS_DIR = "locks"
TMP_PREFIX = "tmp-"
COMPLETE_MARKER = ".complete"
KEY_DIGEST_CHARS = 12
PERMISSION_BITS = 0o755  # no setuid/setgid/sticky or group/other write from an archive

Progress = Callable[[str], None]
Build = Callable[[Path, Path], None]
"""``build(tree, scratch)``: fill the empty directory ``tree``; ``scratch`` is for downloads."""


def no_progress(_message: str) -> None:
    """The default progress callback: say nothing."""


def cache_dir(override: Path | None = None) -> Path:
    """The cache root (``override``, else ``$PERFTRACK_CACHE``, else the default), created."""
    if override is not None:
        root = Path(override)
    elif os.environ.get(ENV_CACHE):
        root = Path(os.environ[ENV_CACHE])
    else:
        root = DEFAULT_CACHE
    root = root.expanduser()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise FetchError(
            f"cannot create the cache directory {root}: {err.strerror}; "
            f"set {ENV_CACHE} to a writable directory"
        ) from None
    return root


def verify(path: Path, expected: str, what: str) -> str:
    """Check ``path`` against ``expected``; on mismatch delete it and raise `FetchError`."""
    actual = sha256_file(path)
    if actual != expected.lower():
        path.unlink(missing_ok=True)
        raise FetchError(
            f"checksum mismatch for {what}: expected {expected}, got {actual}; the download was "
            "removed — if the catalog is wrong, fix configs/versions.yaml"
        )
    return actual


def is_complete(tree: Path) -> bool:
    """True when ``tree`` is a finished build (it holds the ``.complete`` marker)."""
    return (tree / COMPLETE_MARKER).is_file()


def entry_key(server_id: str, digests: list[str]) -> str:
    """The cache key of a server built from sources with these SHA-256s.

    A catalog change of any checksum gives a new key, so a stale tree is never reused.
    """
    combined = hashlib.sha256("\n".join(digests).encode("ascii")).hexdigest()
    return f"{server_id}-{combined[:KEY_DIGEST_CHARS]}"


def tree_path(root: Path, key: str, kind: str = SERVERS_DIR) -> Path:
    """Where the tree for ``key`` lives (complete or not)."""
    return root / kind / key


def ensure_tree(
    root: Path, key: str, build: Build, progress: Progress = no_progress, kind: str = SERVERS_DIR
) -> tuple[Path, bool]:
    """The complete tree for ``key``, built with ``build`` unless already cached.

    Returns ``(tree, built)``; ``built`` is False when the cached tree was reused.
    """
    final = tree_path(root, key, kind)
    with entry_lock(root, key, progress):
        if is_complete(final):
            return final, False
        _remove_leftovers(root, key, final, progress)
        final.parent.mkdir(parents=True, exist_ok=True)
        with staging_dir(root, key) as scratch:
            tree = scratch / "tree"
            tree.mkdir()
            _run_build(build, tree, scratch, key)
            os.rename(tree, final)
        mark_complete(final)
    return final, True


def tree_bytes(tree: Path) -> int:
    """Bytes of the regular files under ``tree`` (symlinks not followed)."""
    total = 0
    for dirpath, _dirs, files in os.walk(tree):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def dataset_cache_limit() -> int:
    """The byte bound of ``datasets/`` (``$PERFTRACK_DATASET_CACHE_GB``, default 20 GB)."""
    raw = os.environ.get(ENV_DATASET_CACHE_GB, "").strip()
    try:
        gb = float(raw) if raw else DEFAULT_DATASET_CACHE_GB
    except ValueError:
        raise FetchError(
            f"{ENV_DATASET_CACHE_GB}={raw!r} is not a number of GB; set e.g. 20"
        ) from None
    return int(max(gb, 0.0) * 1e9)


def evict(root: Path, kind: str, max_bytes: int, keep: set[str]) -> list[str]:
    """Remove the least recently used complete trees of ``kind`` (marker mtime; `touch`
    on use) until the rest fit in ``max_bytes``; never those in ``keep`` nor one another
    process holds the lock of. Returns the keys removed."""
    base = root / kind
    if not base.is_dir():
        return []
    trees = [t for t in base.iterdir() if t.is_dir() and is_complete(t)]
    sizes = {t.name: tree_bytes(t) for t in trees}
    total = sum(sizes.values())
    removed: list[str] = []
    for tree in sorted(trees, key=lambda t: (t / COMPLETE_MARKER).stat().st_mtime):
        if total <= max_bytes:
            break
        if tree.name in keep:
            continue
        with entry_lock(root, tree.name, wait=False) as held:
            if not held:
                continue  # in use by another run
            (tree / COMPLETE_MARKER).unlink(missing_ok=True)  # unmarked first: never half
            shutil.rmtree(tree, ignore_errors=True)
        total -= sizes[tree.name]
        removed.append(tree.name)
    return removed


def mark_complete(tree: Path) -> None:
    """Write the marker, last, and flush it so a crash cannot leave a half-written marker."""
    marker = tree / COMPLETE_MARKER
    with open(marker, "w", encoding="ascii") as handle:
        handle.write("ok\n")
        handle.flush()
        os.fsync(handle.fileno())


@contextlib.contextmanager
def entry_lock(
    root: Path, key: str, progress: Progress = no_progress, *, wait: bool = True
) -> Iterator[bool]:
    """Hold an exclusive flock for ``key``, waiting for another process holding it; with
    ``wait=False`` yield False at once instead of waiting (nothing is held then)."""
    lock_dir = root / LOCKS_DIR
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / f"{key}.lock", "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                yield False
                return
            progress(f"waiting for another perftrack process preparing {key}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def staging_dir(root: Path, key: str) -> Iterator[Path]:
    """A fresh ``<root>/tmp-<key>-XXXX`` directory, removed (whatever remains of it) on exit."""
    scratch = Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{key}-", dir=root))
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_build(build: Build, tree: Path, scratch: Path, key: str) -> None:
    try:
        build(tree, scratch)
    except OSError as err:
        hint = "; free some space" if err.errno == errno.ENOSPC else ""
        raise FetchError(f"could not prepare {key} in {scratch.parent}: {err}{hint}") from None


def _remove_leftovers(root: Path, key: str, final: Path, progress: Progress) -> None:
    """Remove an unmarked tree and scratch dirs of ``key`` (we hold its lock: nobody owns them)."""
    if final.exists() or final.is_symlink():
        progress(f"removing the incomplete {final}")
        _remove(final)
    for scratch in root.glob(f"{TMP_PREFIX}{key}-*"):
        _remove(scratch)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


# --- running download and extraction tools ------------------------------------------------


def find_tool(name: str, install_hint: str) -> str:
    """The absolute path of the program ``name``; `FetchError` with ``install_hint`` if absent."""
    found = shutil.which(name)
    if found is None:
        raise FetchError(f"{name} not found on PATH; {install_hint}")
    return found


def run_tool(
    argv: list[str],
    cwd: Path,
    timeout_s: float,
    failure_hint: str,
    env: dict[str, str] | None = None,
) -> str:
    """Run ``argv`` (an argument list, never a shell string); its output, or `FetchError`.

    ``env``: variables added to this process's environment for the tool. The error names
    the command, its last line of output and ``failure_hint``.
    """
    command = " ".join([Path(argv[0]).name, *argv[1:]])
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
            check=False,
            env={**os.environ, **env} if env else None,
        )
    except subprocess.TimeoutExpired:
        message = f"`{command}` took longer than {timeout_s:.0f} s; {failure_hint}"
        raise FetchError(message) from None
    if done.returncode != 0:
        reason = _reason(done.stderr) or _reason(done.stdout) or f"exit status {done.returncode}"
        raise FetchError(f"`{command}` failed: {reason}; {failure_hint}")
    return done.stdout


ERROR_PREFIXES = ("E:", "[ERROR]", "error:", "dpkg-deb: error:")
WARNING_PREFIXES = ("W:", "N:", "[WARNING]")
ANSI_ESCAPE_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _reason(output: str) -> str:
    """The most telling line of a tool's output: its first error line, else its last line."""
    plain = ANSI_ESCAPE_RE.sub("", output)
    lines = [line.strip() for line in plain.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(ERROR_PREFIXES):
            return line
    meaningful = [line for line in lines if not line.startswith(WARNING_PREFIXES)]
    return (meaningful or [""])[-1]


# --- safe archive extraction ----------------------------------------------------------------


def safe_extract_zip(archive: Path, dest: Path) -> None:
    """Extract a zip (or jar) into ``dest``, refusing members that would land outside it.

    Absolute names, ``..`` components and symlinks pointing outside ``dest`` raise
    `FetchError` naming the member; nothing is written for such a member.
    """
    dest.mkdir(parents=True, exist_ok=True)
    root = Path(os.path.realpath(dest))
    try:
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                try:
                    _extract_member(zf, info, root, archive)
                except (OSError, ValueError) as err:  # e.g. a file where a dir must go
                    reason = err.strerror if isinstance(err, OSError) and err.strerror else err
                    raise FetchError(
                        f"cannot extract member {info.filename!r} of {archive.name}: {reason}"
                    ) from None
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, EOFError) as err:
        raise FetchError(f"{archive.name} is not a valid zip archive: {err}") from None


def _extract_member(
    zip_file: zipfile.ZipFile, info: zipfile.ZipInfo, root: Path, archive: Path
) -> None:
    relative = _member_path(info.filename, archive)
    target = root / relative
    _check_inside(target.parent, root, info.filename, archive)
    if info.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        raise FetchError(f"refusing to write {info.filename!r} of {archive.name} through a symlink")
    mode = _unix_mode(info)
    if mode is not None and stat.S_ISLNK(mode):
        _extract_symlink(zip_file, info, target, root, archive)
        return
    with zip_file.open(info) as source, open(target, "wb") as sink:
        shutil.copyfileobj(source, sink, HASH_CHUNK_BYTES)
    if mode is not None and mode & PERMISSION_BITS:
        target.chmod(mode & PERMISSION_BITS)


def _member_path(name: str, archive: Path) -> Path:
    if "\0" in name or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise FetchError(f"refusing absolute member {name!r} in {archive.name}")
    parts = [part for part in name.replace("\\", "/").split("/") if part not in ("", ".")]
    if ".." in parts:
        raise FetchError(f"refusing member {name!r} in {archive.name}: it contains '..'")
    if not parts:
        raise FetchError(f"refusing member {name!r} in {archive.name}: empty name")
    return Path(*parts)


def _extract_symlink(
    zip_file: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, root: Path, archive: Path
) -> None:
    link = zip_file.read(info).decode("utf-8", errors="replace")
    resolved = Path(os.path.realpath(target.parent / link))
    if os.path.isabs(link) or not resolved.is_relative_to(root):
        raise FetchError(
            f"refusing symlink member {info.filename!r} -> {link!r} in {archive.name}: "
            "it points outside the extraction directory"
        )
    target.unlink(missing_ok=True)
    os.symlink(link, target)
    # Resolve again through the link itself: a target naming the link (a loop such as
    # "top -> top//..") looks inside before it exists and resolves elsewhere after.
    if not Path(os.path.realpath(target)).is_relative_to(root):
        target.unlink()
        raise FetchError(
            f"refusing symlink member {info.filename!r} -> {link!r} in {archive.name}: "
            "it resolves outside the extraction directory"
        )


def _check_inside(directory: Path, root: Path, name: str, archive: Path) -> None:
    if not Path(os.path.realpath(directory)).is_relative_to(root):
        raise FetchError(
            f"refusing member {name!r} in {archive.name}: it would land outside the "
            "extraction directory (through a symlink)"
        )


def _unix_mode(info: zipfile.ZipInfo) -> int | None:
    """The Unix mode stored by Unix zip tools, or None (e.g. jars written on Windows)."""
    mode = info.external_attr >> 16
    if info.create_system != 3 or not mode:
        return None
    return mode


def safe_extract_tar(archive: Path, dest: Path) -> None:
    """Extract a tar archive (plain, .gz, .xz, .bz2) into ``dest``, refusing escapes.

    Absolute names, ``..`` components, symlinks or hard links pointing outside ``dest``
    (or absolute), and device or FIFO members raise `FetchError` naming the member.
    Extraction stops there; the caller's staging directory holds what was written so far
    and is removed with it (`ensure_tree`), so nothing half-extracted reaches the cache.
    Owners are not restored and group/other write bits are dropped (``tarfile``'s data
    filter).
    """
    dest.mkdir(parents=True, exist_ok=True)
    root = Path(os.path.realpath(dest))
    try:
        with tarfile.open(archive) as tf:
            members = tf.getmembers()
            # Refuse any forbidden member before writing anything: tarfile extracts a hard
            # link whose os.link fails by re-extracting its *target member* unfiltered,
            # so a FIFO elsewhere in the archive could still be created (found by the
            # hostile-input property test).
            for member in members:
                if "\0" in member.name or "\0" in (member.linkname or ""):
                    raise FetchError(
                        f"refusing member {member.name!r} in {archive.name}: a NUL byte in "
                        "its name or link target"
                    )
                if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
                    raise FetchError(
                        f"refusing member {member.name!r} in {archive.name}: devices and "
                        "FIFOs are not allowed"
                    )
            tf.extractall(root, members=members, filter=_tar_filter(root, archive))
    except (tarfile.TarError, EOFError, LZMAError, zlib.error, BadGzipFile) as err:
        detail = " ".join(str(err).split())  # tarfile's messages span lines
        raise FetchError(
            f"{archive.name} is damaged or not a tar archive ({detail}); delete it and fetch again"
        ) from None
    except KeyError as err:  # tarfile: a hard link to a member the archive does not have
        raise FetchError(f"refusing {archive.name}: a hard link has no target ({err})") from None
    except OSError as err:  # e.g. a member that is a file where another needs a directory
        raise FetchError(
            f"cannot extract {archive.name}: {err.strerror or err} at {err.filename!r}"
        ) from None


TarFilter = Callable[[tarfile.TarInfo, str], "tarfile.TarInfo | None"]


def _tar_filter(root: Path, archive: Path) -> TarFilter:
    """The extraction filter of `safe_extract_tar`: our checks, then tarfile's data filter."""

    def check(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        if member.isdir() and member.name.strip("/") in ("", "."):
            return None  # the archive's own root ("./"): dest already exists
        relative = _member_path(member.name, archive)
        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise FetchError(
                f"refusing member {member.name!r} in {archive.name}: devices and FIFOs are "
                "not allowed"
            )
        if member.issym():
            link = member.linkname
            resolved = Path(os.path.realpath(root / relative.parent / link))
            if os.path.isabs(link) or not resolved.is_relative_to(root):
                raise FetchError(
                    f"refusing symlink member {member.name!r} -> {link!r} in {archive.name}: "
                    "it points outside the extraction directory"
                )
        if member.islnk():
            _member_path(member.linkname, archive)
        _check_inside((root / relative).parent, root, member.name, archive)
        try:
            return tarfile.data_filter(member, path)
        except tarfile.FilterError as err:
            raise FetchError(f"refusing member {member.name!r} in {archive.name}: {err}") from None

    return check
