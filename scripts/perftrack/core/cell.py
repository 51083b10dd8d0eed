"""A cell's identity: the fields that make two cells the same measurement, and its id.

The one definition of it: planning hashes a cell's id from these fields
(`planning/cells.py`), the store keys past cell durations by the ones that decide how
long a cell takes (`store/queries/planning.py`), records carry the id (`core/record.py`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from perftrack.core.record import OPTIONAL_CELL_FIELDS

CELL_ID_LEN = 16
# Always part of a cell's identity.
IDENTITY_FIELDS = (
    "server_id",
    "workload",
    "threads",
    "collation",
    "profile",
    "tables",
    "table_size",
    "duration_s",
    "warmup_s",
    "repeat",
    "connection",
)
# Axes added after v1: part of a cell's identity only when set, so cells without them
# keep the ids they always had.
OPTIONAL_IDENTITY_FIELDS = OPTIONAL_CELL_FIELDS
# The identity fields that decide how long a cell takes (its server aside): the key of
# past cell durations. Not the repeat or the connection (which cost the same).
DURATION_FIELDS = tuple(
    f for f in IDENTITY_FIELDS if f not in ("server_id", "repeat", "connection")
)


def cell_id(fields: Mapping[str, Any]) -> str:
    """The id of the cell of these fields: a hash of its identity."""
    ident_fields = {k: fields[k] for k in IDENTITY_FIELDS}
    ident_fields.update(
        {k: fields[k] for k in OPTIONAL_IDENTITY_FIELDS if fields.get(k) is not None}
    )
    ident = json.dumps(ident_fields, sort_keys=True)
    return hashlib.sha256(ident.encode()).hexdigest()[:CELL_ID_LEN]
