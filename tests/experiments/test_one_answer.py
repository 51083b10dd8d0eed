"""One cell, one answer (issue 36 item 2): `compare --until-conclusive` and explain's first
stage, run on real servers one after the other on the same cell of a pair with a real
effect (~20% here), give the same verdict and ratios within ~12% (no gross split).
Explain's gap is decided by compare's own sequential rule (explain.Search._stage).

The pair: two stand-ins of the cached MariaDB 10.11.18 that differ in settings with a
real, steady CPU cost on every statement (A_OPTS/B_OPTS below, measured here first).
Both are stand-ins of one binary: the test is about perftrack's two measuring paths, not
about a release.

Why ~20% and not the issue's ~10%: with the performance schema's cost (5-7%) one outlier
round on the loaded CI machine of stop 44 (a round at ~0.6x) kept compare's paired
interval wide for all 32 rounds, `inconclusive` after its 5-minute budget, while explain,
minutes later, said `regression`. The product did what it says (an honest inconclusive);
the test needs an effect that a single bad round cannot hide.
"""

from __future__ import annotations

import math
from pathlib import Path

import standins
from perftrack.experiments import conclude, explain
from perftrack.planning import cells
from perftrack.run import runner
from perftrack.servers import catalog

# B pays for the performance schema with its statement histories and for the general query
# log, written to /dev/null: CPU on every statement, nothing that grows. (A general log
# written to a file in the datadir was not a steady cost: it grew by ~30 MB a round and
# the writeback with it; explain's longer-kept B measured 0.705 where compare, minutes
# before, measured 0.837.) Measured here with compare's kept servers (oltp_point_select,
# 2 threads, 2 x 10k rows, 3 s rounds, quiet): per-round B/A 0.72, then 0.78-0.82.
A_OPTS = ["performance_schema=OFF"]
B_OPTS = [
    "performance_schema=ON",
    "performance-schema-consumer-events-statements-history=ON",
    "performance-schema-consumer-events-statements-history-long=ON",
    "general_log=ON",
    "general_log_file=/dev/null",
]
CELL = {
    "workload": "oltp_point_select", "threads": 2, "duration_s": 3, "warmup_s": 1,
    "tables": 2, "table_size": 10_000, "min_effect": 0.05,
}  # fmt: skip


def test_real_compare_and_explain_first_stage_agree_on_a_real_regression(
    tmp_path: Path, workroot: Path
):
    cfg = standins.pair_configs(tmp_path / "configs", A_OPTS, B_OPTS, "one-answer")
    cat = catalog.read_catalog(cfg / "versions.yaml")
    lines: list[str] = []
    # both with the servers kept up for the sequence: explain's lifetime
    req = conclude.Request(
        a="ea", b="eb", budget_s=300, **CELL, server_lifetime=cells.EXPLAIN_SERVER_LIFETIME
    )  # fmt: skip
    seq = conclude.run_rounds(
        req, cat, cfg, tmp_path / "r.duckdb", tmp_path / "runs", lines.append, workroot=workroot
    )
    got = [r.comparison for r in seq.rounds if r.comparison is not None]
    assert got, "\n".join(lines)
    # kept servers: each arm's server starts once for the whole sequence, every round
    # still its own run, read back and verified (the `workroot` fixture: stopped at its end)
    starts: dict[str, int] = {}
    for rid in seq.run_ids:
        rd = runner.RunDir(tmp_path / "runs" / rid)
        assert rd.status()["server_lifetime"] == "run"
        for sid, n in rd.status()["server_starts"].items():
            starts[sid] = starts.get(sid, 0) + n
        for recs in rd.attempts().values():
            assert recs[-1]["effective"]["server_lifetime"] == "run"
    assert starts == {"ea": 1, "eb": 1}, starts
    c = got[-1]
    res = explain.first_stage(req, cat, cfg, tmp_path / "runs", lines.append, workroot=workroot)
    g = res.gap
    print("\n".join(lines))  # the test's record (pytest -s)
    assert g is not None, res.stop
    print(f"compare: {c.ratio:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}] {seq.verdict}")
    print(f"explain stage 1: {g.ratio:.3f} [{g.ci_low:.3f}, {g.ci_high:.3f}] {g.verdict}")
    # a real regression (~20% here), called the same by both
    assert seq.verdict == "regression" and g.verdict == "regression", (seq.verdict, g.verdict)
    assert c.ci_high < 1 and g.ci_high < 1
    # and about the same size: the two sessions run minutes apart, and the effect itself
    # drifts between sessions here by ~±3% (seen: 0.946 / 0.928 and 0.909 / 0.955), more
    # than either session's interval says. The verdicts are the item's test (the issue's
    # case: compare `regression`, explain `no regression`); the size bound only catches a
    # gross split (0.80 against 0.92 fails it). 8% was too tight: a fresh-clone run with a
    # unit-test run beside it measured 0.805 against 0.736 (log 0.090), both `regression`.
    assert abs(math.log(c.ratio / g.ratio)) < 0.12, (c.ratio, g.ratio)
    assert not explain.excludes_regression(g.ci_low, req.min_effect)  # explain goes on
    # the `workroot` fixture checks that no server runs and no directory is left
