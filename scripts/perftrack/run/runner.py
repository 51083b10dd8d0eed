"""The run stage: execute a plan's cells against real servers and write run records.

Layout of a run directory (`runs/<run_id>/`):
  plan.json        the matrix and every cell, in order (written once)
  run.json         status: running | complete | interrupted, counts, times
  records/         one validated run record per cell attempt (<cell_id>.<attempt>.json)
  logs/            raw sysbench output and server error logs (artifacts, not DB)

Guarantees: a cell's record is written only when the cell is over; a failed cell is
recorded as failed with the reason and the error-log tail, and retried after the rest
(`retries`, default 1), every attempt recorded; on Ctrl-C / SIGTERM the servers stop,
finished records stay, the run is marked interrupted, and `resume` runs only the cells
with no record.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from perftrack import __version__
from perftrack.core import dirlock, hardware, record
from perftrack.core.errors import (
    ConfigError,
    EnvironmentProblem,
    Interrupted,
    ParseError,
    PerftrackError,
    ServerError,
)
from perftrack.core.progress import Progress
from perftrack.drivers import slap, sysbench
from perftrack.planning import axes, workloads
from perftrack.planning import cells as plan
from perftrack.planning.matrix import Matrix
from perftrack.run import readback, sampler, targets
from perftrack.run.server import BENCH_DB, BENCH_USER, Server, mount_point
from perftrack.servers import cache, options, profiles, providers, rules
from perftrack.servers.catalog import Catalog
from perftrack.servers.install import Install

DEFAULT_RETRIES = 1
RUN_STATUSES = ("running", "complete", "interrupted")
LOG_TAIL_MAX_CHARS = 20000  # the run-record schema's bound on error_log_tail
REASON_MAX_CHARS = 2000  # the run-record schema's bound on reason


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".tmp-{path.name}")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


@dataclass
class RunDir:
    path: Path

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def records(self) -> Path:
        return self.path / "records"

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    def plan(self) -> dict[str, Any]:
        try:
            return json.loads((self.path / "plan.json").read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{self.path}: not a perftrack run directory ({exc})") from None

    def cells(self) -> list[plan.Cell]:
        return [plan.Cell.from_dict(c) for c in self.plan()["cells"]]

    def status(self) -> dict[str, Any]:
        try:
            return json.loads((self.path / "run.json").read_text())
        except (OSError, json.JSONDecodeError):
            return {}

    def set_status(self, status: str, **extra: Any) -> None:
        data = {**self.status(), "run_id": self.run_id, "status": status, **extra}
        _write_json(self.path / "run.json", data)

    def attempts(self) -> dict[str, list[dict[str, Any]]]:
        """Records already written, by cell id, in attempt order."""
        out: dict[str, list[dict[str, Any]]] = {}
        if self.records.is_dir():
            for p in record.find([self.records]):
                rec = record.read(p)
                out.setdefault(rec["cell_id"], []).append(rec)
        for recs in out.values():
            recs.sort(key=lambda r: r["attempt"])
        return out


def create(m: Matrix, catalog: Catalog, out_dir: Path, runner_class: str) -> RunDir:
    """Plan the matrix and create its run directory (nothing runs yet)."""
    for sid in m.servers:
        catalog.get(sid)

    def info(sid: str) -> tuple[str, str]:
        e = catalog.get(sid)
        return e.product, e.version

    def skip(sid: str) -> str | None:
        return catalog.get(sid).skip_reason()

    return create_from_cells(plan.expand(m, info, skip), m.to_dict(), out_dir, runner_class)


def create_from_cells(
    cells: list[plan.Cell],
    matrix_spec: dict[str, Any],
    out_dir: Path,
    runner_class: str,
    **extra: Any,
) -> RunDir:
    """A run directory for cells planned elsewhere (a night plan's shard); `extra` keys
    (night_plan, reuse_datasets) are kept in plan.json for `--resume`."""
    rd = RunDir(out_dir / new_run_id())
    rd.path.mkdir(parents=True)
    _write_json(
        rd.path / "plan.json",
        {
            "run_id": rd.run_id,
            "matrix": matrix_spec,
            "runner_class": runner_class,
            "perftrack_version": __version__,
            "created_at": now(),
            "cells": [c.to_dict() for c in cells],
            **extra,
        },
    )
    rd.set_status("running", created_at=now())
    return rd


def open_run(out_dir: Path, run_id: str) -> RunDir:
    if not record.ID_RE.fullmatch(run_id):
        raise ConfigError(f"{run_id!r} is not a run id")
    rd = RunDir(out_dir / run_id)
    if not (rd.path / "plan.json").is_file():
        known = (
            sorted(p.parent.name for p in out_dir.glob("*/plan.json")) if out_dir.is_dir() else []
        )
        raise ConfigError(
            f"no run '{run_id}' in {out_dir}; runs there: "
            f"{', '.join(p.split('/')[0] for p in known) or 'none'}"
        )
    return rd


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM (and SIGHUP) raise Interrupted in the main thread, like Ctrl-C does."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Interrupted(f"interrupted by signal {signal.Signals(signum).name}")

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@dataclass
class RunOutcome:
    run_id: str
    path: Path
    ok: int = 0
    failed: int = 0
    skipped: int = 0
    retried: int = 0
    final_failed: list[str] = field(default_factory=list)


@dataclass
class Runner:
    rd: RunDir
    catalog: Catalog
    config_dir: Path
    emit: Callable[[str], None]
    retries: int = DEFAULT_RETRIES
    workroot: Path | None = None
    cache_dir: Path | None = None
    # test hook: called with (server, cell) after the warm-up, before the measurement
    before_measure: Callable[[Server, plan.Cell], None] | None = None
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
    _sampled: dict[str, Any] = field(default_factory=dict)
    _templates: dict[str, Path] = field(default_factory=dict)
    _template_root: Path | None = None
    _template_lock: int | None = None  # the template root's owner lock (core/dirlock.py)
    _installs: dict[str, Install | PerftrackError] = field(default_factory=dict)
    _meta: dict[str, Any] = field(default_factory=dict)

    # records -------------------------------------------------------------------------
    def _server_meta(self, sid: str, srv: Server | None = None) -> dict[str, Any]:
        e = self.catalog.get(sid)
        inst = self._installs.get(sid)
        return {
            "id": sid,
            "product": e.product,
            # the provider's (read from the binary: debian-sid/docker know it only then)
            "version": inst.version if isinstance(inst, Install) else e.version,
            "provider": e.provider,
            "version_string": srv.version_string if srv else None,
            "source_sha256": inst.source_sha256 if isinstance(inst, Install) else None,
            "stand_in": e.stand_in,
        }

    def _record(
        self,
        cell: plan.Cell,
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
                "name": workloads.get(cell.workload).tool,
                "version": _tool_version(cell) if status != "skipped" else "n/a",
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
            except PerftrackError as exc:
                self._installs[sid] = exc
        inst = self._installs[sid]
        if isinstance(inst, PerftrackError):
            raise inst
        return inst

    def _options(self, cell: plan.Cell) -> dict[str, str | None]:
        inst = self._install(cell.server_id)
        opts = options.translate_options(  # option names/units of this release (options.py)
            rules.rules_for(inst.product, inst.version),
            # the catalog entry's server_options first: the profile's win (later in my.cnf)
            {
                **self.catalog.get(cell.server_id).options,
                **profiles.load(cell.profile, self.config_dir),
            },
        )
        opts["character-set-server"] = cell.charset
        opts["collation-server"] = cell.collation
        if _has_axes(cell):
            e = self.catalog.get(cell.server_id)
            opts.update(
                axes.server_options(cell, rules.rules_for(e.product, e.version), self._axes())
            )
        return opts

    def _axes(self) -> axes.Axes:
        if "axes" not in self._meta:
            self._meta["axes"] = axes.load(self.config_dir)
        return self._meta["axes"]

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
            dirlock.release(lock)
            if self._template_root is not None:
                shutil.rmtree(self._template_root, ignore_errors=True)
                dirlock.release(self._template_lock)
                self._template_root = None
                self._templates.clear()

    def _run(self, resume: bool) -> RunOutcome:
        p = self.rd.plan()
        self._meta["runner_class"] = p["runner_class"]
        cells = self.rd.cells()
        done = self.rd.attempts()
        if resume:
            self.emit(
                f"resuming {self.rd.run_id}: {len(done)} of {len(cells)} cells "
                "already have a record"
            )
        for c in cells:  # skipped cells: a record with the reason, before anything runs
            if c.skip and c.cell_id not in done:
                self._record(c, 1, "skipped", c.skip, now())
        todo = [c for c in cells if not c.skip and c.cell_id not in done]
        per_cell = sum(c.warmup_s + c.duration_s for c in todo[:1]) + plan.CELL_OVERHEAD_ESTIMATE_S
        prog = Progress(len(todo), self.emit, per_cell)
        self.rd.set_status("running", resumed_at=now() if resume else None)
        try:
            with _signals_raise():
                for grp in plan.groups(todo):
                    self._run_group(grp, 1, prog)
                self._retry_failed(cells, prog)
        except (KeyboardInterrupt, Interrupted) as exc:
            self.rd.set_status("interrupted", interrupted_at=now())
            raise Interrupted(
                f"run {self.rd.run_id} interrupted ({exc or 'Ctrl-C'}); finished cells are "
                f"kept: `perftrack run --resume {self.rd.run_id}` runs the rest"
            ) from None
        return self._finish(cells)

    def _retry_failed(self, cells: list[plan.Cell], prog: Progress) -> None:
        for attempt in range(2, self.retries + 2):
            latest = {cid: _deciding(recs) for cid, recs in self.rd.attempts().items()}
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
            prog.total += len(again)
            self.emit(f"retrying {len(again)} failed cell(s), attempt {attempt}")
            for grp in plan.groups(again):
                self._run_group(grp, attempt, prog)

    def _finish(self, cells: list[plan.Cell]) -> RunOutcome:
        s = RunOutcome(self.rd.run_id, self.rd.path)
        for cid, recs in self.rd.attempts().items():
            last = _deciding(recs)
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
        self.rd.set_status(
            "complete" if not missing else "interrupted",
            finished_at=now(),
            ok=s.ok,
            failed=s.failed,
            skipped=s.skipped,
            missing=missing,
        )
        return s

    def _fail_all(
        self,
        grp: list[plan.Cell],
        attempt: int,
        reason: str,
        started: str,
        prog: Progress,
        **kw: Any,
    ) -> None:
        for cell in grp:
            self._record(cell, attempt, "failed", reason, started, **kw)
            prog.tick(f"{_label(cell)}: FAILED {reason}")

    def _run_group(self, grp: list[plan.Cell], attempt: int, prog: Progress) -> None:
        first = grp[0]
        started = now()
        try:
            install = self._install(first.server_id)
            options = self._options(first)
            readback.check_room(first, self.workroot)  # a sized dataset fits on the disk
        except PerftrackError as exc:
            self._fail_all(grp, attempt, str(exc), started, prog)
            return
        template: Path | None = None
        if self.reuse_datasets and _dataset_cells(grp):
            try:
                template = self._template(install, options, grp)
            except PerftrackError as exc:
                self._fail_all(grp, attempt, str(exc), started, prog)
                return
        srv = Server(install, options, workroot=self.workroot, template=template)
        try:
            srv.__enter__()
        except ServerError as exc:
            self._fail_all(grp, attempt, str(exc), started, prog, log_tail=_safe_tail(srv))
            return
        try:
            self._measure_group(srv, grp, attempt, prog)
        finally:
            srv.stop()

    def _template(
        self, install: Install, options: dict[str, str | None], grp: list[plan.Cell]
    ) -> Path:
        """The group's prepared datadir: made once (start, load, clean stop, keep)."""
        first = _dataset_cells(grp)[0]
        datasets = sorted({workloads.get(c.workload).dataset for c in _dataset_cells(grp)})
        key = json.dumps(
            [
                install.server_id,
                sorted(options.items()),
                datasets,
                first.tables,
                first.table_size,
                first.engine,
            ],
            default=str,
        )
        if key in self._templates:
            return self._templates[key]
        if self.dataset_cache is not None:
            dest = self._cached_template(install, options, grp, key, datasets)
        else:
            if self._template_root is None:
                root = self.workroot or Path(tempfile.gettempdir())
                self._template_root = Path(
                    tempfile.mkdtemp(prefix=f"{dirlock.SERVER_DIR_PREFIX}templates-", dir=root)
                )
                self._template_lock = dirlock.hold(self._template_root)
            dest = self._template_root / f"t{len(self._templates)}"
            self._build_template(install, options, grp, dest)
            self.emit(f"dataset prepared once for {install.server_id}: {', '.join(datasets)}")
        self._templates[key] = dest
        return dest

    def _cached_template(
        self,
        install: Install,
        options: dict[str, str | None],
        grp: list[plan.Cell],
        key: str,
        datasets: list[str],
    ) -> Path:
        """The template from the dataset cache, built there when missing; the least
        recently used others are evicted beyond the cache's bound."""
        assert self.dataset_cache is not None
        sb = _dataset_cells(grp)
        scripts = sorted({workloads.get(c.workload).prepare_script() for c in sb})
        content = [
            key,
            install.source_sha256,
            install.version,
            sysbench.version(),
            [cache.sha256_file(Path(x)) if Path(x).is_file() else x for x in scripts],
        ]
        digest = hashlib.sha256(json.dumps(content, default=str).encode()).hexdigest()[:16]
        ckey = f"{install.server_id}-{digest}"

        def build(tree: Path, _scratch: Path) -> None:
            self._build_template(install, options, grp, tree / "datadir")

        tree, built = cache.ensure_tree(
            self.dataset_cache, ckey, build, self.emit, kind=cache.DATASETS_DIR
        )
        os.utime(tree / cache.COMPLETE_MARKER)  # most recently used: evicted last
        verb = "prepared once (kept in the cache)" if built else "reused from the cache"
        self.emit(f"dataset {verb} for {install.server_id}: {', '.join(datasets)} ({tree})")
        in_use = {Path(t).parent.name for t in self._templates.values()} | {ckey}
        for gone in cache.evict(
            self.dataset_cache, cache.DATASETS_DIR, cache.dataset_cache_limit(), in_use
        ):
            self.emit(f"dataset cache: evicted {gone} (least recently used)")
        return tree / "datadir"

    def _build_template(
        self, install: Install, options: dict[str, str | None], grp: list[plan.Cell], dest: Path
    ) -> None:
        """Start a server, load the group's datasets, stop it cleanly, move its datadir to
        `dest`."""
        srv = Server(install, options, workroot=self.workroot, keep_dir=True)
        try:
            srv.__enter__()
            self._load(srv, grp)
            srv.stop()  # a clean shutdown: the datadir is consistent on disk
            shutil.move(srv.datadir, dest)
        finally:
            srv.stop()
            if getattr(srv, "dir", None) is not None:
                shutil.rmtree(srv.dir, ignore_errors=True)

    def _target(self, srv: Server, cell: plan.Cell) -> sysbench.Target:
        return sysbench.Target(
            host="127.0.0.1",
            port=int(srv.port or 0),
            user=BENCH_USER,
            password=srv.password,
            db=BENCH_DB,
            socket=str(srv.socket_path) if cell.connection == "socket" else None,
        )

    def _load(self, srv: Server, grp: list[plan.Cell]) -> None:
        """Create the database and load every dataset the group's cells read."""
        sb = _dataset_cells(grp)
        first = sb[0] if sb else grp[0]
        srv.create_database(first.charset, first.collation)
        by_dataset = {workloads.get(c.workload).dataset: c for c in reversed(sb)}
        for dataset, cell in by_dataset.items():  # one prepare per dataset the group reads
            out = sysbench.prepare(
                workloads.get(cell.workload).prepare_script(),
                self._target(srv, cell),
                tables=cell.tables,
                table_size=cell.table_size,
                log=self.rd.logs / f"{cell.cell_id}.prepare.{dataset}.txt",
                options=axes.prepare_options(cell),
            )
            if out.timed_out or out.returncode != 0:
                last = out.text.strip().splitlines()[-1:] or ["no output"]
                raise ServerError(f"sysbench prepare ({dataset}) failed: {last[0][:300]}")

    def _prepare(self, srv: Server, grp: list[plan.Cell]) -> dict[str, Any]:
        """Load the group's data (unless the datadir came from a template); return the
        verified effective settings."""
        sb = _dataset_cells(grp)  # cells reading a sysbench dataset (slap makes its own)
        first = sb[0] if sb else grp[0]
        if srv.template is None:
            self._load(srv, grp)
        eff = srv.effective()
        want = first.collation
        got = {
            "collation_server": eff["collation_server"],
            "database_collation": eff["database_collation"],
        }
        if sb:
            got["table_collations"] = eff["table_collations"]
        bad = {k: v for k, v in got.items() if v != want}
        if bad:
            raise ServerError(
                f"effective collation differs from the cell's {want}: "
                + ", ".join(f"{k}={v}" for k, v in bad.items())
            )
        if sb or first.handshake is not None:  # the benchmark connection's charset
            log = self.rd.logs / f"{first.cell_id}.connection.txt"
            eff.update(readback.connection(self._target(srv, first), log))
        if first.dataset_size is not None and sb:
            eff.update(readback.dataset(srv, self._axes()))
        if _has_axes(first):
            eff.update(axes.durability_effective(srv.query(axes.read_back_sql())[0]))
            wrong = axes.mismatches(first, eff, self._axes(), tables=bool(sb))
            if wrong:
                raise ServerError(
                    "effective settings differ from the cell's axes: " + ", ".join(wrong)
                )
        return eff

    def _measure_group(
        self, srv: Server, grp: list[plan.Cell], attempt: int, prog: Progress
    ) -> None:
        started = now()
        try:
            eff = self._prepare(srv, grp)
        except PerftrackError as exc:
            reason = _with_cause(str(exc), srv)
            self._fail_all(grp, attempt, reason, started, prog, srv=srv, log_tail=srv.log_tail())
            return
        dead_reason: str | None = None
        for cell in grp:
            started = now()
            if dead_reason:
                self._record(
                    cell, attempt, "failed", dead_reason, started, srv=srv, log_tail=srv.log_tail()
                )
                prog.tick(f"{_label(cell)}: FAILED {dead_reason}")
                continue
            status, dead_reason, noisy = self._measure_one(srv, cell, attempt, eff, prog)
            if noisy and status == "ok" and attempt < record_max_attempt() and self._repeats():
                prog.total += 1  # one re-measure of a noisy window; both records stay
                self.emit(f"{_label(cell)}: noisy window ({noisy}); measuring it again")
                _, dead_reason, _ = self._measure_one(
                    srv, cell, attempt + 1, eff, prog, repeat_of=attempt
                )

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
        cell: plan.Cell,
        attempt: int,
        eff: dict[str, Any],
        prog: Progress,
        repeat_of: int | None = None,
    ) -> tuple[str, str | None, str | None]:
        """Measure and record one cell attempt: (status, why later cells cannot run, why
        its window was noisy)."""
        started = now()
        dead_reason = None
        status, reason, result, cmd = self._measure(srv, cell)
        sampled, self._sampled = self._sampled, {}
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
            reason = _with_cause(reason or "failed", srv)
            tail = srv.log_tail()
        if status != "ok":
            sampled = {}
        host = sampled.get("host")
        if repeat_of is not None:  # marks the re-measure, also when it failed
            host = sampled["host"] = {**(host or {"noisy": False}), "repeat_of": repeat_of}
        self._record(
            cell,
            attempt,
            status,
            reason,
            started,
            srv=srv,
            result=result,
            effective=eff,
            log_tail=tail,
            command=cmd,
            sampled=sampled,
        )
        msg = f"{result['tps']:.0f} tps" if status == "ok" and result else f"FAILED {reason}"
        noisy = host.get("noisy_reason") if host and host.get("noisy") else None
        prog.tick(f"{_label(cell)}: {msg}" + (" (noisy)" if noisy else ""))
        return status, dead_reason, noisy

    def _measure(
        self, srv: Server, cell: plan.Cell
    ) -> tuple[str, str | None, dict[str, Any] | None, list[str]]:
        wl = workloads.get(cell.workload)
        if wl.tool == "slap":
            return self._measure_slap(srv, cell, wl)
        script = wl.script_path()
        target = self._target(srv, cell)
        common: dict[str, Any] = dict(
            tables=cell.tables, table_size=cell.table_size, threads=cell.threads
        )
        common["options"] = wl.options
        stem = self.rd.logs / f"{cell.cell_id}.{srv.install.server_id}"
        try:
            if cell.warmup_s > 0:
                warm, _ = sysbench.run(
                    script,
                    target,
                    time_s=cell.warmup_s,
                    log=stem.with_name(stem.name + ".warmup.txt"),
                    grace_s=self.sysbench_grace_s,
                    **common,
                )
                if warm.get("status") != "ok":
                    return "failed", f"warm-up failed: {warm.get('reason')}", None, []
            if self.before_measure is not None:
                self.before_measure(srv, cell)
            win = self._start_window(srv)
            try:
                parsed, cmd = sysbench.run(
                    script,
                    target,
                    time_s=cell.duration_s,
                    log=stem.with_name(stem.name + ".run.txt"),
                    grace_s=self.sysbench_grace_s,
                    **common,
                )
            finally:
                sample = self._stop_window(win)
        except ParseError as exc:
            return "failed", f"unreadable sysbench output: {exc}", None, []
        if parsed.get("status") != "ok":
            return "failed", str(parsed.get("reason") or "sysbench failed"), None, cmd
        return "ok", None, self._with_cost(result_of(parsed), parsed, sample), cmd

    # cost per operation (sampler.py) ---------------------------------------------------
    def _start_window(self, srv: Server) -> sampler.Window | str | None:
        """A started sampling window; a string says why none could be taken."""
        self._sampled = {}
        if not self.sample_cost:
            return None
        target, why = targets.target_for(srv)
        if target is None:
            return why or "no sampling target"
        try:
            win = sampler.Window(target)
            win.start()
        except (OSError, ValueError) as exc:  # sampling never fails a measurement
            return f"sampling could not start: {exc}"
        return win

    def _stop_window(self, win: sampler.Window | str | None) -> sampler.Sample | str | None:
        if not isinstance(win, sampler.Window):
            return win
        try:
            return win.stop()
        except (OSError, ValueError) as exc:
            return f"sampling could not finish: {exc}"

    def _with_cost(
        self, result: dict[str, Any], parsed: dict[str, Any], sample: sampler.Sample | str | None
    ) -> dict[str, Any]:
        """The result with its cost fields; the record's cost/host objects kept for it."""
        if sample is None:
            return result
        if isinstance(sample, str):
            fields, cost, host = sampler.unavailable_everything(sample)
        else:
            txns, queries = sampler.work_done(parsed)
            fields, cost, host = sampler.per_operation(sample, txns, queries, self._limits())
        self._sampled = {"cost": cost, "host": host}
        return {**result, **fields}

    def _measure_slap(
        self, srv: Server, cell: plan.Cell, wl: workloads.Workload
    ) -> tuple[str, str | None, dict[str, Any] | None, list[str]]:
        """mysqlslap cells: a warm-up pass (if the cell has a warm-up), then the measure."""
        stem = self.rd.logs / f"{cell.cell_id}.{srv.install.server_id}"
        common: dict[str, Any] = dict(
            load=wl.script, threads=cell.threads, engine=cell.engine, options=wl.options
        )
        target = self._target(srv, cell)
        if cell.warmup_s > 0:
            warm, _ = slap.run(target, log=stem.with_name(stem.name + ".warmup.txt"), **common)
            if warm.get("status") != "ok":
                return "failed", f"warm-up failed: {warm.get('reason')}", None, []
        if self.before_measure is not None:
            self.before_measure(srv, cell)
        win = self._start_window(srv)
        try:
            parsed, cmd = slap.run(target, log=stem.with_name(stem.name + ".run.txt"), **common)
        finally:
            sample = self._stop_window(win)
        if parsed.get("status") != "ok":
            return "failed", str(parsed.get("reason") or "slap failed"), None, cmd
        return "ok", None, self._with_cost(result_of(parsed), parsed, sample), cmd


