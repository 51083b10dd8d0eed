import itertools
from pathlib import Path

import pytest

import chroot_servers
from perftrack.core.errors import ConfigError
from perftrack.run.server import Server
from perftrack.servers import catalog, providers, rules
from perftrack.servers import options as release_options
from perftrack.servers.install import Install


@pytest.mark.parametrize(
    ("product", "version", "init", "iso", "utf8mb4"),
    [
        ("mariadb", "10.1.23", rules.INIT_INSTALL_DB, "tx_isolation", "utf8mb4_general_ci"),
        ("mariadb", "10.2.11", rules.INIT_INSTALL_DB, "tx_isolation", "utf8mb4_general_ci"),
        ("mariadb", "10.11.19", rules.INIT_INSTALL_DB, "tx_isolation", "utf8mb4_general_ci"),
        ("mariadb", "11.4.5", rules.INIT_INSTALL_DB, "transaction_isolation", "utf8mb4_general_ci"),
        (
            "mariadb",
            "11.8.3",
            rules.INIT_INSTALL_DB,
            "transaction_isolation",
            "utf8mb4_uca1400_ai_ci",
        ),
        ("mysql", "5.7.44", rules.INIT_INSECURE, "tx_isolation", "utf8mb4_general_ci"),
        ("mysql", "8.0.36", rules.INIT_INSECURE, "transaction_isolation", "utf8mb4_0900_ai_ci"),
        ("mysql", "8.4.0", rules.INIT_INSECURE, "transaction_isolation", "utf8mb4_0900_ai_ci"),
        ("mysql", "9.1.0", rules.INIT_INSECURE, "transaction_isolation", "utf8mb4_0900_ai_ci"),
    ],
)
def test_rules_table_rows(product, version, init, iso, utf8mb4):
    r = rules.rules_for(product, version)
    assert r.init == init
    assert r.isolation_var == iso
    assert r.default_collation_for("utf8mb4") == utf8mb4
    assert r.default_collation_for("latin1") == "latin1_swedish_ci"


def test_mariadb_10_4_plus_root_uses_password_auth_not_unix_socket():
    assert (
        "--auth-root-authentication-method=normal"
        in rules.rules_for("mariadb", "10.11.18").init_args
    )
    assert (
        "--auth-root-authentication-method=normal"
        not in rules.rules_for("mariadb", "10.2.11").init_args
    )


def test_mysql_8_disables_x_plugin_and_uses_caching_sha2():
    r = rules.rules_for("mysql", "8.4.3")
    assert "--mysqlx=OFF" in r.start_args
    assert r.auth_plugin == "caching_sha2_password"
    assert rules.rules_for("mysql", "5.7.44").auth_plugin == "mysql_native_password"


def test_0900_collation_is_a_skip_reason_on_mariadb_and_mysql57():
    for product, version in (("mariadb", "10.11.18"), ("mysql", "5.7.44")):
        res = rules.resolve_collation(rules.rules_for(product, version), "utf8mb4_0900_ai_ci")
        assert isinstance(res, str)
        assert "utf8mb4_0900_ai_ci" in res
    ok = rules.resolve_collation(rules.rules_for("mysql", "8.0.36"), "utf8mb4_0900_ai_ci")
    assert ok == ("utf8mb4", "utf8mb4_0900_ai_ci")


def test_unknown_product_and_bad_version_are_one_line_errors():
    with pytest.raises(ConfigError, match=r"no version rules for mysql 3\.23"):
        rules.rules_for("mysql", "3.23.58")
    with pytest.raises(ConfigError, match="is not a version"):
        rules.parse_version("8.0.x; rm -rf /")


def test_versions_sort_numerically():
    assert rules.parse_version("10.11.18") > rules.parse_version("10.2.11")


# --- columns added for Oracle MySQL (issue 4) ------------------------------------------------

FILE_SIZE, CAPACITY = rules.REDO_LOG_FILE_SIZE, rules.REDO_LOG_CAPACITY
GLIBC228 = "mysql-{v}-linux-glibc2.28-x86_64.tar.xz"


