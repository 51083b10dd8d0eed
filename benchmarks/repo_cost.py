"""What the results DB costs the git repository, night after night (docs/benchmarks.md).

SYNTHETIC DATA (benchmarks/synthetic_history.py: the nightly matrix × 3 runner classes).
A scratch git repository in a temporary directory holds the DB as a checkout does
(`data/results.duckdb` and, since schema v6, its night files `data/results/`) and gets
`data/` committed after every night, exactly as the publish job leaves it (ingest
through the store, then `detect`, which replaces the verdicts and change points;
CHECKPOINT, and a rewrite when a quarter of the file is free). The repository is packed
(`git gc`) at the start and the end of a window of nights; the pack growth over the
window divided by its nights is the cost per night a clone pays. `--base N` first grows
the DB to N nights without committing (one ingest a night, as publish does, unless
`--base-batch` says more), commits that once, then measures. The largest file in the
repository is reported too (the 50 MB limit).

    .venv/bin/python benchmarks/repo_cost.py --base 0 --nights 20
    .venv/bin/python benchmarks/repo_cost.py --base 345 --nights 20
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "benchmarks"))

import synthetic_history as synth  # noqa: E402

from perftrack import cli  # noqa: E402
from perftrack.store import nightfiles, store  # noqa: E402


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


def largest_file(repo: Path) -> tuple[str, int]:
    """(path, bytes) of the largest file in HEAD."""
    best = ("", 0)
    for line in git(repo, "ls-tree", "-r", "-l", "HEAD").splitlines():
        meta, path = line.split("\t", 1)
        size = meta.split()[3]
        if size.isdigit() and int(size) > best[1]:
            best = (path, int(size))
    return best


def commit_data(repo: Path, message: str) -> None:
    git(repo, "add", "-A", "data")
    git(repo, "commit", "--quiet", "-m", message)


def measure(base: int, nights: int, work: Path, base_batch: int) -> dict[str, float | str]:
    setup = synth.load_setup(365)
    repo = work / "repo"
    (repo / "data").mkdir(parents=True)
    git(repo, "init", "--quiet")
    (repo / ".gitignore").write_text("*.lock\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "--quiet", "-m", "init")
    db = repo / "data" / "results.duckdb"
    if base:
        synth.grow(db, setup, 0, base, batch=base_batch)
        with store.open_db(db, write=True) as st:  # leave it as a nightly close would
            st.compact_on_close = True
        commit_data(repo, f"base: {base} nights")
    rngs = synth.night_rngs(setup)
    start = pack_bytes(repo)
    sizes = []
    t0 = time.perf_counter()
    for night in range(base, base + nights):
        with store.open_db(db, write=True) as st:
            st.ingest_prepared(synth.prepared_night(setup, night, rngs(night)))
        if cli.main(["detect", "--db", str(db)]) != 0:  # as `perftrack publish` does
            raise SystemExit("detect failed")
        commit_data(repo, f"night {night}")
        sizes.append(db.stat().st_size)
    loop_s = time.perf_counter() - t0
    end = pack_bytes(repo)
    path, size = largest_file(repo)
    files = nightfiles.files_dir(db)
    night_bytes = sum(p.stat().st_size for p in files.rglob("*.parquet"))
    return {
        "base_nights": base,
        "nights": nights,
        "db_mb_end": sizes[-1] / 1e6,
        "night_files": len(list(files.rglob("*.parquet"))),
        "night_files_mb": night_bytes / 1e6,
        "largest_file": path,
        "largest_file_mb": size / 1e6,
        "pack_mb_start": start / 1e6,
        "pack_mb_end": end / 1e6,
        "pack_kb_per_night": (end - start) / nights / 1e3,
        "loop_s": loop_s,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=int, default=0, help="nights grown before measuring")
    ap.add_argument("--nights", type=int, default=20, help="nights committed one by one")
    ap.add_argument("--base-batch", type=int, default=1, help="nights per ingest in the base")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="perftrack-repo-cost-") as tmp:
        print(json.dumps(measure(a.base, a.nights, Path(tmp), a.base_batch)))


if __name__ == "__main__":
    main()
