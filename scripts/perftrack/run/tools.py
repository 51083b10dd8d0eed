"""Checks of the load tools a plan needs, before any server starts."""

from __future__ import annotations

from perftrack.drivers import slap, sysbench
from perftrack.planning import matrix, workloads


def check_tools(matrix_spec: matrix.Matrix) -> None:
    """One-line error now, not a failed cell later, if a workload's tool is missing."""
    for tool in {workloads.get(w).tool for w in matrix_spec.workloads}:
        (slap if tool == "slap" else sysbench).binary()