@pytest.mark.parametrize(
    ("product", "version", "redo", "files", "query_cache", "binlog", "native", "tarball"),
    [
        ("mariadb", "10.2.11", FILE_SIZE, 2, True, False, rules.NATIVE_DEFAULT, None),
        ("mariadb", "10.4.34", FILE_SIZE, 2, True, False, rules.NATIVE_DEFAULT, None),
        ("mariadb", "10.11.19", FILE_SIZE, 1, True, False, rules.NATIVE_DEFAULT, None),
        ("mariadb", "11.4.5", FILE_SIZE, 1, True, False, rules.NATIVE_DEFAULT, None),
        ("mariadb", "11.8.3", FILE_SIZE, 1, True, False, rules.NATIVE_DEFAULT, None),
        (
            "mysql",
            "5.7.44",
            FILE_SIZE,
            2,
            True,
            False,
            rules.NATIVE_DEFAULT,
            "mysql-{v}-linux-glibc2.12-x86_64.tar.gz",
        ),
        ("mysql", "8.0.29", FILE_SIZE, 2, False, True, rules.NATIVE_AVAILABLE, GLIBC228),
        ("mysql", "8.0.30", CAPACITY, 2, False, True, rules.NATIVE_AVAILABLE, GLIBC228),
        ("mysql", "8.4.3", CAPACITY, 2, False, True, rules.NATIVE_DISABLED, GLIBC228),
        ("mysql", "9.0.1", CAPACITY, 2, False, True, rules.NATIVE_REMOVED, GLIBC228),
        ("mysql", "9.7.4", CAPACITY, 2, False, True, rules.NATIVE_REMOVED, GLIBC228),
        ("percona", "8.0.39", CAPACITY, 2, False, True, rules.NATIVE_AVAILABLE, GLIBC228),
    ],
)
def test_version_columns(product, version, redo, files, query_cache, binlog, native, tarball):
    r = rules.rules_for(product, version)
    assert r.redo_log_option == redo
    assert r.redo_log_files == files
    assert r.query_cache is query_cache
    assert r.binlog_default is binlog
    assert r.native_password == native
    expected = tarball.format(v=version) if tarball else None
    assert (r.tarball_file.format(version=version) if r.tarball_file else None) == expected


@pytest.mark.parametrize(
    ("product", "version", "present", "absent"),
    [
        ("mysql", "5.7.44", {"--secure-file-priv="}, {"--mysqlx=OFF"}),  # no X plugin in 5.7
        ("mysql", "8.0.36", {"--secure-file-priv=", "--mysqlx=OFF"}, set()),
        ("mysql", "9.7.4", {"--secure-file-priv=", "--mysqlx=OFF"}, set()),
        ("mariadb", "10.11.19", set(), {"--mysqlx=OFF", "--skip-ssl", "--secure-file-priv="}),
        ("mariadb", "11.4.5", {"--skip-ssl"}, {"--mysqlx=OFF"}),
        ("mariadb", "11.8.3", {"--skip-ssl"}, {"--mysqlx=OFF"}),
    ],
)
def test_start_args(product, version, present, absent):
    args = set(rules.rules_for(product, version).start_args)
    assert present <= args
    assert not absent & args


def translate(product: str, version: str, **options: str | None) -> dict[str, str | None]:
    return release_options.translate_options(rules.rules_for(product, version), options)


@pytest.mark.parametrize("name", ["tx_isolation", "tx-isolation", "TX_ISOLATION"])
@pytest.mark.parametrize(("product", "version"), [("mysql", "9.7.4"), ("mariadb", "10.11.19")])
def test_tx_isolation_becomes_the_startup_option_every_release_takes(name, product, version):
    out = release_options.translate_options(
        rules.rules_for(product, version), {name: "READ-COMMITTED"}
    )
    assert out == {"transaction-isolation": "READ-COMMITTED"}
    assert translate(product, version, tx_read_only="ON") == {"transaction-read-only": "ON"}


def test_query_cache_options_are_dropped_where_there_is_no_query_cache():
    off = {"query_cache_type": "OFF", "query_cache_size": "0", "innodb_buffer_pool_size": "1G"}
    assert translate("mysql", "8.0.36", **off) == {"innodb_buffer_pool_size": "1G"}
    assert translate("mysql", "5.7.44", **off) == off  # still there in 5.7
    assert translate("mariadb", "10.11.19", **off) == off


@pytest.mark.parametrize("value", ["ON", "1", "DEMAND", "2"])
def test_asking_for_the_query_cache_on_mysql_8_is_refused(value):
    with pytest.raises(ConfigError, match=r"asks for the query cache, which mysql 8\.4"):
        translate("mysql", "8.4.3", query_cache_type=value, query_cache_size="64M")
    assert translate("mysql", "5.7.44", query_cache_type=value) == {"query_cache_type": value}


