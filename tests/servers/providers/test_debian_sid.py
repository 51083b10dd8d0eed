"""debian-sid provider: catalog section, refusals, a failing build leaving nothing behind,
and the real sid chroot with Oracle MySQL (built once into the normal cache)."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import re
import shutil
import textwrap
from pathlib import Path

import pytest

import mysql_sid
from perftrack import cli
from perftrack.core.errors import ConfigError, FetchError
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.run.server import Server
from perftrack.servers import cache, catalog, providers, rules
from perftrack.servers.catalog import Entry, SidChroot
from perftrack.servers.providers import debian_sid

IS_ROOT = os.geteuid() == 0
HAVE_UNSHARE = shutil.which("unshare") is not None and shutil.which("chroot") is not None
VERSION_RE = re.compile(r"^\d+\.\d+\.\d+$")

# Stands in for debootstrap when the archive is unreachable: writes part of a tree and
# mounts /proc in it (as a real debootstrap does), then fails the way debootstrap does.
FAILING_DEBOOTSTRAP = """#!/bin/sh
target="$3"
mkdir -p "$target/usr/bin" "$target/var/lib/dpkg" "$target/proc"
echo half > "$target/usr/bin/half-written"
mount -t proc proc "$target/proc"
echo "I: Retrieving InRelease " >&2
echo "E: Failed getting release file $4/dists/$2/Release" >&2
exit 1
"""


def sid_entry(**changes) -> Entry:
    base = Entry(
        id="mysql-sid-test",
        product="mysql",
        version="9.0",
        provider="debian-sid",
        chroot=SidChroot(package="mysql-server-core"),
    )
    return dataclasses.replace(base, **changes)


def no_leftovers(root: Path) -> None:
    assert list(root.glob("tmp-*")) == [], "a scratch directory was left in the cache"
    servers = root / cache.SERVERS_DIR
    assert not servers.exists() or list(servers.iterdir()) == [], "a tree was left"


def fake_tree(tree: Path, version: str) -> Path:
    """The files `describe` looks for, with `version` as the recorded mysqld version."""
    loader, _ = debian_sid.LOADERS[platform.machine()]
    for relative in (debian_sid.SERVER_BINARY, "usr/share/mysql/english/errmsg.sys", loader):
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        (tree / relative).write_text("x")
    meta = {
        "package": "mysql-server-core",
        "package_version": f"{version}-1",
        "deb_sha256": "a" * 64,
        "mysqld_version": version,
        "suite": "sid",
    }
    (tree / debian_sid.METADATA_FILE).write_text(json.dumps(meta))
    return tree


# --- catalog ------------------------------------------------------------------------------


def load_catalog(tmp_path: Path, chroot: str, version: str = '"9.0"') -> catalog.Catalog:
    path = tmp_path / "versions.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        servers:
          - id: mysql-sid
            product: mysql
            version: {version}
            provider: debian-sid
            chroot: {chroot}
        """)
    )
    return catalog.load(path)


def test_catalog_chroot_section_defaults_to_sid_and_deb_debian_org(tmp_path: Path) -> None:
    entry = load_catalog(tmp_path, "{package: mysql-server-core}").get("mysql-sid")
    assert entry.chroot == SidChroot("mysql-server-core", "sid", "http://deb.debian.org/debian")


@pytest.mark.parametrize(
    ("chroot", "complaint"),
    [
        ("{package: 'mysql;rm'}", "bad Debian package name"),
        ("{package: mysql-server-core, suite: 'sid main'}", "bad Debian suite"),
        ("{package: mysql-server-core, mirror: 'ftp://x'}", "bad mirror"),
        ("{package: mysql-server-core, mirrors: x}", "unknown key 'mirrors'"),
        ("{suite: sid}", "missing the required key 'package'"),
    ],
)
def test_catalog_chroot_section_is_validated(tmp_path: Path, chroot: str, complaint: str) -> None:
    with pytest.raises(ConfigError, match=complaint) as info:
        load_catalog(tmp_path, chroot)
    assert "\n" not in str(info.value)


def test_real_catalog_has_mysql_sid() -> None:
    entry = mysql_sid.entry()
    assert (entry.product, entry.provider, entry.chroot.package) == (
        "mysql",
        "debian-sid",
        "mysql-server-core",
    )


