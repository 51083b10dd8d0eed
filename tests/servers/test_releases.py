"""The release lines table (configs/releases.yaml, servers/releases.py): both version forms,
each line's dates and support, and a table or catalog that does not fit refused in one line."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perftrack import cli
from perftrack.core.errors import ConfigError
from perftrack.servers import catalog, releases, rules

REPO = Path(__file__).resolve().parents[2]
TABLE = releases.read_releases(REPO / "configs" / "releases.yaml")
DAY = dt.date(2026, 11, 28)


def test_both_version_forms_order_as_released() -> None:
    versions = ["8.4.9", "26.10.0", "5.7.44", "9.7.4", "26.7.0", "8.0.45", "27.1.0", "9.6.0"]
    ordered = sorted(versions, key=rules.parse_version)
    assert ordered == ["5.7.44", "8.0.45", "8.4.9", "9.6.0", "9.7.4", "26.7.0", "26.10.0", "27.1.0"]


@given(
    classic=st.tuples(st.integers(5, 9), st.integers(0, 7), st.integers(0, 99)),
    calendar=st.tuples(st.integers(26, 99), st.integers(1, 12), st.integers(0, 9)).filter(
        lambda v: v[:2] >= (26, 7)  # the first calendar version is 26.7.0
    ),
)
def test_a_calendar_version_is_newer_than_every_classic_one(classic, calendar) -> None:
    a, b = (".".join(map(str, v)) for v in (classic, calendar))
    assert rules.parse_version(a) < rules.parse_version(b)
    line = TABLE.line_of("mysql", b)
    assert line is not None and line.name == "innovation" and line.kind == releases.INNOVATION


@pytest.mark.parametrize(
    ("product", "version", "line"),
    [
        ("mysql", "5.7.44", "MySQL 5.7"),
        ("mysql", "8.0.45", "MySQL 8.0"),
        ("mysql", "8.4.9", "MySQL 8.4 LTS"),
        ("mysql", "9.7.4", "MySQL 9.7 LTS"),
        ("mysql", "9.6.0", "MySQL innovation"),
        ("mysql", "8.3.0", "MySQL innovation"),
        ("mysql", "26.7.0", "MySQL innovation"),
        ("mysql", "26.10.0", "MySQL innovation"),
        ("mysql", "27.1.0", "MySQL innovation"),  # the next one: no edit anywhere
        ("percona", "8.4.2", "MySQL 8.4 LTS"),  # Percona Server follows MySQL's lines
        ("mariadb", "11.8.9", "MariaDB 11.8 LTS"),
        ("mariadb", "10.11.18", "MariaDB 10.11 LTS"),
    ],
)
def test_each_version_is_on_its_line(product: str, version: str, line: str) -> None:
    assert TABLE.require_line(product, version).label == line


@pytest.mark.parametrize(
    ("version", "why"),
    [
        ("26.13.0", "13 is not a month"),
        ("26.1.0", "YY.M.P from 26.7.0"),  # calendar versions begin in July 2026
        ("12.1.0", "is on no release line of mysql"),
        ("26.10", "is on no release line of mysql"),  # an alias form, not a version
    ],
)
def test_a_version_on_no_line_is_one_line_naming_the_forms(version: str, why: str) -> None:
    with pytest.raises(ConfigError, match=why) as info:
        TABLE.require_line("mysql", version)
    assert "\n" not in str(info.value) and "configs/releases.yaml" in str(info.value)


def test_support_by_the_table_s_dates_and_innovation_supersession() -> None:
    known = ["26.7.0", "26.10.0", "9.7.4", "8.4.9"]
    assert TABLE.status("mysql", "8.4.9", known, DAY) == "supported until 2032-04-30"
    assert TABLE.status("mysql", "8.0.40", known, DAY) == "end of life 2026-04-30"
    assert TABLE.status("mysql", "5.7.44", known, DAY) == "end of life 2023-10-31"
    assert TABLE.status("mysql", "26.7.0", known, DAY) == "superseded by 26.10.0"
    assert TABLE.status("mysql", "26.10.0", known, DAY) == (
        "supported until the next innovation release"
    )
    assert TABLE.status("mysql", "9.7.4", known, dt.date(2026, 3, 1)) == "not yet GA"
    assert TABLE.supported("mysql", "9.7.4", known, DAY)
    assert not TABLE.supported("mysql", "8.0.40", known, DAY)


ROW = "product: mysql, line: '8.4', kind: lts, label: x, ga: 2024-04-30"


def _row(fields: str) -> str:
    return "  - {" + fields + "}\n"


def _table(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "releases.yaml"
    path.write_text("lines:\n" + text)
    return path


@pytest.mark.parametrize(
    ("rows", "complaint"),
    [
        (_row(ROW.replace("lts", "lst")), "unknown kind"),
        (_row(ROW.replace("'8.4'", "next")), "named MAJOR"),
        (_row(ROW.replace("mysql", "mysq")), "unknown product"),
        (
            _row(ROW + ", eol: 2020-01-01"),
            "its dates overlap: end of life 2020-01-01 is not after GA 2024-04-30",
        ),
        (
            "  - {product: mysql, line: '8.4', kind: lts, label: x, ga: 2024-04-30}\n"
            "  - {product: mysql, line: '8.4', kind: lts, label: y, ga: 2024-04-30}\n",
            "listed twice",
        ),
        (
            "  - {product: mysql, line: '9.7', kind: lts, label: x, ga: 2026-04-01}\n"
            "  - {product: mysql, line: innovation, kind: innovation, label: y, ga: 2023-07-18,"
            " series: ['9.7']}\n",
            "mysql 9.7 is on two lines",
        ),
        (
            "  - {product: mysql, line: '9.7', kind: lts, label: x, ga: 2026-04-01,"
            " calendar_from: '26.7'}\n",
            "belongs to the innovation line only",
        ),
        (
            "  - {product: mysql, line: innovation, kind: innovation, label: y, ga: 2023-07-18,"
            " calendar_from: '26.13'}\n",
            "13 is not a month",
        ),
        ("  - {product: mysql, line: '8.4', kind: lts, label: x, ga: soon}\n", "is not a date"),
        ("  - {product: mysql, line: '8.4', kind: lts, ga: 2024-04-30}\n", "missing 'label'"),
    ],
)
def test_a_bad_table_row_is_one_line(tmp_path: Path, rows: str, complaint: str) -> None:
    with pytest.raises(ConfigError, match=complaint) as info:
        releases.read_releases(_table(tmp_path, rows))
    assert "\n" not in str(info.value)


def test_the_catalog_refuses_a_version_on_no_line_with_its_file_and_line(tmp_path: Path) -> None:
    shutil.copy(REPO / "configs" / "releases.yaml", tmp_path / "releases.yaml")
    path = tmp_path / "versions.yaml"
    path.write_text(
        "servers:\n"
        "  - {id: mysql-26.7.0, product: mysql, version: 26.7.0, provider: docker,"
        " image: 'mysql:26.7.0', digest: unpinned}\n"
        "  - {id: mysql-26.13.0, product: mysql, version: 26.13.0, provider: docker,"
        " image: 'mysql:26.13.0', digest: unpinned}\n"
    )
    with pytest.raises(ConfigError, match=r"versions\.yaml:3: server 'mysql-26\.13\.0'.*month"):
        catalog.read_catalog(path)
    # MariaDB's lines are listed for their dates, not required: a rolling 12.x still loads
    path.write_text(
        "servers:\n  - {id: mariadb-12.1.2, product: mariadb, version: 12.1.2, provider: path,"
        " basedir: /opt/mariadb-12.1.2}\n"
    )
    entry = catalog.read_catalog(path).get("mariadb-12.1.2")
    assert releases.read_releases(releases.beside(path)).status("mariadb", entry.version) == (
        "no release line"
    )


def test_servers_list_shows_each_entry_s_line_and_support(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert cli.main(["servers", "list"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if " mysql-8.4.9 " in line)
    assert "MySQL 8.4 LTS" in row and "supported until 2032-04-30" in row
    row = next(line for line in out.splitlines() if " mysql-5.7.44 " in line)
    assert "MySQL 5.7" in row and "end of life 2023-10-31" in row
    row = next(line for line in out.splitlines() if " mysql-26.7.0 " in line)
    assert "MySQL innovation" in row and "superseded by 26.10.0" in row
