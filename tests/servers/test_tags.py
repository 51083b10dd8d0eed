"""`perftrack tags check` and `tags diff`: release tags replayed from a local server on
127.0.0.1 (Docker Hub and GitHub are unreachable here: hand-written responses in the
documented formats, see tests/fixtures/*/README.md), a private copy of the real catalog.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from perftrack import cli
from perftrack.publish import prcheck
from perftrack.servers import catalog, tags
from perftrack.servers.providers import docker
from replay import Replay, github_tag, hub_tag

REPO = Path(__file__).resolve().parents[2]
DIGEST = "sha256:" + "ab" * 32
# A release newer than every catalogued one (the catalog tracks 8.0, 8.4 and 9.x up to 9.1.0).
D920 = "sha256:" + "92" * 32


def load_new_release(replayed: Replay, hub: list | None = None, gh: list | None = None) -> None:
    replayed.load_docker_hub(extra=[hub_tag("9.2.0", D920), *(hub or [])])
    replayed.load_github_tags(extra=["mysql-9.2.0", *(gh or [])])


@pytest.fixture
def configs(tmp_path: Path, monkeypatch) -> Path:
    d = tmp_path / "configs"
    shutil.copytree(REPO / "configs", d)
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(d))
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    return d


@pytest.fixture
def replayed(monkeypatch):
    with Replay() as r:
        monkeypatch.setenv(docker.ENV_HUB_URL, r.url)
        monkeypatch.setenv(tags.ENV_GITHUB_API_URL, r.url)
        yield r


def _check(capsys, *args: str) -> tuple[int, str, str]:
    rc = cli.main(["tags", "check", *args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_replayed_new_release_is_found_but_not_written_without_write(
    configs, replayed, capsys
) -> None:
    load_new_release(replayed)
    before = (configs / "versions.yaml").read_bytes()
    rc, out, err = _check(capsys)
    assert rc == 0, err
    # 9.2.0 is on both sources and newer than the catalogued 9.1.0: new. 9.1.0, 8.4.2 and
    # 8.0.39 are catalogued already; 5.7 is only an anchor (no newer 5.7 exists).
    assert "new (use --write to add): mysql-9.2.0 (image mysql:9.2.0, sha256:9292" in out
    assert "8.4.2" not in out and "5.7.44" not in out.replace("5.7.44: on Docker Hub", "")
    assert (configs / "versions.yaml").read_bytes() == before
    # Both sources were paged through, GitHub via its Link header.
    paths = [r.path for r in replayed.requests]
    assert any("page=2" in p and "/v2/namespaces/library/" in p for p in paths)
    assert "/repos/mysql/mysql-server/tags?per_page=100&page=2" in paths


def test_replayed_write_appends_valid_entries_keeps_comments_and_is_idempotent(
    configs, replayed, capsys, tmp_path: Path
) -> None:
    # A new patch of a tracked series too: 8.4.4 (8.4.3 is catalogued).
    d844 = "sha256:" + "c4" * 32
    load_new_release(
        replayed,
        hub=[hub_tag("8.4.4", d844), hub_tag("8.4.4-oracle", d844)],
        gh=["mysql-8.4.4", "mysql-cluster-8.4.4"],
    )
    path = configs / "versions.yaml"
    before = path.read_text()
    out_file = tmp_path / "gh-output"
    rc, out, err = _check(capsys, "--write", "--github-output", str(out_file))
    assert rc == 0, err
    assert "added: mysql-8.4.4 (image mysql:8.4.4, sha256:c4c4" in out
    assert "added: mysql-9.2.0" in out
    assert out_file.read_text() == "added=mysql-8.4.4 mysql-9.2.0\ncount=2\n"
    after = path.read_text()
    # Every original line (comments included) is still there, in order.
    old_lines = before.splitlines()
    new_lines = after.splitlines()
    it = iter(new_lines)
    assert all(any(line == n for n in it) for line in old_lines)
    assert "# --- a basedir you already have" in after
    cat = catalog.load(path)
    assert (
        cat.ids[: len(catalog.load(REPO / "configs" / "versions.yaml"))]
        == catalog.load(REPO / "configs" / "versions.yaml").ids
    )
    e = cat.get("mysql-8.4.4")
    assert (e.product, e.version, e.provider, e.image) == (
        "mysql",
        "8.4.4",
        "docker",
        "mysql:8.4.4",
    )
    assert e.digest == d844 and "mysql-8.4.4" in (e.notes or "")
    assert cat.get("mysql-9.2.0").image == "mysql:9.2.0"
    assert cat.get("mysql-9.2.0").digest == D920 and not cat.get("mysql-9.2.0").unpinned
    assert not list(configs.glob(".versions.yaml.*"))  # no temp file left
    # Second run: nothing new, file byte-identical.
    out_file.write_text("")
    rc, out, err = _check(capsys, "--write", "--github-output", str(out_file))
    assert rc == 0, err
    assert "no new MySQL releases" in out
    assert path.read_text() == after
    assert out_file.read_text() == "added=\ncount=0\n"


HOSTILE_HUB = [
    "8.4.5\n",
    "8.4.5;rm -rf /",
    "08.4.5",
    "8.4.99999",
    "\uff18.\uff14.\uff15",  # fullwidth digits
    "$(reboot)",
    "../../etc/passwd",
    "9" * 200,
    "8.4.5\u202e",
]


def test_replayed_hostile_tags_are_refused_with_a_reason_and_never_added(
    configs, replayed, capsys
) -> None:
    extra = [hub_tag(name, DIGEST) for name in HOSTILE_HUB]
    extra.append(hub_tag("9.9.9", "sha256:not-a-digest"))  # valid name, bad digest
    extra.append({"name": 12345, "digest": DIGEST})  # not a string
    replayed.load_docker_hub(extra=extra)
    replayed.load_github_tags(
        extra=["mysql-08.4.5", "mysql-8.4.5;x", "mysql-9.9.9", "mysql-8.4.5\u0000"]
    )
    path = configs / "versions.yaml"
    rc, out, err = _check(capsys, "--write")
    assert rc == 0, err
    refused = [line for line in out.splitlines() if line.startswith("refused ")]
    assert len(refused) == len(HOSTILE_HUB) + 1 + 3, out  # the int name is dropped by list_tags
    for line in refused:
        assert line.isascii() and line.isprintable() and len(line) < 200
    assert "refused docker hub tag '08.4.5': a version part has a leading zero" in out
    assert "refused docker hub tag '8.4.99999': a version part has more than 4 digits" in out
    assert "refused docker hub tag '9.9.9': no digest" in out
    assert "refused github tag 'mysql-08.4.5': a version part has a leading zero" in out
    cat = catalog.load(path)
    assert [e.id for e in cat if e.id not in catalog.load(REPO / "configs" / "versions.yaml")] == []


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("8.4.3", "release"),
        ("8.4", "alias"),
        ("lts", "alias"),
        ("8.0.40-oraclelinux9", "alias"),
        ("innovation-oraclelinux9", "alias"),
        ("8.4.3 ", "refused"),
        ("8.4.3.1", "refused"),
        ("-8.4.3", "refused"),
        ("", "refused"),
    ],
)
def test_hub_tag_classes(name: str, kind: str) -> None:
    assert tags.classify_hub_tag(name)[0] == kind


def test_replayed_network_error_is_one_line_and_writes_nothing(
    configs, monkeypatch, capsys
) -> None:
    path = configs / "versions.yaml"
    before = path.read_bytes()
    with Replay() as dead:
        url = dead.url  # closed again: nothing listens there any more
    monkeypatch.setenv(docker.ENV_HUB_URL, url)
    monkeypatch.setenv(tags.ENV_GITHUB_API_URL, url)
    rc, _out, err = _check(capsys, "--write")
    assert rc == 3
    assert err.startswith("error: cannot read Docker Hub at http://127.0.0.1:")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert path.read_bytes() == before


def test_replayed_github_http_error_is_one_line(configs, replayed, capsys) -> None:
    replayed.load_docker_hub()
    replayed.add("GET", "/repos/mysql/mysql-server/tags?per_page=100", {"message": "x"}, 503)
    rc, _out, err = _check(capsys, "--write")
    assert rc == 3
    assert err.strip() == (
        f"error: GitHub answered HTTP 503 for {replayed.url}/repos/mysql/mysql-server/tags"
        "?per_page=100"
    )


def test_github_api_url_must_be_https_unless_loopback(configs, monkeypatch, capsys) -> None:
    monkeypatch.setenv(tags.ENV_GITHUB_API_URL, "http://example.com")
    with pytest.raises(Exception, match="must be an https:// URL"):
        tags.github_api_url()


def test_append_that_would_break_the_file_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "versions.yaml"
    # A flow-style list: appending block entries after it is not valid YAML.
    path.write_text(
        "# flow style\nservers: [{id: mysql-8.4.3, product: mysql, version: 8.4.3, "
        "provider: docker, image: 'mysql:8.4.3', digest: unpinned}]\n"
    )
    before = path.read_bytes()
    release = tags.Release("8.4.4", DIGEST, "mysql-8.4.4")
    with pytest.raises(Exception, match="nothing written"):
        tags.append(path, [release])
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["versions.yaml"]


# --- tags diff -----------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def test_diff_pairs_added_servers_with_their_predecessors(tmp_path: Path, monkeypatch) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "configs", repo / "configs")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD").strip()
    path = repo / "configs" / "versions.yaml"
    release = tags.Release("9.2.0", DIGEST, "mysql-9.2.0")
    tags.append(path, [release])
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(repo / "configs"))
    head = catalog.load(path)
    pairs = prcheck.added_pairs(prcheck.base_catalog(base, path), head)
    # Same provider first: docker 9.2.0 vs docker 9.1.0, not the sid chroot ("9.0").
    assert pairs == [prcheck.Pair("mysql-9.2.0", "mysql-9.1.0")]
    assert prcheck.added_pairs(prcheck.base_catalog("HEAD", path), head) == pairs
    spec = prcheck.pr_matrix(pairs, head)
    assert spec["servers"] == ["mysql-9.1.0", "mysql-9.2.0"]
    with pytest.raises(Exception, match="not a git ref"):
        prcheck.base_catalog("--output=/tmp/x", path)
    with pytest.raises(Exception, match=r"cannot read configs/versions\.yaml at nope"):
        prcheck.base_catalog("nope", path)


def test_github_tag_fixture_shape() -> None:
    item = github_tag("mysql-9.1.0")
    assert tags.classify_github_tag(item["name"]) == ("release", "9.1.0")
    assert tags.classify_github_tag("mysql-cluster-9.1.0")[0] == "alias"
