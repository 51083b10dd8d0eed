"""How long one server start serves: one group, or every round of the run.

`group` (the matrix default): every group (server × collation × profile × dataset within
a round) starts a fresh server on a fresh datadir and stops it after its cells.

`run` (`server_lifetime: run`): each server × options × datasets is started once, at its
first group, and kept up; the same key's groups in later rounds run on it. What made the
fresh server safe is kept: the effective settings are read back and verified at every
group (readback.verify), a server that died, stopped answering or failed that check is
stopped and the next group of its key starts a fresh one, and every kept server is
stopped — with Ctrl-C held off, so none is left — when the run's pass ends, is
interrupted or fails. Retries start fresh servers (`stop_all` between passes).
"""

from __future__ import annotations

import signal
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perftrack.core.errors import ConfigError, ServerError
from perftrack.planning.matrix import SERVER_LIFETIMES
from perftrack.run.resolved import ResolvedGroup
from perftrack.run.server import DEFERRED_SIGNALS, Server


class StartFailed(ServerError):
    """A group's server would not start; `log_tail` is what its logs said."""

    def __init__(self, reason: str, log_tail: str | None) -> None:
        super().__init__(reason)
        self.log_tail = log_tail


def key_of(grp: ResolvedGroup) -> tuple[Any, ...]:
    """What a kept server is shared by: the group key (server, collation, profile,
    dataset shape, connection, axes) and the datasets its data holds."""
    return (grp.first.cell.group_key(), tuple(sorted({rc.workload.dataset for rc in grp.cells})))


@dataclass(kw_only=True)
class Servers:
    """The run's servers by lifetime; `starts` counts server starts per server id."""

    lifetime: str = "group"
    workroot: Path | None = None
    starts: Counter[str] = field(default_factory=Counter)
    _up: dict[tuple[Any, ...], Server] = field(default_factory=dict)
    # Every server started and not yet stopped, kept or not: an interruption landing
    # between a start and the caller's try (or in `release` before the stop) leaves no
    # server behind, because `stop_all` stops these too.
    _live: list[Server] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.lifetime not in SERVER_LIFETIMES:
            raise ConfigError(
                f"server_lifetime must be {' or '.join(SERVER_LIFETIMES)}, not {self.lifetime!r}"
            )

    @property
    def kept(self) -> bool:
        return self.lifetime == "run"

    def acquire(self, grp: ResolvedGroup, template: Path | None) -> tuple[Server, bool]:
        """The group's server and whether it was started for this group (its data still
        to load); StartFailed if a new one would not start."""
        key = key_of(grp)
        srv = self._up.pop(key, None)
        if srv is not None:
            if srv.responsive():
                self._up[key] = srv
                return srv, False
            self._stop(srv)  # died or hung between rounds: this group gets a fresh one
        srv = Server(
            install=grp.install, options=grp.options, workroot=self.workroot, template=template
        )
        self._live.append(srv)  # before it exists: stop() of a never-started server is a no-op
        try:
            srv.__enter__()
        except ServerError as exc:
            self._forget(srv)  # __enter__ stopped it
            raise StartFailed(str(exc), srv.final_log_tail or None) from None
        self.starts[grp.install.server_id] += 1
        if self.kept:
            self._up[key] = srv
        return srv, True

    def release(self, grp: ResolvedGroup, srv: Server, healthy: bool) -> None:
        """After the group's cells: stop its server unless it is kept for later rounds
        and came through the group healthy."""
        if self.kept and healthy and self._up.get(key_of(grp)) is srv:
            return
        self._up.pop(key_of(grp), None)
        self._stop(srv)

    def _stop(self, srv: Server) -> None:
        srv.stop()
        self._forget(srv)

    def _forget(self, srv: Server) -> None:
        # by identity: Servers compare by fields, and a never-started one lacks some
        self._live[:] = [s for s in self._live if s is not srv]

    def stop_all(self) -> None:
        """Stop every server still up (kept, or started for a group whose caller was
        interrupted before releasing it); Ctrl-C / SIGTERM wait until all are stopped."""
        old = signal.pthread_sigmask(signal.SIG_BLOCK, DEFERRED_SIGNALS)
        try:
            self._up.clear()
            while self._live:
                self._live.pop().stop()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
