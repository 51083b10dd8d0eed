"""The nightly names what it tracks as rules over the catalog (planning/selection.py)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from perftrack import cli
from perftrack.core.errors import ConfigError
from perftrack.planning import matrix, pairing, selection
from perftrack.servers import catalog, pin, tags

REPO = Path(__file__).resolve().parents[2]
NIGHTLY = REPO / "configs" / "matrices" / "nightly.yaml"
# What the nightly picks from the committed catalog, by release line (configs/releases.yaml).
LINES = {
    "mysql-26.10.0": "MySQL innovation",
    "mysql-26.7.0": "MySQL innovation",
    "mysql-9.7.4-docker": "MySQL 9.7 LTS",
    "mysql-9.7.3": "MySQL 9.7 LTS",
    "mysql-8.4.9": "MySQL 8.4 LTS",
    "mysql-8.4.8": "MySQL 8.4 LTS",
    "mysql-8.0.40": "MySQL 8.0",
    "mysql-5.7.44": "MySQL 5.7",
    "percona-8.4.2": "MySQL 8.4 LTS",
    "mariadb-11.8.9-docker": "MariaDB 11.8 LTS",
    "mariadb-10.11.18": "MariaDB 10.11 LTS",
}
TRACKED = list(LINES)


def test_the_nightly_follows_the_release_lines_anchors_percona_mariadb_and_the_control() -> None:
    m = matrix.from_dict(yaml.safe_load(NIGHTLY.read_text()), str(NIGHTLY))
    assert list(m.servers) == TRACKED
    assert {c.server_id: c.line for c in m.selection} == LINES
    why = {c.server_id: c.why for c in m.selection}
    rule = {c.server_id: c.rule for c in m.selection}
    assert rule["mysql-26.10.0"] == "newest 2 of mysql's innovation track (docker)"
    assert rule["mysql-9.7.3"] == "newest 2 of each supported mysql LTS line (docker)"
    assert "anchor" in why["mysql-5.7.44"] and "anchor" in why["mysql-8.0.40"]
    assert why["mariadb-10.11.18"].startswith("control")
    assert "selection" not in m.to_dict()  # the plan records the resolved list only


def test_lines_move_by_their_dates_in_the_table_with_no_matrix_edit() -> None:
    """On 2032-05-01 the 8.4 LTS line has ended: it leaves `lts` and joins `eol`, whose two
    newest lines are then 8.4 and 8.0 (5.7 leaves); 9.7 is the only supported LTS line."""
    cat = catalog.read_catalog(REPO / "configs" / "versions.yaml")
    spec = yaml.safe_load(NIGHTLY.read_text())["servers"]
    notes: list[str] = []
    later = selection.resolve(spec, cat, "nightly.yaml", today=dt.date(2032, 5, 1), notes=notes)
    lines = {c.server_id: c.line for c in later}
    # no Percona release of 9.7 in the catalog, and every MariaDB LTS line of the table has
    # ended by then: those rules are notes tonight, not errors
    assert notes == [
        "nightly.yaml: servers.select[3]: the rule 'newest 1 of each supported percona LTS "
        "line (docker)' selects no server on 2032-05-01 (its lines' dates)",
        "nightly.yaml: servers.select[4]: the rule 'newest 1 of the newest supported mariadb "
        "LTS line (docker)' selects no server on 2032-05-01 (its lines' dates)",
    ]
    assert [s for s, line in lines.items() if line == "MySQL 8.4 LTS"] == ["mysql-8.4.9"]
    assert "mysql-8.4.8" not in lines and "mysql-5.7.44" not in lines
    assert {"mysql-9.7.4-docker", "mysql-9.7.3", "mysql-8.0.40"} <= set(lines)
    # before 9.7's GA it was no supported line yet: 8.4 was the newest
    earlier = selection.resolve(spec, cat, "nightly.yaml", today=dt.date(2026, 3, 1))
    assert not {"mysql-9.7.4-docker", "mysql-9.7.3"} & {c.server_id for c in earlier}


def test_a_tag_merged_into_the_catalog_joins_the_next_night_without_a_matrix_edit(
    configs,
) -> None:
    matrix_text = (configs / "matrices" / "nightly.yaml").read_text()
    release = tags.Release(version="27.1.0", digest="sha256:" + "27" * 32, github_tag="x")
    tags.append(configs / "versions.yaml", [release])
    m = matrix.read_matrix(configs / "matrices" / "nightly.yaml")
    assert (configs / "matrices" / "nightly.yaml").read_text() == matrix_text
    innovation = [c.server_id for c in m.selection if c.line == "MySQL innovation"]
    assert innovation == ["mysql-27.1.0", "mysql-26.10.0"]  # newest and predecessor; 26.7.0 left
    # the LTS lines without new releases keep their newest two
    assert {"mysql-9.7.4-docker", "mysql-9.7.3", "mysql-8.4.9", "mysql-8.4.8"} <= set(m.servers)


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
        (_rules({"why": "x", "product": "mysql", "lines": "ltss"}), "'lines' must be one of"),
        (_rules({"why": "x", "product": "mysql", "lines": 8.4}), "'lines' must be one of"),
        (_rules({"why": "x", "product": "mysql", "lines": "lts", "series": "8.4"}), "not both"),
        (_rules({"why": "x", "product": "mysql", "newest_lines": 2}), "needs 'lines'"),
        (_rules({"why": "x", "product": "percona", "lines": "innovation"}), "selects no server"),
        ({"select": []}, "lists no rule"),
        ({"pick": []}, "must be a list of ids or"),
    ],
)
def test_bad_rules_are_one_line_errors_naming_the_file_and_rule(spec, complaint) -> None:
    cat = catalog.read_catalog(REPO / "configs" / "versions.yaml")
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
    assert "servers.select[6]: the rule 'newest 1 of percona 5.5' selects no server" in err
    assert len(err.strip().splitlines()) == 1 and not (configs / "plan.json").exists()


def test_plan_nightly_prints_each_server_with_its_rule_and_skips_the_unpinned(
    configs, capsys
) -> None:
    out_file = configs / "plan.json"
    rc = cli.main(["plan", "nightly", "--shards", "2", "--out", str(out_file)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "servers (11, chosen by the matrix's rules):" in out
    assert (
        "  mysql-8.4.8            MySQL 8.4 LTS      newest 2 of each supported mysql LTS line"
        " (docker): each supported LTS line" in out
    )
    assert "note: skipped mysql-8.4.8: not yet pinned (run `perftrack servers pin" in out
    planned = {
        c["server_id"] for sh in json.loads(out_file.read_text())["shards"] for c in sh["cells"]
    }
    assert planned == {"mariadb-10.11.18"}  # only what is pinned runs


def pin_tracked(configs: Path) -> catalog.Catalog:
    """The config copy's catalog with every tracked docker entry pinned (stand-in digests)."""
    path = configs / "versions.yaml"
    cat = catalog.read_catalog(path)
    pins = [pin.Pin(s, "digest", "sha256:" + f"{i:02d}" * 32) for i, s in enumerate(TRACKED[:10])]
    assert all(cat.get(p.server_id).unpinned for p in pins)
    pin.write(path, pins)
    return catalog.read_catalog(path)


