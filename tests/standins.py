"""A test catalog of stand-in releases: the cached MariaDB 10.11.18 basedir under made-up
versions, the later ones carrying a configuration with a large real cost.

Measured on this machine (oltp_update_index, 2 threads, while other jobs ran): the
"fast" entries (innodb_flush_log_at_trx_commit=0) ran 4,200-8,800 tx/s, the "slow" ones
(innodb_flush_log_at_trx_commit=1 + log-bin + sync_binlog=1: two fsyncs per commit)
290-720 tx/s, more than 10x slower, so a few short rounds decide.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from perftrack.servers import catalog, providers

FAST = ["innodb_flush_log_at_trx_commit=0"]
SLOW = ["innodb_flush_log_at_trx_commit=1", "log-bin=binlog", "sync_binlog=1"]
WORKLOAD = "oltp_update_index"


def basedir() -> Path:
    """The real MariaDB 10.11.18 basedir (fetched into the perftrack cache once)."""
    return providers.fetch(catalog.read_catalog().get("mariadb-10.11.18")).basedir


def write_configs(dst: Path, first_bad: int, n: int = 5) -> Path:
    """configs/ copied to `dst` with a catalog of stand-ins sa-1..sa-n (sa-first_bad.. slow)."""
    entries = []
    for i in range(1, n + 1):
        kind = "slow" if i >= first_bad else "fast"
        why = f"bisect stand-in {i} (MariaDB 10.11.18, {kind})"
        entries.append((f"sa-{i}", f"10.11.{90 + i}", why, SLOW if i >= first_bad else FAST))
    return _configs_with(dst, entries)


def pair_configs(dst: Path, a_opts: list[str], b_opts: list[str], why: str) -> Path:
    """configs/ copied to `dst` with two stand-ins of the cached MariaDB 10.11.18 that differ
    only in their options: ea (A) and eb (B)."""
    return _configs_with(
        dst,
        [
            (sid, "10.11.18", f"{why} stand-in {sid} (MariaDB 10.11.18)", opts)
            for sid, opts in (("ea", a_opts), ("eb", b_opts))
        ],
    )


def _configs_with(dst: Path, entries: list[tuple[str, str, str, list[str]]]) -> Path:
    """configs/ copied to `dst`, its catalog replaced by path entries of the cached MariaDB
    10.11.18 basedir: (id, version, stand_in text, server_options) each."""
    shutil.copytree(Path(__file__).resolve().parents[1] / "configs", dst)
    base = basedir()
    lines = ["servers:"]
    for sid, version, why, opts in entries:
        lines += [
            f"  - id: {sid}",
            "    product: mariadb",
            f'    version: "{version}"',
            "    provider: path",
            f"    basedir: {base}",
            f"    stand_in: {why}",
            f"    server_options: [{', '.join(opts)}]",
        ]
    (dst / "versions.yaml").write_text("\n".join(lines) + "\n")
    return dst
