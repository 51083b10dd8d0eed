"""tarball provider: every redirect hop of a download is checked before it is followed
(https to MySQL's download hosts, or the origin asked first), with real HTTP redirects from
a local server on 127.0.0.1 standing in for dev.mysql.com."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from perftrack.core.errors import FetchError
from perftrack.servers.catalog import Entry, Tarball
from perftrack.servers.providers import tarball


@pytest.fixture
def site() -> Iterator[tuple[str, dict[str, str], list[str]]]:
    """(base URL, path -> Location to redirect to, paths requested); 200 'x' otherwise."""
    redirects: dict[str, str] = {}
    requested: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requested.append(self.path)
            if self.path in redirects:
                self.send_response(302)
                self.send_header("Location", redirects[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", "1")
            self.end_headers()
            self.wfile.write(b"x")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", redirects, requested
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _entry(url: str) -> Entry:
    return Entry(
        id="mysql-8.4.3-tarball",
        product="mysql",
        version="8.4.3",
        provider="tarball",
        tarball=Tarball(url=url, sha256="0" * 64),
    )


@pytest.mark.parametrize(
    ("hop", "reason"),
    [
        ("http://cdn.mysql.com/x.tar.xz", "only https redirects are followed"),
        ("https://evil.example/x.tar.xz", "'evil.example' is not one of dev.mysql.com"),
        ("https://cdn.mysql.com:8443/x.tar.xz", "is not one of"),
        ("http://127.0.0.2:{port}/x.tar.xz", "only https redirects"),  # another origin
    ],
)
def test_a_redirect_off_the_allow_list_is_refused_before_it_is_requested(
    site, tmp_path: Path, hop: str, reason: str
) -> None:
    base, redirects, requested = site
    port = base.rsplit(":", 1)[1]
    redirects["/get/x.tar.xz"] = hop.format(port=port)
    with pytest.raises(FetchError) as err:
        tarball.download(_entry(f"{base}/get/x.tar.xz"), [f"{base}/get/x.tar.xz"], tmp_path, print)
    message = str(err.value)
    assert message.startswith(f"refusing the redirect of {base}/get/x.tar.xz to ")
    assert reason in message and "\n" not in message
    assert requested == ["/get/x.tar.xz"]
    assert list(tmp_path.iterdir()) == []


def test_a_redirect_on_the_same_origin_is_followed(site, tmp_path: Path) -> None:
    base, redirects, requested = site
    redirects["/get/x.tar.xz"] = f"{base}/cdn/x.tar.xz"
    got = tarball.download(
        _entry(f"{base}/get/x.tar.xz"), [f"{base}/get/x.tar.xz"], tmp_path, print
    )
    assert got.read_bytes() == b"x"
    assert requested == ["/get/x.tar.xz", "/cdn/x.tar.xz"]


def test_the_official_hosts_redirect_to_each_other_over_https() -> None:
    first = "https://dev.mysql.com/get/Downloads/MySQL-8.4/x.tar.xz"
    assert tarball.redirect_refused(first, "https://cdn.mysql.com/Downloads/x.tar.xz") is None
    assert tarball.redirect_refused(first, "https://downloads.mysql.com/x") is None
    assert tarball.redirect_refused(first, "http://cdn.mysql.com/x") is not None
