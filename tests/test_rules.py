import pytest

from perftrack import rules
from perftrack.errors import ConfigError


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
    with pytest.raises(ConfigError, match=r"no version rules for mysql 5\.6"):
        rules.rules_for("mysql", "5.6.51")
    with pytest.raises(ConfigError, match="is not a version"):
        rules.parse_version("8.0.x; rm -rf /")


def test_versions_sort_numerically():
    assert rules.parse_version("10.11.18") > rules.parse_version("10.2.11")
