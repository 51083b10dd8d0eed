"""Record files read, validated and prepared for ingest: on every core for a whole night.

Reading a night of the nightly matrix (3,960 record files) is JSON parsing, the record
schema's checks and `prepare` (interval summaries, variable sets), one file at a time:
~3 s of ingest at 1,000 nights on one core of a 2-core VM (docs/benchmarks.md), every
file independent of the others. So a batch of at least `PARALLEL_FROM` files is split
into one contiguous slice per core and prepared in forked worker processes; the slices
come back in order, so the list is the one a single process makes (a test compares them).

A bad file fails the same way either way: a slice that fails in a worker is read again
here, which raises the first bad file's RecordError, naming the file and field, before
anything is written. If the workers cannot start (no fork, a resource limit), one
process reads everything.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from perftrack.core import record
from perftrack.store.files.rows import PreparedRecord, prepare
from perftrack.store.files.variables import VariableSets

PARALLEL_FROM = 400  # files; fewer are read here (a worker's start is not worth it)


def read_prepared(paths: Iterable[Path]) -> list[PreparedRecord]:
    """Every record file under `paths`, read, validated and prepared (RecordError naming
    the file and field on the first bad one); variable sets computed once each."""
    files = list(record.find(paths))
    workers = min(os.cpu_count() or 1, len(files) // max(PARALLEL_FROM // 2, 1))
    if len(files) < PARALLEL_FROM or workers < 2:
        return _prepared(files)
    size = -(-len(files) // workers)
    slices = [files[i : i + size] for i in range(0, len(files), size)]
    try:
        with ProcessPoolExecutor(
            max_workers=len(slices), mp_context=multiprocessing.get_context("fork")
        ) as pool:
            done = list(pool.map(_slice, slices))
    except (OSError, ValueError, RuntimeError):  # no worker could start: read them here
        return _prepared(files)
    out: list[PreparedRecord] = []
    for part, got in zip(slices, done, strict=True):
        out += got if got is not None else _prepared(part)  # raises its first bad file
    return out


def _prepared(files: Sequence[Path]) -> list[PreparedRecord]:
    varsets = VariableSets()
    return [prepare(record.read(p), str(p), varsets) for p in files]


def _slice(files: Sequence[Path]) -> list[PreparedRecord] | None:
    """A worker's slice, or None if a file in it is bad (the parent reads the slice
    again for the error: an exception's own pickling is not relied on)."""
    try:
        return _prepared(files)
    except Exception:  # any failure: the parent reproduces it, in order
        return None
