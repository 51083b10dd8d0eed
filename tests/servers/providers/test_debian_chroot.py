"""debian-chroot provider: catalog section, refusals, the suite's index (a pin the suite no
longer has, a checksum that does not match), a failing build leaving nothing behind, and the
real chroots: Oracle MySQL 9.7.4 from sid and MariaDB 11.8.9 from trixie (each built once
into the normal cache)."""

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

import chroot_servers
from perftrack import cli
from perftrack.core.errors import ConfigError, FetchError
from perftrack.planning import matrix
from perftrack.run import runner, targets
from perftrack.run.server import Server
from perftrack.servers import cache, catalog, providers
from perftrack.servers.catalog import DebianChroot, DebianPackage, Entry
from perftrack.servers.providers import debian_chroot

IS_ROOT = os.geteuid() == 0
HAVE_UNSHARE = shutil.which("unshare") is not None and shutil.which("chroot") is not None
UNREACHABLE = "http://127.0.0.1:9/debian"
MYSQL_DEB = DebianPackage("mysql-server-core", "9.7.4-2", "a" * 64)

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


def chroot_entry(**changes) -> Entry:
    base = Entry(
        id="mysql-chroot-test",
        product="mysql",
        version="9.7.4",
        provider="debian-chroot",
        chroot=DebianChroot(suite="sid", packages=(MYSQL_DEB,)),
    )
    return dataclasses.replace(base, **changes)


def no_leftovers(root: Path) -> None:
    assert list(root.glob("tmp-*")) == [], "a scratch directory was left in the cache"
    servers = root / cache.SERVERS_DIR
    assert not servers.exists() or list(servers.iterdir()) == [], "a tree was left"


def fake_tree(tree: Path, version: str, product: str = "mysql") -> Path:
    """The files `describe` looks for, with `version` as the recorded server version."""
    layout = debian_chroot.LAYOUTS[product]
    programs = [layout.server, *layout.helpers]
    files = [f"{layout.share_dir}/english/errmsg.sys", *programs]
    files += [f"{debian_chroot.RUN_DIR}/{program}" for program in programs]
    files += [layout.install_db] if layout.install_db else []
    for relative in files:
        (tree / relative).parent.mkdir(parents=True, exist_ok=True)
        (tree / relative).write_text("x")
    meta = {"server_version": version, "suite": "sid", "packages": []}
    (tree / debian_chroot.METADATA_FILE).write_text(json.dumps(meta))
    return tree


def real_chroot_entry(server_id: str, **changes) -> Entry:
    """A copy of the real catalog entry under a test id (its own cache key)."""
    real = chroot_servers.entry(server_id)
    return dataclasses.replace(real, id=f"{server_id}-test", **changes)


def index_failure_or_skip(exc: FetchError) -> None:
    """Skip when the Debian archive cannot be reached from here (the test needs its index)."""
    if "apt-get" in str(exc) and " update` failed" in str(exc):
        pytest.skip(f"the Debian archive cannot be reached here: {exc}")


# --- catalog ------------------------------------------------------------------------------


