"""The measurement of one cell on a started server: warm-up, the measured run inside a
sampling window, and the run record's `result` (with cost per operation) from it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perftrack.core import record
from perftrack.core.errors import ParseError
from perftrack.drivers import slap, sysbench
from perftrack.planning import cells as plan
from perftrack.run import sampler, steady, targets
from perftrack.run.resolved import ResolvedCell, target
from perftrack.run.server import Server


@dataclass(kw_only=True)
class Measured:
    status: str  # ok | failed
    reason: str | None = None
    result: dict[str, Any] | None = None
    command: list[str] = field(default_factory=list)
    sampled: dict[str, Any] = field(default_factory=dict)  # the record's cost and host


@dataclass(kw_only=True)
class Measurer:
    logs: Path
    limits: Callable[[], sampler.NoiseLimits]
    # wall-clock bound of a sysbench run beyond its --time (tests of a hang use seconds)
    sysbench_grace_s: float = sysbench.GRACE_S
    # test hook: called with (server, cell) after the warm-up, before the measurement
    before_measure: Callable[[Server, plan.Cell], None] | None = None
    # cost per operation and host signals around the measured run (sampler.py)
    sample_cost: bool = True

    def measure(self, srv: Server, resolved: ResolvedCell) -> Measured:
        if resolved.workload.tool == "slap":
            return self._slap(srv, resolved)
        return self._sysbench(srv, resolved)

    def _stem(self, srv: Server, cell: plan.Cell) -> Path:
        return self.logs / f"{cell.cell_id}.{srv.install.server_id}"

    def _sysbench(self, srv: Server, resolved: ResolvedCell) -> Measured:
        cell, wl = resolved.cell, resolved.workload
        script = wl.script_path()
        tgt = target(srv, cell)
        common: dict[str, Any] = dict(
            tables=cell.tables, table_size=cell.table_size, threads=cell.threads
        )
        common["options"] = wl.options
        stem = self._stem(srv, cell)
        try:
            if cell.warmup_s > 0:
                warm, _ = sysbench.run_sysbench(
                    script,
                    tgt,
                    time_s=cell.warmup_s,
                    log=stem.with_name(stem.name + ".warmup.txt"),
                    grace_s=self.sysbench_grace_s,
                    **common,
                )
                if warm.get("status") != "ok":
                    return Measured(status="failed", reason=f"warm-up failed: {warm.get('reason')}")
            if self.before_measure is not None:
                self.before_measure(srv, cell)
            win = self._start_window(srv)
            try:
                parsed, cmd = sysbench.run_sysbench(
                    script,
                    tgt,
                    time_s=cell.duration_s,
                    log=stem.with_name(stem.name + ".run.txt"),
                    grace_s=self.sysbench_grace_s,
                    **common,
                )
            finally:
                sample = self._stop_window(win)
        except ParseError as exc:
            return Measured(status="failed", reason=f"unreadable sysbench output: {exc}")
        if parsed.get("status") != "ok":
            return Measured(
                status="failed",
                reason=str(parsed.get("reason") or "sysbench failed"),
                result=None,
                command=cmd,
            )
        return self._ok(parsed, sample, cmd)

    def _slap(self, srv: Server, resolved: ResolvedCell) -> Measured:
        """mysqlslap cells: a warm-up pass (if the cell has a warm-up), then the measure."""
        cell, wl = resolved.cell, resolved.workload
        stem = self._stem(srv, cell)
        common: dict[str, Any] = dict(
            load=wl.script, threads=cell.threads, engine=cell.engine, options=wl.options
        )
        tgt = target(srv, cell)
        if cell.warmup_s > 0:
            warm, _ = slap.run_slap(tgt, log=stem.with_name(stem.name + ".warmup.txt"), **common)
            if warm.get("status") != "ok":
                return Measured(status="failed", reason=f"warm-up failed: {warm.get('reason')}")
        if self.before_measure is not None:
            self.before_measure(srv, cell)
        win = self._start_window(srv)
        try:
            parsed, cmd = slap.run_slap(tgt, log=stem.with_name(stem.name + ".run.txt"), **common)
        finally:
            sample = self._stop_window(win)
        if parsed.get("status") != "ok":
            return Measured(
                status="failed",
                reason=str(parsed.get("reason") or "slap failed"),
                result=None,
                command=cmd,
            )
        return self._ok(parsed, sample, cmd)

    # cost per operation (sampler.py) ---------------------------------------------------
    def _start_window(self, srv: Server) -> sampler.Window | str | None:
        """A started sampling window; a string says why none could be taken."""
        if not self.sample_cost:
            return None
        tgt, why = targets.target_for(srv)
        if tgt is None:
            return why or "no sampling target"
        try:
            win = sampler.Window(tgt)
            win.start()
        except (OSError, ValueError) as exc:  # sampling never fails a measurement
            return f"sampling could not start: {exc}"
        return win

    def _stop_window(self, win: sampler.Window | str | None) -> sampler.WindowSample | str | None:
        if not isinstance(win, sampler.Window):
            return win
        try:
            return win.stop()
        except (OSError, ValueError) as exc:
            return f"sampling could not finish: {exc}"

    def _ok(
        self, parsed: dict[str, Any], sample: sampler.WindowSample | str | None, cmd: list[str]
    ) -> Measured:
        """The result with its cost fields, and the record's cost/host objects."""
        result = result_of(parsed)
        st = steady.assess([iv["tps"] for iv in result["intervals"]])
        result["steady"] = st.steady
        result["tps_drift"] = None if st.drift is None else round(st.drift, 4)
        if sample is None:
            return Measured(status="ok", reason=None, result=result, command=cmd)
        if isinstance(sample, str):
            fields, cost, host = sampler.unavailable_everything(sample)
        else:
            txns, queries = sampler.work_done(parsed)
            fields, cost, host = sampler.per_operation(sample, txns, queries, self.limits())
        if st.reason is not None and host is not None:
            # an unsteady window is as untrustworthy as a noisy host's: flagged the same way
            why = "; ".join(r for r in (host.get("noisy_reason"), st.reason) if r)
            host = {**host, "noisy": True, "noisy_reason": why}
        return Measured(
            status="ok",
            reason=None,
            result={**result, **fields},
            command=cmd,
            sampled={"cost": cost, "host": host},
        )


def result_of(parsed: dict[str, Any]) -> dict[str, Any]:
    """The run-record `result` from the parser's output (schema fields only)."""
    res = {k: parsed.get(k) for k in record.RESULT_FIELDS}
    res["intervals"] = [_interval(iv) for iv in parsed.get("intervals") or []]
    return res


def _interval(interval: dict[str, Any]) -> dict[str, Any]:
    """Schema fields of one interval; only the latency may be null (percentile off)."""
    return {
        k: interval[k]
        for k in record.INTERVAL_FIELDS
        if k in interval and (interval[k] is not None or k == "lat_pct_ms")
    }


def tool_version(resolved: ResolvedCell) -> str:
    """The version of the tool that runs the cell's workload (driver dispatch by tool)."""
    return slap.version() if resolved.workload.tool == "slap" else sysbench.version()
