"""The built site's size, its largest files, and the bytes one night changes in it
(docs/benchmarks.md, "Site size and bytes changed per night").

SYNTHETIC DATA (tests/fixtures/records/synthetic_history.py: 360 records a night) in a
temporary directory (or --db, a DB such a history was ingested into: it is copied, never
written). At N nights: `perftrack detect`, `site build`; the site's total, its largest
files and the directories they are in. Then night N+1 is ingested (the next synthetic
night), detect run again and the site built over the previous build, as the nightly does;
the two builds are compared file by file by content hash (sha256): bytes changed (same
path, other content), added, removed — what an incremental deploy uploads. --extra nights
are added so, one night file each, as the nightly ingests them: the synthetic history's
files hold 100 nights each, so the first added night (a file whose first month is the
open one) closes the history page's last part (data/history/parts: by the first month of
each night file) and rewrites every cell's closed rows, as a real month's first night
does; the second added night shows an ordinary night.

    .venv/bin/python benchmarks/site_size.py --nights 1000
    .venv/bin/python benchmarks/site_size.py --db /tmp/h1000.duckdb --nights 1000
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fixtures.records.synthetic_history import build_db, night_records  # noqa: E402
from perftrack.cli import main as cli  # noqa: E402
from perftrack.publish.site import build  # noqa: E402
from perftrack.store import store  # noqa: E402


def hashes(site: Path) -> dict[str, tuple[str, int]]:
    return {
        p.relative_to(site).as_posix(): (
            hashlib.sha256(p.read_bytes()).hexdigest(),
            p.stat().st_size,
        )
        for p in site.rglob("*")
        if p.is_file()
    }


def mb(n: int) -> str:
    return f"{n / 1e6:,.2f} MB"


def report(site: Path, top: int) -> None:
    files = hashes(site)
    total = sum(s for _, s in files.values())
    print(f"site: {len(files)} files, {mb(total)}")
    dirs: Counter[str] = Counter()
    for path, (_, size) in files.items():
        dirs[path.rsplit("/", 1)[0] if "/" in path else "."] += size
    for d, size in dirs.most_common(8):
        print(f"  dir {d}: {mb(size)}")
    for path, (_, size) in sorted(files.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {mb(size):>12}  {path}")
    print(f"  index page + its data: {mb(build.page_bytes(site, 'index'))}")
    # the files of a whole table (not parts): each is one row per run, verdict, … at most
    whole = [p for p in files if re.fullmatch(r"data/[^/]+|data/sql/(?!results-)[^/]+", p)]
    print(
        "  whole-table files over 10 kB: "
        + ", ".join(f"{p} {files[p][1] / 1e3:,.0f} kB" for p in whole if files[p][1] > 10_000)
    )


def diff(a: dict[str, tuple[str, int]], b: dict[str, tuple[str, int]]) -> None:
    changed = [p for p in a.keys() & b.keys() if a[p][0] != b[p][0]]
    added = [p for p in b.keys() - a.keys()]
    removed = [p for p in a.keys() - b.keys()]
    print(
        f"one night: changed {len(changed)} files {mb(sum(b[p][1] for p in changed))}, "
        f"added {len(added)} {mb(sum(b[p][1] for p in added))}, "
        f"removed {len(removed)} {mb(sum(a[p][1] for p in removed))}; "
        f"unchanged {len(a.keys() & b.keys()) - len(changed)}"
    )
    where: Counter[str] = Counter()
    for p in changed + added:
        where[p.rsplit("/", 1)[0] if "/" in p else "."] += b[p][1]
    print("  by directory: " + ", ".join(f"{d} {mb(n)}" for d, n in where.most_common()))
    for p in sorted(changed + added, key=lambda p: -b[p][1])[:12]:
        print(f"  {mb(b[p][1]):>12}  {p}{'' if p in a else ' (new)'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nights", type=int, default=1000)
    ap.add_argument("--db", type=Path, help="a DB already holding --nights synthetic nights")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--extra", type=int, default=2, help="nights added one at a time, each diffed")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="site-size-") as tmp:
        work = Path(tmp)
        db = work / "history" / "results.duckdb"
        if args.db:
            # the DB and its night files (beside it, in a directory named as the DB)
            shutil.copytree(args.db.with_suffix(""), db.with_suffix(""))
            shutil.copy2(args.db, db)
        else:
            build_db(db, args.nights, nights_per_batch=100)
        out = work / "site"
        for night in range(args.nights, args.nights + 1 + args.extra):
            if night > args.nights:
                recs = night_records(night - 1, rng=random.Random(night))
                with store.open_db(db, write=True) as st:
                    st.ingest_prepared([store.prepare(r, r["record_id"]) for r in recs])
            if cli(["detect", "--db", str(db)]) != 0:
                raise SystemExit("perftrack detect failed")
            before = hashes(out) if out.is_dir() else {}
            build.build(db, out)
            print(f"== {night} nights")
            report(out, args.top)
            if before:
                diff(before, hashes(out))


if __name__ == "__main__":
    main()
