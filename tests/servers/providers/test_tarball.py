"""tarball provider: real downloads over HTTP from a local server on 127.0.0.1 standing in
for dev.mysql.com / downloads.mysql.com (unreachable from here), real archives built by the
test, real checksum checks and extraction into a private cache.

The small archives are synthetic (a shell-script "mysqld" that prints a version); one
integration test packs a real MariaDB server (the debian provider's 10.11.19 tree) as a
generic tarball and starts it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import re
import tarfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from perftrack.core.errors import ConfigError, FetchError
from perftrack.run.server import Server
from perftrack.servers import cache, catalog, providers
from perftrack.servers.catalog import Entry, Tarball
from perftrack.servers.providers import tarball
from replay import LocalFiles, serve_files

REPO = Path(__file__).resolve().parents[3]
VERSION = "8.4.3"
TOP = f"mysql-{VERSION}-linux-glibc2.28-x86_64"
FILE = f"{TOP}.tar.xz"
CURRENT_PATH = f"/get/Downloads/MySQL-8.4/{FILE}"
ARCHIVE_PATH = f"/archives/get/p/23/file/{FILE}"
FAKE_MYSQLD = (
    '#!/bin/sh\necho "$0  Ver {version} for Linux on x86_64 (MySQL Community Server - GPL)"\n'
)


# --- a local HTTP server -------------------------------------------------------------------


@pytest.fixture
def http_server() -> Iterator[LocalFiles]:
    """An HTTP server on 127.0.0.1 serving `files` (path -> bytes); 404 for anything else."""
    with serve_files() as server:
        yield server


# --- archives ------------------------------------------------------------------------------


def add(tf: tarfile.TarFile, name: str, data: bytes = b"", mode: int = 0o644, **kw) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    for key, value in kw.items():
        setattr(info, key, value)
    tf.addfile(info, io.BytesIO(data) if data else None)


def server_archive(version: str = VERSION, mode: str = "w:xz", extra=None) -> bytes:
    """A synthetic generic tarball: one top-level dir with bin/mysqld, share, lib/private."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        add(tf, f"{TOP}/", type=tarfile.DIRTYPE, mode=0o755)
        add(tf, f"{TOP}/bin/mysqld", FAKE_MYSQLD.format(version=version).encode(), 0o755)
        add(tf, f"{TOP}/share/english/errmsg.sys", b"messages")
        add(tf, f"{TOP}/lib/private/libprotobuf-lite.so.3.19.4", b"so")
        add(tf, f"{TOP}/lib/private/libprotobuf-lite.so", type=tarfile.SYMTYPE,
            linkname="libprotobuf-lite.so.3.19.4")  # fmt: skip
        for member in extra or ():
            add(tf, **member)
    return buf.getvalue()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entry(data: bytes | None, url: str | None = None, **changes) -> Entry:
    base = Entry(
        id=f"mysql-{VERSION}-tarball",
        product="mysql",
        version=VERSION,
        provider="tarball",
        tarball=Tarball(url=url, sha256=sha(data) if data is not None else None),
    )
    return dataclasses.replace(base, **changes)


def no_leftovers(root: Path) -> None:
    assert list(root.glob("tmp-*")) == [], "a scratch directory was left in the cache"
    servers = root / cache.SERVERS_DIR
    assert not servers.exists() or list(servers.iterdir()) == [], "a tree was left"


@pytest.fixture
def mirror(http_server: LocalFiles, monkeypatch) -> LocalFiles:
    monkeypatch.setenv(tarball.ENV_MIRROR, http_server.url)
    return http_server


# --- URLs ----------------------------------------------------------------------------------


def test_official_urls_current_then_archive(monkeypatch) -> None:
    monkeypatch.delenv(tarball.ENV_MIRROR, raising=False)
    assert tarball.candidate_urls(entry(b"x")) == [
        f"https://dev.mysql.com/get/Downloads/MySQL-8.4/{FILE}",
        f"https://downloads.mysql.com/archives/get/p/23/file/{FILE}",
    ]
    old = entry(b"x", version="5.7.44")
    assert tarball.candidate_urls(old)[0] == (
        "https://dev.mysql.com/get/Downloads/MySQL-5.7/mysql-5.7.44-linux-glibc2.12-x86_64.tar.gz"
    )
    own = "https://example.org/m/mysql-8.4.3-linux-glibc2.28-x86_64.tar.xz"
    assert tarball.candidate_urls(entry(b"x", url=own)) == [own]


