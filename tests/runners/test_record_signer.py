"""runners/record-signer and what perftrack does with its signatures (core/recordsig.py,
host/salvage.py): a job's records are signed for the night its hook bound, and only
records signed for their own night are salvaged; planted ones are refused and deleted.

The signer runs here as root with a key and state in tmp (on a bench host: through sudo,
its key in /var/lib/perftrack-runner, runners/provision); tests/runners/test_fresh_host.py
runs the installed one on a provisioned host.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from fixtures.records.synthetic import make_record
from perftrack.core import record, recordsig
from perftrack.host import salvage

SIGNER = Path(__file__).resolve().parents[2] / "runners" / "record-signer"


def _load() -> object:
    name = "perftrack_record_signer"
    loader = importlib.machinery.SourceFileLoader(name, str(SIGNER))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


signer = _load()


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    key, state = tmp_path / "record-key", tmp_path / "signer-state"
    key.write_bytes(os.urandom(32))
    return key, state


def test_sign_only_for_the_bound_night_and_verify(keys) -> None:
    key, state = keys
    with pytest.raises(signer.Refused, match="bound to no night"):  # type: ignore[attr-defined]
        signer.sign(key, state, b"{}")  # type: ignore[attr-defined]
    assert signer.bind(state, "1001") == "bound to night 1001"  # type: ignore[attr-defined]
    assert signer.bind(state, "1001") == "bound to night 1001"  # type: ignore[attr-defined]
    with pytest.raises(signer.Refused, match="this job is night 1001"):  # type: ignore[attr-defined]
        signer.bind(state, "2002")  # type: ignore[attr-defined]
    version, night, mac = signer.sign(key, state, b'{"tps": 1}').split()  # type: ignore[attr-defined]
    assert (version, night) == ("v1", "1001")
    assert signer.verify(key, "1001", mac, b'{"tps": 1}')  # type: ignore[attr-defined]
    assert not signer.verify(key, "2002", mac, b'{"tps": 1}')  # type: ignore[attr-defined]
    assert not signer.verify(key, "1001", mac, b'{"tps": 2}')  # type: ignore[attr-defined]
    other = key.with_name("other")
    other.write_bytes(os.urandom(32))
    assert not signer.verify(other, "1001", mac, b'{"tps": 1}')  # type: ignore[attr-defined]


def test_only_through_sudo_and_one_line_refusals(keys, monkeypatch, capsys) -> None:
    key, state = keys
    monkeypatch.delenv("SUDO_UID", raising=False)
    assert signer.main(["bind", "1"], key, state) == 2  # type: ignore[attr-defined]
    assert "run it through sudo" in capsys.readouterr().err
    monkeypatch.setenv("SUDO_UID", "1000")
    if os.geteuid() != 0:
        pytest.skip("the signer answers root only")
    for argv in (["bind", "../x"], ["rm", "-rf"], ["verify", "1"]):
        assert signer.main(argv, key, state) == 2  # type: ignore[attr-defined]
        err = capsys.readouterr().err
        assert err.startswith("error: perftrack record signer:") and err.count("\n") == 1


@pytest.fixture
def signing(keys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PERFTRACK_RECORD_SIGNER: the real signer, run as sudo would run it, bound to 200."""
    if os.geteuid() != 0:
        pytest.skip("the signer answers root only")
    key, state = keys
    wrapper = tmp_path / "sign-record"
    wrapper.write_text(
        f"#!{sys.executable}\n"
        "import importlib.machinery, importlib.util, os, sys\n"
        "from pathlib import Path\n"
        "os.environ['SUDO_UID'] = '1000'\n"
        f"loader = importlib.machinery.SourceFileLoader('s', {str(SIGNER)!r})\n"
        "m = importlib.util.module_from_spec(importlib.util.spec_from_loader('s', loader))\n"
        "loader.exec_module(m)\n"
        f"sys.exit(m.main(sys.argv[1:], key=Path({str(key)!r}), state=Path({str(state)!r})))\n"
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv(recordsig.ENV_SIGNER, str(wrapper))
    monkeypatch.setenv("PERFTRACK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("SUDO_UID", "1000")
    assert signer.main(["bind", "200"], key, state) == 0  # type: ignore[attr-defined]  # the hook
    return tmp_path / "state" / "nights"


def _run(nights: Path, night: str, run_id: str, cells: int) -> Path:
    run = nights / night / "shard-0" / run_id
    (run / "records").mkdir(parents=True)
    (run / "plan.json").write_text(json.dumps({"run_id": run_id, "cells": []}))
    recordsig.sign(run / "plan.json")  # as rundir.create_from_cells does
    for c in range(cells):
        record.write(make_record(run_id=run_id, cell=c), run / "records")  # signed by write
    return run


def test_salvage_takes_only_records_signed_for_their_night(signing: Path, tmp_path: Path) -> None:
    nights = signing
    mine = _run(nights, "200", "synthetic-run-mine", 3)
    assert (mine / "plan.json.sig").read_text().startswith("v1 200 ")
    # planted by another job: my run copied under tomorrow's night (signed for 200), an
    # unsigned record beside mine, one of mine changed after it was signed, an unsigned
    # run of an earlier night
    tomorrow = nights / "201" / "shard-0" / "synthetic-run-planted"
    shutil.copytree(mine, tomorrow)
    wrapper = os.environ.pop(recordsig.ENV_SIGNER)
    try:
        unsigned = record.write(make_record(run_id="synthetic-run-mine", cell=9), mine / "records")
        earlier = _run(nights, "150", "synthetic-run-earlier", 1)
    finally:
        os.environ[recordsig.ENV_SIGNER] = wrapper
    changed = sorted((mine / "records").glob("*.json"))[0]
    changed.write_text(changed.read_text().replace('"tps": ', '"tps": 1'))
    lines: list[str] = []
    into, earlier_out = tmp_path / "runs", tmp_path / "salvaged"
    counts = salvage.salvage("201", into, earlier_out, say=lines.append)
    text = "\n".join(lines)
    for run, night, why in (
        ("synthetic-run-planted", "201", "its plan is signed for night 200, not 201"),
        ("synthetic-run-earlier", "150", "its plan is not signed by the job that wrote it"),
    ):
        assert f"refused kept run {run} of night {night} (shard-0): {why}; deleted" in text
    assert f"refused record {unsigned.name} of night 200" in text
    assert f"refused record {changed.name} of night 200" in text
    assert "its signature does not match it (changed after it was written)" in text
    assert not tomorrow.exists() and not earlier.exists()
    assert not unsigned.exists() and not changed.exists()
    assert counts == (0, 2)  # mine is an earlier night for 201: its two untouched records
    assert len(list(record.find([earlier_out]))) == 2
    assert not into.exists() or not list(into.rglob("*.json"))