def load_catalog(tmp_path: Path, chroot: str, provider: str = "debian-chroot") -> catalog.Catalog:
    path = tmp_path / "versions.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        servers:
          - id: mysql-9.7.4
            product: mysql
            version: 9.7.4
            provider: {provider}
            chroot: {chroot}
        """)
    )
    return catalog.read_catalog(path)


PACKAGES = "[{name: mysql-server-core, version: 9.7.4-2, sha256: " + "a" * 64 + "}]"


def test_catalog_chroot_section_pins_packages_and_defaults_the_mirror(tmp_path: Path) -> None:
    entry = load_catalog(tmp_path, f"{{suite: sid, packages: {PACKAGES}}}").get("mysql-9.7.4")
    assert entry.chroot == DebianChroot("sid", (MYSQL_DEB,), "http://deb.debian.org/debian")
    assert entry.server_package == MYSQL_DEB


@pytest.mark.parametrize(
    ("chroot", "complaint"),
    [
        (f"{{suite: 'sid main', packages: {PACKAGES}}}", "bad Debian suite"),
        (f"{{suite: sid, mirror: 'ftp://x', packages: {PACKAGES}}}", "bad mirror"),
        (f"{{suite: sid, mirrors: x, packages: {PACKAGES}}}", "unknown key 'mirrors'"),
        (f"{{packages: {PACKAGES}}}", "missing the required key 'suite'"),
        ("{suite: sid}", "missing the required key 'packages'"),
        ("{suite: sid, packages: []}", "must be a non-empty list"),
        ("{suite: sid, packages: [{name: 'mysql;rm', version: 1, sha256: x}]}", "bad Debian"),
        ("{suite: sid, packages: [{name: mysql-server-core, version: 9.7.4-2}]}", "'sha256'"),
        (
            "{suite: sid, packages: [{name: mysql-server-core, version: 9.7.5-1, sha256: "
            + "a" * 64
            + "}]}",
            "version 9.7.4 but the server package mysql-server-core is 9.7.5",
        ),
    ],
)
def test_catalog_chroot_section_is_validated(tmp_path: Path, chroot: str, complaint: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(complaint)) as info:
        load_catalog(tmp_path, chroot)
    assert "\n" not in str(info.value)


def test_the_old_provider_name_says_what_it_became(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'debian-sid' is now 'debian-chroot'") as info:
        load_catalog(tmp_path, "{package: mysql-server-core}", provider="debian-sid")
    assert "\n" not in str(info.value)


def test_debian_repack_suffix_is_not_part_of_the_release() -> None:
    package = DebianPackage("mariadb-server-core", "1:11.8.9+ds-0+deb13u1", "a" * 64)
    assert (package.upstream_version, package.release) == ("11.8.9+ds", "11.8.9")


def test_real_catalog_pins_mysql_and_mariadb_from_newer_suites() -> None:
    mysql, mariadb = (chroot_servers.entry(i) for i in ("mysql-9.7.4", "mariadb-11.8.9"))
    assert (mysql.product, mysql.provider, mysql.chroot.suite) == ("mysql", "debian-chroot", "sid")
    assert [p.spec for p in mysql.chroot.packages] == ["mysql-server-core=9.7.4-2"]
    assert (mariadb.product, mariadb.version, mariadb.chroot.suite) == (
        "mariadb",
        "11.8.9",
        "trixie",
    )
    names = [p.name for p in mariadb.chroot.packages]
    assert names == ["mariadb-server-core", "mariadb-client-core"]
    for package in (*mysql.chroot.packages, *mariadb.chroot.packages):
        assert re.fullmatch(r"[0-9a-f]{64}", package.sha256)


# --- refusals and failures ------------------------------------------------------------------


def test_entry_without_chroot_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="has no 'chroot'"):
        debian_chroot.fetch(chroot_entry(chroot=None), cache_dir=tmp_path)


def test_a_product_without_a_known_layout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"knows the Debian packaging of mysql and mariadb"):
        debian_chroot.fetch(chroot_entry(product="percona"), cache_dir=tmp_path)


def test_missing_debootstrap_says_how_to_install_it(tmp_path: Path, monkeypatch) -> None:
    if not IS_ROOT:
        pytest.skip("the build refuses non-root before looking for debootstrap")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(FetchError, match="debootstrap not found on PATH; apt-get install"):
        debian_chroot.fetch(chroot_entry(), cache_dir=tmp_path / "cache")
    no_leftovers(tmp_path / "cache")


@pytest.mark.skipif(not IS_ROOT, reason="the build needs root")
def test_an_unreachable_archive_is_one_line_before_any_debootstrap(tmp_path: Path) -> None:
    entry = chroot_entry(chroot=DebianChroot("sid", (MYSQL_DEB,), UNREACHABLE))
    with pytest.raises(FetchError) as info:
        debian_chroot.fetch(entry, cache_dir=tmp_path / "cache")
    message = str(info.value)
    assert "\n" not in message
    assert "update` failed" in message
    assert f"check that {UNREACHABLE} is reachable and serves Debian sid" in message
    no_leftovers(tmp_path / "cache")


@pytest.mark.integration
@pytest.mark.skipif(not IS_ROOT, reason="the build needs root")
def test_real_index_a_pin_the_suite_no_longer_has_says_it_moved_on(tmp_path: Path) -> None:
    """sid replaced 9.7.3-1 (the entry's pin here) long ago: one line saying what sid has
    now and what to do, before any debootstrap, and nothing left in the cache."""
    gone = DebianPackage("mysql-server-core", "9.7.3-1", "a" * 64)
    entry = real_chroot_entry("mysql-9.7.4", version="9.7.3")
    entry = dataclasses.replace(entry, chroot=dataclasses.replace(entry.chroot, packages=(gone,)))
    with pytest.raises(FetchError) as info:
        debian_chroot.fetch(entry, cache_dir=tmp_path / "cache")
    index_failure_or_skip(info.value)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(
        "'mysql-9.7.4-test' holds mysql-server-core 9.7.3-1 from Debian sid, but sid now has "
    )
    assert re.search(r"sid now has \d+\.\d+\.\d+-\S+: the suite has moved on", message), message
    assert "Pin the new version as a new catalog entry in configs/versions.yaml" in message
    assert "9.7.3-1 itself stays on snapshot.debian.org" in message
    no_leftovers(tmp_path / "cache")


@pytest.mark.integration
@pytest.mark.skipif(not IS_ROOT, reason="the build needs root")
def test_real_index_a_download_that_does_not_match_its_pin_is_refused(tmp_path: Path) -> None:
    """The real mariadb-client-core (0.9 MB) against a wrong sha256: refused, removed."""
    real = chroot_servers.entry("mariadb-11.8.9").chroot.packages[1]
    wrong = dataclasses.replace(real, sha256="0" * 64)
    entry = real_chroot_entry("mariadb-11.8.9")
    entry = dataclasses.replace(entry, chroot=dataclasses.replace(entry.chroot, packages=(wrong,)))
    with pytest.raises(FetchError) as info:
        debian_chroot.fetch(entry, cache_dir=tmp_path / "cache")
    index_failure_or_skip(info.value)
    message = str(info.value)
    assert "\n" not in message
    assert f"checksum mismatch for mariadb-client-core {real.version}" in message
    assert f"expected {'0' * 64}, got {real.sha256}" in message
    no_leftovers(tmp_path / "cache")


@pytest.mark.integration
@pytest.mark.skipif(not (IS_ROOT and HAVE_UNSHARE), reason="needs root and unshare/chroot")
def test_chroot_that_cannot_be_built_is_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch
) -> None:
    """The real index and pinned downloads (MariaDB's, 8 MB), then a debootstrap that fails
    after mounting /proc in the tree."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "debootstrap"
    fake.write_text(FAILING_DEBOOTSTRAP)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    entry = real_chroot_entry("mariadb-11.8.9")
    with pytest.raises(FetchError) as info:
        debian_chroot.fetch(entry, cache_dir=tmp_path / "cache")
    index_failure_or_skip(info.value)
    message = str(info.value)
    mirror = entry.chroot.mirror
    assert "\n" not in message
    assert "debootstrap --variant=minbase trixie" in message
    assert f"E: Failed getting release file {mirror}/dists/trixie/Release" in message
    assert f"check that {mirror} is reachable" in message
    # the /proc it mounted lived in the build's private mount namespace: gone with it
    assert str(tmp_path / "cache") not in Path("/proc/self/mounts").read_text()
    no_leftovers(tmp_path / "cache")


# --- describing a tree ----------------------------------------------------------------------


def test_describe_runs_the_server_through_its_wrapper(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "tree", "9.7.4")
    install = debian_chroot.describe(chroot_entry(), tree)
    assert install.version == "9.7.4"
    assert install.mysqld == tree / "perftrack-run/usr/sbin/mysqld"
    assert install.basedir == tree / "perftrack-run/usr"
    assert install.launcher == ()  # the wrapper starts the chroot's loader itself
    assert install.server_options == {
        "plugin-dir": str(tree / "usr/lib/mysql/plugin"),
        "character-sets-dir": str(tree / "usr/share/mysql/charsets"),
    }
    assert install.install_db is None  # MySQL initialises itself (rules: --initialize-insecure)
    assert install.source_sha256 == "a" * 64  # the pin
    assert install.extra == {
        "packages": "mysql-server-core=9.7.4-2",
        "suite": "sid",
        "chroot": str(tree),
    }


def test_describe_mariadb_initialises_with_its_install_script(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "tree", "11.8.9", product="mariadb")
    packages = (DebianPackage("mariadb-server-core", "1:11.8.9+ds-0+deb13u1", "b" * 64),)
    entry = chroot_entry(
        id="mariadb", product="mariadb", version="11.8.9", chroot=DebianChroot("trixie", packages)
    )
    install = debian_chroot.describe(entry, tree)
    assert install.mysqld == tree / "perftrack-run/usr/sbin/mariadbd"
    assert install.install_db == tree / "usr/bin/mariadb-install-db"  # run by the host's sh
    assert install.share_dir == tree / "usr/share/mariadb"
    assert install.source_sha256 == "b" * 64


@pytest.mark.parametrize("found", ["9.7.5", "8.4.3"])
def test_a_binary_of_another_version_is_refused(tmp_path: Path, found: str) -> None:
    tree = fake_tree(tmp_path / "tree", found)
    with pytest.raises(ConfigError) as info:
        debian_chroot.describe(chroot_entry(), tree)
    assert f"the chroot's server reports {found}, but configs/versions.yaml says 9.7.4" in str(
        info.value
    )


def test_a_damaged_tree_says_to_delete_it(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "tree", "9.7.4")
    (tree / "perftrack-run/usr/sbin/mysqld").unlink()
    with pytest.raises(FetchError, match="has no perftrack-run/usr/sbin/mysqld; delete that"):
        debian_chroot.describe(chroot_entry(), tree)


def test_damaged_metadata_says_to_delete_the_tree(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "tree", "9.7.4")
    (tree / debian_chroot.METADATA_FILE).write_text("{not json")
    with pytest.raises(FetchError, match=r"\.perftrack-chroot\.json is damaged; delete"):
        debian_chroot.describe(chroot_entry(), tree)


# --- the real chroots -----------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("server_id", ["mysql-9.7.4", "mariadb-11.8.9"])
def test_real_chroot_holds_the_pinned_packages_and_the_entrys_version(server_id: str) -> None:
    install = chroot_servers.install_or_skip(server_id)
    entry = chroot_servers.entry(server_id)
    tree = chroot_servers.tree(install)
    assert install.provider == "debian-chroot"
    assert install.version == entry.version
    assert install.source_sha256 == entry.server_package.sha256
    assert cache.is_complete(tree)
    meta = json.loads((tree / debian_chroot.METADATA_FILE).read_text())
    pins = [(p.name, p.version, p.sha256) for p in entry.chroot.packages]
    assert [(p["name"], p["version"], p["sha256"]) for p in meta["packages"]] == pins
    for name, version, _ in pins:
        assert f"{name}={version}" in meta["installed"]
    assert meta["suite"] == entry.chroot.suite
    assert not list((tree / "var/lib/apt/lists").glob("*_Packages")), "apt lists dropped"
    assert not list((tree / "var/cache/apt/archives").glob("*.deb")), "apt cache dropped"
    assert not (tree / debian_chroot.DEBS_DIR).exists()
    version, line = debian_chroot.binary_version(install.mysqld)
    assert version == entry.version
    assert "Ver " in line and str(tree) not in line
    loader, _ = debian_chroot.LOADERS[platform.machine()]
    link = tree / debian_chroot.LOADER_LINKS / install.mysqld.name
    assert link.resolve() == (tree / loader).resolve()  # the chroot's own loader, not the host's


@pytest.mark.integration
def test_real_second_fetch_reuses_the_chroot(monkeypatch, tmp_path: Path) -> None:
    install = chroot_servers.install_or_skip()
    monkeypatch.setenv("PATH", str(tmp_path))  # no apt, debootstrap, unshare or chroot now
    messages: list[str] = []
    again = providers.fetch(chroot_servers.entry(), progress=messages.append)
    assert again == install
    assert messages == [f"using cached mysql-9.7.4 in {chroot_servers.tree(install)}"]


@pytest.mark.integration
def test_real_cli_servers_fetch_mysql_9_7_4(capsys) -> None:
    install = chroot_servers.install_or_skip()
    assert cli.main(["servers", "fetch", "mysql-9.7.4"]) == 0
    out = capsys.readouterr().out
    assert f"mysql-9.7.4: mysql 9.7.4 ready at {install.basedir}" in out


@pytest.mark.integration
def test_real_mariadb_11_8_initialises_starts_answers_and_is_found_by_name(
    workroot: Path,
) -> None:
    """MySQL 9.7.4 starts in the cell below and in test_rules' real-server test."""
    install = chroot_servers.install_or_skip(chroot_servers.MARIADB)
    with Server(install=install, options={}, workroot=workroot) as srv:
        assert srv.version_string.startswith("11.8.9-MariaDB")
        assert srv.query("SELECT @@collation_server")[0][0] == "utf8mb4_uca1400_ai_ci"
        assert srv.process is not None
        # exec'd through a loader link named after it: the sampler finds it by its name
        assert targets.find_server_pid(srv.process.pid) == srv.process.pid
    assert not srv.alive()


@pytest.mark.integration
def test_real_cell_sysbench_over_tcp_with_caching_sha2(tmp_path, config_dir, workroot) -> None:
    install = chroot_servers.install_or_skip()
    m = matrix.from_dict(
        {
            "name": "chroot",
            "servers": ["mysql-9.7.4"],
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
    cat = catalog.read_catalog(config_dir / "versions.yaml")
    rd = runner.create(m, cat, tmp_path / "runs", "test")
    summary = runner.Runner(
        rd=rd, catalog=cat, config_dir=config_dir, emit=lambda _m: None, workroot=workroot
    ).run()
    assert (summary.ok, summary.failed) == (1, 0), summary.final_failed
    (record,) = [r for recs in rd.attempts().values() for r in recs]
    assert record["server"]["provider"] == "debian-chroot"
    assert record["server"]["version"] == install.version == "9.7.4"
    assert record["server"]["version_string"].startswith(install.version)
    assert record["server"]["source_sha256"] == install.source_sha256
    assert record["cell"]["collation"] == "utf8mb4_0900_ai_ci"
    assert record["effective"]["table_collations"] == "utf8mb4_0900_ai_ci"
    assert record["result"]["tps"] > 0
    assert "--mysql-host=127.0.0.1" in record["tool"]["command"]
    # the sampler found the server by its name (exec'd through a loader link named mysqld)
    assert record["cost"].get("pid") is not None
    assert record["cost"]["totals"]["cpu_user_us"] > 0


@pytest.mark.integration
def test_demo_leaves_out_a_chroot_server_it_cannot_build_and_says_why(
    tmp_path: Path, config_dir: Path, monkeypatch, capsys
) -> None:
    with (config_dir / "versions.yaml").open("a") as f:
        f.write(
            "\n  - id: mysql-9.7.4-unbuildable\n    product: mysql\n    version: 9.7.4\n"
            "    provider: debian-chroot\n"
            f"    chroot:\n      suite: sid\n      mirror: {UNREACHABLE}\n      packages:\n"
            f"        - {{name: mysql-server-core, version: 9.7.4-2, sha256: {'a' * 64}}}\n"
        )
    (config_dir / "matrices" / "chroot-demo.yaml").write_text(
        "name: chroot-demo\nservers: [mysql-9.7.4-unbuildable, mariadb-10.11.19]\n"
        "workloads: [oltp_point_select]\ncharsets: [latin1]\nthreads: [1]\nrepeats: 1\n"
        "duration_s: 1\nwarmup_s: 0\ntables: 1\ntable_size: 200\n"
    )
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(config_dir))
    places = ["--db", str(tmp_path / "r.duckdb"), "--out", str(tmp_path / "runs")]
    code = cli.main(["demo", "--matrix", "chroot-demo", *places])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "mysql-9.7.4-unbuildable: left out of the demo, its Debian chroot cannot be" in out
    assert "1 ok, 0 failed" in out
