"""Setting values compared after normalisation (analysis/settings.py)."""

from __future__ import annotations

import pytest

from perftrack.analysis import settings


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("0", "0.000000"),  # expire_logs_days in MariaDB 10.2 and 10.11
        ("utf8", "utf8mb3"),  # character_set_system
        ("utf8_general_ci", "utf8mb3_general_ci"),
        ("ON", "1"),
        ("TRUE", "on"),
        ("OFF", "0"),
        ("134217728", "1.34217728e8"),
    ],
)
def test_the_same_value_spelled_two_ways_is_no_change(a: str, b: str) -> None:
    assert settings.same(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("OFF", "ON"),
        ("NO", "YES"),  # have_openssl
        ("0", "254"),
        ("SINGLE_PREC_HB", "DOUBLE_PREC_HB"),
        ("utf8mb3", "utf8mb4"),
        ("utf8", "utf8mb4"),
        (None, "1"),
    ],
)
def test_a_real_change_stays_a_change(a: str | None, b: str) -> None:
    assert not settings.same(a, b)


def test_changed_keeps_only_real_changes() -> None:
    diff = {"expire_logs_days": ["0", "0.000000"], "histogram_size": ["0", "254"]}
    assert settings.changed(diff) == {"histogram_size": ["0", "254"]}
