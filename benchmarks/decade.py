"""A decade of nights simulated, not extrapolated (docs/benchmarks.md, issue 39 item 2).

SYNTHETIC DATA (benchmarks/synthetic_history.py: the nightly matrix × 3 runner classes,
3 hardware keys, ~3,960 results a night, with the cost and host columns real records
carry). Grows a scratch git repository under /tmp (never the checkout's data/) night
after night through the real store, detect and site build, and at each checkpoint
(1, 3, 5, 10 years) reports: the repository packed (`git gc`, then `git count-objects
-v`'s size-pack), the largest file in its tree, the built site's size, the ingest /
detect / site build times of the checkpoint's last night (warm: the nights before it
ran the same steps), and a fresh clone's time (`git clone file://…`, a real transfer)
and its first `perftrack detect` (cold: no read cache).

The nights between checkpoints are batched: `--batch N` nights' rows go to the store in
one `ingest_prepared` call (synthetic_history.FastNights: the store's own `prepare`
once per cell, numpy draws every night), its night files named on that batch's last
night, then `perftrack detect`, then one commit of data/ — so the history has one file set
and one DB file version per batch, not per night (a real history has one a night: its
pack is somewhat larger than this one's for the DB file's versions). The last
`--warm` nights before each checkpoint are published one by one as the nightly does:
that night's run-record files written (synthetic_history.write_records), `ingest` of
them, `detect`, `site build` over the previous build, a commit.

    .venv/bin/python benchmarks/decade.py --quick
    .venv/bin/python benchmarks/decade.py --years 1 3 5 10 --batch 30 --out /tmp/decade
    .venv/bin/python benchmarks/decade.py --resume /tmp/decade  # after a stop: goes on

A stopped run goes on with `--resume DIR`: the repository is reset to its last commit
(a batch cut short, and the local caches, are thrown away) and the same nights follow
(each night's draws depend on its number only). The first night after a resume runs
with cold caches ("after_resume" in its checkpoint's JSON when it is the one measured).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import numpy as np  # noqa: E402
import synthetic_history as synth  # noqa: E402
from per_night_files import stamped  # noqa: E402
from repo_cost import commit_data, git, largest_file  # noqa: E402

from perftrack import cli  # noqa: E402
from perftrack.store import store  # noqa: E402

NIGHTS_A_YEAR = 365
QUICK = (30, 60)  # --quick: checkpoints in nights
STATE = "decade.json"  # in --out: where the run is, for --resume
IGNORE = "*.lock\n*.wal\ndata/.results.duckdb.*\ndata/.*-cache/\n"  # as the project's


def night_stamp(night: int) -> datetime:
    """When the night's publish runs: the morning after its runs (synthetic dates)."""
    return synth.START.replace(tzinfo=None) + timedelta(days=night, hours=6)


def _quiet(fn: Callable[[], int]) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return fn()


