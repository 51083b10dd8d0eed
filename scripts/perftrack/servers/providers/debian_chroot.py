"""``debian-chroot`` provider: a server as a newer Debian suite packages it (Oracle MySQL from
sid, MariaDB from trixie), pinned to exact package versions, in a chroot built once.

Build (once per cache key; ~3 s of index, ~30-40 s of debootstrap, ~15 s of apt here):

1. the suite's index is read with the host's apt in private directories
   (`perftrack.servers.suite_index`): each pinned ``NAME=VERSION`` must still be there (a
   suite that moved on is one clear error line), is downloaded and checked against the
   catalog's SHA-256;
2. ``debootstrap --variant=minbase SUITE TREE MIRROR``;
3. inside the tree, with a ``policy-rc.d`` that forbids starting daemons and ``/proc``
   mounted: ``apt-get update`` and ``apt-get install --no-install-recommends`` of exactly
   those verified ``.deb`` files (their dependencies come from the suite's index);
4. the installed versions are checked against the pins, every installed package is recorded
   (``.perftrack-chroot.json``, with the version the server binary reports, which must be
   the entry's), the apt caches and lists are dropped, and the run wrappers are written.

Steps 2 and 3 run in private mount and PID namespaces (``unshare --mount --pid --fork
--kill-child``): the ``/proc`` and ``/sys`` they mount vanish with them and no process of
theirs outlives them, even when perftrack is killed. The tree is built in the cache's
staging directory and only a complete one is moved into place (`cache.ensure_tree`).

Run: nothing is chrooted. Each chroot program perftrack runs has a wrapper in
``perftrack-run/usr/{bin,sbin}`` that starts it with the chroot's own dynamic loader and
libraries (through a link named after the program, so the process is still called
``mysqld``/``mariadbd``). ``perftrack-run/usr`` is the basedir: ``share`` and ``lib`` link to
the chroot's, so MariaDB's install script (a shell script, run by the host's ``/bin/sh``)
finds the wrapped ``mariadbd``, ``my_print_defaults`` and ``resolveip`` there. The
chroot's plugin and charset directories are passed as options (``Install.server_options``).
Datadirs, sockets and logs stay where the Server lifecycle puts them, outside the tree.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath

from perftrack.core.errors import ConfigError, FetchError
from perftrack.servers import cache
from perftrack.servers.catalog import DebianChroot, Entry
from perftrack.servers.install import Install
from perftrack.servers.suite_index import SuiteIndex

NAME = "debian-chroot"
DEBOOTSTRAP_TIMEOUT_S = 1800  # ~25-40 s here; a slow mirror can take minutes
APT_TIMEOUT_S = 900  # update + install ~15 s here
VERSION_TIMEOUT_S = 60  # mysqld --version: well under a second
METADATA_FILE = ".perftrack-chroot.json"
INSTALLED_RECORD = ".perftrack-installed"  # written inside the chroot by the install script
DEBS_DIR = "perftrack-debs"  # the verified .debs, inside the tree during the build only
RUN_DIR = "perftrack-run"  # the wrappers, the loader links and the basedir
BASEDIR = f"{RUN_DIR}/usr"
LOADER_LINKS = f"{RUN_DIR}/loader"
POLICY_RC_D = "usr/sbin/policy-rc.d"
# exit status 101 = "action forbidden" (Debian policy's invoke-rc.d interface)
POLICY_RC_D_TEXT = "#!/bin/sh\n# perftrack: never start daemons in this chroot\nexit 101\n"
# The dynamic loader and multiarch library directory per machine (Debian's multiarch tuples).
LOADERS = {
    "x86_64": ("lib64/ld-linux-x86-64.so.2", "usr/lib/x86_64-linux-gnu"),
    "aarch64": ("lib/ld-linux-aarch64.so.1", "usr/lib/aarch64-linux-gnu"),
}
NAMESPACE_ARGS = ("--mount", "--pid", "--fork", "--kill-child")  # for unshare
# Runs inside the chroot as `sh -c SCRIPT sh DEB...`: the .deb paths are arguments, never
# part of the script text.
INSTALL_SCRIPT = f"""set -e
export DEBIAN_FRONTEND=noninteractive LC_ALL=C
apt-get update -qq --error-on=any -o Acquire::Check-Valid-Until=false
apt-get install -y -qq --no-install-recommends "$@"
dpkg-query -W -f '${{Package}}=${{Version}}\\n' > /{INSTALLED_RECORD}
apt-get clean
rm -rf /var/lib/apt/lists/*
"""
# A chroot program run from the host: `${0%/*}` is the wrapper's directory, RUN_DIR/usr/X.
WRAPPER_TEXT = """#!/bin/sh
# perftrack: the chroot's /{program} with the chroot's own dynamic loader and libraries
tree="${{0%/*}}/../../.."
exec "$tree/{loader_link}" --library-path "$tree/{libdir}" "$tree/{program}" "$@"
"""
VERSION_RE = re.compile(r"\bVer (\d+\.\d+\.\d+)")
MIRROR_HINT = (
    "check that {mirror} is reachable (the Debian archive is the only network access "
    "perftrack needs), or use another provider (docker, tarball)"
)


@dataclass(frozen=True, kw_only=True)
class Layout:
    """Where a product's Debian packages put things (paths relative to the tree)."""

    server: str
    share_dir: str  # the lc-messages dir: holds english/errmsg.sys
    charsets_dir: str
    plugin_dir: str
    install_db: str | None  # None: the server initialises itself (--initialize-insecure)
    helpers: tuple[str, ...] = ()  # other programs the install script runs


LAYOUTS = {
    "mysql": Layout(
        server="usr/sbin/mysqld",
        share_dir="usr/share/mysql",
        charsets_dir="usr/share/mysql/charsets",
        plugin_dir="usr/lib/mysql/plugin",
        install_db=None,
    ),
    "mariadb": Layout(
        server="usr/sbin/mariadbd",
        share_dir="usr/share/mariadb",
        charsets_dir="usr/share/mariadb/charsets",
        plugin_dir="usr/lib/mysql/plugin",
        install_db="usr/bin/mariadb-install-db",
        helpers=("usr/bin/my_print_defaults", "usr/bin/resolveip"),
    ),
}
ERRMSG_FILE = "english/errmsg.sys"  # under the share dir
PACKAGES_HINT = {
    "mysql": "mysql-server-core",
    "mariadb": "mariadb-server-core and mariadb-client-core (my_print_defaults)",
}


def fetch(
    entry: Entry, cache_dir: Path | None = None, progress: Callable[[str], None] | None = None
) -> Install:
    """Build the chroot for ``entry`` (or reuse the cached one) and describe its server."""
    chroot = _check_entry(entry)
    report = progress or cache.no_progress
    root = cache.cache_dir(cache_dir)
    pins = [f"{p.spec}@{p.sha256}" for p in chroot.packages]
    key = cache.entry_key(entry.id, [chroot.suite, chroot.mirror, *pins])
    tree, built = cache.ensure_tree(root, key, partial(_build, entry, report), report)
    if not built:
        report(f"using cached {entry.id} in {tree}")
    return describe(entry, tree)


def describe(entry: Entry, tree: Path) -> Install:
    """The `Install` for a built chroot; `FetchError` if the tree is not one."""
    chroot = _check_entry(entry)
    layout = LAYOUTS[entry.product]
    wanted = [layout.server, f"{layout.share_dir}/{ERRMSG_FILE}", _wrapper(layout.server)]
    wanted += [layout.install_db] if layout.install_db else []
    wanted += [_wrapper(helper) for helper in layout.helpers]
    for relative in (*wanted, METADATA_FILE):
        if not (tree / relative).is_file():
            raise FetchError(
                f"{entry.id!r}: the chroot {tree} has no {relative}; delete that directory "
                "and fetch again"
            )
    try:
        meta = json.loads((tree / METADATA_FILE).read_text(encoding="utf-8"))
        version = str(meta["server_version"])
    except (ValueError, KeyError, TypeError):
        raise FetchError(
            f"{entry.id!r}: {tree / METADATA_FILE} is damaged; delete {tree} and fetch again"
        ) from None
    _check_version(entry, version)
    server = entry.server_package
    return Install(
        server_id=entry.id,
        product=entry.product,
        version=version,
        provider=NAME,
        basedir=tree / BASEDIR,
        mysqld=tree / _wrapper(layout.server),
        share_dir=tree / layout.share_dir,
        install_db=tree / layout.install_db if layout.install_db else None,
        lib_dirs=(),
        source_sha256=server.sha256 if server else None,
        stand_in=entry.stand_in,
        extra={
            "packages": " ".join(p.spec for p in chroot.packages),
            "suite": chroot.suite,
            "chroot": str(tree),
        },
        server_options={
            "plugin-dir": str(tree / layout.plugin_dir),
            "character-sets-dir": str(tree / layout.charsets_dir),
        },
    )


def binary_version(program: Path) -> tuple[str, str]:
    """(MAJOR.MINOR.PATCH, the line from ``Ver`` on) of ``program --version``."""
    try:
        done = subprocess.run(
            [str(program), "--version"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchError(f"cannot run {program.name} --version from the chroot: {exc}") from None
    line = (done.stdout.strip().splitlines() or [""])[0]
    m = VERSION_RE.search(line)
    if done.returncode != 0 or not m:
        reason = (done.stderr.strip().splitlines() or [line or "no output"])[-1]
        raise FetchError(f"{program.name} from the chroot does not run: {reason}")
    return m.group(1), f"{program.name} {line[m.start() :]}"  # without the build's path


def _wrapper(program: str) -> str:
    """The wrapper of chroot program ``usr/X/NAME``: ``perftrack-run/usr/X/NAME``."""
    return f"{RUN_DIR}/{program}"


def _check_entry(entry: Entry) -> DebianChroot:
    if entry.chroot is None:
        raise ConfigError(f"server {entry.id!r} has no 'chroot' for the {NAME} provider")
    if entry.product not in LAYOUTS:
        raise ConfigError(
            f"server {entry.id!r}: the {NAME} provider knows the Debian packaging of "
            f"{' and '.join(LAYOUTS)}, not {entry.product}"
        )
    return entry.chroot


def _check_version(entry: Entry, version: str) -> None:
    """The binary must report exactly the catalog's version (the pins make it so)."""
    if version != entry.version:
        raise ConfigError(
            f"{entry.id!r}: the chroot's server reports {version}, but configs/versions.yaml "
            f"says {entry.version}: correct the entry's version (the version rules depend on it)"
        )


def _loader() -> tuple[str, str]:
    machine = platform.machine()
    if machine not in LOADERS:
        raise FetchError(
            f"the {NAME} provider knows the dynamic loader of {', '.join(LOADERS)}, not {machine}"
        )
    return LOADERS[machine]


def _build(entry: Entry, progress: cache.Progress, tree: Path, scratch: Path) -> None:
    chroot = _check_entry(entry)
    if os.geteuid() != 0:
        raise FetchError(
            f"building the {chroot.suite} chroot needs root (debootstrap, chroot, mount "
            "namespaces); run perftrack as root or use the docker or tarball provider"
        )
    debootstrap = cache.find_tool(
        "debootstrap", "apt-get install debootstrap (scripts/setup-system.sh installs it)"
    )
    unshare = cache.find_tool("unshare", "apt-get install util-linux")
    chroot_bin = cache.find_tool("chroot", "apt-get install coreutils")
    hint = MIRROR_HINT.format(mirror=chroot.mirror)
    progress(f"reading Debian {chroot.suite}'s package index for {entry.id}")
    index = SuiteIndex(chroot.suite, chroot.mirror, scratch / "apt")
    index.update()
    debs = []
    for package in chroot.packages:
        progress(f"downloading {package.name} {package.version} (checked against its sha256)")
        debs.append(index.download(package, entry.id))
    progress(f"building a Debian {chroot.suite} chroot for {entry.id} (debootstrap, ~1 min)")
    bootstrap = [debootstrap, "--variant=minbase", chroot.suite, str(tree), chroot.mirror]
    cache.run_tool(
        [unshare, *NAMESPACE_ARGS, *bootstrap],
        cwd=scratch,
        timeout_s=DEBOOTSTRAP_TIMEOUT_S,
        failure_hint=hint,
    )
    policy = tree / POLICY_RC_D
    policy.write_text(POLICY_RC_D_TEXT, encoding="ascii")
    policy.chmod(0o755)
    (tree / DEBS_DIR).mkdir()
    for deb in debs:
        shutil.copyfile(deb, tree / DEBS_DIR / deb.name)
    names = ", ".join(package.spec for package in chroot.packages)
    progress(f"installing {names} in the {chroot.suite} chroot")
    install = [
        chroot_bin,
        str(tree),
        "/bin/sh",
        "-c",
        INSTALL_SCRIPT,
        "sh",
        *(f"/{DEBS_DIR}/{deb.name}" for deb in debs),
    ]
    cache.run_tool(
        [unshare, *NAMESPACE_ARGS, f"--mount-proc={tree / 'proc'}", *install],
        cwd=scratch,
        timeout_s=APT_TIMEOUT_S,
        failure_hint=hint,
    )
    shutil.rmtree(tree / DEBS_DIR)
    installed = _read_installed(entry, tree)
    _write_wrappers(entry, tree)
    _write_metadata(entry, tree, installed)
    describe(entry, tree)  # refuse to mark a tree without a runnable server as complete


def _read_installed(entry: Entry, tree: Path) -> dict[str, str]:
    """Every package installed in the chroot (name → version); the pins must be among them."""
    chroot = _check_entry(entry)
    record_path = tree / INSTALLED_RECORD
    record = record_path.read_text(encoding="utf-8", errors="replace")
    record_path.unlink()
    installed = dict(line.split("=", 1) for line in record.splitlines() if "=" in line)
    for package in chroot.packages:
        found = installed.get(package.name)
        if found != package.version:
            raise FetchError(
                f"{entry.id!r}: the chroot has {package.name} {found or '(none)'} installed, "
                f"not the pinned {package.version}"
            )
    server = LAYOUTS[entry.product].server
    if not (tree / server).is_file():
        raise FetchError(
            f"{entry.id!r}: its packages installed no {server} in the chroot: pin the "
            f"package holding it ({PACKAGES_HINT[entry.product]})"
        )
    return installed


def _write_wrappers(entry: Entry, tree: Path) -> None:
    """The wrappers, loader links and basedir links of ``RUN_DIR`` (see the module doc)."""
    layout = LAYOUTS[entry.product]
    loader, libdir = _loader()
    real_loader = _resolve_inside(tree, loader)
    for program in (layout.server, *layout.helpers):
        if not (tree / program).is_file():
            raise FetchError(
                f"{entry.id!r}: its packages installed no {program} in the chroot: pin the "
                f"packages holding it ({PACKAGES_HINT[entry.product]})"
            )
        name = PurePosixPath(program).name
        link = tree / LOADER_LINKS / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(tree / real_loader, link.parent))
        wrapper = tree / _wrapper(program)
        wrapper.parent.mkdir(parents=True, exist_ok=True)
        wrapper.write_text(
            WRAPPER_TEXT.format(
                program=program, loader_link=f"{LOADER_LINKS}/{name}", libdir=libdir
            ),
            encoding="ascii",
        )
        wrapper.chmod(0o755)
    for shared in ("share", "lib"):
        (tree / BASEDIR / shared).symlink_to(f"../../usr/{shared}")


def _resolve_inside(tree: Path, relative: str) -> str:
    """``relative``'s real path inside ``tree``, following symlinks as the chroot would
    (an absolute target means the tree's root, not the host's)."""
    parts, done, hops = list(PurePosixPath(relative).parts), [], 0
    while parts:
        part = parts.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if done:
                done.pop()
            continue
        path = tree.joinpath(*done, part)
        if not path.is_symlink():
            done.append(part)
            continue
        hops += 1
        if hops > 40:
            raise FetchError(f"{relative} in the chroot {tree} is a symlink loop")
        target = PurePosixPath(os.readlink(path))
        if target.is_absolute():
            done = []
        parts = [*target.parts[1:], *parts] if target.is_absolute() else [*target.parts, *parts]
    if not tree.joinpath(*done).is_file():
        raise FetchError(f"the chroot {tree} has no {relative} (its dynamic loader)")
    return "/".join(done)


def _write_metadata(entry: Entry, tree: Path, installed: dict[str, str]) -> None:
    chroot = _check_entry(entry)
    version, line = binary_version(tree / _wrapper(LAYOUTS[entry.product].server))
    meta = {
        "packages": [
            {"name": p.name, "version": p.version, "sha256": p.sha256} for p in chroot.packages
        ],
        "server_version": version,
        "version_line": line,
        "suite": chroot.suite,
        "mirror": chroot.mirror,
        "installed": [f"{name}={installed[name]}" for name in sorted(installed)],
    }
    (tree / METADATA_FILE).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