def test_mariadb_without_url_is_a_config_error(monkeypatch) -> None:
    with pytest.raises(ConfigError, match=r"give tarball\.url"):
        tarball.candidate_urls(entry(b"x", product="mariadb", version="11.4.5"))


# --- catalog -------------------------------------------------------------------------------


def load_one(tmp_path: Path, body: str) -> catalog.Catalog:
    path = tmp_path / "versions.yaml"
    head = "servers:\n  - id: mysql-8.4.3-tarball\n    product: mysql\n    version: 8.4.3\n"
    path.write_text(head + "    provider: tarball\n" + textwrap.indent(body, "    "))
    return catalog.read_catalog(path)


def test_catalog_tarball_sha256_may_be_explicitly_unpinned(tmp_path: Path) -> None:
    e = load_one(tmp_path, "tarball: {sha256: unpinned}\n").get("mysql-8.4.3-tarball")
    assert e.tarball == Tarball(url=None, sha256=None)
    assert e.unpinned and "not yet pinned" in (e.skip_reason() or "")


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        ("tarball: {url: 'ftp://x/mysql-8.4.3-a.tar.xz', sha256: unpinned}\n", "bad tarball url"),
        ("tarball: {url: 'https://x/mysql-8.4.3-a.zip', sha256: unpinned}\n", "bad tarball url"),
        ("tarball: {url: 'https://x/mysql-8.4.2-a.tar.xz', sha256: unpinned}\n", "the tarball is"),
        # neither a pin nor the explicit marker
        ("tarball: {sha256: null}\n", "needs 'sha256: <64 hex>' or, until a runner pins it"),
        ("tarball: {sha256: abc}\n", "bad sha256"),
        ("tarball: {url: 'https://x/mysql-8.4.3-a.tar.xz'}\n", "missing the required key"),
        ("tarball: {sha256: unpinned, md5: x}\n", "unknown key 'md5'"),
    ],
)
def test_catalog_tarball_section_is_validated(tmp_path: Path, body: str, complaint: str) -> None:
    with pytest.raises(ConfigError, match=complaint) as info:
        load_one(tmp_path, body)
    assert "\n" not in str(info.value)


def test_real_catalog_tarball_entries_wait_for_their_checksum(tmp_path: Path) -> None:
    cat = catalog.read_catalog(REPO / "configs" / "versions.yaml")
    entries = [e for e in cat if e.provider == "tarball"]
    assert {e.version.split(".")[0] for e in entries} >= {"8", "9"}
    for e in entries:
        assert e.unpinned
        with pytest.raises(
            ConfigError, match=r"is not yet pinned \(run `perftrack servers pin"
        ) as info:
            providers.fetch(e, cache_dir=tmp_path / "cache")
        assert "\n" not in str(info.value)
    no_leftovers(tmp_path / "cache")


# --- fetching from the local HTTP server ---------------------------------------------------


def test_fetch_from_local_http_server_falls_back_to_the_archive(mirror, tmp_path: Path) -> None:
    data = server_archive()
    mirror.files[ARCHIVE_PATH] = data  # not under "current" any more: archived
    messages: list[str] = []
    install = providers.fetch(entry(data), cache_dir=tmp_path / "cache", progress=messages.append)
    assert mirror.requests == [CURRENT_PATH, ARCHIVE_PATH]
    assert install.basedir.name == TOP
    assert install.mysqld == install.basedir / "bin" / "mysqld"
    assert install.share_dir == install.basedir / "share"
    assert install.lib_dirs == (install.basedir / "lib" / "private",)
    assert install.source_sha256 == sha(data)
    assert install.version == VERSION
    assert (install.basedir / "lib/private/libprotobuf-lite.so").is_symlink()
    assert os.access(install.mysqld, os.X_OK)
    assert cache.is_complete(install.basedir.parent)
    assert f"extracting {FILE}" in messages
    assert not list(install.basedir.parent.glob("*.tar.xz")), "the download was not kept"
    assert list((tmp_path / "cache").glob("tmp-*")) == []


