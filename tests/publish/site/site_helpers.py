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


SYNTHETIC_STUDY = "zz-synthetic"


def synthetic_studies(root: Path) -> Path:
    """configs/studies/ plus a SYNTHETIC study (test fixture, not an article) whose roles are
    the synthetic history DB's servers, so a study page has our ratios to draw."""
    import shutil

    import yaml

    studies = root / "studies"
    shutil.copytree(REPO / "configs" / "studies", studies)
    (studies / "reference" / f"{SYNTHETIC_STUDY}.csv").write_text(
        "version,workload,threads,collation,engine,durability,value,unit,source\n"
        "A,oltp_read_only,4,latin1_swedish_ci,,,1000,tps,SYNTHETIC\n"
        "B,oltp_read_only,4,latin1_swedish_ci,,,930,tps,SYNTHETIC\n"
        "A,oltp_read_only,4,utf8mb4_0900_ai_ci,,,800,tps,SYNTHETIC\n"
    )
    scale = {
        "workloads": ["oltp_read_only"],
        "charsets": ["latin1", "utf8mb4_0900_ai_ci"],
        "threads": [1, 4],
        "repeats": 3,
        "duration_s": 60,  # the synthetic history's cells
        "tables": 8,
    }
    doc = {
        "name": SYNTHETIC_STUDY,
        "title": "SYNTHETIC study <b>bold?</b> (test fixture, not an article)",
        "reference": f"reference/{SYNTHETIC_STUDY}.csv",
        "comparisons": ["version", "charset"],
        "baseline_collation": "latin1_swedish_ci",
        "local_notes": "SYNTHETIC servers of the history fixture",
        "roles": {
            "base": {
                "article": "A",
                "full": "mysql-8.0.36",
                "local": "synthetic-mysql-8.0.36",
                "stand_in": "SYNTHETIC: the history fixture's server",
            },
            "new": {
                "article": "B",
                "full": "mysql-8.4.0",
                "local": "synthetic-mysql-8.4.0",
                "stand_in": "SYNTHETIC: the history fixture's server",
            },
        },
        "claims": [{"text": "B is slower than A", "rows": "version", "where": {}, "below": 1.0}],
        "scales": {"full": scale, "local": scale},
    }
    (studies / f"{SYNTHETIC_STUDY}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    # the catalog beside the studies (whose players the pages name): the real one plus the
    # history fixture's servers, as `path` entries nothing ever starts
    catalog = root / "versions.yaml"
    text = (
        catalog.read_text()
        if catalog.is_file()
        else (REPO / "configs" / "versions.yaml").read_text()
    )
    for sid in ("synthetic-mysql-8.0.36", "synthetic-mysql-8.4.0"):
        version = sid.rsplit("-", 1)[1]
        text += (
            f"  - {{id: {sid}, product: mysql, version: {version}, provider: path, "
            f"basedir: /nonexistent/{sid}, notes: SYNTHETIC test fixture}}\n"
        )
    catalog.write_text(text)
    return studies
