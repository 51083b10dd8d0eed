"""runners/preflight (perftrack.host.preflight): the refusal decision over given samples, the
limits from configs/runners.yaml, /proc/stat parsing, and one real probe asserting only
its structure (no timing assertions: this machine is shared and its noise varies).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from perftrack import cli
from perftrack.core import hardware
from perftrack.core.errors import ConfigError, EnvironmentProblem
from perftrack.host import preflight
from perftrack.host.preflight import Limits, ProbeSample

REPO = Path(__file__).resolve().parents[2]
QUIET = ProbeSample(
    interval_s=4.0,
    steal_pct=0.1,
    iowait_pct=0.3,
    other_busy_pct=1.5,
    other_runnable=0.0,
    loop_times_s=(0.020, 0.0201, 0.0199, 0.0200, 0.0202),
)


def test_quiet_sample_passes() -> None:
    assert preflight.judge(QUIET, Limits()) == []


@pytest.mark.parametrize(
    ("changes", "key", "figure"),
    [
        ({"steal_pct": 7.5}, "max_steal_pct", "CPU steal 7.5% > 2%"),
        ({"iowait_pct": 12.0}, "max_iowait_pct", "iowait 12.0% > 5%"),
        ({"other_busy_pct": 55.0}, "max_other_busy_pct", "other processes 55.0% > 10%"),
        ({"other_runnable": 3.0}, "max_other_runnable", "other processes 3.0 > 0.5"),
        ({"loop_times_s": (0.02, 0.03, 0.02, 0.04, 0.02)}, "max_loop_cv_pct", "CV 34.4% > 3%"),
    ],
)
def test_each_noisy_figure_is_refused_naming_it_and_its_limit(changes, key, figure) -> None:
    sample = ProbeSample(**{**QUIET.__dict__, **changes})
    (violation,) = preflight.judge(sample, Limits())
    assert violation.key == key
    message = preflight.refusal([violation])
    assert figure in message
    assert f"(preflight.{key})" in message
    assert message.endswith("limits in configs/runners.yaml")
    assert "\n" not in message


def test_limits_are_inclusive_and_configurable() -> None:
    at_limit = ProbeSample(
        interval_s=4.0,
        steal_pct=2.0,
        iowait_pct=5.0,
        other_busy_pct=10.0,
        other_runnable=0.5,
        loop_times_s=QUIET.loop_times_s,
    )
    assert preflight.judge(at_limit, Limits()) == []
    strict = preflight.limits_from({"max_steal_pct": 0.05}, "x")
    assert [v.key for v in preflight.judge(QUIET, strict)] == ["max_steal_pct"]


def test_several_violations_make_one_line() -> None:
    noisy = ProbeSample(
        interval_s=4.0,
        steal_pct=9.0,
        iowait_pct=9.0,
        other_busy_pct=90.0,
        other_runnable=4.0,
        loop_times_s=(0.01, 0.05, 0.01, 0.05),
    )
    violations = preflight.judge(noisy, Limits())
    assert len(violations) == 5
    assert "\n" not in preflight.refusal(violations)


@pytest.mark.parametrize(
    ("raw", "complaint"),
    [
        ([1, 2], "must be a mapping"),
        ({"max_stael_pct": 1}, "unknown key 'max_stael_pct'"),
        ({"max_steal_pct": "low"}, "must be a number >= 0"),
        ({"max_steal_pct": -1}, "must be a number >= 0"),
        ({"max_steal_pct": True}, "must be a number >= 0"),
        ({"duration_s": 0.1}, "duration_s must be 1..120"),
        ({"duration_s": 9999}, "duration_s must be 1..120"),
    ],
)
def test_bad_limits_are_one_line_config_errors(raw, complaint) -> None:
    with pytest.raises(ConfigError, match=complaint) as info:
        preflight.limits_from(raw, "configs/runners.yaml")
    assert "\n" not in str(info.value)


def test_repository_limits_load() -> None:
    limits = preflight.load_limits(REPO / "configs")
    assert isinstance(limits, Limits)
    assert limits.duration_s >= preflight.MIN_DURATION_S


def test_proc_stat_parsing() -> None:
    text = (
        "cpu  100 5 50 1000 20 3 2 7 0 0\n"
        "cpu0 50 2 25 500 10 1 1 3 0 0\n"
        "intr 1 2 3\nprocs_running 4\nprocs_blocked 0\n"
    )
    times = preflight.parse_proc_stat(text)
    assert (times.busy, times.idle, times.iowait, times.steal) == (167, 1000, 20, 7)
    assert times.procs_running == 4
    with pytest.raises(EnvironmentProblem, match="no 'cpu' line"):
        preflight.parse_proc_stat("intr 1\n")


def test_expected_key_mismatch_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem, match="not the expected 000000000000") as info:
        preflight.run_preflight(REPO / "configs", expect_key="000000000000", probe_noise=False)
    assert hardware.fingerprint()["key"] in str(info.value)
    assert "\n" not in str(info.value)


def test_cli_bad_expect_key_and_no_probe(capsys) -> None:
    assert cli.main(["runner", "preflight", "--expect-key", "$(id)"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert cli.main(["runner", "preflight", "--no-probe", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["schema"] == "perftrack.preflight.v1"
    assert report["runner_key"] == hardware.fingerprint()["key"]
    assert report["sample"] is None and report["ok"] is True


def test_real_probe_once_structure_only(tmp_path: Path) -> None:
    """The real probe (1 s) through runners/preflight: the verdict depends on what else
    runs on this shared machine, so only the report's shape and the exit code's meaning
    are checked."""
    output = tmp_path / "github_output"
    done = subprocess.run(
        [str(REPO / "runners" / "preflight"), "--duration", "1", "--json"],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "GITHUB_OUTPUT": str(output)},
    )
    report = json.loads(done.stdout)
    sample = report["sample"]
    assert set(sample) >= {"steal_pct", "iowait_pct", "other_busy_pct", "loop_cv_pct"}
    assert len(sample["loop_times_s"]) >= preflight.MIN_LOOP_REPS
    assert all(0 <= sample[k] <= 100 for k in ("steal_pct", "iowait_pct", "other_busy_pct"))
    assert output.read_text() == f"runner_key={report['runner_key']}\n"
    if report["ok"]:
        assert done.returncode == 0 and done.stderr == ""
    else:
        assert done.returncode == 3
        assert done.stderr.startswith("error: noisy host, not benchmarking: ")
        assert done.stderr.count("\n") == 1
