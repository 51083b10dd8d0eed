"""runners/tune (perftrack.host.tuning): apply, check and undo over a temporary directory laid
out like /sys and /proc — writing the real kernel knobs of a shared development VM is not
acceptable, so every writing test says `fake_sysfs` in its name — plus `--check` against
the real /sys and /proc, read-only.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from perftrack import cli
from perftrack.core.errors import ConfigError, EnvironmentProblem
from perftrack.host import tuning

REPO = Path(__file__).resolve().parents[2]
CPU = "sys/devices/system/cpu"
THP = "sys/kernel/mm/transparent_hugepage"


def lay_out(root: Path, cpus: int = 2, smt: str = "on", turbo: str = "intel") -> Path:
    """A /sys and /proc tree with the knob files a bare-metal Intel box has, untuned."""
    files = {
        f"{THP}/enabled": "[always] madvise never\n",
        f"{THP}/defrag": "always defer defer+madvise [madvise] never\n",
        "proc/sys/vm/swappiness": "60\n",
        "proc/sys/kernel/numa_balancing": "1\n",
        f"{CPU}/smt/control": f"{smt}\n",
    }
    for n in range(cpus):
        files[f"{CPU}/cpu{n}/cpufreq/scaling_governor"] = "powersave\n"
    if turbo == "intel":
        files[f"{CPU}/intel_pstate/no_turbo"] = "0\n"
    elif turbo == "boost":
        files[f"{CPU}/cpufreq/boost"] = "1\n"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def run_cli(*args: str) -> int:
    return cli.main(["runner", "tune", *args])


def test_fake_sysfs_check_reports_drift_per_knob(tmp_path: Path, capsys) -> None:
    root = lay_out(tmp_path / "root", turbo="none")
    statuses = {s.knob: s for s in tuning.check(root, tuning.knobs(), None, ())}
    assert statuses["governor"].state == tuning.DRIFT
    assert "powersave on 2 of 2" in statuses["governor"].detail
    assert statuses["turbo"].state == tuning.UNAVAILABLE
    assert statuses["thp"].state == tuning.DRIFT
    assert statuses["services"].state == tuning.UNAVAILABLE
    before = snapshot(root)
    assert run_cli("--check", "--root", str(root)) == 1
    out = capsys.readouterr().out
    assert "drift: governor, smt, thp, thp_defrag, swappiness, numa_balancing" in out
    assert snapshot(root) == before, "--check changed a file"


def test_fake_sysfs_apply_then_undo_restores_every_value(tmp_path: Path, capsys) -> None:
    root = lay_out(tmp_path / "root")
    state = tmp_path / "state" / "tune.json"
    before = snapshot(root)
    assert run_cli("--root", str(root), "--state", str(state)) == 0
    after = snapshot(root)
    assert after[f"{CPU}/cpu0/cpufreq/scaling_governor"] == "performance"
    assert after[f"{CPU}/intel_pstate/no_turbo"] == "1"
    assert after[f"{CPU}/smt/control"] == "off"
    assert after[f"{THP}/enabled"] == "never"
    assert after[f"{THP}/defrag"] == "never"
    assert after["proc/sys/vm/swappiness"] == "1"
    assert after["proc/sys/kernel/numa_balancing"] == "0"
    saved = json.loads(state.read_text())
    assert saved["files"][f"{THP}/enabled"] == "always"
    assert saved["files"]["proc/sys/vm/swappiness"] == "60"
    assert run_cli("--check", "--root", str(root)) == 0
    capsys.readouterr()
    assert run_cli("--undo", "--root", str(root), "--state", str(state)) == 0
    restored = snapshot(root)
    parse = {f"{THP}/enabled": tuning._bracketed, f"{THP}/defrag": tuning._bracketed}
    for rel, text in before.items():
        read = parse.get(rel, str.strip)
        assert read(restored[rel]) == read(text), rel
    assert not state.exists(), "undo removes the state file"
    assert run_cli("--undo", "--root", str(root), "--state", str(state)) == 0
    assert "nothing to undo" in capsys.readouterr().out


def test_fake_sysfs_apply_twice_keeps_the_original_values(tmp_path: Path, capsys) -> None:
    root = lay_out(tmp_path / "root")
    state = tmp_path / "tune.json"
    assert run_cli("--root", str(root), "--state", str(state)) == 0
    assert run_cli("--root", str(root), "--state", str(state)) == 0
    assert "already tuned" in capsys.readouterr().out
    (root / "proc/sys/vm/swappiness").write_text("30\n")  # drift, e.g. after an admin edit
    assert run_cli("--root", str(root), "--state", str(state)) == 0
    saved = json.loads(state.read_text())["files"]
    assert saved["proc/sys/vm/swappiness"] == "60", "the first saved value is kept"


def test_fake_sysfs_dry_run_prints_and_changes_nothing(tmp_path: Path, capsys) -> None:
    root = lay_out(tmp_path / "root", turbo="boost")
    state = tmp_path / "tune.json"
    before = snapshot(root)
    assert run_cli("--dry-run", "--root", str(root), "--state", str(state)) == 0
    out = capsys.readouterr().out
    assert f"would write 0 to {root}/{CPU}/cpufreq/boost (was 1)" in out
    assert f"would write never to {root}/{THP}/enabled (was always)" in out
    assert snapshot(root) == before
    assert not state.exists()


def test_fake_sysfs_thp_madvise_and_swappiness_options(tmp_path: Path) -> None:
    root = lay_out(tmp_path / "root")
    knobs = tuning.knobs(thp="madvise", swappiness=10)
    tuning.apply(root, tmp_path / "s.json", knobs, None, ())
    assert (root / f"{THP}/enabled").read_text() == "madvise"
    assert (root / "proc/sys/vm/swappiness").read_text() == "10"


def test_fake_sysfs_smt_not_supported_is_not_available(tmp_path: Path) -> None:
    root = lay_out(tmp_path / "root", smt="notsupported")
    (status,) = [s for s in tuning.check(root, tuning.knobs(), None, ()) if s.knob == "smt"]
    assert status.state == tuning.UNAVAILABLE
    actions = tuning.apply(root, tmp_path / "s.json", tuning.knobs(), None, ())
    assert not any("smt/control" in a for a in actions)
    assert (root / f"{CPU}/smt/control").read_text() == "notsupported\n"


def test_fake_sysfs_undo_restores_smt_before_the_cpus_it_brings_back(tmp_path: Path) -> None:
    root = lay_out(tmp_path / "root")
    state = tmp_path / "s.json"
    tuning.apply(root, state, tuning.knobs(), None, ())
    actions = tuning.undo(root, state, None)
    assert "smt/control" in actions[0]


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ("{not json", "unreadable"),
        ('{"version": 9, "files": {}, "services": []}', "version 9"),
        ('{"version": 1, "files": {"../etc/passwd": "x"}, "services": []}', "not a kernel knob"),
        ('{"version": 1, "files": {"sys/../../etc/x": "x"}, "services": []}', "not a kernel"),
        ('{"version": 1, "files": {}, "services": ["x; rm -rf /"]}', "unit"),
    ],
)
def test_fake_sysfs_bad_state_file_is_refused(tmp_path: Path, content, complaint, capsys) -> None:
    root = lay_out(tmp_path / "root")
    state = tmp_path / "s.json"
    state.write_text(content)
    before = snapshot(root)
    assert run_cli("--undo", "--root", str(root), "--state", str(state)) == 2
    err = capsys.readouterr().err
    assert complaint in err and err.count("\n") == 1
    assert snapshot(root) == before


@pytest.mark.parametrize(
    "args",
    [
        ["--thp", "always"],
        ["--swappiness", "500"],
        ["--check", "--undo"],
        ["--root", "/nonexistent"],
    ],
)
def test_bad_options_are_one_line_errors(args, capsys) -> None:
    assert run_cli(*args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_fake_sysfs_unwritable_knob_is_a_one_line_error(tmp_path: Path) -> None:
    knob = tmp_path / "swappiness"
    knob.mkdir()  # writing a directory fails even for root, like a read-only knob
    with pytest.raises(EnvironmentProblem, match="needs root") as info:
        tuning.write(knob, "1")
    assert "\n" not in str(info.value)


def test_real_sysfs_check_is_read_only_and_reports_every_knob() -> None:
    """The real /sys and /proc, read-only: structure only (values differ per machine)."""
    done = subprocess.run(
        [str(REPO / "runners" / "tune"), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode in (0, 1), done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines()[:-1]]
    assert names == [k.name for k in tuning.knobs()] + ["services"]
    for line in done.stdout.splitlines()[:-1]:
        assert any(s in line for s in (tuning.OK, tuning.DRIFT, tuning.UNAVAILABLE)), line


def test_knob_values_are_validated() -> None:
    with pytest.raises(ConfigError):
        tuning.knobs(thp="always")
