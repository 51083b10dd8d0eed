"""What identifies a series on the site (shared by the site's data sets), and how its
cells and times are labelled.

Defined once, beside the site's queries in the store (store/queries/results.py): runner
class, hardware, data set and cell shape, with every axis of configs/axes.yaml (null =
the server's default, or the axis not set).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from perftrack.store.queries.results import AXES, CELL, SHAPE
from perftrack.store.store import SITE_SERIES

GROUP = SITE_SERIES

__all__ = ["AXES", "CELL", "GROUP", "SHAPE", "axis_label", "dataset_label", "iso"]


def dataset_label(
    tables: Any, table_size: Any, duration_s: Any, connection: Any, *axes: Any
) -> str:
    """The data set, run length and axes of a cell, e.g. "8×100,000 rows · 60 s · tcp"
    or "1×1,000 rows · 60 s · tcp · MyISAM · strict" (axes only when set)."""
    parts = [f"{tables}×{int(table_size):,} rows", f"{duration_s} s", str(connection)]
    return " · ".join(parts + [str(a) for a in axes if a])


def axis_label(axis: str, value: Any) -> str | None:
    """An axis value as the dataset label shows it ("handshake skip": "skip" alone is vague)."""
    if value is None:
        return None
    return f"handshake {value}" if axis == "handshake" else str(value)


def iso(value: Any) -> str | None:
    """ISO text; the DB's naive timestamps are UTC (docs/schema.md), so they get a Z."""
    if value is None:
        return None
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.isoformat() + "Z"
    return value.isoformat() if hasattr(value, "isoformat") else str(value)