def test_second_fetch_from_local_http_server_downloads_nothing(mirror, tmp_path: Path) -> None:
    data = server_archive()
    mirror.files[CURRENT_PATH] = data
    first = tarball.fetch(entry(data), cache_dir=tmp_path / "cache")
    assert mirror.requests == [CURRENT_PATH]
    messages: list[str] = []
    again = tarball.fetch(entry(data), cache_dir=tmp_path / "cache", progress=messages.append)
    assert again == first
    assert mirror.requests == [CURRENT_PATH]
    assert messages == [f"using cached mysql-{VERSION}-tarball in {first.basedir.parent}"]


def test_entry_url_from_local_http_server(http_server, tmp_path: Path) -> None:
    data = server_archive(mode="w:gz")
    http_server.files[f"/m/{TOP}.tar.gz"] = data
    install = tarball.fetch(
        entry(data, url=f"{http_server.url}/m/{TOP}.tar.gz"), cache_dir=tmp_path / "cache"
    )
    assert http_server.requests == [f"/m/{TOP}.tar.gz"]
    assert install.extra["archive"] == f"{TOP}.tar.gz"


def test_wrong_checksum_from_local_http_server_extracts_nothing(mirror, tmp_path: Path) -> None:
    data = server_archive()
    mirror.files[CURRENT_PATH] = data
    bad = entry(data)
    bad = dataclasses.replace(bad, tarball=Tarball(url=None, sha256="0" * 64))
    with pytest.raises(FetchError) as info:
        tarball.fetch(bad, cache_dir=tmp_path / "cache")
    message = str(info.value)
    assert message.startswith(f"checksum mismatch for mysql-{VERSION}-tarball ({FILE})")
    assert f"got {sha(data)}" in message
    no_leftovers(tmp_path / "cache")


def test_entry_without_checksum_downloads_nothing(mirror, tmp_path: Path) -> None:
    mirror.files[CURRENT_PATH] = server_archive()
    with pytest.raises(ConfigError, match=r"the tarball is not yet pinned"):
        tarball.fetch(entry(None), cache_dir=tmp_path / "cache")
    assert mirror.requests == []


def test_missing_everywhere_on_local_http_server_names_both_urls(mirror, tmp_path) -> None:
    with pytest.raises(FetchError) as info:
        tarball.fetch(entry(b"x"), cache_dir=tmp_path / "cache")
    message = str(info.value)
    assert f"{mirror.url}{CURRENT_PATH} or {mirror.url}{ARCHIVE_PATH} (HTTP 404)" in message
    no_leftovers(tmp_path / "cache")


def test_unreachable_server_is_a_one_line_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(tarball.ENV_MIRROR, "http://127.0.0.1:9")  # discard port: refused
    with pytest.raises(FetchError, match=r"cannot download http://127\.0\.0\.1:9/get/") as info:
        tarball.fetch(entry(b"x"), cache_dir=tmp_path / "cache")
    assert "\n" not in str(info.value)
    no_leftovers(tmp_path / "cache")


def test_binary_of_another_version_is_refused(mirror, tmp_path: Path) -> None:
    data = server_archive(version="8.4.2")
    mirror.files[CURRENT_PATH] = data
    with pytest.raises(FetchError, match=r"is version 8\.4\.2, not 8\.4\.3"):
        tarball.fetch(entry(data), cache_dir=tmp_path / "cache")
    no_leftovers(tmp_path / "cache")


