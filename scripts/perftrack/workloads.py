"""The workloads perftrack knows, declared once.

Order matters inside a server group: read-only workloads run before ones that write,
so every read measurement sees the freshly prepared dataset (Mark Callaghan's
"read passes before write passes").
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ConfigError


@dataclass(frozen=True)
class Workload:
    name: str
    tool: str  # driver name
    script: str  # sysbench test name or Lua path
    writes: bool
    description: str


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "oltp_point_select",
            "sysbench",
            "oltp_point_select",
            False,
            "primary-key point selects, one per transaction",
        ),
        Workload(
            "oltp_read_only",
            "sysbench",
            "oltp_read_only",
            False,
            "sysbench read-only OLTP: point selects, ranges, sums, orders, distincts",
        ),
        Workload(
            "oltp_read_write",
            "sysbench",
            "oltp_read_write",
            True,
            "sysbench read-write OLTP: the read-only mix plus updates, delete, insert",
        ),
    )
}


def get(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ConfigError(f"unknown workload '{name}'; known: {', '.join(WORKLOADS)}") from None


def run_order(names: list[str]) -> list[str]:
    """Read-only workloads first, then writers, each keeping the matrix's order."""
    return sorted(names, key=lambda n: get(n).writes)
