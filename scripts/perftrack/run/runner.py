"""The run stage: execute a plan's cells against real servers and write run records.

The run directory is `rundir.RunDir` (plan.json, run.json, records/, logs/); a group of
cells is resolved once (`resolved`), its datasets loaded or copied from a template
(`datasets`), its server started or kept from an earlier round (`lifetime`), each cell
measured (`measure`); this module runs the groups in order.

Guarantees: a cell's record is written only when the cell is over; a failed cell is
recorded as failed with the reason and the error-log tail, and retried after the rest
(`retries`, default 1), every attempt recorded; on Ctrl-C / SIGTERM the servers stop,
finished records stay, the run is marked interrupted, and `resume` runs only the cells
with no record.
"""

from __future__ import annotations

import contextlib
import errno
import signal
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from perftrack import __version__
from perftrack.core import dirlock, hardware, record
from perftrack.core.errors import (
    ConfigError,
    EnvironmentProblem,
    Interrupted,
    PerftrackError,
)
from perftrack.core.progress import Progress
from perftrack.drivers import sysbench
from perftrack.planning import axes
from perftrack.planning import cells as plan
from perftrack.run import datasets, lifetime, readback, rundir, sampler
from perftrack.run.errorlog import mount_point
from perftrack.run.measure import Measured, Measurer, result_of, tool_version
from perftrack.run.resolved import ResolvedCell, ResolvedGroup, resolve
from perftrack.run.rundir import RUN_STATUSES, RunDir, create, create_from_cells, now, open_run
from perftrack.run.server import Server
from perftrack.servers import options, profiles, providers, rules
from perftrack.servers.catalog import Catalog
from perftrack.servers.install import Install

DEFAULT_RETRIES = 1
LOG_TAIL_MAX_CHARS = 20000  # the run-record schema's bound on error_log_tail
REASON_MAX_CHARS = 2000  # the run-record schema's bound on reason


