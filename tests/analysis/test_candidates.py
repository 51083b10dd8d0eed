"""What `perftrack explain` tries (analysis/candidates.py), on the real variables of every
catalog pair in data/results.duckdb and on names that only look like paths."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import pytest

from perftrack.analysis import candidates
from perftrack.experiments import explanation
from perftrack.servers import rules
from perftrack.store import store

REPO = Path(__file__).resolve().parents[2]
DB = REPO / "data" / "results.duckdb"
# The reviewed table: every (variable, kind) explain leaves out on some pair of the
# committed data, each read by a person (the kinds: candidates.py's words).
REVIEWED = REPO / "tests" / "fixtures" / "explain" / "left_out.csv"
KINDS = {
    candidates.ONLY_IN_A,
    candidates.ONLY_IN_B,
    candidates.NULL_IN_A,
    candidates.SET_BY_PERFTRACK,
    candidates.NOT_SETTABLE_BY_VALUE,
    candidates.VERSION_STRING,
    candidates.READ_ONLY,
    candidates.PATH,
    candidates.SIZED,
    candidates.NOT_ONE_LINE,
    candidates.RULES_REFUSE,
    candidates.RULES_DROP,
}


def real_pairs() -> list[tuple[str, str, list, list]]:
    """(A, B, candidates, left out) for every pair of servers of one product in the
    committed data, A the older release; each server's variables as it ran most often with
    its defaults (the default profile, any charset)."""
    with store.open_db(DB, write=False) as st:
        rows = st.con.execute(
            """SELECT s.server_id, s.product, s.version, r.varset_hash, count(*) AS n
               FROM results r JOIN servers s USING (server_key)
               WHERE r.varset_hash IS NOT NULL AND r.profile IN ('default', 'local-default')
               GROUP BY ALL ORDER BY s.server_id, n DESC, r.varset_hash"""
        ).fetchall()
        best: dict[str, tuple[str, str, str]] = {}
        for sid, product, version, h, _n in rows:
            best.setdefault(sid, (product, version, h))
        sets = st.variable_sets(*(h for _p, _v, h in best.values()))
    ordered = sorted(best.items(), key=lambda kv: (kv[1][0], rules.parse_version(kv[1][1])))
    out = []
    for (a, (pa, _va, ha)), (b, (pb, vb, hb)) in itertools.combinations(ordered, 2):
        if pa == pb:
            cands, left = candidates.select(sets[ha], sets[hb], rules.rules_for(pb, vb))
            out.append((a, b, cands, left))
    return out


def test_every_variable_left_out_on_a_real_catalog_pair_is_reviewed() -> None:
    with REVIEWED.open(newline="") as f:
        reviewed = {(r["variable"], r["kind"]) for r in csv.DictReader(f)}
    assert {k for _v, k in reviewed} <= KINDS
    pairs = real_pairs()
    assert len(pairs) >= 10  # the committed data's MariaDB releases, at least
    seen = {(x.name, x.kind) for _a, _b, _c, left in pairs for x in left}
    unreviewed = sorted(seen - reviewed)
    assert not unreviewed, (
        f"left out without review ({len(unreviewed)}): {unreviewed[:10]}: read each and add "
        f"it to {REVIEWED.relative_to(REPO)} (or make it a candidate)"
    )
    # innodb_adaptive_hash_index (ON in 10.1/10.2, OFF from 10.5) is tried wherever it
    # differs: the default that explains much of 10.2 -> 10.11's point-select gap
    ahi = [
        (a, b)
        for a, b, cands, _l in pairs
        if any(c.name == "innodb_adaptive_hash_index" for c in cands)
    ]
    assert ("mariadb-10.2.11", "mariadb-10.11.5") in ahi
    for _a, _b, _c, left in pairs:
        assert "innodb_adaptive_hash_index" not in {
            x.name for x in left if x.kind != candidates.ONLY_IN_A
        }
    # the terminal's summary of what was left out: one line per kind, every kind labelled,
    # a few names each (the real explain's line was 2,000 characters of "only in A: …")
    *_ab, left = next(p for p in pairs if p[:2] == ("mariadb-10.2.11", "mariadb-10.11.5"))
    lines = explanation.left_out_lines(left)
    kinds = {x.kind for x in left}
    assert len(lines) == 1 + len(kinds) and all(len(ln) < 160 for ln in lines), lines
    assert sum(int(ln.split()[0]) for ln in lines[1:]) == len(left)
    assert all(candidates.KIND_LABELS[k] in "\n".join(lines) for k in kinds)
    assert set(candidates.KIND_LABELS) == KINDS


@pytest.mark.parametrize(
    ("name", "a", "b", "kind"),
    [
        ("innodb_adaptive_hash_index", "ON", "OFF", None),  # `_index`, a switch: tried
        ("innodb_adaptive_hash_index_parts", "8", "16", None),
        ("innodb_file_per_table", "OFF", "ON", None),
        ("binlog_file_cache_size", "16384", "32768", None),
        ("some_cache_dir", "1", "2", None),  # a number is never a path
        ("tls_version", "TLSv1.2", "TLSv1.2,TLSv1.3", None),  # a setting, not a build
        ("log_bin_index", "/var/lib/mysql/binlog.index", "/x/binlog.index", candidates.PATH),
        ("general_log_file", "host.log", "other.log", candidates.PATH),  # by name
        ("some_new_thing", "./relative/dir/", "./other/", candidates.PATH),  # by value
        ("audit_output", "audit.log", "audit2.log", candidates.PATH),  # a log file's name
        ("version_comment", "MariaDB Server", "Debian 13", candidates.VERSION_STRING),
    ],
)
def test_paths_are_told_by_value_and_by_name_never_by_suffix_alone(name, a, b, kind) -> None:
    rule = rules.rules_for("mariadb", "10.11.19")
    cands, left = candidates.select({name: a}, {name: b}, rule)
    if kind is None:
        assert [c.name for c in cands] == [name] and left == []
    else:
        assert cands == [] and [(x.name, x.kind) for x in left] == [(name, kind)]