def timed(step: str, fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    rc = fn()
    took = time.perf_counter() - t0
    if isinstance(rc, int) and rc != 0:
        raise SystemExit(f"error: {step} failed (exit {rc})")
    return took


def detect(db: Path) -> int:
    return _quiet(lambda: cli.main(["detect", "--db", str(db)]))


def site_build(db: Path, site: Path) -> int:
    return _quiet(lambda: cli.main(["site", "build", "--db", str(db), "--out", str(site)]))


class Decade:
    """The scratch repository and the history grown in it so far."""

    def __init__(self, work: Path, points: list[int], batch: int, warm: int) -> None:
        self.work, self.points, self.batch, self.warm = work, points, batch, warm
        self.repo = work / "repo"
        self.db = self.repo / "data" / "results.duckdb"
        self.site = work / "site"  # deployed, never committed
        self.setup = synth.load_setup(max(points))
        self.fast = synth.FastNights(self.setup, np, cost=True)
        self.done = 0  # nights 0..done-1 are in the history
        self.results = 0
        self.rows: list[dict[str, object]] = []  # the checkpoints measured
        self.last: dict[str, object] = {}  # the newest night's times
        self.resumed = False  # and the next night is the first since, its caches cold
        synth.refuse_data_dir(self.db)
        if (work / STATE).is_file():  # --resume: where the last commit left it
            state = json.loads((work / STATE).read_text())
            self.done, self.results = state["done"], state["results"]
            self.rows, self.last = state["rows"], state["last"]
            git(self.repo, "reset", "--quiet", "--hard")
            git(self.repo, "clean", "-q", "-f", "-d", "-x")  # a killed batch's files, caches
            self.resumed = True
            return
        self.db.parent.mkdir(parents=True)
        git(self.repo, "init", "--quiet")
        git(self.repo, "config", "gc.auto", "0")  # packed only where measured
        (self.repo / ".gitignore").write_text(IGNORE)
        git(self.repo, "add", ".gitignore")
        git(self.repo, "commit", "--quiet", "-m", "init (SYNTHETIC benchmark history)")
        self.save()

    def save(self) -> None:
        """What --resume needs, written after each commit (atomically: a rename)."""
        state = {
            "points": self.points,
            "batch": self.batch,
            "warm": self.warm,
            "done": self.done,
            "results": self.results,
            "rows": self.rows,
            "last": self.last,
        }
        tmp = self.work / f".{STATE}.tmp"
        tmp.write_text(json.dumps(state))
        tmp.replace(self.work / STATE)

    def bulk(self, upto: int) -> None:
        """Nights done..upto-1 in batches: ingest, detect, commit."""
        while self.done < upto:
            t0 = time.perf_counter()
            last = min(upto, self.done + self.batch)
            rows = [r for n in range(self.done, last) for r in self.fast.night(n)]
            with stamped(night_stamp(last - 1)), store.open_db(self.db, write=True) as st:
                self.results += st.ingest_prepared(rows).added
            if detect(self.db) != 0:
                raise SystemExit("error: detect failed")
            commit_data(self.repo, self.db, f"SYNTHETIC nights {self.done}..{last - 1}")
            took = time.perf_counter() - t0
            print(f"nights {self.done}..{last - 1}: {took:.0f} s", file=sys.stderr, flush=True)
            self.done = last
            self.save()

    def night(self) -> dict[str, float]:
        """The next night as the nightly publishes it; its steps' times."""
        night = self.done
        recs = self.work / f"records-{night}"
        synth.COST = True
        try:
            synth.write_records(self.setup, night, recs)
        finally:
            synth.COST = False
        with stamped(night_stamp(night)):
            t0 = time.perf_counter()
            self.results += store.ingest_paths(self.db, [recs]).added
            ingest_s = time.perf_counter() - t0
        shutil.rmtree(recs)
        out = {
            "ingest_s": ingest_s,
            "detect_s": timed("detect", lambda: detect(self.db)),
            "build_s": timed("site build", lambda: site_build(self.db, self.site)),
        }
        commit_data(self.repo, self.db, f"SYNTHETIC night {night}")
        self.done = night + 1
        self.last = {"night": night, **out, "after_resume": self.resumed}
        self.resumed = False
        self.save()
        print(f"night {night}: {json.dumps(out)}", file=sys.stderr, flush=True)
        return out

    def checkpoint(self, nights: int) -> dict[str, object]:
        self.bulk(nights - self.warm)
        while self.done < nights:
            self.night()
        row: dict[str, object] = {"nights": nights, "results": self.results, **self.last}
        t0 = time.perf_counter()
        git(self.repo, "gc", "--quiet")
        row["gc_s"] = time.perf_counter() - t0
        counts = dict(
            line.split(": ", 1) for line in git(self.repo, "count-objects", "-v").splitlines()
        )
        row["pack_bytes"] = int(counts["size-pack"]) * 1024
        row["largest_file"], row["largest_bytes"] = largest_file(self.repo)
        row["site_bytes"] = sum(p.stat().st_size for p in self.site.rglob("*") if p.is_file())
        row.update(self.fresh_clone())
        self.rows.append(row)
        self.save()
        return row

    def fresh_clone(self) -> dict[str, float]:
        clone = self.work / "clone"
        shutil.rmtree(clone, ignore_errors=True)
        t0 = time.perf_counter()
        subprocess.run(
            ["git", "clone", "--quiet", self.repo.as_uri(), str(clone)],
            check=True,
            capture_output=True,
        )
        clone_s = time.perf_counter() - t0
        db = clone / "data" / "results.duckdb"
        detect_s = timed("detect in the fresh clone", lambda: detect(db))
        shutil.rmtree(clone)
        return {"clone_s": clone_s, "clone_detect_s": detect_s}


def _mb(n: object) -> str:
    return f"{int(str(n)) / 1e6:,.1f} MB"


def table(rows: list[dict[str, object]]) -> str:
    out = [
        "| history | results | repository (packed) | a night | largest file | built site "
        "| ingest | detect | site build | fresh clone + detect |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        n = int(str(r["nights"]))
        when = f"{n // NIGHTS_A_YEAR} y ({n:,} nights)" if n % NIGHTS_A_YEAR == 0 else f"{n} nights"
        out.append(
            f"| {when} | {int(str(r['results'])):,} | {_mb(r['pack_bytes'])} "
            f"| {int(str(r['pack_bytes'])) / n / 1e3:.0f} KB "
            f"| {_mb(r['largest_bytes'])} (`{r['largest_file']}`) | {_mb(r['site_bytes'])} "
            f"| {r['ingest_s']:.1f} s | {r['detect_s']:.1f} s | {r['build_s']:.1f} s "
            f"| {r['clone_s']:.1f} s + {r['clone_detect_s']:.1f} s |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--years", type=int, nargs="+", default=[1, 3, 5, 10])
    ap.add_argument("--quick", action="store_true", help=f"checkpoints at {QUICK} nights")
    ap.add_argument("--batch", type=int, default=30, help="nights per ingest between checkpoints")
    ap.add_argument("--warm", type=int, default=2, help="nights published one by one at each")
    ap.add_argument("--out", type=Path, help="scratch directory (new, under /tmp; kept)")
    ap.add_argument("--resume", type=Path, help="continue the run a stopped --out left")
    a = ap.parse_args(argv)
    points = list(QUICK) if a.quick else sorted(y * NIGHTS_A_YEAR for y in a.years)
    if a.batch < 1 or a.warm < 1 or min(points) <= a.warm:
        print("error: --batch and --warm must be ≥ 1 and below every checkpoint", file=sys.stderr)
        return 2
    if a.resume is not None:
        if not (a.resume / STATE).is_file():
            print(
                f"error: --resume {a.resume} holds no {STATE} (not a decade run)", file=sys.stderr
            )
            return 2
        state = json.loads((a.resume / STATE).read_text())
        work, points, a.batch, a.warm = a.resume, state["points"], state["batch"], state["warm"]
    elif a.out is not None and (a.out.exists() or REPO.resolve() in a.out.resolve().parents):
        print(
            f"error: --out {a.out} exists or is inside the checkout: give a new directory",
            file=sys.stderr,
        )
        return 2
    else:
        work = a.out or Path(tempfile.mkdtemp(prefix="perftrack-decade-"))
        work.mkdir(parents=True, exist_ok=True)
    print(f"SYNTHETIC DATA: a simulated history in {work}", flush=True)
    decade = Decade(work, points, a.batch, a.warm)
    for nights in points:
        if any(r["nights"] == nights for r in decade.rows):
            continue
        decade.checkpoint(nights)
        print(json.dumps(decade.rows[-1]), flush=True)
    rows = decade.rows
    print("SYNTHETIC DATA (benchmarks/decade.py)")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
