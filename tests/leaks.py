"""Leak checks shared by the tests: processes a test started must be gone after it."""

from __future__ import annotations

import os
import subprocess


def processes_mentioning(text: str) -> list[str]:
    """Live processes whose command line contains `text` (leak checks)."""
    out = subprocess.run(["pgrep", "-a", "-f", text], capture_output=True, text=True, check=False)
    return [
        ln
        for ln in out.stdout.splitlines()
        if "pgrep" not in ln and str(os.getpid()) != ln.split()[0]
    ]
