"""debian provider: offline tests with a stand-in apt-get, and real bookworm downloads."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from perftrack.core.errors import ConfigError, FetchError
from perftrack.servers import cache, catalog, providers
from perftrack.servers.catalog import DebianPackage, Entry
from perftrack.servers.providers import debian

REPO = Path(__file__).resolve().parents[3]
SERVER_ID = "mariadb-10.11.18"
HAVE_APT = shutil.which("apt-get") is not None and shutil.which("dpkg") is not None
needs_apt = pytest.mark.skipif(not HAVE_APT, reason="needs apt-get and dpkg (a Debian host)")

# A stand-in for `apt-get download NAME=VERSION`: copies $FAKE_DEBS/NAME.deb into the cwd
# and logs its arguments, one call per line.
FAKE_APT_GET = """#!/bin/sh
echo "$*" >> "$FAKE_LOG"
[ "$1" = download ] || exit 64
name="${2%%=*}"
if [ ! -f "$FAKE_DEBS/$name.deb" ]; then
  echo "E: Version '${2#*=}' for '$name' was not found" >&2
  exit 100
fi
cp "$FAKE_DEBS/$name.deb" "./${name}_fake_amd64.deb"
"""


def real_entry() -> Entry:
    return catalog.read_catalog(REPO / "configs" / "versions.yaml").get(SERVER_ID)


def progress_log() -> tuple[list[str], providers.Progress]:
    messages: list[str] = []
    return messages, messages.append


def no_leftovers(root: Path) -> None:
    assert list(root.glob("tmp-*")) == [], "a scratch directory was left in the cache"
    servers = root / cache.SERVERS_DIR
    assert not servers.exists() or list(servers.iterdir()) == [], "a tree was left"


# --- offline: a fake apt-get serving .debs built here ------------------------------------


def build_deb(workdir: Path, name: str, files: dict[str, str], modes: dict[str, int]) -> Path:
    root = workdir / f"{name}-root"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: 1.0.1-1\nArchitecture: all\n"
        "Maintainer: t <t@example.org>\nDescription: test\n"
    )
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(modes.get(relative, 0o644))
    deb = workdir / f"{name}.deb"
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "--build", str(root), str(deb)],
        check=True,
        capture_output=True,
    )
    return deb


@pytest.fixture
def fake_apt(tmp_path: Path, monkeypatch) -> dict[str, Path]:
    """Fake .debs of a tiny server, served by a fake apt-get first on PATH."""
    if shutil.which("dpkg-deb") is None:
        pytest.skip("needs dpkg-deb")
    debs_dir = tmp_path / "debs"
    debs_dir.mkdir()
    server = build_deb(
        debs_dir,
        "fake-server-core",
        {
            "usr/sbin/mariadbd": "#!/bin/sh\necho 'mariadbd  Ver 1.0.1-fake'\n",
            "usr/bin/mariadb-install-db": "#!/bin/sh\n",
            "usr/share/mysql/english/errmsg.sys": "msgs",
        },
        {"usr/sbin/mariadbd": 0o755, "usr/bin/mariadb-install-db": 0o755},
    )
    lib = build_deb(debs_dir, "fake-lib", {"usr/lib/x86_64-linux-gnu/libfake.so.1": "so"}, {})
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    apt_get = bin_dir / "apt-get"
    apt_get.write_text(FAKE_APT_GET)
    apt_get.chmod(0o755)
    log = tmp_path / "apt.log"
    log.touch()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_DEBS", str(debs_dir))
    monkeypatch.setenv("FAKE_LOG", str(log))
    return {"server": server, "lib": lib, "log": log}


def fake_entry(server_deb: Path, lib_deb: Path, **changes: str) -> Entry:
    packages = (
        DebianPackage("fake-server-core", "1:1.0.1-1", cache.sha256_file(server_deb)),
        DebianPackage("fake-lib", "1.0.1-1", changes.pop("lib_sha", cache.sha256_file(lib_deb))),
    )
    return Entry(
        id="fake-1.0.1",
        product="mariadb",
        version="1.0.1",
        provider="debian",
        packages=packages,
        stand_in="a test",
    )


def test_fetch_with_fake_apt_builds_the_install(tmp_path: Path, fake_apt) -> None:
    entry = fake_entry(fake_apt["server"], fake_apt["lib"])
    messages, progress = progress_log()
    install = providers.fetch(entry, cache_dir=tmp_path / "cache", progress=progress)
    tree = install.basedir.parent
    assert install.basedir == tree / "usr"
    assert install.mysqld == tree / "usr" / "sbin" / "mariadbd"
    assert install.install_db == tree / "usr" / "bin" / "mariadb-install-db"
    assert install.share_dir == tree / "usr" / "share" / "mysql"
    assert install.lib_dirs == (tree / "usr" / "lib" / "x86_64-linux-gnu",)
    assert install.source_sha256 == entry.packages[0].sha256
    assert (install.server_id, install.version, install.provider) == (
        "fake-1.0.1",
        "1.0.1",
        "debian",
    )
    assert install.stand_in == "a test"
    assert "downloading fake-server-core 1:1.0.1-1" in messages
    assert fake_apt["log"].read_text().splitlines() == [
        "download fake-server-core=1:1.0.1-1",
        "download fake-lib=1.0.1-1",
    ]
    assert cache.is_complete(tree)
    assert list((tmp_path / "cache").glob("tmp-*")) == []


def test_second_fetch_does_not_call_apt(tmp_path: Path, fake_apt, monkeypatch) -> None:
    entry = fake_entry(fake_apt["server"], fake_apt["lib"])
    first = debian.fetch(entry, cache_dir=tmp_path / "cache")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no apt-get, no dpkg
    messages, progress = progress_log()
    second = debian.fetch(entry, cache_dir=tmp_path / "cache", progress=progress)
    assert second == first
    assert len(fake_apt["log"].read_text().splitlines()) == 2
    assert messages == [f"using cached fake-1.0.1 in {first.basedir.parent}"]


def test_checksum_mismatch_extracts_nothing(tmp_path: Path, fake_apt) -> None:
    entry = fake_entry(fake_apt["server"], fake_apt["lib"], lib_sha="0" * 64)
    with pytest.raises(FetchError, match=re.escape("checksum mismatch for fake-lib 1.0.1-1")):
        debian.fetch(entry, cache_dir=tmp_path / "cache")
    no_leftovers(tmp_path / "cache")


def test_unknown_version_says_to_update_apt(tmp_path: Path, fake_apt) -> None:
    entry = fake_entry(fake_apt["server"], fake_apt["lib"])
    missing = dataclasses.replace(entry.packages[1], name="fake-missing")
    entry = dataclasses.replace(entry, packages=(entry.packages[0], missing))
    with pytest.raises(FetchError) as info:
        debian.fetch(entry, cache_dir=tmp_path / "cache")
    message = str(info.value)
    assert "`apt-get download fake-missing=1.0.1-1` failed: E: Version" in message
    assert "run `apt-get update`" in message
    no_leftovers(tmp_path / "cache")


def test_packages_without_a_server_are_refused(tmp_path: Path, fake_apt) -> None:
    entry = fake_entry(fake_apt["server"], fake_apt["lib"])
    entry = dataclasses.replace(entry, packages=entry.packages[1:])
    with pytest.raises(FetchError, match=r"has no usr/share/mysql/english/errmsg.sys"):
        debian.fetch(entry, cache_dir=tmp_path / "cache")
    no_leftovers(tmp_path / "cache")


def test_missing_apt_get(tmp_path: Path, monkeypatch) -> None:
    entry = real_entry()
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FetchError, match="apt-get not found on PATH"):
        debian.fetch(entry, cache_dir=tmp_path / "cache")
    no_leftovers(tmp_path / "cache")


def test_entry_without_packages_is_a_config_error(tmp_path: Path) -> None:
    entry = dataclasses.replace(real_entry(), packages=())
    with pytest.raises(ConfigError, match="has no 'packages'"):
        debian.fetch(entry, cache_dir=tmp_path)


# --- real downloads from Debian -----------------------------------------------------------


@pytest.fixture(scope="module")
def real_fetch(tmp_path_factory) -> tuple[Path, list[str], object]:
    """mariadb-10.11.18 fetched once into a fresh cache: (cache, progress messages, install)."""
    if not HAVE_APT:
        pytest.skip("needs apt-get and dpkg (a Debian host)")
    root = tmp_path_factory.mktemp("debian-cache")
    messages: list[str] = []
    install = providers.fetch(real_entry(), cache_dir=root, progress=messages.append)
    return root, messages, install


@pytest.mark.integration
def test_real_fetch_runs_mariadbd(real_fetch) -> None:
    root, messages, install = real_fetch
    assert "downloading mariadb-server-core 1:10.11.18-0+deb12u1" in messages
    assert install.mysqld.name == "mariadbd"
    assert install.install_db is not None and install.install_db.name == "mariadb-install-db"
    assert (install.share_dir / "english" / "errmsg.sys").is_file()
    assert (install.lib_dirs[0] / "liburing.so.2").exists()
    assert (install.basedir / "bin" / "my_print_defaults").is_file()  # used by install-db
    assert install.source_sha256 == real_entry().server_package.sha256
    done = subprocess.run(
        [str(install.mysqld), "--version"],
        env=install.env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "Ver 10.11.18-MariaDB" in done.stdout
    assert list(root.glob("tmp-*")) == []


@pytest.mark.integration
def test_real_second_fetch_reuses_the_cache(real_fetch, monkeypatch, tmp_path: Path) -> None:
    root, _, install = real_fetch
    tree = install.basedir.parent
    before = (tree.stat().st_ino, tree.stat().st_mtime_ns, install.mysqld.stat().st_ino)
    monkeypatch.setenv("PATH", str(tmp_path))  # apt-get cannot even be found now
    messages, progress = progress_log()
    again = providers.fetch(real_entry(), cache_dir=root, progress=progress)
    assert again == install
    assert (tree.stat().st_ino, tree.stat().st_mtime_ns, again.mysqld.stat().st_ino) == before
    assert not any(m.startswith("downloading") for m in messages)


@pytest.mark.integration
@needs_apt
def test_real_wrong_checksum_fails_and_leaves_nothing(tmp_path: Path) -> None:
    entry = real_entry()
    bad_lib = dataclasses.replace(entry.packages[-1], sha256="f" * 64)
    entry = dataclasses.replace(entry, packages=(*entry.packages[:-1], bad_lib))
    root = tmp_path / "cache"
    with pytest.raises(FetchError) as info:
        providers.fetch(entry, cache_dir=root)
    assert str(info.value).startswith("checksum mismatch for liburing2 2.3-3: expected ffff")
    no_leftovers(root)


@pytest.mark.integration
@needs_apt
def test_real_unknown_version_says_to_update_apt(tmp_path: Path) -> None:
    entry = real_entry()
    gone = dataclasses.replace(entry.packages[0], version="1:10.11.0-0+deb12u1")
    entry = dataclasses.replace(entry, packages=(gone,))
    with pytest.raises(FetchError, match=r"failed: E: .*run `apt-get update`"):
        providers.fetch(entry, cache_dir=tmp_path / "cache")
    no_leftovers(tmp_path / "cache")
