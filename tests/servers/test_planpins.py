"""First-night pins (servers/planpins.py): `perftrack plan --pin-unpinned` pins a docker
entry the catalog marks unpinned from Docker Hub, replayed by a local HTTP server on
127.0.0.1 (tests/replay.py; Docker Hub is unreachable from here), skips it with the reason
when no registry answers, refuses a tag whose digest moves between the two look-ups; the
night plan carries the pin to the shard; `servers pin --from-night` proposes the pins the
night's records used. The real docker engine part is in tests/servers/providers/
test_docker.py, the workflow part in tests/workflows/test_nightly_act.py."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.records.synthetic import make_record
from perftrack import cli
from perftrack.core import record
from perftrack.core.errors import ConfigError
from perftrack.planning import nightplan
from perftrack.servers import catalog, planpins
from perftrack.servers.providers import docker
from replay import Replay, Request

TAG_PATH = "/v2/namespaces/library/repositories/mysql/tags/{tag}"
D843 = "sha256:" + "84" * 32
MOVED = "sha256:" + "99" * 32
ENTRIES = """
  - id: tofu-8.4.3
    product: mysql
    version: 8.4.3
    provider: docker
    image: "mysql:8.4.3"
    digest: unpinned
  - id: tofu-9.1.0
    product: mysql
    version: 9.1.0
    provider: docker
    image: "mysql:9.1.0"
    digest: unpinned
"""
MATRIX = """name: tofu
servers: [tofu-8.4.3, tofu-9.1.0, mariadb-10.11.18]
workloads: [oltp_point_select]
charsets: [latin1]
threads: [1]
repeats: 1
duration_s: 2
warmup_s: 0
tables: 1
table_size: 500
"""


@pytest.fixture
def tofu(configs: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The configs copy with two unpinned docker entries and a matrix selecting them."""
    with (configs / "versions.yaml").open("a") as f:
        f.write(ENTRIES)
    (configs / "matrices" / "tofu.yaml").write_text(MATRIX)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return configs


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[Replay]:
    with Replay() as r:
        monkeypatch.setenv(docker.ENV_HUB_URL, r.url)
        yield r


def _tag(r: Replay, tag: str, digest: str) -> None:
    r.add("GET", TAG_PATH.format(tag=tag), {"name": tag, "digest": digest, "tag_status": "active"})


def _plan(capsys, tmp_path: Path, *args: str) -> tuple[int, str, str, dict | None]:
    out = tmp_path / "night-plan.json"
    db = tmp_path / "none.duckdb"
    rc = cli.main(["plan", *args, "--out", str(out), "--db", str(db)])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err, json.loads(out.read_text()) if out.exists() else None


def _servers(plan: dict) -> set[str]:
    return {c["server_id"] for s in plan["shards"] for c in s["cells"]}


