"""docker provider: Docker Hub tags replayed from a local HTTP server (hand-written in the
documented format: Docker Hub is unreachable from here), and a real Docker engine started
by the tests on a private socket, running an image built here from the sid chroot with
Oracle MySQL (`docker import`), through the normal Server lifecycle and a real cell.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import chroot_servers
from perftrack import cli
from perftrack.core.errors import ConfigError, FetchError
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.run.server import Server
from perftrack.servers import catalog
from perftrack.servers.catalog import Entry
from perftrack.servers.install import Install
from perftrack.servers.providers import docker, docker_run
from replay import POLL_S, Replay

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "dockerhub"
TAGS_PATH = "/v2/namespaces/library/repositories/mysql/tags"
DOCKERD_READY_S = 60  # dockerd answers in ~2 s here
DOCKERD_STOP_S = 60
CONTAINER_GONE_S = 90  # docker stop grace (45 s) + removal, with a margin
LABEL_FILTER = f"label={docker_run.LABEL}"


# --- Docker Hub, replayed ------------------------------------------------------------------


@dataclasses.dataclass
class ReplayedHub:
    url: str
    requests: list[str]


def _replayed_pages(base: str) -> dict[str, dict]:
    pages = {}
    for number in (1, 2):
        text = (FIXTURES / f"mysql-tags-page-{number}.json").read_text()
        pages[number] = json.loads(text.replace("{base}", base))
    return {
        f"{TAGS_PATH}?page_size=100": pages[1],
        f"{TAGS_PATH}?page=2&page_size=100": pages[2],
        **{f"{TAGS_PATH}/{tag['name']}": tag for page in pages.values() for tag in page["results"]},
    }


@pytest.fixture
def replayed_hub(monkeypatch) -> Iterator[ReplayedHub]:
    """A local HTTP server on 127.0.0.1 replaying the hand-written Docker Hub responses."""
    requests: list[str] = []
    answers: dict[str, dict] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = answers.get(self.path)
            if body is None:
                self.send_error(404)
                return
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    answers.update(_replayed_pages(base))
    thread = threading.Thread(target=server.serve_forever, args=(POLL_S,), daemon=True)
    thread.start()
    monkeypatch.setenv(docker.ENV_HUB_URL, base)
    try:
        yield ReplayedHub(base, requests)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_replayed_hub_tags_follow_next_across_pages(replayed_hub) -> None:
    tags = docker.list_tags("mysql")
    assert [t.name for t in tags][:3] == ["9.1.0", "9.1", "latest"]
    assert {"8.4.3", "8.0.40", "5.7.44"} <= {t.name for t in tags}
    assert len(tags) == 12
    assert all(t.digest and t.digest.startswith("sha256:") for t in tags)
    assert replayed_hub.requests == [
        f"{TAGS_PATH}?page_size=100",
        f"{TAGS_PATH}?page=2&page_size=100",
    ]


def test_replayed_hub_known_tag_passes_with_one_request(replayed_hub) -> None:
    docker.check_tag("mysql:8.4.3")
    assert replayed_hub.requests == [f"{TAGS_PATH}/8.4.3"]


@pytest.mark.parametrize(
    ("image", "nearest"),
    [("mysql:8.4.33", "8.4.3"), ("mysql:8.0.4", "8.0.40"), ("mysql:9.1.1", "9.1.0")],
)
def test_replayed_hub_unknown_tag_names_the_nearest_known_tags(replayed_hub, image, nearest):
    with pytest.raises(ConfigError) as info:
        docker.check_tag(image)
    message = str(info.value)
    tag = image.split(":")[1]
    assert message.startswith(f"no tag '{tag}' of mysql on Docker Hub; nearest known tags: ")
    assert nearest in message.split("nearest known tags: ")[1].split(" (")[0].split(", ")
    assert "\n" not in message


def test_replayed_hub_cli_servers_tags(replayed_hub, capsys) -> None:
    assert cli.main(["servers", "tags", "mysql", "--prefix", "8.4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["8.4.3", "8.4", "8.4.2"]
    assert all(line.split()[1].startswith("sha256:") for line in lines)


def test_replayed_hub_next_page_elsewhere_is_refused(replayed_hub, monkeypatch) -> None:
    original = docker._get_json

    def foreign_next(url: str) -> dict | None:
        data = original(url)
        return {**data, "next": "https://elsewhere.example/v2/tags?page=2"} if data else data

    monkeypatch.setattr(docker, "_get_json", foreign_next)
    with pytest.raises(FetchError, match=r"is not on http://127\.0\.0\.1"):
        docker.list_tags("mysql")
    assert len(replayed_hub.requests) == 1, "the foreign page was not requested"


def test_unknown_repository_and_unreachable_hub_are_one_line_errors(
    replayed_hub, monkeypatch
) -> None:
    with pytest.raises(ConfigError, match="no repository 'nosuch' on Docker Hub"):
        docker.list_tags("nosuch")
    monkeypatch.setenv(docker.ENV_HUB_URL, "http://127.0.0.1:9")  # discard port: refused
    with pytest.raises(FetchError, match="cannot read Docker Hub at http://127") as info:
        docker.check_tag("mysql:8.4.3")
    assert "\n" not in str(info.value)
    assert cli.main(["servers", "tags", "Not A Repo"]) == 2


# --- image references and the catalog ------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "parts", "hub"),
    [
        ("mysql:8.4.3", (None, "mysql", "8.4.3"), True),
        ("percona/percona-server:8.0.39", (None, "percona/percona-server", "8.0.39"), True),
        ("docker.io/library/mysql:9.1.0", ("docker.io", "library/mysql", "9.1.0"), True),
        ("localhost:5000/mysql:8.4", ("localhost:5000", "mysql", "8.4"), False),
        ("local/mysql-sid:9.7.4", (None, "local/mysql-sid", "9.7.4"), True),
        ("mysql@sha256:" + "a" * 64, (None, "mysql", None), True),
    ],
)
def test_split_image(image, parts, hub) -> None:
    assert docker.split_image(image) == parts
    assert docker.is_docker_hub(image) is hub


def load_one(tmp_path: Path, image: str, version: str = "8.4.3") -> catalog.Catalog:
    path = tmp_path / "versions.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        servers:
          - id: s
            product: mysql
            version: {version}
            provider: docker
            image: "{image}"
            digest: unpinned
        """)
    )
    return catalog.read_catalog(path)