def test_plan_nightly_keeps_every_pair_it_compares_on_one_runner(configs, capsys) -> None:
    """The real nightly matrix through the real planner, on 4 shards: a night compares each
    version step of a product (5.7.44 -> 8.0.40 -> … -> 26.10.0, percona, mariadb) and
    latin1 with utf8mb4 of each server, per workload and thread count, so each (product,
    workload, threads) runs whole on one shard; the shards still balance."""
    cat = pin_tracked(configs)
    out_file = configs / "plan.json"
    rc = cli.main(["plan", "nightly", "--shards", "4", "--out", str(out_file)])
    out = capsys.readouterr().out
    assert rc == 0 and "SKIPPED" not in out
    plan = json.loads(out_file.read_text())
    assert len(plan["shards"]) == 4
    shards_of: dict[tuple, set[int]] = {}
    charsets_of: dict[tuple, set[str]] = {}
    for sh in plan["shards"]:
        for c in sh["cells"]:
            key = (cat.get(c["server_id"]).product, c["workload"], c["threads"])
            shards_of.setdefault(key, set()).add(sh["shard"])
            charsets_of.setdefault((c["server_id"], *key[1:]), set()).add(c["charset_axis"])
    assert len(shards_of) == 3 * 3 * 4  # mysql, percona, mariadb x workloads x threads
    assert all(len(v) == 1 for v in shards_of.values()), "a compared pair split across runners"
    assert all(v == {"latin1", "utf8mb4"} for v in charsets_of.values())
    assert plan["pairing"]["comparison_groups"] == 36 and plan["pairing"]["split_pairs"] == []
    assert "pairing: 36 comparison group(s); each comparison group" in out
    assert (
        pairing.split_in_file(plan, lambda sid: (cat.get(sid).product, cat.get(sid).version)) == []
    )
    loads = [sh["estimate_s"] for sh in plan["shards"]]
    assert max(loads) <= 1.1 * sum(loads) / len(loads)  # balanced within 10% of the mean


def test_plan_nightly_once_pinned_runs_every_tracked_server_and_the_budget_cuts(
    configs, capsys
) -> None:
    pin_tracked(configs)
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
