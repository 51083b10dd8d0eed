"""`perftrack bisect GOOD BAD`: halving over catalog releases, on real servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from clirun import assert_one_line_error, perftrack
from perftrack.analysis import stats
from perftrack.experiments import bisect, conclude
from perftrack.servers import catalog
from standins import WORKLOAD, write_configs


def _settled(req: conclude.Request, verdict: str) -> conclude.Sequence:
    """An outcome whose one look said `verdict` (the halving logic alone, no servers)."""
    c = stats.Comparison(
        n_a=4,
        n_b=4,
        mean_a=100.0,
        mean_b=90.0,
        ratio=0.9,
        ci_low=0.8,
        ci_high=1.0,
        p_value=0.05,
        threshold=0.2,
        verdict=verdict,
    )
    o = conclude.Sequence(request=req, looks_planned=1, stop="test")
    o.rounds.append(
        conclude.Round(
            number=4, n_a=4, n_b=4, comparison=c, look=1, round_s=1.0, machine_s=1.0, run_id="run"
        )
    )
    return o


def test_releases_are_in_version_order_not_file_order(tmp_path: Path):
    cfg = write_configs(tmp_path / "configs", first_bad=3)
    text = (cfg / "versions.yaml").read_text()
    # put sa-2 last in the file: the list still follows the version numbers
    entries = text.split("  - id: ")
    moved = [entries[0], *entries[1:2], *entries[3:], entries[2]]
    (cfg / "versions.yaml").write_text("  - id: ".join(moved))
    cat = catalog.read_catalog(cfg / "versions.yaml")
    assert [e.id for e in bisect.releases(cat, "sa-1", "sa-5")] == [
        "sa-1", "sa-2", "sa-3", "sa-4", "sa-5",
    ]  # fmt: skip
    assert [e.id for e in bisect.releases(cat, "sa-2", "sa-4")] == ["sa-2", "sa-3", "sa-4"]


def test_an_inconclusive_step_stops_and_reports_the_range_left(tmp_path: Path):
    cfg = write_configs(tmp_path / "configs", first_bad=3)
    rel = bisect.releases(catalog.read_catalog(cfg / "versions.yaml"), "sa-1", "sa-5")
    verdicts = iter(["unchanged", "inconclusive"])
    lines: list[str] = []
    res = bisect.halve_releases(
        rel,
        conclude.Request(a="sa-1", b="sa-5", budget_s=600),
        lambda req: _settled(req, next(verdicts)),
        lines.append,
    )
    assert not res.found and res.first_bad is None
    assert [s.candidate for s in res.steps] == ["sa-3", "sa-4"]
    assert "one of sa-4, sa-5 (after sa-3)" in lines[-1]


@pytest.mark.parametrize(
    ("good", "bad", "needle"),
    [
        ("sa-5", "sa-1", "must be older than BAD"),
        ("sa-1", "sa-1", "two different releases"),
        ("sa-1", "nope", "unknown server 'nope'"),
        ("sa-1", "mdb", "bisect within one product"),
    ],
)
def test_bad_bisect_input_is_one_line(tmp_path: Path, good: str, bad: str, needle: str):
    cfg = write_configs(tmp_path / "configs", first_bad=3)
    with (cfg / "versions.yaml").open("a") as f:
        f.write(
            "  - {id: mdb, product: mysql, version: '8.0.40', provider: path, "
            f"basedir: {tmp_path}}}\n"
        )
    res = perftrack("bisect", good, bad, "--dry-run", env={"PERFTRACK_CONFIG_DIR": str(cfg)})
    assert_one_line_error(res, 2, needle)


def test_a_bad_step_budget_is_refused(tmp_path: Path):
    cfg = write_configs(tmp_path / "configs", first_bad=3)
    env = {"PERFTRACK_CONFIG_DIR": str(cfg)}
    res = perftrack("bisect", "sa-1", "sa-5", "--step-budget", "0", env=env)
    assert_one_line_error(res, 2, "--budget must be a positive")


def test_dry_run_prints_the_list_and_the_plan(tmp_path: Path):
    cfg = write_configs(tmp_path / "configs", first_bad=3)
    res = perftrack(
        "bisect", "sa-1", "sa-5", "--dry-run", "--step-budget", "3",
        "--db", str(tmp_path / "r.duckdb"), env={"PERFTRACK_CONFIG_DIR": str(cfg)},
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "5 releases from sa-1 (good) to sa-5 (bad)" in out
    assert "at most 2 step(s)" in out and "step 1: sa-3 vs sa-1" in out
    assert not (tmp_path / "r.duckdb").exists()  # nothing ran


def test_bisect_finds_the_first_bad_stand_in_on_real_servers(tmp_path: Path, workroot: Path):
    cfg = write_configs(tmp_path / "configs", first_bad=3)
    cat = catalog.read_catalog(cfg / "versions.yaml")
    # The slow stand-ins are >5x slower; on this loaded 2-core VM the fast ones vary by
    # 30-50%, so "unchanged" is claimed within ±50% (the default ±10% needs ~100 rounds).
    template = conclude.Request(
        a="sa-1", b="sa-5", budget_s=150, workload=WORKLOAD, threads=2, duration_s=2, warmup_s=0,
        min_effect=0.5,
    )  # fmt: skip
    lines: list[str] = []
    res = bisect.bisect(
        cat, "sa-1", "sa-5", template, cfg, tmp_path / "r.duckdb", tmp_path / "runs",
        lines.append, workroot=workroot,
    )  # fmt: skip
    assert res.found, "\n".join(lines)
    assert res.first_bad == "sa-3"
    assert [(s.candidate, s.verdict) for s in res.steps] == [
        ("sa-3", "regression"),
        ("sa-2", "unchanged"),
    ]
    assert lines[-1].startswith("first bad release: sa-3 (last good: sa-2)")