@pytest.mark.parametrize(
    ("product", "version", "options", "expected"),
    [
        # innodb_redo_log_capacity (the portable way): the total is kept everywhere
        ("mysql", "9.7.4", {"innodb_redo_log_capacity": "96M"}, {CAPACITY: "96M"}),
        (
            "mysql",
            "5.7.44",
            {"innodb_redo_log_capacity": "96M"},
            {FILE_SIZE: "48M", "innodb_log_files_in_group": "2"},
        ),
        ("mariadb", "10.11.19", {"innodb-redo-log-capacity": "1G"}, {FILE_SIZE: "1G"}),
        # innodb_log_file_size: x innodb_log_files_in_group (default 2) where capacity rules
        ("mysql", "8.0.30", {"innodb_log_file_size": "48M"}, {CAPACITY: "96M"}),
        (
            "mysql",
            "8.4.3",
            {"innodb_log_file_size": "48M", "innodb_log_files_in_group": "3"},
            {CAPACITY: "144M"},
        ),
        # ... and unchanged where it is the release's own option
        (
            "mysql",
            "8.0.29",
            {"innodb_log_file_size": "48M"},
            {FILE_SIZE: "48M", "innodb_log_files_in_group": "2"},
        ),
        ("mariadb", "10.11.19", {"innodb_log_file_size": "512M"}, {FILE_SIZE: "512M"}),
        # MariaDB 10.5+ has one file: a 5.7-style pair is folded into it
        (
            "mariadb",
            "10.11.19",
            {"innodb_log_file_size": "48M", "innodb_log_files_in_group": "2"},
            {FILE_SIZE: "96M"},
        ),
        ("mysql", "9.7.4", {"innodb_log_files_in_group": "2"}, {}),  # no size: nothing to keep
        ("mysql", "9.7.4", {"innodb_redo_log_capacity": "100000000"}, {CAPACITY: "100000000"}),
    ],
)
def test_redo_log_size_keeps_its_total_across_releases(product, version, options, expected):
    assert release_options.translate_options(rules.rules_for(product, version), options) == expected


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({"innodb_log_file_size": "48M", "innodb_redo_log_capacity": "1G"}, "both"),
        ({"innodb_redo_log_capacity": "1G", "innodb_log_files_in_group": "2"}, "has no meaning"),
        ({"innodb_redo_log_capacity": "lots"}, "is not a size"),
        ({"innodb_log_file_size": "48M", "innodb_log_files_in_group": "0"}, "at least 1"),
    ],
)
def test_bad_redo_log_settings_are_one_line_errors(options, complaint):
    with pytest.raises(ConfigError, match=complaint) as info:
        release_options.translate_options(rules.rules_for("mysql", "8.4.3"), options)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("version", "option", "why"),
    [
        ("8.0.36", "innodb_file_format", "removed in MySQL 8.0"),
        ("8.0.36", "innodb-large-prefix", "removed in MySQL 8.0"),
        ("8.4.3", "default_authentication_plugin", "use authentication_policy"),
        ("9.1.0", "mysql_native_password", "plugin was removed in MySQL 9.0"),
    ],
)
def test_options_a_release_removed_are_refused_with_the_reason(version, option, why):
    with pytest.raises(ConfigError, match=why) as info:
        translate("mysql", version, **{option: "ON"})
    assert f"option {option} cannot be used on mysql" in str(info.value)


def test_removed_options_are_fine_where_they_still_exist():
    assert translate("mysql", "8.0.36", default_authentication_plugin="mysql_native_password")
    assert translate("mysql", "8.4.3", mysql_native_password="ON") == {
        "mysql_native_password": "ON"
    }
    assert translate("mysql", "5.7.44", innodb_file_format="Barracuda")


def test_percona_follows_the_mysql_rules():
    assert rules.rules_for("percona", "8.0.39") == rules.rules_for("mysql", "8.0.39")
    assert rules.rules_for("percona", "8.4.3") == rules.rules_for("mysql", "8.4.3")


