"""What identifies a series on the site (shared by the site's data sets).

Defined once, beside the site's queries in the store (store/queries/site.py): runner
class, hardware, data set and cell shape, with every axis of configs/axes.yaml (null =
the server's default, or the axis not set).
"""

from __future__ import annotations

from perftrack.store.queries.site import AXES, CELL, SHAPE
from perftrack.store.store import SITE_SERIES

GROUP = SITE_SERIES

__all__ = ["AXES", "CELL", "GROUP", "SHAPE"]
