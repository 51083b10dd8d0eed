"""Hardware fingerprint: results from different machines never share a series."""

from __future__ import annotations

import hashlib
import os
import platform
import socket
from functools import cache
from pathlib import Path
from typing import Any

KEY_LEN = 12  # hex chars of sha256; 48 bits is ample for a fleet of runners


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return 0.0


@cache
def fingerprint() -> dict[str, Any]:
    """CPU model, cores, memory and kernel, plus a short key over them."""
    fp: dict[str, Any] = {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count() or 1,
        "mem_gib": _mem_gib(),
        "kernel": platform.release(),
    }
    ident = "|".join(str(fp[k]) for k in ("cpu_model", "cores", "mem_gib", "kernel"))
    fp["key"] = hashlib.sha256(ident.encode()).hexdigest()[:KEY_LEN]
    fp["hostname"] = socket.gethostname()[:200]
    return fp
