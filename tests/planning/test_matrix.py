from pathlib import Path

import pytest

from perftrack.core import paths
from perftrack.core.errors import ConfigError
from perftrack.planning import matrix

BASE = {
    "name": "m",
    "servers": ["a"],
    "workloads": ["oltp_point_select"],
    "charsets": ["latin1"],
    "threads": [1],
}


def test_shipped_matrices_load():
    for name in ("smoke", "nightly", "tiny"):
        m = matrix.load(paths.matrix_path(name))
        assert m.name == name
        assert {"oltp_point_select"} <= set(m.workloads)


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
        matrix.load(p)


def test_server_lifetime_is_kept_in_the_plan_only_when_not_the_default():
    assert "server_lifetime" not in matrix.from_dict(BASE).to_dict()  # old plans unchanged
    kept = matrix.from_dict({**BASE, "server_lifetime": "run"})
    assert kept.server_lifetime == "run"
    assert matrix.from_dict(kept.to_dict()).server_lifetime == "run"
