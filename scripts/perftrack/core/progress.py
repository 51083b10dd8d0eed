"""Progress for long work: cells done / total and an ETA, one line per cell.

Lines (not a live bar) so CI logs and `tee` keep the whole story.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def fmt_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class Progress:
    def __init__(
        self, total: int, emit: Callable[[str], None], estimate_s: float | None = None
    ) -> None:
        self.total = total
        self.done = 0
        self.emit = emit
        self.start = time.monotonic()
        self.estimate_s = estimate_s  # per cell, before any has finished

    def eta(self) -> str:
        left = self.total - self.done
        if self.done:
            per = (time.monotonic() - self.start) / self.done
        elif self.estimate_s is not None:
            per = self.estimate_s
        else:
            return "?"
        return fmt_duration(per * left)

    def note(self, msg: str) -> None:
        self.emit(f"[{self.done}/{self.total}] {msg}")

    def tick(self, msg: str) -> None:
        self.done += 1
        self.emit(f"[{self.done}/{self.total}] {msg} · ETA {self.eta()}")