# --- refusals and failures (no network) -----------------------------------------------------


def test_entry_without_chroot_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="has no 'chroot'"):
        debian_sid.fetch(sid_entry(chroot=None), cache_dir=tmp_path)


def test_mariadb_is_refused_with_the_providers_to_use(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"Oracle MySQL only .*debian or maven provider"):
        debian_sid.fetch(sid_entry(product="mariadb"), cache_dir=tmp_path)


def test_missing_debootstrap_says_how_to_install_it(tmp_path: Path, monkeypatch) -> None:
    if not IS_ROOT:
        pytest.skip("the build refuses non-root before looking for debootstrap")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(FetchError, match="debootstrap not found on PATH; apt-get install"):
        debian_sid.fetch(sid_entry(), cache_dir=tmp_path / "cache")
    no_leftovers(tmp_path / "cache")


@pytest.mark.skipif(not (IS_ROOT and HAVE_UNSHARE), reason="needs root and unshare/chroot")
def test_chroot_that_cannot_be_built_is_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "debootstrap"
    fake.write_text(FAILING_DEBOOTSTRAP)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    entry = sid_entry(chroot=SidChroot("mysql-server-core", "sid", "http://127.0.0.1:9/debian"))
    with pytest.raises(FetchError) as info:
        debian_sid.fetch(entry, cache_dir=tmp_path / "cache")
    message = str(info.value)
    assert "\n" not in message
    assert "debootstrap --variant=minbase sid" in message
    assert "E: Failed getting release file http://127.0.0.1:9/debian/dists/sid/Release" in message
    assert "check that http://127.0.0.1:9/debian is reachable" in message
    # the /proc it mounted lived in the build's private mount namespace: gone with it
    assert str(tmp_path / "cache") not in Path("/proc/self/mounts").read_text()
    no_leftovers(tmp_path / "cache")


def test_describe_reads_the_recorded_version_and_builds_the_launcher(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "tree", "9.7.4")
    install = debian_sid.describe(sid_entry(), tree)
    loader, libdir = debian_sid.LOADERS[platform.machine()]
    assert install.version == "9.7.4"
    assert install.launcher == (str(tree / loader), "--library-path", str(tree / libdir))
    assert install.server_options == {
        "plugin-dir": str(tree / "usr/lib/mysql/plugin"),
        "character-sets-dir": str(tree / "usr/share/mysql/charsets"),
    }
    assert install.install_db is None  # MySQL initialises itself (rules: --initialize-insecure)
    assert install.source_sha256 == "a" * 64
    assert install.extra["package"] == "mysql-server-core=9.7.4-1"


@pytest.mark.parametrize("found", ["10.0.1", "8.4.3"])
def test_a_binary_outside_the_catalogs_series_is_refused(tmp_path: Path, found: str) -> None:
    tree = fake_tree(tmp_path / "tree", found)
    with pytest.raises(ConfigError) as info:
        debian_sid.describe(sid_entry(), tree)
    assert f"the chroot has MySQL {found}, but configs/versions.yaml expects 9.0" in str(info.value)


def test_a_damaged_tree_says_to_delete_it(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "tree", "9.7.4")
    (tree / debian_sid.SERVER_BINARY).unlink()
    with pytest.raises(FetchError, match="has no usr/sbin/mysqld; delete that directory"):
        debian_sid.describe(sid_entry(), tree)


# --- the real chroot ------------------------------------------------------------------------


@pytest.mark.integration
def test_real_sid_chroot_runs_mysqld_through_its_own_loader() -> None:
    install = mysql_sid.install_or_skip()
    assert install.provider == "debian-sid"
    assert VERSION_RE.match(install.version)
    assert rules.parse_version(install.version) >= rules.parse_version(mysql_sid.entry().version)
    assert re.fullmatch(r"[0-9a-f]{64}", install.source_sha256 or "")
    tree = install.basedir.parent
    assert cache.is_complete(tree)
    assert not list((tree / "var/lib/apt/lists").glob("*_Packages")), "apt lists dropped"
    assert not list((tree / "var/cache/apt/archives").glob("*.deb")), "apt cache dropped"
    version, line = debian_sid.binary_version(tree, install.mysqld)
    assert version == install.version
    assert "Ver " in line and str(tree) not in line
    assert install.launcher[0].startswith(str(tree))  # the chroot's own dynamic loader


