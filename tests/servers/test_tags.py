"""`perftrack tags check` and `tags diff`: release tags replayed from a local server on
127.0.0.1 (Docker Hub and GitHub are unreachable here: hand-written responses in the
documented formats, see tests/fixtures/*/README.md), a private copy of the real catalog.
"""

from __future__ import annotations

import re
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
# The next innovation release: newer than every catalogued one (the newest is 26.10.0).
D2710 = "sha256:" + "27" * 32


def load_new_release(replayed: Replay, hub: list | None = None, gh: list | None = None) -> None:
    replayed.load_docker_hub(extra=[hub_tag("27.1.0", D2710), *(hub or [])])
    replayed.load_github_tags(extra=["mysql-27.1.0", *(gh or [])])


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
    # 27.1.0 is on both sources and newer than the catalogued 26.10.0: new. 9.1.0, 8.4.2 and
    # 8.0.39 are catalogued already; 5.7 is only an anchor (no newer 5.7 exists).
    assert "new (use --write to add): mysql-27.1.0 (image mysql:27.1.0, sha256:2727" in out
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
    assert "added: mysql-27.1.0" in out
    # Newest first: the new innovation release, then the back-filled 8.4 patch.
    assert out_file.read_text() == "added=mysql-27.1.0 mysql-8.4.4\ncount=2\n"
    after = path.read_text()
    # Every original line (comments included) is still there, in order.
    old_lines = before.splitlines()
    new_lines = after.splitlines()
    it = iter(new_lines)
    assert all(any(line == n for n in it) for line in old_lines)
    assert "# --- a basedir you already have" in after
    cat = catalog.read_catalog(path)
    assert (
        cat.ids[: len(catalog.read_catalog(REPO / "configs" / "versions.yaml"))]
        == catalog.read_catalog(REPO / "configs" / "versions.yaml").ids
    )
    e = cat.get("mysql-8.4.4")
    assert (e.product, e.version, e.provider, e.image) == (
        "mysql",
        "8.4.4",
        "docker",
        "mysql:8.4.4",
    )
    assert e.digest == d844 and "mysql-8.4.4" in (e.notes or "")
    assert cat.get("mysql-27.1.0").image == "mysql:27.1.0"
    assert cat.get("mysql-27.1.0").digest == D2710 and not cat.get("mysql-27.1.0").unpinned
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
    cat = catalog.read_catalog(path)
    assert [
        e.id for e in cat if e.id not in catalog.read_catalog(REPO / "configs" / "versions.yaml")
    ] == []


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
    release = tags.Release(version="8.4.4", digest=DIGEST, github_tag="mysql-8.4.4")
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
    release = tags.Release(version="27.1.0", digest=DIGEST, github_tag="mysql-27.1.0")
    tags.append(path, [release])
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(repo / "configs"))
    head = catalog.read_catalog(path)
    pairs = prcheck.added_pairs(prcheck.base_catalog(base, path), head)
    # Same provider first: docker 27.1.0 vs docker 26.10.0, the release before it.
    assert pairs == [prcheck.Pair("mysql-27.1.0", "mysql-26.10.0")]
    assert prcheck.added_pairs(prcheck.base_catalog("HEAD", path), head) == pairs
    spec = prcheck.pr_matrix(pairs, head)
    assert spec["servers"] == ["mysql-26.10.0", "mysql-27.1.0"]
    with pytest.raises(Exception, match="not a git ref"):
        prcheck.base_catalog("--output=/tmp/x", path)
    with pytest.raises(Exception, match=r"cannot read configs/versions\.yaml at nope"):
        prcheck.base_catalog("nope", path)


def test_github_tag_fixture_shape() -> None:
    item = github_tag("mysql-9.1.0")
    assert tags.classify_github_tag(item["name"]) == ("release", "9.1.0")
    assert tags.classify_github_tag("mysql-cluster-9.1.0")[0] == "alias"


# --- the release lines: newest first (late 2026) ------------------------------------------

# The catalog's MySQL entries of 2026 (the innovation track's calendar versions, 9.7 LTS,
# 8.4.8/8.4.9): removed to see what `tags check` adds first on a catalog that lacks them.
ENTRIES_OF_2026 = (
    "mysql-26.10.0",
    "mysql-26.7.0",
    "mysql-9.7.4-docker",
    "mysql-9.7.3",
    "mysql-8.4.9",
    "mysql-8.4.8",
)


def _id(line: str) -> str:
    """The server id of a `tags check` line ``added: ID (image …)``."""
    return line.split(": ", 1)[1].split(" ", 1)[0]


def _without(path: Path, ids: tuple[str, ...]) -> None:
    """Drop the flow-style entries ``ids`` (one or two lines each) from a catalog file."""
    out, skipping = [], False
    for line in path.read_text().splitlines(keepends=True):
        m = re.match(r"\s*- \{id: ([^,]+),", line)
        if m:
            skipping = m.group(1) in ids
        if not skipping:
            out.append(line)
        elif line.rstrip().endswith("}"):
            skipping = False
    path.write_text("".join(out))