def test_every_row_has_a_note_and_rows_do_not_overlap():
    for product in ("mysql", "mariadb"):
        rows = sorted((r for r in rules.RULES if r.product == product), key=lambda r: r.since)
        for a, b in itertools.pairwise(rows):
            assert a.until == b.since, f"{product} rows {a.since} and {b.since} must touch"
        assert rows[-1].until is None
        assert all(r.note for r in rows)


# --- the generated my.cnf and command lines (versions that cannot be started here) ----------


def fake_install(product: str, version: str, install_db: bool) -> Install:
    base = Path("/opt/server")
    return Install(
        server_id=f"{product}-{version}",
        product=product,
        version=version,
        provider="path",
        basedir=base,
        mysqld=base / "bin/mysqld",
        share_dir=base / "share",
        install_db=base / "scripts/mariadb-install-db" if install_db else None,
        launcher=("/opt/loader", "--library-path", "/opt/libs"),
        server_options={"plugin-dir": "/opt/server/lib/plugin"},
    )


def unstarted(tmp_path: Path, product: str, version: str, options=None) -> Server:
    install = fake_install(product, version, install_db=product == "mariadb")
    srv = Server(
        install=install,
        options=release_options.translate_options(rules.rules_for(product, version), options or {}),
    )
    srv.dir = tmp_path
    srv.port = 3306
    return srv


def cnf_lines(srv: Server) -> list[str]:
    return srv.my_cnf_text().splitlines()


def init_command(srv: Server) -> list[str]:
    captured: list[list[str]] = []
    srv._run_init = captured.append  # capture instead of running
    srv._initialise()
    (cmd,) = captured
    return cmd


@pytest.mark.parametrize(
    ("version", "present", "absent"),
    [
        ("5.7.44", ["secure-file-priv="], ["mysqlx=OFF"]),
        ("8.0.36", ["secure-file-priv=", "mysqlx=OFF"], []),
        ("8.4.3", ["secure-file-priv=", "mysqlx=OFF"], []),
        ("9.1.0", ["secure-file-priv=", "mysqlx=OFF"], []),
    ],
)
def test_mysql_my_cnf_and_initialize_insecure(tmp_path, version, present, absent):
    srv = unstarted(tmp_path, "mysql", version)
    lines = cnf_lines(srv)
    for line in present:
        assert line in lines
    for line in absent:
        assert line not in lines
    assert "plugin-dir=/opt/server/lib/plugin" in lines  # the install's own options
    assert init_command(srv) == [
        "/opt/loader",
        "--library-path",
        "/opt/libs",
        "/opt/server/bin/mysqld",
        f"--defaults-file={tmp_path / 'my.cnf'}",
        "--initialize-insecure",
    ]


@pytest.mark.parametrize(
    ("version", "init_args", "start_lines"),
    [
        ("10.2.11", ["--force"], []),
        ("10.11.19", ["--auth-root-authentication-method=normal"], []),
        ("11.4.5", ["--auth-root-authentication-method=normal"], ["skip-ssl"]),
    ],
)
def test_mariadb_my_cnf_and_install_script(tmp_path, version, init_args, start_lines):
    srv = unstarted(tmp_path, "mariadb", version)
    lines = cnf_lines(srv)
    assert "mysqlx=OFF" not in lines
    for line in start_lines:
        assert line in lines
    cmd = init_command(srv)
    assert cmd[:5] == [
        "/opt/loader",
        "--library-path",
        "/opt/libs",
        "/opt/server/scripts/mariadb-install-db",
        f"--defaults-file={tmp_path / 'my.cnf'}",
    ]
    for arg in init_args:
        assert arg in cmd


def test_profile_options_reach_the_my_cnf_translated(tmp_path):
    options = {"tx_isolation": "READ-COMMITTED", "innodb_log_file_size": "64M"}
    mysql = cnf_lines(unstarted(tmp_path, "mysql", "8.4.3", options))
    assert "transaction-isolation=READ-COMMITTED" in mysql
    assert "innodb_redo_log_capacity=128M" in mysql
    assert not any(line.startswith(("tx_isolation", "innodb_log_file_size")) for line in mysql)
    old = cnf_lines(unstarted(tmp_path, "mysql", "5.7.44", options))
    assert "innodb_log_file_size=64M" in old
    assert "innodb_log_files_in_group=2" in old


# --- the rules against real servers: Oracle MySQL 9.7, MariaDB 10.11 and 11.8 --------------