@pytest.mark.parametrize(
    ("image", "version", "complaint"),
    [
        ("mysql", "8.4.3", "has no tag"),
        ("MySQL:8.4.3", "8.4.3", "bad image"),
        ("mysql:8.4.3 --privileged", "8.4.3", "bad image"),
        ("mysql:8.4.2", "8.4.3", "the image tag is 8.4.2"),
        ("mysql:8.0", "8.4.3", "the image tag is 8.0"),
    ],
)
def test_catalog_image_is_validated(tmp_path: Path, image, version, complaint) -> None:
    with pytest.raises(ConfigError, match=complaint) as info:
        load_one(tmp_path, image, version)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("image", ["mysql:8.4", "mysql:8.4.3-oraclelinux9", "mysql:lts"])
def test_catalog_image_tags_that_fit_the_version(tmp_path: Path, image) -> None:
    assert load_one(tmp_path, image).get("s").image == image


@pytest.mark.parametrize(
    ("extra", "complaint"),
    [
        ('    digest: "sha256:abc"\n', "bad digest 'sha256:abc'"),
        ('    digest: "' + "a" * 64 + '"\n', "expected sha256: and 64 lowercase hex"),
        ('    digest: "sha256:' + "A" * 64 + '"\n', "bad digest"),
        ("    digest: 12\n", "digest must be a string"),
    ],
)
def test_catalog_digest_is_validated(tmp_path: Path, extra, complaint) -> None:
    path = tmp_path / "versions.yaml"
    path.write_text(
        "servers:\n  - id: s\n    product: mysql\n    version: 8.4.3\n    provider: docker\n"
        '    image: "mysql:8.4.3"\n' + extra
    )
    with pytest.raises(ConfigError, match=complaint) as info:
        catalog.read_catalog(path)
    assert "\n" not in str(info.value)


def test_catalog_digest_belongs_to_docker_only(tmp_path: Path) -> None:
    path = tmp_path / "versions.yaml"
    path.write_text(
        "servers:\n  - id: s\n    product: mysql\n    version: 8.4.3\n    provider: path\n"
        "    basedir: /opt/x\n    digest: sha256:" + "a" * 64 + "\n"
    )
    with pytest.raises(ConfigError, match="'digest' belongs to provider 'docker', not 'path'"):
        catalog.read_catalog(path)


