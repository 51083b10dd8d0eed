from pathlib import Path

import pytest

from perftrack.core import paths
from perftrack.core.errors import ConfigError
from perftrack.planning import matrix
from perftrack.servers import catalog

BASE = {
    "name": "m",
    "servers": ["a"],
    "workloads": ["oltp_point_select"],
    "charsets": ["latin1"],
    "threads": [1],
}


def test_shipped_matrices_load():
    for name in ("smoke", "nightly", "tiny"):
        m = matrix.read_matrix(paths.matrix_path(name))
        assert m.name == name
        assert {"oltp_point_select"} <= set(m.workloads)


def test_every_shipped_matrix_names_catalog_servers_only():
    known = catalog.read_catalog().ids
    for path in sorted((paths.config_dir() / "matrices").glob("*.yaml")):
        m = matrix.read_matrix(path)
        assert set(m.servers) <= set(known), (path.name, set(m.servers) - set(known))


@pytest.mark.parametrize("name", ["smoke", "mysql-local", "nightly-local", "mysql-lts-local"])
def test_local_matrices_ask_for_the_pinned_mysql_9_7_4(name):
    assert "mysql-9.7.4" in matrix.read_matrix(paths.matrix_path(name)).servers


def test_the_published_mysql_lts_matrix_is_what_issue_35_asks_for():
    """MySQL 9.7.4 against MariaDB 10.11 / 11.4 / 11.8, the nightly's three workloads, both
    charsets, >= 5 interleaved rounds of >= 30 s measured."""
    m = matrix.read_matrix(paths.matrix_path("mysql-lts-local"))
    nightly = matrix.read_matrix(paths.matrix_path("nightly"))
    assert m.servers == ("mysql-9.7.4", "mariadb-10.11.19", "mariadb-11.4.5", "mariadb-11.8.9")
    assert (m.workloads, m.charsets) == (nightly.workloads, ("latin1", "utf8mb4"))
    assert m.repeats >= 5 and m.duration_s >= 30 and m.warmup_s > 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"threads": [0]}, "'threads' must be a whole number from 1"),
        ({"repeats": True}, "'repeats' must be a whole number"),
        ({"workloads": ["oltp_nope"]}, "unknown workload 'oltp_nope'"),
        ({"servers": ["$(reboot)"]}, "'servers' has '\\$\\(reboot\\)'"),
        ({"servers": []}, "'servers' must be a non-empty list"),
        ({"bogus": 1}, "unknown key 'bogus'"),
        ({"connection": "pipe"}, "'connection' must be tcp or socket"),
        ({"server_lifetime": "night"}, "'server_lifetime' must be group or run, not 'night'"),
        (
            {"server_lifetime": "run", "prepost": True, "workloads": ["oltp_read_write"]},
            "'prepost' measures reads on freshly prepared data",
        ),
        (
            {"threads": [4096] * 1, "repeats": 100, "servers": [f"s{i}" for i in range(1001)]},
            "cells is more than",
        ),
    ],
)
def test_bad_matrices_are_one_line_errors(change, message):
    with pytest.raises(ConfigError, match=message):
        matrix.from_dict({**BASE, **change})


def test_missing_key():
    d = dict(BASE)
    del d["charsets"]
    with pytest.raises(ConfigError, match="missing key 'charsets'"):
        matrix.from_dict(d)


def test_malformed_yaml_names_file_and_line(tmp_path: Path):
    p = tmp_path / "bad.yaml"
    p.write_text("name: x\nservers: [a, b\nworkloads: [c]\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:\d+: malformed YAML"):
        matrix.read_matrix(p)


def test_server_lifetime_is_kept_in_the_plan_only_when_not_the_default():
    assert "server_lifetime" not in matrix.from_dict(BASE).to_dict()  # old plans unchanged
    kept = matrix.from_dict({**BASE, "server_lifetime": "run"})
    assert kept.server_lifetime == "run"
    assert matrix.from_dict(kept.to_dict()).server_lifetime == "run"