def _deciding(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """The attempt that decides a cell's outcome: the latest, except that a failed
    re-measure of a noisy window (host.repeat_of) leaves the ok attempt before it."""
    for rec in reversed(recs):
        if not (rec["status"] == "failed" and (rec.get("host") or {}).get("repeat_of")):
            return rec
    return recs[-1]


def record_max_attempt() -> int:
    """The run-record schema's bound on `attempt`."""
    return int(record.schema()["properties"]["attempt"]["maximum"])


def _tool_version(cell: plan.Cell) -> str:
    """The version of the tool that runs the cell's workload (driver dispatch by tool)."""
    return slap.version() if workloads.get(cell.workload).tool == "slap" else sysbench.version()


def result_of(parsed: dict[str, Any]) -> dict[str, Any]:
    """The run-record `result` from the parser's output (schema fields only)."""
    res = {k: parsed.get(k) for k in record.RESULT_FIELDS}
    res["intervals"] = [_interval(iv) for iv in parsed.get("intervals") or []]
    return res


def _interval(iv: dict[str, Any]) -> dict[str, Any]:
    """Schema fields of one interval; only the latency may be null (percentile off)."""
    return {
        k: iv[k]
        for k in record.INTERVAL_FIELDS
        if k in iv and (iv[k] is not None or k == "lat_pct_ms")
    }


def _dataset_cells(grp: list[plan.Cell]) -> list[plan.Cell]:
    """The group's cells whose workload reads a prepared sysbench dataset."""
    return [c for c in grp if workloads.get(c.workload).tool == "sysbench"]


def _has_axes(cell: plan.Cell) -> bool:
    """Whether the cell sets any configuration axis of configs/axes.yaml."""
    return any(getattr(cell, k, None) is not None for k in plan.OPTIONAL_IDENTITY)


def _with_cause(reason: str, srv: Server) -> str:
    """The reason, plus a cause the server's log names exactly (disk full, …) if any."""
    cause = srv.cause_in_log()
    return f"{reason}; {cause}" if cause and cause not in reason else reason


def _safe_tail(srv: Server) -> str | None:
    return srv.final_log_tail or None


def _label(cell: plan.Cell) -> str:
    hs = f"handshake={cell.handshake}" if cell.handshake else None
    extra = "".join(f" {v}" for v in (cell.dataset_size, cell.phase, hs) if v is not None)
    return (
        f"{cell.server_id} {cell.workload}{extra} {cell.collation} t={cell.threads} r={cell.repeat}"
    )
