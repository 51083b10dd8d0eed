"""What identifies a series on the site (shared by the site's data sets)."""

from __future__ import annotations

from perftrack.store import migrations

# engine / isolation / durability / handshake / dataset_size / phase: configs/axes.yaml
# values (null = the server's default, or the axis not set): part of every series
AXES = migrations.V5_AXES
SHAPE = ("profile", "tables", "table_size", "duration_s", "connection", *AXES)
CELL = ("workload", "threads", "coll")
# What identifies a series on the site: runner class, hardware, data set and cell shape.
GROUP = ("runner_class", "hw_key", *SHAPE, *CELL)