@pytest.fixture(params=["mysql-9.7.4", "mariadb-10.11.19", "mariadb-11.8.9"])
def real_install(request) -> Install:
    if request.param in (chroot_servers.MYSQL, chroot_servers.MARIADB):
        return chroot_servers.install_or_skip(request.param)
    cat = catalog.read_catalog(Path(__file__).resolve().parents[2] / "configs" / "versions.yaml")
    return providers.fetch(cat.get(request.param))


def variable(srv: Server, name: str) -> str | None:
    rows = srv.query("SHOW GLOBAL VARIABLES LIKE %s", (name,))
    return str(rows[0][1]) if rows else None


def plugin_status(srv: Server, name: str) -> str | None:
    rows = srv.query(
        "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = %s", (name,)
    )
    return str(rows[0][0]) if rows else None


@pytest.mark.integration
def test_real_server_matches_its_rule_and_takes_a_translated_profile(real_install, workroot):
    """One start per server: its defaults are what the rule says, and a profile written
    with another release's option names (tx_isolation, innodb_redo_log_capacity, the query
    cache) starts it with the settings the profile means."""
    rule = rules.rules_for(real_install.product, real_install.version)
    profile = {
        "innodb_redo_log_capacity": "96M",
        "tx_isolation": "READ-COMMITTED",
        "query_cache_type": "OFF",
    }
    options = release_options.translate_options(rule, profile)
    with Server(install=real_install, options=options, workroot=workroot) as srv:
        # defaults the profile does not touch
        assert variable(srv, "character_set_server") == rule.default_charset
        assert variable(srv, "collation_server") == rule.default_collation
        assert variable(srv, "log_bin") == ("ON" if rule.binlog_default else "OFF")
        assert (variable(srv, "query_cache_type") is not None) is rule.query_cache
        users = srv.query("SELECT DISTINCT plugin FROM mysql.user WHERE user = 'perftrack'")
        if rule.auth_plugin is not None:
            assert users == [(rule.auth_plugin,)]
        native = plugin_status(srv, "mysql_native_password")
        assert (native is None) is (rule.native_password == rules.NATIVE_REMOVED)
        if real_install.product == "mysql":
            assert variable(srv, "secure_file_priv") == ""
            assert plugin_status(srv, "mysqlx") == "DISABLED"
            assert variable(srv, "tx_isolation") is None  # removed in 8.0
        # the translated profile
        assert variable(srv, rule.isolation_var) == "READ-COMMITTED"
        total = int(variable(srv, rule.redo_log_option) or 0)
        if rule.redo_log_option == rules.REDO_LOG_FILE_SIZE:
            total *= rule.redo_log_files
        assert total == 96 << 20
        if rule.query_cache:
            assert variable(srv, "query_cache_type") == "OFF"


# --- the articles' old releases (issue 18) --------------------------------------------------


def test_mysql_51_has_no_utf8mb4_and_the_old_engine_variable():
    r = rules.rules_for("mysql", "5.1.73")
    assert r.engine_var == "storage_engine" and not r.drop_user_if_exists
    assert r.buffer_pool_default == 8 << 20 and r.unsupported is None
    assert rules.resolve_collation(r, "latin1") == ("latin1", "latin1_swedish_ci")
    assert (
        rules.resolve_collation(r, "utf8mb4") == "charset utf8mb4 does not exist on mysql 5.1–5.5"
    )
    assert "utf8mb4_general_ci is not available" in rules.resolve_collation(r, "utf8mb4_general_ci")
    assert r.tarball_file == "mysql-{version}-linux-x86_64-glibc23.tar.gz"


def test_mysql_55_and_56_rows():
    r55, r56 = rules.rules_for("mysql", "5.5.62"), rules.rules_for("mysql", "5.6.39")
    assert r55.engine_var == r56.engine_var == "default_storage_engine"
    assert "utf8mb4_unicode_520_ci" not in r55.collations
    assert "utf8mb4_unicode_520_ci" in r56.collations
    assert r56.init == rules.INIT_INSTALL_DB and r56.auth_plugin is None
    assert not r56.drop_user_if_exists and r56.query_cache


@pytest.mark.parametrize("version", ["4.1.15", "5.0.15"])
def test_mysql_41_and_50_are_in_the_table_as_unsupported_with_the_reason(version):
    r = rules.rules_for("mysql", version)
    assert r.unsupported and "information_schema" in r.unsupported
