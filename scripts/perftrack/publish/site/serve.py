"""`perftrack site serve`: show a built site on http://127.0.0.1:PORT/ (loopback only)."""

from __future__ import annotations

import functools
import http.server
from collections.abc import Callable
from pathlib import Path

from perftrack.core.errors import ConfigError, EnvironmentProblem
from perftrack.publish.site import build

HOST = "127.0.0.1"  # never another interface: the site is for local viewing
DEFAULT_PORT = 8000  # http.server's customary port; 0 picks a free one


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: the command prints its URL once

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()


def server(site: Path, port: int = DEFAULT_PORT) -> http.server.ThreadingHTTPServer:
    """A bound, not yet serving, HTTP server for `site` on 127.0.0.1."""
    if not (site / "index.html").is_file() or not (site / build.MARKER).is_file():
        raise ConfigError(f"{site} is not a built site: run `perftrack site build --out {site}`")
    handler = functools.partial(_Handler, directory=str(site))
    try:
        return http.server.ThreadingHTTPServer((HOST, port), handler)
    except OSError as exc:
        raise EnvironmentProblem(
            f"cannot listen on {HOST}:{port} ({exc.strerror}): choose another --port"
        ) from None


def serve(site: Path, port: int, say: Callable[[str], None]) -> None:
    httpd = server(site, port)
    with httpd:
        say(f"serving {site} on http://{HOST}:{httpd.server_address[1]}/ (Ctrl-C stops)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            say("stopped")