def test_plan_pins_an_unpinned_docker_entry_docker_hub_replay(
    tofu, hub, capsys, tmp_path: Path, monkeypatch
) -> None:
    _tag(hub, "8.4.3", D843)  # 9.1.0 is not on the replayed Hub: skipped, the rest planned
    gh = tmp_path / "gh-output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(gh))
    rc, out, err, plan = _plan(capsys, tmp_path, "tofu", "--pin-unpinned", "--github-output")
    assert rc == 0, err
    assert plan is not None
    pin = plan["pins"]["tofu-8.4.3"]
    assert {k: pin[k] for k in ("image", "digest", "pinned_by", "registry")} == {
        "image": "mysql:8.4.3",
        "digest": D843,
        "pinned_by": "plan",
        "registry": hub.url,
    }
    assert pin["resolved_at"].endswith("Z")
    assert set(plan["pins"]) == {"tofu-8.4.3"}
    assert _servers(plan) == {"tofu-8.4.3", "mariadb-10.11.18"}  # its cells planned normally
    assert f"pinned tonight: tofu-8.4.3 mysql:8.4.3 = {D843} (trust on first use)" in out
    assert (
        "note: skipped tofu-9.1.0: not yet pinned: mysql:9.1.0 cannot be pinned while "
        "planning (no tag '9.1.0' of mysql on Docker Hub)"
    ) in out
    # each tag asked exactly twice (the second look-up catches a moving tag); a missing tag
    # once, and no listing of every tag for suggestions
    paths = [r.path for r in hub.requests]
    assert paths.count(TAG_PATH.format(tag="8.4.3")) == 2
    assert paths.count(TAG_PATH.format(tag="9.1.0")) == 1 and len(paths) == 3
    assert gh.read_text().splitlines()[-2:] == ["pinned=tofu-8.4.3", "pin_count=1"]
    # the shard carries the pin; the runner's catalog has it, marked as the plan's
    plan_file = tmp_path / "night-plan.json"
    cat = catalog.read_catalog()
    work = nightplan.load_shard(plan_file, 0, cat)
    assert work.pins == {"tofu-8.4.3": pin}
    entry = planpins.apply(cat, {"tofu-8.4.3": D843}).get("tofu-8.4.3")
    assert (entry.digest, entry.unpinned, entry.pinned_by) == (D843, False, "plan")
    # the catalog itself is unchanged: the pin is proposed after the night (below)
    assert catalog.read_catalog().get("tofu-8.4.3").unpinned


def test_plan_without_the_flag_asks_no_registry(tofu, hub, capsys, tmp_path: Path) -> None:
    _tag(hub, "8.4.3", D843)
    rc, out, err, plan = _plan(capsys, tmp_path, "tofu")
    assert rc == 0, err
    assert plan is not None and plan["pins"] == {} and hub.requests == []
    assert _servers(plan) == {"mariadb-10.11.18"}
    assert "note: skipped tofu-8.4.3: not yet pinned (run `perftrack servers pin" in out


