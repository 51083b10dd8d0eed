"""What the results DB costs the git repository, night after night (docs/benchmarks.md).

SYNTHETIC DATA (benchmarks/synthetic_history.py: the nightly matrix × 3 runner classes).
A scratch git repository in a temporary directory gets the DB committed after every
night, exactly as the publish job leaves it (ingest through the store, then `detect`,
which replaces the verdicts and change points; CHECKPOINT, and a rewrite when a quarter
of the file is free). The repository is packed (`git gc`) at the
start and the end of a window of nights; the pack growth over the window divided by its
nights is the cost per night a clone pays. `--base N` first grows the DB to N nights
without committing (the steady state a year in), commits that once, then measures.

    .venv/bin/python benchmarks/repo_cost.py --base 0 --nights 20
    .venv/bin/python benchmarks/repo_cost.py --base 345 --nights 20
    .venv/bin/python benchmarks/repo_cost.py --base 345 --nights 20 --row-group-size 0
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import synthetic_history as synth  # noqa: E402

from perftrack.cli import main as cli  # noqa: E402
from perftrack.store import dbfile, store  # noqa: E402


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@localhost",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@localhost",
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


def pack_bytes(repo: Path) -> int:
    git(repo, "gc", "--quiet", "--prune=now")
    return sum(p.stat().st_size for p in (repo / ".git" / "objects" / "pack").glob("*.pack"))


def measure(base: int, nights: int, work: Path) -> dict[str, float]:
    setup = synth.load_setup(365)
    repo = work / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet")
    db = work / "results.duckdb"
    if base:
        synth.grow(db, setup, 0, base)
        with store.open_db(db, write=True) as st:  # leave it as a nightly close would
            st.compact_on_close = True
    rngs = synth.night_rngs(setup)
    if base:
        shutil.copy(db, repo / "results.duckdb")
        git(repo, "add", "results.duckdb")
        git(repo, "commit", "--quiet", "-m", f"base: {base} nights")
    start = pack_bytes(repo) if base else 0
    sizes = []
    t0 = time.perf_counter()
    for night in range(base, base + nights):
        with store.open_db(db, write=True) as st:
            st.ingest_prepared(synth.prepared_night(setup, night, rngs(night)))
        if cli.main(["detect", "--db", str(db)]) != 0:  # as `perftrack publish` does
            raise SystemExit("detect failed")
        shutil.copy(db, repo / "results.duckdb")
        git(repo, "add", "results.duckdb")
        git(repo, "commit", "--quiet", "-m", f"night {night}")
        sizes.append(db.stat().st_size)
    loop_s = time.perf_counter() - t0
    end = pack_bytes(repo)
    return {
        "base_nights": base,
        "nights": nights,
        "db_mb_end": sizes[-1] / 1e6,
        "pack_mb_start": start / 1e6,
        "pack_mb_end": end / 1e6,
        "pack_kb_per_night": (end - start) / nights / 1e3,
        "loop_s": loop_s,
        "row_group_size": dbfile.ROW_GROUP_SIZE,
        "compact_free_fraction": dbfile.COMPACT_FREE_FRACTION,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=int, default=0, help="nights grown before measuring")
    ap.add_argument("--nights", type=int, default=20, help="nights committed one by one")
    ap.add_argument(
        "--row-group-size",
        type=int,
        default=dbfile.ROW_GROUP_SIZE or 0,
        help="rows per row group when writing (0: DuckDB's default, 122,880)",
    )
    ap.add_argument(
        "--compact-fraction",
        type=float,
        default=dbfile.COMPACT_FREE_FRACTION,
        help="rewrite the file at close when this share of it is free (above 1: never)",
    )
    a = ap.parse_args()
    dbfile.ROW_GROUP_SIZE = a.row_group_size or None
    dbfile.COMPACT_FREE_FRACTION = a.compact_fraction
    with tempfile.TemporaryDirectory(prefix="perftrack-repo-cost-") as tmp:
        print(json.dumps(measure(a.base, a.nights, Path(tmp))))


if __name__ == "__main__":
    main()