@pytest.mark.integration
def test_real_second_fetch_reuses_the_chroot(monkeypatch, tmp_path: Path) -> None:
    install = mysql_sid.install_or_skip()
    monkeypatch.setenv("PATH", str(tmp_path))  # no debootstrap, unshare or chroot now
    messages: list[str] = []
    again = providers.fetch(mysql_sid.entry(), progress=messages.append)
    assert again == install
    assert messages == [f"using cached mysql-sid in {install.basedir.parent}"]


@pytest.mark.integration
def test_real_cli_servers_fetch_mysql_sid(capsys) -> None:
    install = mysql_sid.install_or_skip()
    assert cli.main(["servers", "fetch", "mysql-sid"]) == 0
    assert (
        f"mysql-sid: mysql {install.version} ready at {install.basedir}" in capsys.readouterr().out
    )


@pytest.mark.integration
def test_real_server_starts_and_reports_the_recorded_version(workroot: Path) -> None:
    install = mysql_sid.install_or_skip()
    with Server(install, {}, workroot=workroot) as srv:
        assert srv.version_string.startswith(install.version)
        assert srv.alive()
    assert not srv.alive()


@pytest.mark.integration
def test_real_cell_sysbench_over_tcp_with_caching_sha2(tmp_path, config_dir, workroot) -> None:
    install = mysql_sid.install_or_skip()
    m = matrix.from_dict(
        {
            "name": "sid",
            "servers": ["mysql-sid"],
            "workloads": ["oltp_point_select"],
            "charsets": ["utf8mb4"],
            "threads": [1],
            "repeats": 1,
            "duration_s": 2,
            "warmup_s": 0,
            "tables": 1,
            "table_size": 500,
        }
    )
    cat = catalog.load(config_dir / "versions.yaml")
    rd = runner.create(m, cat, tmp_path / "runs", "test")
    summary = runner.Runner(rd, cat, config_dir, lambda _m: None, workroot=workroot).run()
    assert (summary.ok, summary.failed) == (1, 0), summary.final_failed
    (record,) = [r for recs in rd.attempts().values() for r in recs]
    assert record["server"]["provider"] == "debian-sid"
    assert record["server"]["version"] == install.version  # the binary's, not the catalog's 9.0
    assert record["server"]["version_string"].startswith(install.version)
    assert record["server"]["source_sha256"] == install.source_sha256
    assert record["cell"]["collation"] == "utf8mb4_0900_ai_ci"
    assert record["effective"]["table_collations"] == "utf8mb4_0900_ai_ci"
    assert record["result"]["tps"] > 0
    assert "--mysql-host=127.0.0.1" in record["tool"]["command"]


@pytest.mark.integration
def test_demo_leaves_out_a_sid_server_it_cannot_build_and_says_why(
    tmp_path: Path, config_dir: Path, monkeypatch, capsys
) -> None:
    with (config_dir / "versions.yaml").open("a") as f:
        f.write(
            '\n  - id: mysql-sid-unbuildable\n    product: mysql\n    version: "9.0"\n'
            "    provider: debian-sid\n"
            '    chroot: {package: mysql-server-core, mirror: "http://127.0.0.1:9/debian"}\n'
        )
    (config_dir / "matrices" / "sid-demo.yaml").write_text(
        "name: sid-demo\nservers: [mysql-sid-unbuildable, mariadb-10.11.19]\n"
        "workloads: [oltp_point_select]\ncharsets: [latin1]\nthreads: [1]\nrepeats: 1\n"
        "duration_s: 1\nwarmup_s: 0\ntables: 1\ntable_size: 200\n"
    )
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(config_dir))
    places = ["--db", str(tmp_path / "r.duckdb"), "--out", str(tmp_path / "runs")]
    code = cli.main(["demo", "--matrix", "sid-demo", *places])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "mysql-sid-unbuildable: left out of the demo, its Debian sid chroot cannot be" in out
    assert "1 ok, 0 failed" in out


def test_damaged_metadata_says_to_delete_the_tree(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "tree", "9.7.4")
    (tree / debian_sid.METADATA_FILE).write_text("{not json")
    with pytest.raises(FetchError, match=r"\.perftrack-sid\.json is damaged; delete"):
        debian_sid.describe(sid_entry(), tree)