def test_catalog_digest_is_kept(tmp_path: Path) -> None:
    digest = "sha256:" + "b" * 64
    path = tmp_path / "versions.yaml"
    path.write_text(
        "servers:\n  - id: s\n    product: mysql\n    version: 8.4.3\n    provider: docker\n"
        f'    image: "mysql:8.4.3"\n    digest: "{digest}"\n'
    )
    assert catalog.read_catalog(path).get("s").digest == digest


# The shape of `docker image inspect` for an image pulled from Docker Hub (RepoDigests set)
# and for one imported locally (RepoDigests empty): only the fields the check reads.
PULLED = {
    "Id": "sha256:" + "1" * 64,
    "RepoDigests": ["mysql@sha256:" + "2" * 64],
}
IMPORTED = {"Id": "sha256:" + "3" * 64, "RepoDigests": []}


@pytest.mark.parametrize(
    ("info", "recorded", "accepted"),
    [
        (PULLED, "sha256:" + "2" * 64, True),  # the registry's manifest digest
        (PULLED, "sha256:" + "1" * 64, True),  # or the image id
        (PULLED, "sha256:" + "4" * 64, False),
        (IMPORTED, "sha256:" + "3" * 64, True),
        (IMPORTED, "sha256:" + "2" * 64, False),
    ],
)
def test_verify_digest_accepts_repo_digest_or_image_id(info, recorded, accepted) -> None:
    entry = Entry(id="m", product="mysql", version="8.4.3", provider="docker", image="mysql:8.4.3")
    entry = dataclasses.replace(entry, digest=recorded)
    if accepted:
        docker.verify_digest(entry, info)
        return
    with pytest.raises(FetchError, match=f"records {recorded}: refused") as err:
        docker.verify_digest(entry, info)
    assert "\n" not in str(err.value)


def test_real_catalog_docker_entries() -> None:
    cat = catalog.read_catalog(Path(__file__).resolve().parents[3] / "configs" / "versions.yaml")
    images = {e.image for e in cat if e.provider == "docker"}
    assert {"mysql:8.0.40", "mysql:8.4.3"} <= images


# --- the wrapper's command line ------------------------------------------------------------


def test_container_command_mounts_the_server_dir_and_runs_the_binary_as_entrypoint() -> None:
    argv = docker_run.container_command(
        "/usr/bin/docker",
        "sha256:abc",
        ["/usr/sbin/mysqld", "--defaults-file=/tmp/pt-x/my.cnf", "--initialize-insecure"],
        "perftrack-1-aa",
    )
    assert argv == [
        "/usr/bin/docker",
        "run",
        "--rm",
        "--name",
        "perftrack-1-aa",
        "--label",
        f"{docker_run.LABEL}=/tmp/pt-x",
        "--network",
        "host",
        "--user",
        "0:0",
        "--volume",
        "/tmp/pt-x:/tmp/pt-x",
        "--entrypoint",
        "/usr/sbin/mysqld",
        "sha256:abc",
        "--defaults-file=/tmp/pt-x/my.cnf",
        "--initialize-insecure",
        "--user=root",
    ]
    with pytest.raises(ValueError, match="absolute --defaults-file"):
        docker_run.container_command("docker", "i", ["mysqld", "--defaults-file=my.cnf"], "n")


def test_wrapper_usage_error(capsys) -> None:
    assert docker_run.main(["image-only"]) == docker_run.EXIT_USAGE
    assert "usage:" in capsys.readouterr().err


def test_no_engine_is_a_one_line_error(monkeypatch, tmp_path: Path) -> None:
    if shutil.which("docker") is None:
        pytest.skip("needs the docker client")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/nothing.sock")
    entry = Entry(id="m", product="mysql", version="8.4.3", provider="docker", image="mysql:8.4.3")
    with pytest.raises(FetchError, match="cannot reach a Docker engine at unix://") as info:
        docker.fetch(entry)
    assert "start dockerd or set DOCKER_HOST" in str(info.value)
    assert "\n" not in str(info.value)


# --- a real Docker engine -------------------------------------------------------------------


def _docker(*args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["docker", *args], capture_output=True, text=True, check=False, timeout=600
    )
    if check and done.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _perftrack_containers() -> list[str]:
    return _docker("ps", "--all", "--quiet", "--filter", LABEL_FILTER).split()


