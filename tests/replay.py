"""A local HTTP server on 127.0.0.1 replaying Docker Hub and GitHub API responses.

Docker Hub and the GitHub API cannot be reached from here: the tests replay the
hand-written responses in tests/fixtures/dockerhub/ and tests/fixtures/github/ (see their
READMEs), and emulate the three PR-comment endpoints with a small in-memory store. Every
request is recorded (method, path, headers, JSON body) for the tests to assert on.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HUB_TAGS = "/v2/namespaces/library/repositories/mysql/tags"
GITHUB_TAGS = "/repos/mysql/mysql-server/tags"
COMMENTS_RE = re.compile(r"^/repos/([^/]+/[^/]+)/issues/([0-9]+)/comments(?:\?.*)?$")
# How often a server's loop checks for shutdown(): the default 0.5 s was paid at every
# test's end (34 tests of tags, pins and tarballs spent 15.8 s in teardown).
POLL_S = 0.02
COMMENT_RE = re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/([0-9]+)$")
# The release endpoints the records archive uses (publish/archive.py), emulated in memory
RELEASE_TAG_RE = re.compile(r"^/repos/([^/]+/[^/]+)/releases/tags/([^/?]+)$")
RELEASES_RE = re.compile(r"^/repos/([^/]+/[^/]+)/releases$")
ASSET_RE = re.compile(r"^/repos/([^/]+/[^/]+)/releases/assets/([0-9]+)$")
UPLOAD_RE = re.compile(r"^/uploads/repos/([^/]+/[^/]+)/releases/([0-9]+)/assets\?name=([^&]+)$")


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class Replay:
    """Routes (method, path with query) → Answer; plus the PR-comment store."""

    def __init__(self, on_request: Callable[[Request], None] | None = None) -> None:
        self.routes: dict[tuple[str, str], Answer] = {}
        self.requests: list[Request] = []
        self.comments: dict[int, dict[str, Any]] = {}  # id -> comment
        self.comment_user = "github-actions[bot]"
        self.releases: dict[str, dict[str, Any]] = {}  # tag -> release (assets: id list)
        self.assets: dict[int, tuple[str, bytes]] = {}  # id -> (name, bytes)
        self._next_id = 1000
        self._on_request = on_request
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        # shutdown() waits for the loop to look: every 20 ms, not the default 0.5 s
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL_S,), daemon=True
        )

    def __enter__(self) -> Replay:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def add(self, method: str, path: str, body: Any, status: int = 200, **headers: str) -> None:
        self.routes[(method, path)] = Answer(status, body, dict(headers))

    # --- the replayed sources --------------------------------------------------------------

    def load_docker_hub(self, extra: list[dict[str, Any]] | None = None, edition: str = "") -> None:
        """The two hand-written library/mysql tag pages (plus ``extra`` results on page 1);
        ``edition="late-2026"``: the tag list of late 2026 (calendar versions, 9.7 LTS)."""
        pages = [
            json.loads(
                (FIXTURES / "dockerhub" / edition / f"mysql-tags-page-{n}.json")
                .read_text()
                .replace("{base}", self.url)
            )
            for n in (1, 2)
        ]
        pages[0]["results"] = list(extra or []) + pages[0]["results"]
        self.add("GET", f"{HUB_TAGS}?page_size=100", pages[0])
        self.add("GET", f"{HUB_TAGS}?page=2&page_size=100", pages[1])

    def load_github_tags(self, extra: list[str] | None = None, edition: str = "") -> None:
        """The two hand-written mysql-server tag pages (plus ``extra`` names on page 1)."""
        folder = FIXTURES / "github" / edition
        pages = [
            json.loads((folder / f"mysql-server-tags-page-{n}.json").read_text()) for n in (1, 2)
        ]
        pages[0] = [github_tag(n) for n in extra or []] + pages[0]
        nxt = f"{self.url}{GITHUB_TAGS}?per_page=100&page=2"
        link = f'<{nxt}>; rel="next", <{nxt}>; rel="last"'
        self.add("GET", f"{GITHUB_TAGS}?per_page=100", pages[0], Link=link)
        self.add("GET", f"{GITHUB_TAGS}?per_page=100&page=2", pages[1])

    # --- the PR comment endpoints ----------------------------------------------------------

    def _comments(self, method: str, path: str, body: Any) -> Answer | None:
        m = COMMENTS_RE.match(path)
        if m and method == "GET":
            pr = int(m.group(2))
            items = [c for c in self.comments.values() if c["_pr"] == pr]
            return Answer(200, [{k: v for k, v in c.items() if k != "_pr"} for c in items])
        if m and method == "POST":
            self._next_id += 1
            cid = self._next_id
            self.comments[cid] = {
                "id": cid,
                "_pr": int(m.group(2)),
                "body": body["body"],
                "user": {"login": self.comment_user, "type": "Bot"},
                "html_url": f"https://github.com/{m.group(1)}/pull/{m.group(2)}#issuecomment-{cid}",
            }
            return Answer(201, {k: v for k, v in self.comments[cid].items() if k != "_pr"})
        m = COMMENT_RE.match(path)
        if m and method == "PATCH":
            cid = int(m.group(2))
            if cid not in self.comments:
                return Answer(404, {"message": "Not Found"})
            self.comments[cid]["body"] = body["body"]
            return Answer(200, {k: v for k, v in self.comments[cid].items() if k != "_pr"})
        return None

    # --- the release endpoints (records archive) --------------------------------------------

    def _release_json(self, rel: dict[str, Any]) -> dict[str, Any]:
        assets = [{"id": i, "name": self.assets[i][0], "size": len(self.assets[i][1])}
                  for i in rel["assets"]]  # fmt: skip
        return {**rel, "assets": assets}

    def _releases(self, method: str, path: str, body: Any) -> Answer | None:
        m = RELEASE_TAG_RE.match(path)
        if m and method == "GET":
            rel = self.releases.get(m.group(2))
            return Answer(200, self._release_json(rel)) if rel else None
        m = RELEASES_RE.match(path)
        if m and method == "POST":
            self._next_id += 1
            rid = self._next_id
            upload = f"{self.url}/uploads/repos/{m.group(1)}/releases/{rid}/assets{{?name,label}}"
            rel = {"id": rid, "tag_name": body["tag_name"], "upload_url": upload, "assets": []}
            self.releases[body["tag_name"]] = rel
            return Answer(201, self._release_json(rel))
        m = ASSET_RE.match(path)
        if m and int(m.group(2)) in self.assets:
            aid = int(m.group(2))
            if method == "GET":
                return Answer(200, self.assets[aid][1])
            if method == "DELETE":
                del self.assets[aid]
                for rel in self.releases.values():
                    rel["assets"] = [i for i in rel["assets"] if i != aid]
                return Answer(204, None)
        m = UPLOAD_RE.match(path)
        if m and method == "POST":
            rel = next(r for r in self.releases.values() if r["id"] == int(m.group(2)))
            if any(self.assets[i][0] == m.group(3) for i in rel["assets"]):
                return Answer(422, {"message": "Validation Failed: already_exists"})
            self._next_id += 1
            self.assets[self._next_id] = (m.group(3), body)
            rel["assets"].append(self._next_id)
            return Answer(201, {"id": self._next_id, "name": m.group(3)})
        return None

    def _answer(self, method: str, path: str, body: Any) -> Answer:
        with self._lock:
            found = (
                self.routes.get((method, path))
                or self._comments(method, path, body)
                or self._releases(method, path, body)
            )
        return found or Answer(404, {"message": "Not Found"})

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        replay = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                kind = self.headers.get("Content-Type") or "application/json"
                body = (json.loads(raw) if "json" in kind else raw) if raw else None
                req = Request(self.command, self.path, dict(self.headers.items()), body)
                replay.requests.append(req)
                if replay._on_request:
                    replay._on_request(req)
                ans = replay._answer(self.command, self.path, body)
                binary = isinstance(ans.body, bytes)
                data = (
                    b""
                    if ans.status == 204
                    else ans.body
                    if binary
                    else json.dumps(ans.body).encode()
                )
                self.send_response(ans.status)
                self.send_header(
                    "Content-Type", "application/octet-stream" if binary else "application/json"
                )
                self.send_header("Content-Length", str(len(data)))
                for k, v in ans.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = _serve

            def log_message(self, *args: object) -> None:
                pass

        return Handler


def hub_tag(name: str, digest: str) -> dict[str, Any]:
    """One Docker Hub ``results[]`` item in the documented shape."""
    return {
        "name": name,
        "digest": digest,
        "full_size": 170000000,
        "last_updated": "2026-11-20T12:00:00.000000Z",
        "tag_status": "active",
        "images": [{"architecture": "amd64", "os": "linux", "digest": digest, "size": 170000000}],
    }


def github_tag(name: str) -> dict[str, Any]:
    """One GitHub "list repository tags" item in the documented shape."""
    sha = "0" * 40
    return {
        "name": name,
        "zipball_url": f"https://api.github.com/repos/mysql/mysql-server/zipball/refs/tags/{name}",
        "tarball_url": f"https://api.github.com/repos/mysql/mysql-server/tarball/refs/tags/{name}",
        "commit": {
            "sha": sha,
            "url": f"https://api.github.com/repos/mysql/mysql-server/commits/{sha}",
        },
        "node_id": "MDM6UmVmMA==",
    }


@dataclass
class LocalFiles:
    """A download site on 127.0.0.1: ``files`` (path -> bytes), every GET path requested."""

    url: str
    files: dict[str, bytes]
    requests: list[str]


@contextlib.contextmanager
def serve_files() -> Iterator[LocalFiles]:
    """An HTTP server on 127.0.0.1 serving ``files``; 404 for anything else."""
    files: dict[str, bytes] = {}
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(POLL_S,), daemon=True)
    thread.start()
    try:
        yield LocalFiles(f"http://127.0.0.1:{server.server_address[1]}", files, requests)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