def test_plan_skips_unpinned_entries_with_the_reason_when_no_registry_answers(
    tofu, capsys, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv(docker.ENV_HUB_URL, "http://127.0.0.1:9")  # discard port: refused
    rc, out, err, plan = _plan(capsys, tmp_path, "tofu", "--pin-unpinned")
    assert rc == 0, err
    assert plan is not None and plan["pins"] == {}
    assert _servers(plan) == {"mariadb-10.11.18"}  # the rest of the night is planned
    skipped = [ln for ln in out.splitlines() if ln.startswith("note: skipped tofu-")]
    assert len(skipped) == 2
    for line in skipped:  # asked once: a registry that does not answer is not asked again
        assert line.endswith(
            ": not yet pinned: Docker Hub did not answer while planning (http://127.0.0.1:9: "
            "[Errno 111] Connection refused); plan again where it answers, or `perftrack "
            "servers pin`"
        )


def test_plan_refuses_a_tag_that_moves_between_two_resolves_docker_hub_replay(
    tofu, capsys, tmp_path: Path, monkeypatch
) -> None:
    asked: list[str] = []

    def move_after_first_answer(req: Request) -> None:  # runs before the answer is chosen
        if req.path == TAG_PATH.format(tag="8.4.3"):
            asked.append(req.path)
            digest = D843 if len(asked) % 2 else MOVED  # 1st D843, 2nd MOVED, 3rd D843, …
            hub.add("GET", req.path, {"name": "8.4.3", "digest": digest})

    with Replay(on_request=move_after_first_answer) as hub:
        monkeypatch.setenv(docker.ENV_HUB_URL, hub.url)
        _tag(hub, "8.4.3", D843)
        rc, out, err, plan = _plan(capsys, tmp_path, "tofu", "--pin-unpinned")
        assert rc == 0, err
        assert plan is not None and plan["pins"] == {}
        assert "tofu-8.4.3" not in _servers(plan)  # nothing planned for it
        (line,) = [ln for ln in out.splitlines() if "tofu-8.4.3" in ln and "refused" in ln]
        assert line == (
            f"note: skipped tofu-8.4.3: refused: {hub.url} answered two digests for "
            f"mysql:8.4.3 while planning ({D843[:19]}…, then {MOVED[:19]}…): a tag that "
            "moves is not pinned; nothing is planned for it"
        )
        # a dispatch of that server alone: one line, exit 2, no night plan written
        monkeypatch.setenv("PT_VERSIONS", "tofu-8.4.3")
        monkeypatch.setenv("PT_MATRIX", "tofu")
        (tmp_path / "night-plan.json").unlink()
        rc, out, err, plan = _plan(capsys, tmp_path, "--dispatch", "--pin-unpinned")
    assert rc == 2 and plan is None
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error: matrix tofu: none of its servers can run (tofu-8.4.3: refused")
    assert "tofu-8.4.3: refused: " in err and "a tag that moves is not pinned" in err


def test_a_plan_pin_that_disagrees_with_the_catalog_or_is_malformed_is_refused(tofu) -> None:
    cat = catalog.read_catalog()
    pinned = planpins.apply(cat, {"tofu-8.4.3": D843})
    with pytest.raises(ConfigError, match="plan the night again") as info:
        planpins.apply(pinned, {"tofu-8.4.3": MOVED})  # the catalog got another pin since
    assert "\n" not in str(info.value)
    assert planpins.apply(pinned, {"tofu-8.4.3": D843}) == pinned  # the same pin: fine
    with pytest.raises(ConfigError, match="not a docker entry"):
        planpins.apply(cat, {"mariadb-10.11.18": D843})
    with pytest.raises(ConfigError, match="unknown server 'nosuch'"):
        planpins.apply(cat, {"nosuch": D843})
    good = planpins.PlanPin(
        server_id="tofu-8.4.3",
        image="mysql:8.4.3",
        digest=D843,
        resolved_at="2026-11-28T02:17:00Z",
        registry="https://hub.docker.com",
    ).to_dict()
    assert planpins.parse({"tofu-8.4.3": good}, "p.json")["tofu-8.4.3"].digest == D843
    for bad in (
        [good],
        {"tofu-8.4.3": {**good, "digest": "sha256:zz"}},
        {"tofu-8.4.3": {**good, "pinned_by": "catalog"}},
        {"tofu-8.4.3": {k: v for k, v in good.items() if k != "registry"}},
        {"bad id; rm": good},
    ):
        with pytest.raises(ConfigError, match=r"^p\.json: ") as info:
            planpins.parse(bad, "p.json")
        assert "\n" not in str(info.value)


def _night(tmp_path: Path, pins: dict[str, str]) -> Path:
    """A night plan file holding only what `--from-night` reads: its schema and pins."""
    path = tmp_path / "night-plan.json"
    data = {
        "schema": "perftrack.night-plan/1",
        "pins": {
            sid: planpins.PlanPin(
                server_id=sid,
                image=f"mysql:{sid.split('-')[1]}",
                digest=d,
                resolved_at="2026-11-28T02:17:00Z",
                registry="https://hub.docker.com",
            ).to_dict()
            for sid, d in pins.items()
        },
    }
    path.write_text(json.dumps(data))
    return path


def _records(directory: Path, used: list[tuple[str, str]]) -> None:
    for n, (sid, digest) in enumerate(used):
        rec = make_record(cell=n, server_id=sid, status="failed" if n else "ok")
        rec["server"].update(digest=digest, pinned_by="plan")
        record.write(record.validate(rec), directory)


def test_pin_from_night_proposes_the_pins_the_night_used(tofu, capsys, tmp_path: Path) -> None:
    plan = _night(tmp_path, {"tofu-8.4.3": D843, "tofu-9.1.0": MOVED})
    records = tmp_path / "incoming" / "records-shard-0" / "run" / "records"
    _records(records, [("tofu-8.4.3", D843), ("tofu-8.4.3", D843)])  # 9.1.0: no record
    path = tofu / "versions.yaml"
    before = path.read_text()
    gh = tmp_path / "gh"
    args = ["servers", "pin", "--from-night", str(plan), "--records", str(tmp_path / "incoming")]
    rc = cli.main([*args, "--write", "--github-output", str(gh)])
    out = capsys.readouterr().out
    assert rc == 0
    assert f"tofu-8.4.3: digest {D843} (mysql:8.4.3, pinned when the night was planned)" in out
    assert "tofu-9.1.0: not proposed: no run record of the night used it" in out
    assert gh.read_text() == "pinned=tofu-8.4.3\npin_count=1\n"
    cat = catalog.read_catalog(path)
    assert cat.get("tofu-8.4.3").digest == D843 and cat.get("tofu-9.1.0").unpinned
    lines = zip(before.splitlines(), path.read_text().splitlines(), strict=True)
    assert len([a for a, b in lines if a != b]) == 1  # the marker line alone: comments survive
    # the next night (the PR not merged): already pinned here -> nothing proposed again
    rc = cli.main([*args, "--write"])
    out = capsys.readouterr().out
    assert rc == 0 and "tofu-8.4.3: not proposed: already pinned to it in" in out


def test_pin_from_night_refuses_records_that_disagree_with_the_plan(
    tofu, capsys, tmp_path: Path
) -> None:
    plan = _night(tmp_path, {"tofu-8.4.3": D843})
    _records(tmp_path / "in" / "r", [("tofu-8.4.3", D843), ("tofu-8.4.3", MOVED)])
    rc = cli.main(["servers", "pin", "--from-night", str(plan), "--records", str(tmp_path / "in")])
    out = capsys.readouterr().out
    assert rc == 0
    assert f"tofu-8.4.3: not proposed: its run records carry another digest ({MOVED})" in out
    assert catalog.read_catalog().get("tofu-8.4.3").unpinned
    rc = cli.main(["servers", "pin", "--records", str(tmp_path / "in")])
    err = capsys.readouterr().err
    assert rc == 2 and "--records goes with --from-night" in err
    assert len(err.strip().splitlines()) == 1


def test_a_registry_that_never_answers_costs_one_bounded_wait(
    tofu, capsys, tmp_path: Path, monkeypatch
) -> None:
    """A socket that accepts connections and never answers (a black-holed network): the
    plan's look-up gives up after its bound, asks no further tag, and plans the rest."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # connections complete in the kernel's backlog; nothing is ever sent
    try:
        monkeypatch.setenv(docker.ENV_HUB_URL, f"http://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setattr(planpins, "PLAN_HUB_TIMEOUT_S", 0.5)
        rc, out, err, plan = _plan(capsys, tmp_path, "tofu", "--pin-unpinned")
    finally:
        silent.close()
    assert rc == 0, err
    assert plan is not None and _servers(plan) == {"mariadb-10.11.18"}
    skipped = [ln for ln in out.splitlines() if ln.startswith("note: skipped tofu-")]
    assert len(skipped) == 2
    assert all("timed out); plan again where it answers" in line for line in skipped)


def test_pin_for_night_stops_asking_a_registry_that_does_not_answer(tofu) -> None:
    asked: list[str] = []

    def down(image: str) -> str:
        asked.append(image)
        raise docker.HubUnreachable(f"cannot read Docker Hub for {image}", "no route to host")

    cat = catalog.read_catalog()
    got = planpins.pin_for_night([cat.get("tofu-8.4.3"), cat.get("tofu-9.1.0")], down)
    assert asked == ["mysql:8.4.3"] and got.pins == {}
    assert set(got.skipped) == {"tofu-8.4.3", "tofu-9.1.0"}
    assert len(set(got.skipped.values())) == 1 and "no route to host" in got.skipped["tofu-9.1.0"]