@pytest.mark.parametrize(
    ("member", "complaint"),
    [
        ({"name": f"{TOP}/../../evil", "data": b"x"}, "contains '..'"),
        ({"name": "/etc/evil", "data": b"x"}, "refusing absolute member"),
        (
            {"name": f"{TOP}/share/up", "type": tarfile.SYMTYPE, "linkname": "../../../../etc"},
            "points outside the extraction directory",
        ),
        (
            {"name": f"{TOP}/share/abs", "type": tarfile.SYMTYPE, "linkname": "/etc/passwd"},
            "points outside the extraction directory",
        ),
        (
            {"name": f"{TOP}/share/hard", "type": tarfile.LNKTYPE, "linkname": "../../etc/x"},
            "contains '..'",
        ),
        ({"name": f"{TOP}/fifo", "type": tarfile.FIFOTYPE}, "devices and FIFOs"),
        ({"name": f"{TOP}/dev", "type": tarfile.CHRTYPE}, "devices and FIFOs"),
    ],
)
def test_escaping_members_are_refused_and_nothing_is_left(
    mirror, tmp_path: Path, member: dict, complaint: str
) -> None:
    data = server_archive(extra=[member])  # the checksum matches: only extraction can refuse
    mirror.files[CURRENT_PATH] = data
    with pytest.raises(FetchError, match=complaint) as info:
        tarball.fetch(entry(data), cache_dir=tmp_path / "cache")
    assert "\n" not in str(info.value)
    no_leftovers(tmp_path / "cache")
    assert not (tmp_path / "evil").exists()


def test_symlinks_inside_the_tree_are_kept_and_followed(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        add(tf, "top/", type=tarfile.DIRTYPE, mode=0o755)
        add(tf, "top/sub/", type=tarfile.DIRTYPE, mode=0o755)
        add(tf, "top/link", type=tarfile.SYMTYPE, linkname="sub")
        add(tf, "top/link/x", b"x")
    archive = tmp_path / "a.tar"
    archive.write_bytes(buf.getvalue())
    cache.safe_extract_tar(archive, tmp_path / "dest")
    assert (tmp_path / "dest/top/link").is_symlink()
    assert (tmp_path / "dest/top/sub/x").read_bytes() == b"x"


@pytest.mark.parametrize("damage", ["truncated", "not an archive"])
def test_damaged_archive_is_a_one_line_error(mirror, tmp_path: Path, damage: str) -> None:
    good = server_archive()
    data = good[: len(good) // 2] if damage == "truncated" else b"<html>sign in</html>"
    mirror.files[CURRENT_PATH] = data
    with pytest.raises(
        FetchError, match=re.escape(f"{FILE} is damaged or not a tar archive")
    ) as info:
        tarball.fetch(entry(data), cache_dir=tmp_path / "cache")
    assert "\n" not in str(info.value)
    no_leftovers(tmp_path / "cache")


def test_archive_without_a_server_is_refused(mirror, tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz") as tf:
        add(tf, f"{TOP}/docs/README", b"readme")
    data = buf.getvalue()
    mirror.files[CURRENT_PATH] = data
    with pytest.raises(FetchError, match="has no server binary"):
        tarball.fetch(entry(data), cache_dir=tmp_path / "cache")
    no_leftovers(tmp_path / "cache")


# --- a real server packed as a generic tarball ---------------------------------------------


@pytest.mark.integration
def test_real_mariadb_tarball_from_local_http_server_starts(
    http_server, tmp_path: Path, workroot: Path
) -> None:
    cat = catalog.read_catalog(REPO / "configs" / "versions.yaml")
    debian_tree = providers.fetch(cat.get("mariadb-10.11.19")).basedir  # .../usr
    top = "mariadb-10.11.19-linux-x86_64"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tf:
        tf.add(debian_tree, arcname=top)
    data = buf.getvalue()
    http_server.files[f"/{top}.tar.gz"] = data
    e = Entry(
        id="mariadb-10.11.19-tarball",
        product="mariadb",
        version="10.11.19",
        provider="tarball",
        tarball=Tarball(url=f"{http_server.url}/{top}.tar.gz", sha256=sha(data)),
    )
    install = providers.fetch(e, cache_dir=tmp_path / "cache")
    assert install.mysqld.resolve().name == "mariadbd"  # sbin/mysqld -> mariadbd
    assert install.install_db is not None
    with Server(install=install, options={}, workroot=workroot) as srv:
        assert srv.version_string.startswith("10.11.19-MariaDB")
