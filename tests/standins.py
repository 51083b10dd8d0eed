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
    return providers.fetch(catalog.load().get("mariadb-10.11.18")).basedir


def write_configs(dst: Path, first_bad: int, n: int = 5) -> Path:
    """configs/ copied to `dst` with a catalog of stand-ins sa-1..sa-n (sa-first_bad.. slow)."""
    src = Path(__file__).resolve().parents[1] / "configs"
    shutil.copytree(src, dst)
    base = basedir()
    lines = ["servers:"]
    for i in range(1, n + 1):
        opts = SLOW if i >= first_bad else FAST
        kind = "slow" if i >= first_bad else "fast"
        lines += [
            f"  - id: sa-{i}",
            "    product: mariadb",
            f'    version: "10.11.{90 + i}"',
            "    provider: path",
            f"    basedir: {base}",
            f"    stand_in: bisect stand-in {i} (MariaDB 10.11.18, {kind})",
            f"    server_options: [{', '.join(opts)}]",
        ]
    (dst / "versions.yaml").write_text("\n".join(lines) + "\n")
    return dst


def pair_configs(dst: Path, a_opts: list[str], b_opts: list[str], why: str) -> Path:
    """configs/ copied to `dst` with two stand-ins of the cached MariaDB 10.11.18 that differ
    only in their options: ea (A) and eb (B)."""
    shutil.copytree(Path(__file__).resolve().parents[1] / "configs", dst)
    lines = ["servers:"]
    for sid, opts in (("ea", a_opts), ("eb", b_opts)):
        lines += [
            f"  - id: {sid}",
            "    product: mariadb",
            '    version: "10.11.18"',
            "    provider: path",
            f"    basedir: {basedir()}",
            f"    stand_in: {why} stand-in {sid} (MariaDB 10.11.18)",
            f"    server_options: [{', '.join(opts)}]",
        ]
    (dst / "versions.yaml").write_text("\n".join(lines) + "\n")
    return dst
