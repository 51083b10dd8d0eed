"""`perftrack servers pin`: entries marked `unpinned` get their Docker Hub digest or tarball
sha256 from a local HTTP server on 127.0.0.1 replaying recorded responses (Docker Hub's tag
API in its documented shape, tests/fixtures/dockerhub/README.md; an archive served as the
official download paths); a private copy of the real catalog."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from perftrack import cli
from perftrack.core.errors import ConfigError
from perftrack.planning import cells, matrix
from perftrack.servers import catalog, pin
from perftrack.servers.providers import docker, tarball
from replay import Replay, serve_files

REPO = Path(__file__).resolve().parents[2]
TAG_PATH = "/v2/namespaces/library/repositories/mysql/tags/{tag}"
D843 = "sha256:" + "84" * 32
D840 = "sha256:" + "80" * 32


@pytest.fixture
def hub(monkeypatch) -> Iterator[Replay]:
    with Replay() as r:
        monkeypatch.setenv(docker.ENV_HUB_URL, r.url)
        yield r


def _tag(r: Replay, tag: str, digest: str) -> None:
    r.add("GET", TAG_PATH.format(tag=tag), {"name": tag, "digest": digest, "tag_status": "active"})


def _pin(capsys, *args: str) -> tuple[int, str, str]:
    rc = cli.main(["servers", "pin", *args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_replayed_docker_pin_writes_the_hub_digest_and_keeps_every_comment(
    configs, hub, capsys, tmp_path: Path
) -> None:
    _tag(hub, "8.4.3", D843)
    path = configs / "versions.yaml"
    before = path.read_text()
    assert catalog.read_catalog(path).get("mysql-8.4.3").unpinned
    rc, out, err = _pin(capsys, "mysql-8.4.3")  # without --write: shown, not written
    assert rc == 0, err
    assert f"mysql-8.4.3: digest {D843}" in out
    assert path.read_text() == before
    gh = tmp_path / "gh-output"
    rc, out, err = _pin(capsys, "mysql-8.4.3", "--write", "--github-output", str(gh))
    assert rc == 0, err
    after = path.read_text()
    entry = catalog.read_catalog(path).get("mysql-8.4.3")
    assert entry.digest == D843 and not entry.unpinned and entry.skip_reason() is None
    # only the one line changed: every comment and every other entry survive
    changed = [
        (a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=False) if a != b
    ]
    assert len(changed) == 1 and "mysql:8.4.3" in changed[0][1] and D843 in changed[0][1]
    assert gh.read_text() == "pinned=mysql-8.4.3\npin_count=1\n"
    rc, _out, err = _pin(capsys, "mysql-8.4.3")
    assert rc == 2 and "already pinned" in err and len(err.strip().splitlines()) == 1


def test_replayed_pin_of_every_docker_entry_reports_the_ones_hub_lacks(
    configs, hub, capsys
) -> None:
    _tag(hub, "8.4.3", D843)
    _tag(hub, "8.0.40", D840)
    hub.add("GET", "/v2/namespaces/library/repositories/mysql/tags?page_size=100", {"results": []})
    path = configs / "versions.yaml"
    rc, out, err = _pin(capsys, "--provider", "docker", "--write")
    assert rc == 3  # the machine could not pin everything: not the user's input
    assert "could not be pinned" in err and len(err.strip().splitlines()) == 1
    assert "mysql-8.0.40: digest" in out and "mysql-8.4.3: digest" in out
    assert "mysql-9.1.0: NOT pinned: no tag '9.1.0' of mysql on Docker Hub" in out
    cat = catalog.read_catalog(path)
    assert cat.get("mysql-8.0.40").digest == D840 and cat.get("mysql-8.4.3").digest == D843
    assert cat.get("mysql-9.1.0").unpinned  # left as it was
    assert all(not e.unpinned for e in cat if e.id in ("mysql-8.0.40", "mysql-8.4.3"))


def test_replayed_hub_answer_without_a_digest_is_refused(configs, hub, capsys) -> None:
    hub.add("GET", TAG_PATH.format(tag="8.4.3"), {"name": "8.4.3", "digest": "sha256:zz"})
    rc, out, _err = _pin(capsys, "mysql-8.4.3", "--write")
    assert rc == 3 and "Docker Hub gives no sha256 digest for mysql:8.4.3" in out
    assert catalog.read_catalog(configs / "versions.yaml").get("mysql-8.4.3").unpinned


@pytest.fixture
def downloads(monkeypatch) -> Iterator[dict[str, bytes]]:
    """An HTTP server on 127.0.0.1 serving files at the official download paths."""
    with serve_files() as server:
        monkeypatch.setenv(tarball.ENV_MIRROR, server.url)
        yield server.files


def test_local_http_tarball_pin_records_the_sha256_of_the_download(
    configs, downloads, capsys
) -> None:
    data = b"an archive's bytes (the checksum is all pin reads)"
    name = "mysql-8.4.3-linux-glibc2.28-x86_64.tar.xz"
    downloads[f"/archives/get/p/23/file/{name}"] = data  # archived: the second URL tried
    rc, out, err = _pin(capsys, "mysql-8.4.3-tarball", "--write")
    assert rc == 0, err
    want = hashlib.sha256(data).hexdigest()
    assert f"mysql-8.4.3-tarball: sha256 {want}" in out
    e = catalog.read_catalog(configs / "versions.yaml").get("mysql-8.4.3-tarball")
    assert e.tarball is not None and e.tarball.sha256 == want and not e.unpinned


def test_typos_and_nothing_to_pin_are_one_line(configs, capsys) -> None:
    rc, _out, err = _pin(capsys, "mysql-8.4.33")
    assert rc == 2 and "unknown server 'mysql-8.4.33'" in err and "did you mean" in err
    rc, _out, err = _pin(capsys, "--provider", "debian")
    assert rc == 2 and "pinnable providers are docker, tarball" in err
    rc, _out, err = _pin(capsys, "mariadb-10.11.18")
    assert rc == 2 and "already pinned" in err


def test_write_refuses_an_entry_whose_marker_is_not_in_the_text(tmp_path: Path) -> None:
    path = tmp_path / "versions.yaml"
    text = (
        "servers:\n  - {id: a, product: mysql, version: 8.4.3, provider: docker,"
        " image: 'mysql:8.4.3', digest: unpinned}\n"
    )
    path.write_text(text)
    pin.write(path, [pin.Pin("a", "digest", D843)])  # flow style works
    assert catalog.read_catalog(path).get("a").digest == D843
    with pytest.raises(ConfigError, match="has no 'digest: unpinned' line; nothing written"):
        pin.write(path, [pin.Pin("a", "digest", D840)])
    assert catalog.read_catalog(path).get("a").digest == D843
    assert sorted(p.name for p in tmp_path.iterdir()) == ["versions.yaml"]


def test_unpinned_entries_are_never_fetched_and_their_cells_are_skipped(configs) -> None:
    cat = catalog.read_catalog(configs / "versions.yaml")
    e = cat.get("mysql-8.0.36")
    with pytest.raises(ConfigError, match=r"not yet pinned.*nothing unpinned is benchmarked"):
        docker.fetch(e)  # refused before any docker command
    m = matrix.from_dict(
        {
            "name": "t",
            "servers": ["mysql-8.0.36", "mariadb-10.11.18"],
            "workloads": ["oltp_point_select"],
            "charsets": ["latin1"],
            "threads": [1],
            "repeats": 1,
        },
        cat=cat,
    )

    def info(sid: str) -> tuple[str, str]:
        return cat.get(sid).product, cat.get(sid).version

    out = cells.expand(m, info, lambda sid: cat.get(sid).skip_reason())
    by = {c.server_id: c.skip for c in out}
    assert by["mysql-8.0.36"] == (
        "not yet pinned (run `perftrack servers pin mysql-8.0.36` on a runner)"
    )
    assert by["mariadb-10.11.18"] is None


def test_catalog_entry_without_pin_or_marker_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "versions.yaml"
    path.write_text(
        "servers:\n  - {id: a, product: mysql, version: 8.4.3, provider: docker,"
        " image: 'mysql:8.4.3'}\n"
    )
    with pytest.raises(ConfigError, match=r"versions\.yaml:2: server 'a': a docker entry needs"):
        catalog.read_catalog(path)
