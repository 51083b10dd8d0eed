"""The headline of a comparison: one line per version pair or axis pair, like rustc-perf's
compare summary. Counts of regressions / improvements / unchanged / inconclusive, the
geometric mean of the pair's ratios, and its largest resolved change (a regression or
improvement verdict) with its cell. `perftrack compare` opens its text with these lines
and the site's index with the same ones (publish/site/export.py), from this one function.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from perftrack.analysis import compare, stats
from perftrack.core.record import OPTIONAL_CELL_FIELDS
from perftrack.servers import rules

RESOLVED = ("regression", "improvement")
# The columns a cell is named by, in this order (the rest of a series rarely differs
# between the cells of one pair; the full cell is in the tables below the headline).
CELL_COLUMNS = ("workload", "threads", "collation", "profile", *OPTIONAL_CELL_FIELDS)


@dataclass(frozen=True, kw_only=True)
class Change:
    """One compared cell of a pair: B against A there."""

    pair: str  # "mariadb-10.1.23 → mariadb-10.2.11", or "SERVER: charset latin1 → utf8mb4"
    ratio: float
    verdict: str
    cell: str
    paired: bool
    order: tuple[Any, ...] = ()  # where the pair sorts (its new side's product and version)


@dataclass(frozen=True, kw_only=True)
class Headline:
    pair: str
    counts: dict[str, int]  # verdict -> cells, every verdict of stats.VERDICTS
    geomean: float | None  # of the pair's ratios
    largest: Change | None  # the resolved change furthest from 1 (by log ratio)
    cells: int


def cell_label(key: dict[str, Any]) -> str:
    """A cell in a few words: workload, threads, collation, profile and the axes it sets."""
    parts = []
    for c in CELL_COLUMNS:
        v = key.get(c)
        if v is None or (c == "profile" and v == "default"):
            continue
        parts.append(str(v) if c in ("workload", "collation") else f"{c}={v}")
    return " ".join(parts) or "(one cell)"


def pair_label(before: str, after: str, axis: str | None = None, server: str | None = None) -> str:
    return f"{server}: {axis} {before} → {after}" if axis else f"{before} → {after}"


def _server_of(table: compare.Table) -> str | None:
    """The server an axis comparison's table compares on (None: a version table)."""
    server = table.key.get("server_id")
    return server if isinstance(server, str) else None


def changes_of(tables: list[compare.Table]) -> list[Change]:
    """The compared rows of `compare.tables` (or an axis comparison's tables)."""
    out = []
    for t in tables:
        for r in t.rows:
            c = r.vs_previous
            if c is None or r.previous is None:
                continue
            out.append(
                Change(
                    pair=pair_label(r.previous, r.name, t.axis, _server_of(t)),
                    ratio=c.ratio,
                    verdict=c.verdict,
                    cell=cell_label(t.key),
                    paired=c.paired,
                    order=() if t.axis else (r.product, rules.parse_version(r.version)),
                )
            )
    return out


def summarise(changes: Iterable[Change]) -> list[Headline]:
    """One headline per pair, in release order (else in the order pairs first appear)."""
    by_pair: dict[str, list[Change]] = {}
    for ch in sorted(changes, key=lambda c: c.order):
        by_pair.setdefault(ch.pair, []).append(ch)
    out = []
    for pair, chs in by_pair.items():
        counts = {v: sum(1 for c in chs if c.verdict == v) for v in stats.VERDICTS}
        logs = [math.log(c.ratio) for c in chs if c.ratio > 0 and math.isfinite(c.ratio)]
        resolved = [c for c in chs if c.verdict in RESOLVED and c.ratio > 0]
        out.append(
            Headline(
                pair=pair,
                counts=counts,
                geomean=math.exp(sum(logs) / len(logs)) if logs else None,
                largest=max(resolved, key=lambda c: abs(math.log(c.ratio)), default=None),
                cells=len(chs),
            )
        )
    return out


def _count(count: int, verdict: str) -> str:
    plural = {"regression": "regressions", "improvement": "improvements"}
    return f"{count} {plural.get(verdict, verdict) if count != 1 else verdict}"


def line(headline: Headline) -> str:
    """The headline as one line of text (the CLI's and the site's words)."""
    counts = ", ".join(_count(headline.counts[v], v) for v in stats.VERDICTS)
    geo = f"geomean {headline.geomean:.3f}" if headline.geomean is not None else "no geomean"
    if headline.largest is None:
        big = "no resolved change"
    else:
        big_one = headline.largest
        big = f"largest resolved: {big_one.ratio:.3f} {big_one.verdict} in {big_one.cell}"
    cells = f"{headline.cells} cell" + ("s" if headline.cells != 1 else "")
    return f"{headline.pair}: {counts} of {cells} · {geo} · {big}"


def to_json(headline: Headline) -> dict[str, Any]:
    """One flat row (the CLI's --json, the site's data set `headline`)."""
    big = headline.largest
    return {
        "pair": headline.pair,
        "cells": headline.cells,
        **headline.counts,
        "geomean": headline.geomean,
        "largest_ratio": big.ratio if big else None,
        "largest_verdict": big.verdict if big else None,
        "largest_cell": big.cell if big else None,
        "text": line(headline),
    }


def of_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The headline rows of verdict rows as the site has them (`previous`, `server`,
    `ratio`, `verdict` and the cell's columns; `vorder`: the new side's release order)."""
    changes = [
        Change(
            pair=pair_label(r["previous"], r["server"]),
            ratio=r["ratio"],
            verdict=r["verdict"],
            cell=cell_label(r),
            paired=bool(r.get("paired")),
            order=(r.get("vorder", 0),),
        )
        for r in rows
        if r.get("ratio") is not None and r.get("previous")
    ]
    return [to_json(h) for h in summarise(changes)]