def test_replayed_late_2026_tag_list_adds_the_newest_of_each_line_first(
    configs, replayed, capsys
) -> None:
    _without(configs / "versions.yaml", ENTRIES_OF_2026)
    replayed.load_docker_hub(edition="late-2026")
    replayed.load_github_tags(edition="late-2026")
    # the development machines' Debian build holds the plain id mysql-9.7.4
    taken = "mysql-9.7.4" in catalog.read_catalog(configs / "versions.yaml")
    rc, out, err = _check(capsys)
    assert rc == 0, err
    new = [_id(line) for line in out.splitlines() if line.startswith("new (")]
    assert new == [
        # 1. the newest innovation release and the newest patch of each supported LTS line
        "mysql-26.10.0",
        "mysql-9.7.4-docker" if taken else "mysql-9.7.4",
        "mysql-8.4.9",
        # 2. the last release of the line that ended in 2026 (the nightly's anchor)
        "mysql-8.0.45",
        # 3. back-fill, round-robin over the lines, newest first
        "mysql-26.7.0",
        "mysql-9.7.3",
        "mysql-8.4.8",
        "mysql-9.7.2",
        "mysql-9.6.0",
        "mysql-8.4.7",
    ]
    assert len(new) == tags.MAX_NEW_PER_RUN
    assert "mysql-26.10.0 (image mysql:26.10.0, sha256:" in out
    assert out.count("left for the next run") == 9  # 9.7.0-9.7.1, 9.2.0-9.5.0, 8.4.4-8.4.6
    assert "4 older MySQL 8.0 release(s): not added: MySQL 8.0 ended on 2026-04-30" in out
    # aliases are aliases: never a version, never refused
    assert not [line for line in out.splitlines() if line.startswith("refused")]
    for alias in ("26.10", "lts", "innovation", "latest", "9.7", "26.10.0-oraclelinux9"):
        assert tags.classify_hub_tag(alias) == ("alias", "")


def test_replayed_late_2026_write_then_next_run_back_fills(
    configs, replayed, capsys, tmp_path: Path
) -> None:
    _without(configs / "versions.yaml", ENTRIES_OF_2026)
    path = configs / "versions.yaml"
    # a development machine's build of 9.7.4 already has the plain id: the docker entry
    # gets its own
    if "mysql-9.7.4" not in catalog.read_catalog(path):
        with path.open("a") as f:
            f.write(
                "  - {id: mysql-9.7.4, product: mysql, version: 9.7.4, provider: path,"
                " basedir: /opt/mysql-9.7.4}\n"
            )
    replayed.load_docker_hub(edition="late-2026")
    replayed.load_github_tags(edition="late-2026")
    rc, out, err = _check(capsys, "--write")
    assert rc == 0, err
    cat = catalog.read_catalog(path)
    assert cat.get("mysql-9.7.4-docker").image == "mysql:9.7.4"
    assert cat.get("mysql-26.10.0").digest.startswith("sha256:")
    rc, out, err = _check(capsys, "--write")
    assert rc == 0, err
    added = [_id(line) for line in out.splitlines() if line.startswith("added: ")]
    assert added == [
        "mysql-9.7.1",
        "mysql-9.5.0",
        "mysql-8.4.6",
        "mysql-9.7.0",
        "mysql-9.4.0",
        "mysql-8.4.5",
        "mysql-9.3.0",
        "mysql-8.4.4",
        "mysql-9.2.0",
    ]
    rc, out, err = _check(capsys, "--write")
    assert rc == 0 and "no new MySQL releases" in out


def test_replayed_flood_of_new_releases_is_one_line_and_adds_nothing(
    configs, replayed, capsys
) -> None:
    flood = [f"8.4.{n}" for n in range(100, 100 + tags.MAX_NEW_AT_ONCE + 1)]
    replayed.load_docker_hub(extra=[hub_tag(v, DIGEST) for v in flood])
    replayed.load_github_tags(extra=[f"mysql-{v}" for v in flood])
    before = (configs / "versions.yaml").read_bytes()
    rc, _out, err = _check(capsys, "--write")
    assert rc == 3
    assert err.strip() == (
        f"error: the tag lists announce {tags.MAX_NEW_AT_ONCE + 1} new MySQL releases at once "
        f"(more than {tags.MAX_NEW_AT_ONCE}): a broken or hostile source; nothing added"
    )
    assert (configs / "versions.yaml").read_bytes() == before


def test_replayed_release_on_no_line_is_reported_not_added(configs, replayed, capsys) -> None:
    replayed.load_docker_hub(extra=[hub_tag("12.0.1", DIGEST), hub_tag("26.13.0", DIGEST)])
    replayed.load_github_tags(extra=["mysql-12.0.1", "mysql-26.13.0"])
    rc, out, err = _check(capsys, "--write")
    assert rc == 0, err
    assert "12.0.1: not added: on no release line of releases.yaml" in out
    assert "26.13.0: not added: on no release line of releases.yaml" in out
    assert "mysql-12.0.1" not in catalog.read_catalog(configs / "versions.yaml")