def _wait_until(condition, bound_s: float) -> bool:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def _engine_answers() -> bool:
    done = subprocess.run(
        ["docker", "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        check=False,
        timeout=30,
    )
    return done.returncode == 0


def _unmount_below(base: Path) -> None:
    points = [
        line.split()[1]
        for line in Path("/proc/self/mounts").read_text().splitlines()
        if line.split()[1].startswith(f"{base}/")
    ]
    for point in sorted(points, key=len, reverse=True):
        subprocess.run(["umount", "--lazy", point], capture_output=True, check=False)


def _term_when_parent_dies() -> None:
    docker_run.set_parent_death_signal(signal.SIGTERM)


@pytest.fixture(scope="module")
def dockerd() -> Iterator[str]:
    """A Docker engine of our own on a private socket; stopped by its pid afterwards."""
    binary = shutil.which("dockerd")
    if os.geteuid() != 0 or binary is None or shutil.which("docker") is None:
        pytest.skip("needs root, dockerd and docker (apt-get install docker.io)")
    base = Path(tempfile.mkdtemp(prefix="ptdk-", dir="/tmp"))  # short: socket path limits
    sock = f"unix://{base}/docker.sock"
    log = (base / "dockerd.log").open("wb")
    proc = subprocess.Popen(
        [
            *(binary, "--host", sock, "--data-root", str(base / "data")),
            *("--exec-root", str(base / "exec"), "--pidfile", str(base / "docker.pid")),
            *("--iptables=false", "--bridge=none"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=_term_when_parent_dies,
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DOCKER_HOST", sock)
        try:
            up = _wait_until(lambda: proc.poll() is None and _engine_answers(), DOCKERD_READY_S)
            if not up:
                tail = (base / "dockerd.log").read_text(errors="replace")[-500:]
                pytest.skip(f"dockerd did not start here: {tail}")
            yield sock
        finally:
            leftover = _perftrack_containers() if proc.poll() is None else []
            if leftover:
                _docker("rm", "--force", *leftover, check=False)
            proc.terminate()
            try:
                proc.wait(timeout=DOCKERD_STOP_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
            _unmount_below(base)  # dockerd leaves its netns mount behind (measured)
            shutil.rmtree(base, ignore_errors=True)
            assert not base.exists(), f"{base} could not be removed (a mount left?)"
            assert not leftover, f"containers left running: {leftover}"


@pytest.fixture(scope="module")
def sid_image(dockerd: str) -> tuple[str, Install]:
    """The sid chroot imported as local/mysql-sid:VERSION (~10 s); (reference, sid install)."""
    install = chroot_servers.install_or_skip()
    tree = chroot_servers.tree(install)
    ref = f"local/mysql-sid:{install.version}"
    tar = subprocess.Popen(
        ["tar", "-C", str(tree), "--exclude=./.complete", "-c", "."], stdout=subprocess.PIPE
    )
    done = subprocess.run(["docker", "import", "-", ref], stdin=tar.stdout, capture_output=True)
    assert tar.stdout is not None
    tar.stdout.close()
    assert tar.wait() == 0 and done.returncode == 0, done.stderr
    return ref, install


def sid_entry(ref: str, version: str, **changes) -> Entry:
    base = Entry(id="mysql-sid-docker", product="mysql", version=version, provider="docker")
    return dataclasses.replace(base, image=ref, **changes)


@pytest.mark.integration
def test_real_fetch_probes_the_image_and_records_its_digest(sid_image) -> None:
    ref, sid = sid_image
    messages: list[str] = []
    install = docker.fetch(sid_entry(ref, sid.version), progress=messages.append)
    image_id = _docker("image", "inspect", "--format", "{{.Id}}", ref).strip()
    assert install.source_sha256 == image_id.removeprefix("sha256:")
    assert install.extra["image_id"] == image_id
    assert install.version == sid.version
    assert install.mysqld == Path("/usr/sbin/mysqld")
    assert install.share_dir == Path("/usr/share/mysql")
    assert install.install_db is None
    assert install.launcher[-3:] == ("perftrack.servers.providers.docker_run", image_id, "--")
    assert messages == [f"using image {ref} ({image_id[:19]})"]
    assert _perftrack_containers() == []


def _containers_created_since(since: str) -> list[str]:
    until = f"{time.time() + 1:.3f}"
    out = _docker(
        "events",
        "--since",
        since,
        "--until",
        until,
        "--filter",
        "type=container",
        "--filter",
        "event=create",
        "--format",
        "{{.Actor.ID}}",
    )
    return out.split()


@pytest.mark.integration
def test_real_recorded_digest_mismatch_is_refused_before_anything_runs(sid_image) -> None:
    ref, sid = sid_image
    since = f"{time.time():.3f}"  # the previous test's probe container is older
    wrong = "sha256:" + "0" * 64
    with pytest.raises(FetchError, match=f"records {wrong}: refused") as info:
        docker.fetch(sid_entry(ref, sid.version, digest=wrong))
    assert "\n" not in str(info.value)
    assert _containers_created_since(since) == [], "no container of the image was created"


@pytest.mark.integration
def test_real_recorded_digest_match_is_accepted(sid_image) -> None:
    ref, sid = sid_image
    image_id = _docker("image", "inspect", "--format", "{{.Id}}", ref).strip()
    install = docker.fetch(sid_entry(ref, sid.version, digest=image_id))
    assert install.extra["image_id"] == image_id
    assert install.launcher[-2] == image_id  # it runs by id: a moved tag cannot swap it


@pytest.mark.integration
def test_real_version_mismatch_is_a_config_error(sid_image) -> None:
    ref, sid = sid_image
    with pytest.raises(ConfigError, match=f"has mysql {sid.version}, but .* says 8.4.3"):
        docker.fetch(sid_entry(ref, "8.4.3"))


@pytest.mark.integration
def test_real_absent_image_with_unknown_tag_names_nearest_tags(dockerd, replayed_hub) -> None:
    entry = sid_entry("mysql:8.4.33", "8.4.33")
    with pytest.raises(ConfigError, match=r"nearest known tags: 8\.4\.3") as info:
        docker.fetch(entry)
    assert "\n" not in str(info.value)
    assert f"{TAGS_PATH}/8.4.33" in replayed_hub.requests


@pytest.mark.integration
def test_real_cell_runs_in_a_container_and_records_the_digest(
    sid_image, tmp_path: Path, config_dir: Path, workroot: Path
) -> None:
    ref, sid = sid_image
    with (config_dir / "versions.yaml").open("a") as catalog_file:
        catalog_file.write(
            f"\n  - id: mysql-sid-docker\n    product: mysql\n    version: {sid.version}\n"
            f"    provider: docker\n    image: {ref}\n"
            f"    digest: {_docker('image', 'inspect', '--format', '{{.Id}}', ref).strip()}\n"
        )
    seen: list[dict] = []

    def inspect_container(srv: Server, cell) -> None:
        (cid,) = _perftrack_containers()
        (info,) = json.loads(_docker("inspect", cid))
        seen.append(info)
        assert srv.alive()

    m = matrix.from_dict(
        {
            "name": "docker",
            "servers": ["mysql-sid-docker"],
            "workloads": ["oltp_point_select"],
            "charsets": ["latin1"],
            "threads": [1],
            "repeats": 1,
            "duration_s": 2,
            "warmup_s": 0,
            "tables": 1,
            "table_size": 500,
        }
    )
    cat = catalog.read_catalog(config_dir / "versions.yaml")
    rd = runner.create(m, cat, tmp_path / "runs", "test")
    r = runner.Runner(
        rd=rd,
        catalog=cat,
        config_dir=config_dir,
        emit=lambda _m: None,
        workroot=workroot,
        before_measure=inspect_container,
    )
    summary = r.run()
    assert (summary.ok, summary.failed) == (1, 0), summary.final_failed
    (record,) = [x for recs in rd.attempts().values() for x in recs]
    image_id = _docker("image", "inspect", "--format", "{{.Id}}", ref).strip()
    assert record["server"]["provider"] == "docker"
    assert record["server"]["source_sha256"] == image_id.removeprefix("sha256:")
    assert record["server"]["version_string"].startswith(sid.version)
    assert record["effective"]["collation_server"] == "latin1_swedish_ci"
    assert record["result"]["tps"] > 0
    (info,) = seen
    assert info["HostConfig"]["NetworkMode"] == "host"
    assert info["Config"]["User"] == "0:0"
    assert info["Name"].startswith("/perftrack-")
    assert info["Image"] == image_id
    (bind,) = info["HostConfig"]["Binds"]
    server_dir = bind.split(":")[0]
    assert bind == f"{server_dir}:{server_dir}"
    assert Path(server_dir).parent == workroot  # the datadir is on the runner's own disk
    assert info["Path"] == "/usr/sbin/mysqld"
    assert _perftrack_containers() == [], "the container was removed after the cell"


@pytest.mark.integration
def test_real_error_inside_the_server_context_removes_the_container(
    sid_image, workroot: Path
) -> None:
    ref, sid = sid_image
    install = docker.fetch(sid_entry(ref, sid.version))
    with (
        pytest.raises(RuntimeError, match="boom"),
        Server(install=install, options={}, workroot=workroot) as srv,
    ):
        assert len(_perftrack_containers()) == 1
        assert srv.version_string.startswith(sid.version)
        raise RuntimeError("boom")
    assert _perftrack_containers() == []


HOLDER = """
import sys, time
from pathlib import Path
from perftrack.servers.catalog import Entry
from perftrack.servers.providers import docker
from perftrack.run.server import Server
entry = Entry(id="held", product="mysql", version=sys.argv[2], provider="docker", image=sys.argv[1])
srv = Server(install=docker.fetch(entry), options={}, workroot=Path(sys.argv[3]))
srv.__enter__()
print("READY", flush=True)
time.sleep(600)
"""


@pytest.mark.integration
def test_real_container_is_removed_when_perftrack_is_killed(sid_image, tmp_path: Path) -> None:
    ref, sid = sid_image
    held = tmp_path / "held"
    held.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, ref, sid.version, str(held)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "READY"
        assert len(_perftrack_containers()) == 1
        holder.send_signal(signal.SIGKILL)  # no cleanup code of perftrack's can run
        holder.wait()
        assert _wait_until(lambda: _perftrack_containers() == [], CONTAINER_GONE_S)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        shutil.rmtree(held, ignore_errors=True)  # the killed process's server directory


# --- first-night pins: a night plan pins an unpinned entry, the run verifies it ----------------


SID_TAG_PATH = "/v2/namespaces/local/repositories/mysql-sid/tags/{tag}"
TOFU_MATRIX = """name: tofu
servers: [tofu-sid]
workloads: [oltp_point_select]
charsets: [latin1]
threads: [1]
repeats: 1
duration_s: 2
warmup_s: 0
tables: 1
table_size: 500
"""


def _plan_and_run(tmp: Path, capsys) -> tuple[int, int, dict, list[dict], str]:
    """`perftrack plan tofu --pin-unpinned`, then its shard 0 with `perftrack run`:
    (plan rc, run rc, the night plan, the run's records, the run's output)."""
    night, runs = tmp / "night-plan.json", tmp / "runs"
    plan_rc = cli.main(
        ["plan", "tofu", "--pin-unpinned", "--out", str(night), "--db", str(tmp / "none.db")]
    )
    capsys.readouterr()
    run_rc = cli.main(["run", "--night-plan", str(night), "--shard", "0", "--out", str(runs)])
    out = capsys.readouterr().out
    (run_dir,) = runs.iterdir()
    records = [json.loads(p.read_text()) for p in sorted((run_dir / "records").glob("*.json"))]
    return plan_rc, run_rc, json.loads(night.read_text()), records, out


@pytest.mark.integration
def test_real_first_night_pin_is_verified_and_recorded_docker_hub_replay(
    sid_image, tmp_path: Path, config_dir: Path, workroot: Path, monkeypatch, capsys
) -> None:
    """An entry the catalog marks `digest: unpinned` (the locally imported image): the plan
    pins it from the replayed Docker Hub, the run verifies the image against the plan's
    digest and every record carries it; a plan whose digest the image lacks is refused
    before any container of the image runs."""
    ref, sid = sid_image
    image_id = _docker("image", "inspect", "--format", "{{.Id}}", ref).strip()
    with (config_dir / "versions.yaml").open("a") as catalog_file:
        catalog_file.write(
            f"\n  - id: tofu-sid\n    product: mysql\n    version: {sid.version}\n"
            f"    provider: docker\n    image: {ref}\n    digest: unpinned\n"
        )
    (config_dir / "matrices" / "tofu.yaml").write_text(TOFU_MATRIX)
    runners = config_dir / "runners.yaml"  # no control server: this shard is the image alone
    runners.write_text(re.sub(r"(?m)^control_server:.*$", "", runners.read_text()))
    monkeypatch.setenv("PERFTRACK_CONFIG_DIR", str(config_dir))
    monkeypatch.setenv("PERFTRACK_CACHE", str(tmp_path / "cache"))  # dataset templates
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(workroot))  # the servers' directories
    tag = SID_TAG_PATH.format(tag=ref.rsplit(":", 1)[1])
    with Replay() as hub:
        monkeypatch.setenv(docker.ENV_HUB_URL, hub.url)
        hub.add("GET", tag, {"name": sid.version, "digest": image_id})
        plan_rc, run_rc, plan, records, out = _plan_and_run(tmp_path / "good", capsys)
        assert plan_rc == 0 and run_rc == 0, out
        assert plan["pins"]["tofu-sid"]["digest"] == image_id
        assert plan["pins"]["tofu-sid"]["pinned_by"] == "plan"
        (rec,) = records
        assert rec["status"] == "ok" and rec["result"]["tps"] > 0
        assert rec["server"]["digest"] == image_id and rec["server"]["pinned_by"] == "plan"
        assert rec["server"]["source_sha256"] == image_id.removeprefix("sha256:")
        # the same tag answering another digest: planned with it, refused at the run
        wrong = "sha256:" + "0" * 64
        hub.add("GET", tag, {"name": sid.version, "digest": wrong})
        since = f"{time.time():.3f}"
        plan_rc, run_rc, plan, records, out = _plan_and_run(tmp_path / "wrong", capsys)
    assert plan_rc == 0 and plan["pins"]["tofu-sid"]["digest"] == wrong
    assert run_rc == 1  # the cell failed: the image is not the one the plan pinned
    assert records and all(r["status"] == "failed" for r in records)
    for rec in records:  # the first attempt and its retry
        assert rec["server"]["digest"] == wrong and rec["server"]["pinned_by"] == "plan"
        assert rec["server"]["source_sha256"] is None and rec["result"] is None
        assert (
            f"but the night plan (pinned when the night was planned) records {wrong}: "
            in (rec["reason"])
        )
        assert "refused (nothing from it is used)" in rec["reason"]
    assert _containers_created_since(since) == [], "no container of the image was created"


# --- containers a hostile job leaves: named and labelled by the helper, swept -----------------


@pytest.mark.integration
def test_real_sweep_removes_the_containers_of_a_dead_launcher_and_keeps_a_live_runs(
    sid_image,
) -> None:
    """Containers started as runners/docker-helper starts them for the runner user (uid
    65534 here; every one named perftrack-PID-HEX and labelled with its owner), none with
    a server directory: one whose launcher is gone (what a hostile job leaves running
    after its docker client was killed) and one whose launcher still runs. `perftrack
    runner sweep`'s container pass removes the first only."""
    import importlib.machinery
    import importlib.util

    from perftrack.host import sweep

    loader = importlib.machinery.SourceFileLoader(
        "pt_docker_helper", str(Path(__file__).resolve().parents[3] / "runners" / "docker-helper")
    )
    helper = importlib.util.module_from_spec(
        importlib.util.spec_from_loader("pt_docker_helper", loader)
    )
    loader.exec_module(helper)
    ref, _ = sid_image
    image_id = _docker("image", "inspect", "--format", "{{.Id}}", ref).strip()
    uid = 65534
    gone = subprocess.Popen(["true"])
    gone.wait()  # a launcher that is no more
    live = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                             "sleep", "120"])  # fmt: skip
    names = {gone.pid: f"perftrack-{gone.pid}-deadbeef", live.pid: f"perftrack-{live.pid}-0badcafe"}
    clients = []
    try:
        for name in names.values():
            argv = helper.plan(
                ["run", "--rm", "--name", name, "--network", "none", "--entrypoint",
                 "/bin/sleep", image_id, "300"], uid, uid,
            )  # fmt: skip
            assert f"io.perftrack.owner={uid}" in argv
            clients.append(subprocess.Popen(["docker", *argv], stdout=subprocess.DEVNULL))
        owned = f"label=io.perftrack.owner={uid}"

        def running() -> list[str]:
            return sorted(_docker("ps", "--filter", owned, "--format", "{{.Names}}").split())

        assert _wait_until(lambda: running() == sorted(names.values()), 60), running()
        for client in clients:  # the job ended: its docker clients die, the containers stay
            client.kill()
            client.wait()
        report = sweep.SweepReport([])
        sweep.sweep_containers("docker", set(), uid, report)
        assert f"removed container {names[gone.pid]} (no server directory)" in report.lines
        assert running() == [names[live.pid]]
    finally:
        live.kill()
        live.wait()
        _docker("rm", "--force", *names.values(), check=False)