@contextlib.contextmanager
def _signals_raise() -> Iterator[Callable[[], None]]:
    """SIGTERM (and SIGHUP) raise Interrupted in the main thread, like Ctrl-C does.

    The yielded check raises it again at a safe point (before each cell) if the handler's
    raise was lost: Python runs some callbacks with exceptions ignored, and a signal whose
    handler runs inside one is only printed. Seen in CI: a SIGTERM landing in logging's
    at-fork hook while a server was being started ("Exception ignored in: _releaseLock"),
    after which the run went on to finish every cell."""
    pending: list[str] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        pending.append(f"interrupted by signal {signal.Signals(signum).name}")
        raise Interrupted(pending[-1])

    def check() -> None:
        if pending:
            raise Interrupted(pending[0])

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield check
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@dataclass(kw_only=True)
class RunOutcome:
    run_id: str
    path: Path
    ok: int = 0
    failed: int = 0
    skipped: int = 0
    retried: int = 0
    final_failed: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class Runner:
    rd: RunDir
    catalog: Catalog
    config_dir: Path
    emit: Callable[[str], None]
    retries: int = DEFAULT_RETRIES
    workroot: Path | None = None
    cache_dir: Path | None = None
    # test hooks: called with (server, cell) after the warm-up, before the measurement;
    # with a group's cells before its server is taken (benchmarks/noise_fidelity.py)
    before_measure: Callable[[Server, plan.Cell], None] | None = None
    before_group: Callable[[list[plan.Cell]], None] | None = None
    # wall-clock bound of a sysbench run beyond its --time (tests of a hang use seconds)
    sysbench_grace_s: float = sysbench.GRACE_S
    # Prepare each dataset once per server x options x dataset size (a template datadir
    # copied for every later group) instead of running `prepare` in every group.
    reuse_datasets: bool = False
    # With reuse_datasets: keep the templates in this cache root (cache.DATASETS_DIR) for
    # later runs and nights, keyed by everything that decides their content; None: a
    # temporary template per run only.
    dataset_cache: Path | None = None
    # Cost per operation and host signals around every measured run (sampler.py); off
    # only to measure the sampling's own overhead (benchmarks/cost_metrics.py).
    sample_cost: bool = True
    # Re-measure a cell whose window was noisy, once (None: noise_limits.repeat_noisy of
    # configs/runners.yaml). Both records are kept; the repeat has host.repeat_of.
    repeat_noisy: bool | None = None
    # `group` or `run` (run/lifetime.py); None: the plan's matrix `server_lifetime`.
    server_lifetime: str | None = None
    # Servers shared with the caller across runs (experiments/conclude.py: every round of
    # a sequence, one run each, on the same kept servers); the caller stops them. None:
    # the run's own, by `server_lifetime`, stopped when the run ends.
    servers: lifetime.Servers | None = None
    _installs: dict[str, Install | PerftrackError] = field(default_factory=dict)
    _meta: dict[str, Any] = field(default_factory=dict)
    _templates: datasets.Templates | None = None
    _servers: lifetime.Servers = field(default_factory=lifetime.Servers)
    # raises Interrupted if a signal arrived whose raise was lost (_signals_raise)
    _check_signals: Callable[[], None] = field(default=lambda: None, repr=False)
    _starts_before: Counter[str] = field(default_factory=Counter)

    # records -------------------------------------------------------------------------
    def _server_meta(self, sid: str, srv: Server | None = None) -> dict[str, Any]:
        e = self.catalog.get(sid)
        inst = self._installs.get(sid)
        meta = {
            "id": sid,
            "product": e.product,
            # the provider's (read from the binary: debian-chroot/docker check it only then)
            "version": inst.version if isinstance(inst, Install) else e.version,
            "provider": e.provider,
            "version_string": srv.version_string if srv else None,
            "source_sha256": inst.source_sha256 if isinstance(inst, Install) else None,
            "stand_in": e.stand_in,
        }
        if e.digest is not None:  # docker: the digest the image had to have, and whose it is
            meta["digest"] = e.digest
            meta["pinned_by"] = e.pinned_by or "catalog"
        return meta

    def _record(
        self,
        resolved: ResolvedCell,
        attempt: int,
        status: str,
        reason: str | None,
        started: str,
        *,
        srv: Server | None = None,
        result: dict[str, Any] | None = None,
        effective: dict[str, Any] | None = None,
        log_tail: str | None = None,
        command: list[str] | None = None,
        sampled: dict[str, Any] | None = None,
    ) -> None:
        cell = resolved.cell
        rec: dict[str, Any] = {
            "schema": record.SCHEMA_ID,
            "record_id": record.record_id(self.rd.run_id, cell.cell_id, attempt),
            "run_id": self.rd.run_id,
            "cell_id": cell.cell_id,
            "attempt": attempt,
            "status": status,
            "reason": reason[:REASON_MAX_CHARS] if reason else reason,
            "started_at": started,
            "finished_at": now(),
            "hardware": hardware.fingerprint(),
            "runner_class": self._meta["runner_class"],
            "server": self._server_meta(cell.server_id, srv),
            "cell": {k: getattr(cell, k) for k in record.CELL_FIELDS},
            "effective": readback.with_phase(cell, effective),
            "variables": dict(srv.variables) if srv else {},
            "result": result,
            "error_log_tail": log_tail[-LOG_TAIL_MAX_CHARS:] if log_tail else None,
            "tool": {
                "name": resolved.workload.tool,
                "version": tool_version(resolved) if status != "skipped" else "n/a",
                "command": command or [],
                "perftrack_version": __version__,
            },
            **(sampled or {}),  # cost and host of the measured window (sampler.py)
        }
        record.write(rec, self.rd.records)

    # servers -------------------------------------------------------------------------
    def _install(self, sid: str) -> Install:
        if sid not in self._installs:
            try:
                self._installs[sid] = providers.fetch(
                    self.catalog.get(sid), cache_dir=self.cache_dir, progress=self.emit
                )
            except Interrupted:  # a signal stops the run; it is no failure of the cells
                raise
            except PerftrackError as exc:
                self._installs[sid] = exc
        inst = self._installs[sid]
        if isinstance(inst, PerftrackError):
            raise inst
        return inst

    def _options(self, install: Install, resolved: ResolvedCell) -> dict[str, str | None]:
        cell = resolved.cell
        opts = options.translate_options(  # option names/units of this release (options.py)
            rules.rules_for(install.product, install.version),
            # the catalog entry's server_options first: the profile's win (later in my.cnf)
            {
                **self.catalog.get(cell.server_id).options,
                **profiles.read_profile(cell.profile, self.config_dir),
            },
        )
        opts["character-set-server"] = cell.charset
        opts["collation-server"] = cell.collation
        if resolved.has_axes:
            e = self.catalog.get(cell.server_id)
            opts.update(
                axes.server_options(cell, rules.rules_for(e.product, e.version), self._axes())
            )
        return opts

    def _axes(self) -> axes.Axes:
        if "axes" not in self._meta:
            self._meta["axes"] = axes.read_axes(self.config_dir)
        return self._meta["axes"]

    def _measurer(self) -> Measurer:
        if "measurer" not in self._meta:
            self._meta["measurer"] = Measurer(
                logs=self.rd.logs,
                limits=self._limits,
                sysbench_grace_s=self.sysbench_grace_s,
                before_measure=self.before_measure,
                sample_cost=self.sample_cost,
            )
        return self._meta["measurer"]

    # execution -----------------------------------------------------------------------
    def run(self, resume: bool = False) -> RunOutcome:
        """Run every cell without a record; a full disk under the run dir stops the run.

        The run directory's owner lock (core/dirlock.py) is held meanwhile: one process
        runs a run directory at a time, and `perftrack runner salvage` leaves it alone."""
        lock = None
        try:
            try:
                lock = dirlock.hold(self.rd.path)
            except BlockingIOError:
                raise ConfigError(
                    f"run {self.rd.run_id} is being run by another perftrack process right now"
                ) from None
            return self._run(resume)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            with contextlib.suppress(OSError):
                self.rd.set_status("interrupted", interrupted_at=now())
            rid = self.rd.run_id
            raise EnvironmentProblem(
                f"run {rid} stopped: disk full on {mount_point(self.rd.path)} "
                f"({exc.filename or self.rd.path}); finished cells are kept: free space, "
                f"then `perftrack run --resume {rid}`"
            ) from None
        finally:
            if self.servers is None:
                self._servers.stop_all()
            dirlock.release(lock)
            if self._templates is not None:
                self._templates.remove_temporary()

    def _run(self, resume: bool) -> RunOutcome:
        p = self.rd.plan()
        self._meta["runner_class"] = p["runner_class"]
        kept = self.server_lifetime or p["matrix"].get("server_lifetime", "group")
        self._servers = self.servers or lifetime.Servers(lifetime=kept, workroot=self.workroot)
        self._starts_before = Counter(self._servers.starts)
        cells = self.rd.cells()
        done = self.rd.attempts()
        if resume:
            self.emit(
                f"resuming {self.rd.run_id}: {len(done)} of {len(cells)} cells "
                "already have a record"
            )
        for rc in resolve([c for c in cells if c.skip and c.cell_id not in done]):
            # skipped cells: a record with the reason, before anything runs
            self._record(rc, 1, "skipped", rc.cell.skip, now())
        todo = [c for c in cells if not c.skip and c.cell_id not in done]
        per_cell = sum(c.warmup_s + c.duration_s for c in todo[:1]) + plan.CELL_OVERHEAD_ESTIMATE_S
        prog = Progress(len(todo), self.emit, per_cell)
        self.rd.set_status("running", resumed_at=now() if resume else None)
        try:
            with _signals_raise() as self._check_signals:
                for grp in plan.groups(todo):
                    self._run_group(grp, 1, prog)
                self._retry_failed(cells, prog)
                self._check_signals()
        except (KeyboardInterrupt, Interrupted) as exc:
            self.rd.set_status("interrupted", interrupted_at=now())
            raise Interrupted(
                f"run {self.rd.run_id} interrupted ({exc or 'Ctrl-C'}); finished cells are "
                f"kept: `perftrack run --resume {self.rd.run_id}` runs the rest"
            ) from None
        return self._finish(cells)

    def _retry_failed(self, cells: list[plan.Cell], prog: Progress) -> None:
        for attempt in range(2, self.retries + 2):
            latest = {cid: rundir.deciding(recs) for cid, recs in self.rd.attempts().items()}
            again = [
                c
                for c in cells
                if not c.skip
                and c.cell_id in latest
                and latest[c.cell_id]["status"] == "failed"
                and latest[c.cell_id]["attempt"] == attempt - 1
            ]
            if not again:
                return
            self._servers.stop_all()  # retries start fresh servers
            prog.total += len(again)
            self.emit(f"retrying {len(again)} failed cell(s), attempt {attempt}")
            for grp in plan.groups(again):
                self._run_group(grp, attempt, prog)

    def _finish(self, cells: list[plan.Cell]) -> RunOutcome:
        s = RunOutcome(run_id=self.rd.run_id, path=self.rd.path)
        for cid, recs in self.rd.attempts().items():
            last = rundir.deciding(recs)
            # a re-measure of a noisy window (host.repeat_of) is not a retry
            s.retried += sum(1 for r in recs[1:] if not (r.get("host") or {}).get("repeat_of"))
            if last["status"] == "ok":
                s.ok += 1
            elif last["status"] == "skipped":
                s.skipped += 1
            else:
                s.failed += 1
                s.final_failed.append(f"{cid}: {last['reason']}")
        missing = len({c.cell_id for c in cells} - set(self.rd.attempts()))
        starts = self.rd.status().get("server_starts") or {}  # a resumed run adds to them
        for sid, n in (self._servers.starts - self._starts_before).items():
            starts[sid] = starts.get(sid, 0) + n  # this run's starts (shared servers count on)
        self.rd.set_status(
            "complete" if not missing else "interrupted",
            finished_at=now(),
            server_lifetime=self._servers.lifetime,
            server_starts=starts,
            ok=s.ok,
            failed=s.failed,
            skipped=s.skipped,
            missing=missing,
        )
        return s

    def _fail_all(
        self,
        cells: list[ResolvedCell],
        attempt: int,
        reason: str,
        started: str,
        prog: Progress,
        **fields: Any,
    ) -> None:
        for rc in cells:
            self._record(rc, attempt, "failed", reason, started, **fields)
            prog.tick(f"{_label(rc.cell)}: FAILED {reason}")

    def _run_group(self, cells: list[plan.Cell], attempt: int, prog: Progress) -> None:
        """Resolve the group once (workloads, install, options), start its server on a
        fresh datadir (or a copy of its dataset template) or take the one kept up from an
        earlier round, measure its cells, stop it unless it is kept."""
        if self.before_group is not None:
            self.before_group(cells)
        started = now()
        resolved = resolve(cells)
        try:
            install = self._install(resolved[0].cell.server_id)
            grp = ResolvedGroup(resolved, install, self._options(install, resolved[0]))
            readback.check_room(grp.first.cell, self.workroot)  # a sized dataset fits
        except Interrupted:  # a signal stops the run; it is no failure of the cells
            raise
        except PerftrackError as exc:
            self._fail_all(resolved, attempt, str(exc), started, prog)
            return
        template: Path | None = None
        if self.reuse_datasets and grp.dataset_cells:
            try:
                template = self._dataset_templates().get(grp)
            except Interrupted:  # a signal stops the run; it is no failure of the cells
                raise
            except PerftrackError as exc:
                self._fail_all(grp.cells, attempt, str(exc), started, prog)
                return
        try:
            srv, fresh = self._servers.acquire(grp, template)
        except lifetime.StartFailed as exc:
            self._fail_all(grp.cells, attempt, str(exc), started, prog, log_tail=exc.log_tail)
            return
        healthy = False
        try:
            healthy = self._measure_group(srv, grp, attempt, prog, fresh)
        finally:
            self._servers.release(grp, srv, healthy)

    def _dataset_templates(self) -> datasets.Templates:
        if self._templates is None:
            self._templates = datasets.Templates(
                logs=self.rd.logs,
                emit=self.emit,
                workroot=self.workroot,
                cache_root=self.dataset_cache,
            )
        return self._templates

    def _prepare(self, srv: Server, grp: ResolvedGroup, fresh: bool) -> dict[str, Any]:
        """Load the group's data (on a server started for it, unless its datadir came from
        a template); return the effective settings, verified in every group."""
        if fresh and srv.template is None:
            datasets.load_datasets(srv, grp.cells, self.rd.logs)
        eff = readback.verify(srv, grp.cells, self._axes(), self.rd.logs)
        return {**eff, "server_lifetime": "run"} if self._servers.kept else eff

    def _measure_group(
        self, srv: Server, grp: ResolvedGroup, attempt: int, prog: Progress, fresh: bool
    ) -> bool:
        """Measure the group's cells; False if its server cannot serve another group."""
        started = now()
        try:
            eff = self._prepare(srv, grp, fresh)
        except Interrupted:  # a signal stops the run; it is no failure of the cells
            raise
        except PerftrackError as exc:
            reason = _with_cause(str(exc), srv)
            self._fail_all(
                grp.cells, attempt, reason, started, prog, srv=srv, log_tail=srv.log_tail()
            )
            return False
        dead_reason: str | None = None
        for rc in grp.cells:
            self._check_signals()  # a signal whose raise was lost stops the run here
            started = now()
            if dead_reason:
                self._record(
                    rc, attempt, "failed", dead_reason, started, srv=srv, log_tail=srv.log_tail()
                )
                prog.tick(f"{_label(rc.cell)}: FAILED {dead_reason}")
                continue
            status, dead_reason, noisy, unsteady = self._measure_one(srv, rc, attempt, eff, prog)
            # One re-measure, both records kept: of a noisy window when the limits ask for
            # it, and always of a window still warming up (run/steady.py): the server is
            # warm by now, so the repeat is the cell with its warm-up extended.
            again = unsteady or (noisy is not None and self._repeats())
            if again and status == "ok" and attempt < rundir.max_attempt():
                prog.total += 1
                why = noisy or "not steady: its throughput was still moving"
                if not unsteady:
                    why = f"noisy window ({why})"
                self.emit(f"{_label(rc.cell)}: {why}; measuring it again")
                _, dead_reason, _, _ = self._measure_one(
                    srv, rc, attempt + 1, eff, prog, repeat_of=attempt
                )
        return dead_reason is None and srv.alive()

    def _repeats(self) -> bool:
        if self.repeat_noisy is None:
            self.repeat_noisy = self._limits().repeat_noisy
        return self.repeat_noisy

    def _limits(self) -> sampler.NoiseLimits:
        if "limits" not in self._meta:
            self._meta["limits"] = sampler.load_limits(self.config_dir)
        return self._meta["limits"]

    def _measure_one(
        self,
        srv: Server,
        resolved: ResolvedCell,
        attempt: int,
        eff: dict[str, Any],
        prog: Progress,
        repeat_of: int | None = None,
    ) -> tuple[str, str | None, str | None, bool]:
        """Measure and record one cell attempt: (status, why later cells cannot run, why
        its window was noisy, whether its throughput was still moving)."""
        cell = resolved.cell
        started = now()
        dead_reason = None
        m: Measured = self._measurer().measure(srv, resolved)
        status, reason, result, sampled = m.status, m.reason, m.result, m.sampled
        tail = None
        if not srv.alive():
            code = srv.process.returncode if srv.process else None
            reason = f"server died during the measurement (exit {code})" + (
                f"; {reason}" if reason else ""
            )
            status, result = "failed", None
            dead_reason = f"server died earlier in this group (cell {cell.cell_id})"
        elif status != "ok" and not srv.responsive():
            reason = f"{reason}; the server no longer answers"
            dead_reason = f"server stopped answering earlier in this group ({cell.cell_id})"
        if status != "ok":
            reason, tail, sampled = _with_cause(reason or "failed", srv), srv.log_tail(), {}
        host = sampled.get("host")
        if repeat_of is not None:  # marks the re-measure, also when it failed
            host = sampled["host"] = {**(host or {"noisy": False}), "repeat_of": repeat_of}
        self._record(
            resolved,
            attempt,
            status,
            reason,
            started,
            srv=srv,
            result=result,
            effective=eff,
            log_tail=tail,
            command=m.command,
            sampled=sampled,
        )
        msg = f"{result['tps']:.0f} tps" if status == "ok" and result else f"FAILED {reason}"
        noisy = host.get("noisy_reason") if host and host.get("noisy") else None
        unsteady = bool(status == "ok" and result and result.get("steady") is False)
        prog.tick(f"{_label(cell)}: {msg}" + (" (noisy)" if noisy else ""))
        return status, dead_reason, noisy, unsteady


def _with_cause(reason: str, srv: Server) -> str:
    """The reason, plus a cause the server's log names exactly (disk full, …) if any."""
    cause = srv.cause_in_log()
    return f"{reason}; {cause}" if cause and cause not in reason else reason


def _label(cell: plan.Cell) -> str:
    hs = f"handshake={cell.handshake}" if cell.handshake else None
    extra = "".join(f" {v}" for v in (cell.dataset_size, cell.phase, hs) if v is not None)
    return (
        f"{cell.server_id} {cell.workload}{extra} {cell.collation} t={cell.threads} r={cell.repeat}"
    )


__all__ = [  # the run stage's door (rundir and measure re-exported for its callers)
    "DEFAULT_RETRIES",
    "RUN_STATUSES",
    "RunDir",
    "RunOutcome",
    "Runner",
    "create",
    "create_from_cells",
    "open_run",
    "result_of",
]
