"""A group's benchmark datasets: loaded into a started server, or prepared once as a
template datadir that later groups of the same server, options and dataset copy.

With `--reuse-datasets` a template is made once per server × options × datasets × size
(start, load, clean stop, keep the datadir); with a dataset cache (cache.DATASETS_DIR)
templates outlive the run, keyed by everything that decides their content, and the least
recently used are evicted beyond the cache's bound.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from perftrack.core import dirlock
from perftrack.core.errors import ServerError
from perftrack.drivers import sysbench
from perftrack.planning import axes
from perftrack.run.resolved import ResolvedCell, ResolvedGroup, target
from perftrack.run.server import Server
from perftrack.servers import cache


def load_datasets(srv: Server, cells: list[ResolvedCell], logs: Path) -> None:
    """Create the database and load every dataset the cells read (one prepare each)."""
    sb = [rc for rc in cells if rc.reads_dataset]
    first = (sb[0] if sb else cells[0]).cell
    srv.create_database(first.charset, first.collation)
    by_dataset = {rc.workload.dataset: rc for rc in reversed(sb)}
    for dataset, rc in by_dataset.items():
        cell = rc.cell
        out = sysbench.prepare(
            rc.workload.prepare_script(),
            target(srv, cell),
            tables=cell.tables,
            table_size=cell.table_size,
            log=logs / f"{cell.cell_id}.prepare.{dataset}.txt",
            options=axes.prepare_options(cell),
        )
        if out.timed_out or out.returncode != 0:
            last = out.text.strip().splitlines()[-1:] or ["no output"]
            raise ServerError(f"sysbench prepare ({dataset}) failed: {last[0][:300]}")


@dataclass(kw_only=True)
class Templates:
    """The prepared datadirs of one run (and, with `cache_root`, of earlier runs)."""

    logs: Path
    emit: Callable[[str], None]
    workroot: Path | None = None
    cache_root: Path | None = None  # the dataset cache; None: temporary, this run only
    _made: dict[str, Path] = field(default_factory=dict)
    _root: Path | None = None
    _lock: int | None = None  # the temporary root's owner lock (core/dirlock.py)

    def get(self, grp: ResolvedGroup) -> Path:
        """The group's prepared datadir: made once (start, load, clean stop, keep)."""
        sb = grp.dataset_cells
        first = sb[0].cell
        datasets = sorted({rc.workload.dataset for rc in sb})
        key = json.dumps(
            [
                grp.install.server_id,
                sorted(grp.options.items()),
                datasets,
                first.tables,
                first.table_size,
                first.engine,
            ],
            default=str,
        )
        if key in self._made:
            return self._made[key]
        if self.cache_root is not None:
            dest = self._cached(grp, key, datasets)
        else:
            if self._root is None:
                root = self.workroot or Path(tempfile.gettempdir())
                root.mkdir(parents=True, exist_ok=True)  # as Server makes its workroot
                self._root = Path(
                    tempfile.mkdtemp(prefix=f"{dirlock.SERVER_DIR_PREFIX}templates-", dir=root)
                )
                self._lock = dirlock.hold(self._root)
            dest = self._root / f"t{len(self._made)}"
            self._build(grp, dest)
            self.emit(f"dataset prepared once for {grp.install.server_id}: {', '.join(datasets)}")
        self._made[key] = dest
        return dest

    def remove_temporary(self) -> None:
        """Delete this run's temporary templates (cached ones stay in the cache)."""
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            dirlock.release(self._lock)
            self._root, self._lock = None, None
            self._made.clear()

    def _cached(self, grp: ResolvedGroup, key: str, datasets: list[str]) -> Path:
        """The template from the dataset cache, built there when missing; the least
        recently used others are evicted beyond the cache's bound."""
        assert self.cache_root is not None
        install = grp.install
        scripts = sorted({rc.workload.prepare_script() for rc in grp.dataset_cells})
        content = [
            key,
            install.source_sha256,
            install.version,
            sysbench.version(),
            [cache.sha256_file(Path(x)) if Path(x).is_file() else x for x in scripts],
        ]
        digest = hashlib.sha256(json.dumps(content, default=str).encode()).hexdigest()[:16]
        ckey = f"{install.server_id}-{digest}"

        def build(tree: Path, _scratch: Path) -> None:
            self._build(grp, tree / "datadir")

        tree, built = cache.ensure_tree(
            self.cache_root, ckey, build, self.emit, kind=cache.DATASETS_DIR
        )
        os.utime(tree / cache.COMPLETE_MARKER)  # most recently used: evicted last
        verb = "prepared once (kept in the cache)" if built else "reused from the cache"
        self.emit(f"dataset {verb} for {install.server_id}: {', '.join(datasets)} ({tree})")
        in_use = {Path(t).parent.name for t in self._made.values()} | {ckey}
        for gone in cache.evict(
            self.cache_root, cache.DATASETS_DIR, cache.dataset_cache_limit(), in_use
        ):
            self.emit(f"dataset cache: evicted {gone} (least recently used)")
        return tree / "datadir"

    def _build(self, grp: ResolvedGroup, dest: Path) -> None:
        """Start a server, load the group's datasets, stop it cleanly, move its datadir to
        `dest`."""
        srv = Server(
            install=grp.install, options=grp.options, workroot=self.workroot, keep_dir=True
        )
        try:
            srv.__enter__()
            load_datasets(srv, grp.cells, self.logs)
            srv.stop()  # a clean shutdown: the datadir is consistent on disk
            shutil.move(srv.datadir, dest)
        finally:
            srv.stop()
            if getattr(srv, "dir", None) is not None:
                shutil.rmtree(srv.dir, ignore_errors=True)
