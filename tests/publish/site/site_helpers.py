"""Constants and the browser-tab wrapper shared by the site tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
ARTIFACTS = REPO / "test-artifacts" / "site"
CHROMIUM = Path("/usr/bin/chromium")
# Playwright's own browser download does not work on these machines; these flags keep
# Debian's chromium from calling home (component updates, sync, metrics) during tests.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}  # a common phone's CSS viewport
READY_TIMEOUT_MS = 30_000  # generous: a loaded CI machine; never a timing assertion

# Strings that would run script if a page inserted them as HTML.
HOSTILE_VERSION = '8.4.0-"><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
HOSTILE_REASON = 'known <script>window.__pwned=3</script> "><img src=x onerror="window.__pwned=4">'


@dataclass
class Tab:
    """A page plus everything it said: console messages, page errors, requests."""

    page: Any
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready='1']", timeout=READY_TIMEOUT_MS)

    def problems(self) -> list[str]:
        bad = [f"{t}: {m}" for t, m in self.console if t in ("error", "warning")]
        return bad + [f"pageerror: {e}" for e in self.errors] + self.dialogs

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def marks(self, chart: str) -> int:
        return int(self.page.get_attribute(f"#chart-{chart}", "data-marks") or "0")

    def drawn(self) -> int:
        return int(self.page.evaluate("window.perftrack ? window.perftrack.drawn : 0"))
