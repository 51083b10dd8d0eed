"""path provider (an existing basedir) and the provider registry."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from perftrack.core.errors import ConfigError
from perftrack.servers import catalog, providers
from perftrack.servers.catalog import Entry
from perftrack.servers.providers import path as path_provider

REPO = Path(__file__).resolve().parents[3]


def path_entry(basedir: Path) -> Entry:
    return Entry(
        id="local-8.4.3",
        product="mysql",
        version="8.4.3",
        provider="path",
        basedir=basedir,
        stand_in="a build of my own",
    )


def make_basedir(root: Path, files: list[str]) -> Path:
    for relative in files:
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x")
    return root


def test_tarball_like_basedir(tmp_path: Path) -> None:
    base = make_basedir(
        tmp_path / "mysql",
        ["bin/mysqld", "share/english/errmsg.sys", "lib/private/libprotobuf.so.3"],
    )
    messages: list[str] = []
    install = providers.fetch(path_entry(base), progress=messages.append)
    assert install.basedir == base
    assert install.mysqld == base / "bin" / "mysqld"
    assert install.share_dir == base / "share"
    assert install.install_db is None  # MySQL 5.7+ initialises with mysqld itself
    assert install.lib_dirs == (base / "lib" / "private",)
    assert (install.provider, install.version, install.stand_in) == (
        "path",
        "8.4.3",
        "a build of my own",
    )
    assert install.source_sha256 is None
    assert messages == [f"using local-8.4.3 from {base}"]


def test_nothing_is_copied_into_the_cache(tmp_path: Path) -> None:
    base = make_basedir(tmp_path / "b", ["sbin/mariadbd", "share/mysql/english/errmsg.sys"])
    install = path_provider.fetch(path_entry(base), cache_dir=tmp_path / "cache")
    assert install.mysqld == base / "sbin" / "mariadbd"
    assert install.share_dir == base / "share" / "mysql"
    assert not (tmp_path / "cache").exists()


def test_missing_server_binary_names_what_was_looked_for(tmp_path: Path) -> None:
    base = make_basedir(tmp_path / "b", ["bin/mysql", "share/english/errmsg.sys"])
    with pytest.raises(ConfigError) as info:
        path_provider.fetch(path_entry(base))
    message = str(info.value)
    assert f"no server binary in basedir {base}" in message
    assert "bin/mysqld, sbin/mysqld, bin/mariadbd, sbin/mariadbd" in message


def test_missing_error_messages(tmp_path: Path) -> None:
    base = make_basedir(tmp_path / "b", ["bin/mysqld"])
    with pytest.raises(
        ConfigError, match=re.escape("share/mysql/english/errmsg.sys, share/english")
    ):
        path_provider.fetch(path_entry(base))


def test_missing_basedir(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=re.escape("is not a directory; fix it in configs/versions.yaml")
    ):
        path_provider.fetch(path_entry(tmp_path / "nope"))


def test_entry_without_basedir(tmp_path: Path) -> None:
    entry = dataclasses.replace(path_entry(tmp_path), basedir=None)
    with pytest.raises(ConfigError, match="has no 'basedir'"):
        path_provider.fetch(entry)


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("apt-get") is None, reason="needs apt-get (a Debian host)")
def test_path_provider_on_the_extracted_debian_tree(tmp_path_factory) -> None:
    cache_root = tmp_path_factory.mktemp("path-provider-cache")
    real = catalog.read_catalog(REPO / "configs" / "versions.yaml").get("mariadb-10.11.18")
    fetched = providers.fetch(real, cache_dir=cache_root)
    entry = dataclasses.replace(
        path_entry(fetched.basedir), id="local-10.11.18", product="mariadb", version="10.11.18"
    )
    install = providers.fetch(entry)
    assert install.basedir == fetched.basedir
    assert install.mysqld == fetched.basedir / "sbin" / "mysqld"  # -> mariadbd
    assert install.install_db == fetched.install_db
    assert install.share_dir == fetched.share_dir
    assert install.lib_dirs == fetched.lib_dirs
    done = subprocess.run(
        [str(install.mysqld), "--version"],
        env=install.env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "Ver 10.11.18-MariaDB" in done.stdout


# --- the registry -------------------------------------------------------------------------


def test_registry_matches_the_catalog_providers() -> None:
    assert providers.known_providers() == tuple(sorted(catalog.PROVIDER_SECTIONS))
    assert providers.get_provider("path") is path_provider.fetch


def test_unknown_provider_lists_the_known_ones(tmp_path: Path) -> None:
    known = "debian, debian-chroot, docker, maven, path, tarball"
    with pytest.raises(ConfigError, match=f"unknown provider 'podman'; known: {known}"):
        providers.get_provider("podman")
    entry = dataclasses.replace(path_entry(tmp_path), provider="podman")
    with pytest.raises(ConfigError, match="unknown provider 'podman'"):
        providers.fetch(entry)
