"""The nightly names what it tracks as rules over the catalog (planning/selection.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from perftrack import cli
from perftrack.core.errors import ConfigError
from perftrack.planning import matrix, selection
from perftrack.servers import catalog, pin, tags

REPO = Path(__file__).resolve().parents[2]
NIGHTLY = REPO / "configs" / "matrices" / "nightly.yaml"
TRACKED = [
    "mysql-8.0.40",
    "mysql-8.0.39",
    "mysql-8.4.3",
    "mysql-8.4.2",
    "mysql-9.1.0",
    "mysql-9.0.1",
    "mysql-5.7.44",
    "percona-8.0.39",
    "percona-8.4.2",
    "mariadb-11.4.5",
    "mariadb-10.11.18",
]


def test_the_nightly_tracks_mysql_series_anchors_percona_mariadb_and_the_control() -> None:
    m = matrix.from_dict(yaml.safe_load(NIGHTLY.read_text()), str(NIGHTLY))
    assert list(m.servers) == TRACKED
    why = {c.server_id: c.why for c in m.selection}
    assert "predecessor" in why["mysql-8.4.2"] and "anchor" in why["mysql-5.7.44"]
    assert why["mariadb-10.11.18"].startswith("control")
    assert "selection" not in m.to_dict()  # the plan records the resolved list only


def test_a_tag_merged_into_the_catalog_joins_the_next_night_without_a_matrix_edit(
    configs,
) -> None:
    matrix_text = (configs / "matrices" / "nightly.yaml").read_text()
    tags.append(configs / "versions.yaml", [tags.Release("9.2.0", "sha256:" + "92" * 32, "x")])
    m = matrix.load(configs / "matrices" / "nightly.yaml")
    assert (configs / "matrices" / "nightly.yaml").read_text() == matrix_text
    nine = [s for s in m.servers if s.startswith("mysql-9.")]
    assert nine == ["mysql-9.2.0", "mysql-9.1.0"]  # newest and its predecessor; 9.0.1 left
    # the series without new releases keep their newest two
    assert {"mysql-8.4.3", "mysql-8.4.2", "mysql-8.0.40", "mysql-8.0.39"} <= set(m.servers)


def _rules(*rules: dict) -> dict:
    return {"select": list(rules)}


@pytest.mark.parametrize(
    ("spec", "complaint"),
    [
        (_rules({"why": "x", "product": "mysql", "series": "7.0"}), "selects no server"),
        (_rules({"why": "x", "product": "mysql", "series": 8.4}), "'series' must be quoted"),
        (_rules({"product": "mysql"}), "'why' .* is required"),
        (_rules({"why": "x", "product": "mysqll"}), "'product' must be one of"),
        (_rules({"why": "x", "product": "mysql", "newest": 0}), "'newest' must be"),
        (_rules({"why": "x", "product": "mysql", "provider": "dockr"}), "unknown provider"),
        (_rules({"why": "x", "id": "mysql-8.4.3", "newest": 2}), "'id' picks one server"),
        (_rules({"why": "x", "id": "mysql-8.4.33"}), "unknown server 'mysql-8.4.33'"),
        (_rules({"why": "x", "product": "mysql", "sereis": "8.4"}), "unknown key 'sereis'"),
        ({"select": []}, "lists no rule"),
        ({"pick": []}, "must be a list of ids or"),
    ],
)
def test_bad_rules_are_one_line_errors_naming_the_file_and_rule(spec, complaint) -> None:
    cat = catalog.load(REPO / "configs" / "versions.yaml")
    with pytest.raises(ConfigError, match=complaint) as info:
        selection.resolve(spec, cat, "nightly.yaml")
    msg = str(info.value)
    assert msg.startswith("nightly.yaml") and "\n" not in msg
    if spec.get("select"):
        assert "servers.select[0]" in msg


def test_plan_refuses_a_matrix_whose_rule_selects_nothing(configs, capsys) -> None:
    path = configs / "matrices" / "nightly.yaml"
    data = yaml.safe_load(path.read_text())
    data["servers"]["select"].append({"why": "typo", "product": "percona", "series": "5.5"})
    path.write_text(yaml.safe_dump(data))
    rc = cli.main(["plan", "nightly", "--out", str(configs / "plan.json")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "servers.select[8]: the rule 'newest 1 of percona 5.5' selects no server" in err
    assert len(err.strip().splitlines()) == 1 and not (configs / "plan.json").exists()


def test_plan_nightly_prints_each_server_with_its_rule_and_skips_the_unpinned(
    configs, capsys
) -> None:
    out_file = configs / "plan.json"
    rc = cli.main(["plan", "nightly", "--shards", "2", "--out", str(out_file)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "servers (11, chosen by the matrix's rules):" in out
    assert "mysql-8.4.2      newest 2 of mysql 8.4 (docker)" in out
    assert "note: skipped mysql-8.4.2: not yet pinned (run `perftrack servers pin" in out
    planned = {
        c["server_id"] for sh in json.loads(out_file.read_text())["shards"] for c in sh["cells"]
    }
    assert planned == {"mariadb-11.4.5", "mariadb-10.11.18"}  # only what is pinned runs


def test_plan_nightly_once_pinned_runs_every_tracked_server_and_the_budget_cuts(
    configs, capsys
) -> None:
    path = configs / "versions.yaml"
    cat = catalog.load(path)
    pins = [pin.Pin(s, "digest", "sha256:" + f"{i:02d}" * 32) for i, s in enumerate(TRACKED[:9])]
    assert all(cat.get(p.server_id).unpinned for p in pins)
    pin.write(path, pins)
    out_file = configs / "plan.json"
    rc = cli.main(["plan", "nightly", "--shards", "2", "--out", str(out_file)])
    out = capsys.readouterr().out
    assert rc == 0 and "SKIPPED" not in out
    plan = json.loads(out_file.read_text())
    planned = {c["server_id"] for sh in plan["shards"] for c in sh["cells"]}
    assert planned == set(TRACKED)
    full = sum(len(sh["cells"]) for sh in plan["shards"])
    rc = cli.main(
        ["plan", "nightly", "--shards", "2", "--budget-minutes", "60", "--out", str(out_file)]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "cut by the budget:" in out
    cut = json.loads(out_file.read_text())
    assert 0 < sum(len(sh["cells"]) for sh in cut["shards"]) < full
    # the control server survives any budget
    assert "mariadb-10.11.18" in {c["server_id"] for sh in cut["shards"] for c in sh["cells"]}
