"""Ratio fidelity (issue 36 item 1): the ratio each perftrack path reports for a pair, against
plain sysbench's on the same machine, in one interleaved session.

For each pair (a version pair, a charset pair, a durability pair: known, different
effects), every path measures B against A round by round, the paths' order rotating every
round (so drift of the machine falls on all of them alike):

- `plain`: sysbench by hand against A's and B's servers started once and kept up (started
  with perftrack's server lifecycle and the cell's options; data prepared by sysbench
  itself, one warm-up at the start), each round the cell's warm-up and one measured run
  per arm, the arms' order alternating: the reference (before 2026-11-28 10:15 it had no
  per-round warm-up: measured right after the other paths' rounds, its rounds were the
  noisiest of the charset pair, docs/benchmarks.md);
- `run:group`, `run:run`: `perftrack run` (run.runner.Runner on a matrix of the pair,
  repeats = rounds), a fresh server per group / servers kept for the run;
- `compare:group`, `compare:run`: `compare --until-conclusive` (experiments/conclude.run_rounds,
  its own looks and stopping rule) in both server lifetimes;
- `explain`: explain's first stage (A, B and B with all of A's candidate settings, kept
  servers), version pairs only: explain compares servers, not axis values;
- `nightly`: the nightly's cell mechanics (`perftrack run`, a fresh server per group,
  the nightly's 10 s warm-up) on the pair's cell.

Each harness path runs in a child process paused before each of its rounds (a wrapped
Runner's `before_group`), so the rounds of all paths interleave. Per path: its per-round
ratios B/A, their geometric mean with a 95% Student-t interval (the paired estimate
`compare.versus` makes) — the same formula for every path — and, for compare and explain,
the ratio, interval and verdict the product itself reported. A path agrees with plain
when the intervals overlap and the point estimates are within 2%.

    .venv/bin/python benchmarks/ratio_fidelity.py --rounds 8          # all pairs, ~1.5 h
    .venv/bin/python benchmarks/ratio_fidelity.py --pairs version --rounds 4 --paths plain,run:group
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scipy import stats as sps

from perftrack.core import paths
from perftrack.drivers import sysbench
from perftrack.experiments import conclude, explain
from perftrack.planning import axes as axes_mod
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.run.server import BENCH_DB, BENCH_USER, Server
from perftrack.servers import catalog, providers, rules

AGREE_POINT = 0.02  # point estimates within 2% (the bar)
MAX_ROUNDS_FACTOR = 3  # compare and explain may settle later than --rounds: up to 3x


@dataclasses.dataclass(frozen=True)
class Pair:
    name: str
    a: str
    b: str
    workload: str
    axis: str | None = None  # None: a version pair (servers a, b)
    values: tuple[str, str] = ("", "")
    charset: str = "latin1"
    threads: int = 2
    tables: int = 2
    table_size: int = 10_000
    duration_s: int = 10
    warmup_s: int = 1

    def arms(self) -> tuple[str, str]:
        return (self.a, self.b) if self.axis is None else self.values


PAIRS = {
    # the cell: MariaDB 10.2.11 -> 10.11.5 point selects (plain sysbench: -10%)
    "version": Pair("version", "mariadb-10.2.11", "mariadb-10.11.5", "oltp_point_select"),
    # one server, latin1 -> utf8mb4 on range reads
    "charset": Pair(
        "charset",
        "mariadb-10.11.18",
        "mariadb-10.11.18",
        "oltp_read_only",
        axis="charset",
        values=("latin1", "utf8mb4"),
    ),
    # one server, redo flushed once a second -> binlog and redo fsynced at every commit
    "durability": Pair(
        "durability",
        "mariadb-10.11.18",
        "mariadb-10.11.18",
        "oltp_update_index",
        axis="durability",
        values=("relaxed", "strict"),
    ),
}
PATHS = ("plain", "run:group", "run:run", "compare:group", "compare:run", "explain", "nightly")
NIGHTLY_WARMUP_S = 10  # configs/matrices/nightly.yaml


def request(p: Pair, lifetime: str, budget_s: float) -> conclude.Request:
    return conclude.Request(
        a=p.a,
        b=p.b,
        budget_s=budget_s,
        workload=p.workload,
        threads=p.threads,
        charset=p.charset,
        duration_s=p.duration_s,
        warmup_s=p.warmup_s,
        tables=p.tables,
        table_size=p.table_size,
        axis=p.axis,
        values=p.values if p.axis else (),
        server_lifetime=lifetime,
        min_effect=0.05,
    )


# --- the children: one harness path each ---------------------------------------------------
class Pacer:
    """Pauses a child before each of its rounds until the coordinator says GO."""

    def __init__(self) -> None:
        self.round = 0
        self.paused = 0.0  # seconds spent waiting for the other paths' rounds

    def __call__(self) -> None:
        self.round += 1
        print(f"READY {self.round}", flush=True)
        t0 = time.monotonic()
        if sys.stdin.readline().strip() != "GO":
            raise SystemExit("coordinator gone")
        self.paused += time.monotonic() - t0

    def clock(self) -> float:
        """Wall clock less the pauses: a path's budget counts its own rounds only."""
        return time.monotonic() - self.paused


def pace_every_runner(pacer: Pacer) -> None:
    """Every Runner the path makes (one per round in compare and explain) pauses before its
    first group."""
    base = runner.Runner

    class Paced(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kw: Any) -> None:
            first = [True]

            def before(_cells: list[Any]) -> None:
                if first[0]:
                    first[0] = False
                    pacer()

            kw["before_group"] = before
            super().__init__(*args, **kw)

    runner.Runner = Paced  # type: ignore[misc]


def child(spec: dict[str, Any]) -> None:
    p = Pair(**{**spec["pair"], "values": tuple(spec["pair"]["values"])})
    path, rounds, out = spec["path"], spec["rounds"], Path(spec["out"])
    cat, cfg = catalog.read_catalog(), paths.config_dir()
    pacer = Pacer()
    result: dict[str, Any] = {"values": [], "reported": None}
    if path.startswith(("run:", "nightly")):
        lifetime = "group" if path == "nightly" else path.split(":")[1]
        warm = NIGHTLY_WARMUP_S if path == "nightly" else p.warmup_s
        m = cell_matrix(p, lifetime, rounds, warm)
        rd = runner.create(m, cat, out / "runs", "ratio-fidelity")
        at = [0]

        def by_round(cells: list[Any]) -> None:
            if cells[0].round != at[0]:
                at[0] = cells[0].round
                pacer()

        runner.Runner(
            rd=rd,
            catalog=cat,
            config_dir=cfg,
            emit=lambda _l: None,
            retries=0,
            workroot=out / "w",
            before_group=by_round,
        ).run()
        result["values"] = round_values(p, [rd.path])
    elif path.startswith("compare:"):
        pace_every_runner(pacer)
        # its own stopping rule decides; the budget only bounds it (the session's cap)
        req = request(p, path.split(":")[1], budget_s=MAX_ROUNDS_FACTOR * rounds * per_round_s(p))
        seq = conclude.run_rounds(
            req, cat, cfg, out / "r.duckdb", out / "runs", lambda _l: None, clock=pacer.clock
        )
        a, b = conclude.session_pairs(out / "r.duckdb", seq.run_ids, req)
        result["values"] = list(zip(a, b, strict=True))
        last = [r for r in seq.rounds if r.comparison is not None]
        if last:
            c = last[-1].comparison
            result["reported"] = [c.ratio, c.ci_low, c.ci_high, seq.verdict]
    elif path == "explain":
        pace_every_runner(pacer)
        req = request(p, cat_lifetime(), budget_s=3 * 3600)
        res = explain.first_stage(req, cat, cfg, out, lambda _l: None, workroot=out / "w")
        result["values"] = [(r, 1.0) for r in res.gap_ratios]  # A/B per round: B/A = 1/r
        if res.gap is not None:
            g = res.gap
            result["reported"] = [g.ratio, g.ci_low, g.ci_high, g.verdict]
    print("DONE " + json.dumps(result), flush=True)


def per_round_s(p: Pair) -> float:
    """A generous bound of one compare round (two arms) for its budget."""
    from perftrack.planning import cells

    return 2 * (p.warmup_s + p.duration_s + 2 * cells.CELL_OVERHEAD_ESTIMATE_S) + 5


def cat_lifetime() -> str:
    from perftrack.planning import cells

    return cells.EXPLAIN_SERVER_LIFETIME


def cell_matrix(p: Pair, lifetime: str, rounds: int, warmup_s: int) -> matrix.Matrix:
    data: dict[str, Any] = {
        "name": "ratio-fidelity",
        "servers": [p.a] if p.axis else [p.a, p.b],
        "workloads": [p.workload],
        "charsets": [p.charset],
        "threads": [p.threads],
        "repeats": rounds,
        "duration_s": p.duration_s,
        "warmup_s": warmup_s,
        "tables": p.tables,
        "table_size": p.table_size,
        "server_lifetime": lifetime,
    }
    if p.axis == "charset":
        data["charsets"] = list(p.values)
    elif p.axis == "durability":
        data["durabilities"] = list(p.values)
    return matrix.from_dict(data)


def round_values(p: Pair, run_dirs: list[Path]) -> list[tuple[float, float]]:
    """(A, B) of each round of a run's records, latest attempt of each cell."""
    by_round: dict[int, dict[int, float]] = {}
    for d in run_dirs:
        for recs in runner.RunDir(d).attempts().values():
            rec = recs[-1]
            if rec["status"] != "ok":
                continue
            cell = rec["cell"]
            if p.axis is None:
                arm = (p.a, p.b).index(rec["server"]["id"])
            else:
                got = cell["charset"] if p.axis == "charset" else cell.get(p.axis)
                arm = p.values.index(got)
            by_round.setdefault(cell["round"], {})[arm] = rec["result"]["tps"]
    return [(v[0], v[1]) for _r, v in sorted(by_round.items()) if 0 in v and 1 in v]


class Child:
    def __init__(self, path: str, p: Pair, rounds: int, out: Path) -> None:
        self.path, self.seconds, self.done = path, 0.0, False
        self.result: dict[str, Any] = {}
        spec = {"path": path, "pair": dataclasses.asdict(p), "rounds": rounds, "out": str(out)}
        self.log = (out.parent / f"{out.name}.log").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--child", json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        self._wait()  # installed, paused before its first round

    def _wait(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("READY "):
                return
            if line.startswith("DONE "):
                self.result, self.done = json.loads(line[5:]), True
                return
        self.done = True
        print(f"  {self.path} stopped (exit {self.proc.wait()}); see {self.log.name}")

    def round(self, _r: int) -> None:
        if self.done:
            return
        assert self.proc.stdin is not None
        t0 = time.monotonic()
        self.proc.stdin.write("GO\n")
        self.proc.stdin.flush()
        self._wait()
        self.seconds += time.monotonic() - t0

    def finish(self) -> None:
        while not self.done:  # a run path still has its last round's records to write
            self.round(0)
        self.proc.wait(timeout=600)

    def values(self) -> list[tuple[float, float]]:
        return [tuple(v) for v in self.result.get("values", [])]


# --- the reference: plain sysbench against servers kept up ---------------------------------
class Plain:
    def __init__(self, p: Pair, work: Path) -> None:
        self.p, self.work, self.seconds, self.done = p, work, 0.0, False
        self.path = "plain"
        self.servers: list[Server] = []
        self.rounds: list[tuple[float, float]] = []

    def start(self) -> None:
        p, cat = self.p, catalog.read_catalog()
        ax = axes_mod.read_axes(paths.config_dir())
        for arm in range(2):
            entry = cat.get(p.b if (p.axis is None and arm) else p.a)
            charset = p.values[arm] if p.axis == "charset" else p.charset
            inst = providers.fetch(entry)
            rule = rules.rules_for(inst.product, inst.version)
            coll = rule.default_collation_for(charset) or ""
            opts: dict[str, str | None] = {
                **entry.options,
                "character-set-server": charset,
                "collation-server": coll,
            }
            if p.axis == "durability":
                cell = _AxisCell(charset, coll, durability=p.values[arm])
                opts.update(axes_mod.server_options(cell, rule, ax))
            srv = Server(install=inst, options=opts, workroot=self.work)
            srv.__enter__()
            self.servers.append(srv)
            srv.create_database(charset, coll)
            size = {"tables": p.tables, "table_size": p.table_size}
            sysbench.prepare(p.workload, self.target(srv), **size)
            sysbench.run_sysbench(
                p.workload,
                self.target(srv),
                threads=p.threads,
                time_s=max(5, 5 * p.warmup_s),
                **size,
            )

    @staticmethod
    def target(srv: Server) -> sysbench.Endpoint:
        return sysbench.Endpoint(
            host="127.0.0.1",
            port=int(srv.port or 0),
            user=BENCH_USER,
            password=srv.password,
            db=BENCH_DB,
        )

    def round(self, r: int) -> None:
        t0 = time.monotonic()
        got: dict[int, float] = {}
        for arm in (0, 1) if r % 2 else (1, 0):
            if self.p.warmup_s > 0:  # the cell's warm-up, as every perftrack path runs it
                sysbench.run_sysbench(
                    self.p.workload,
                    self.target(self.servers[arm]),
                    threads=self.p.threads,
                    time_s=self.p.warmup_s,
                    tables=self.p.tables,
                    table_size=self.p.table_size,
                )
            parsed, _cmd = sysbench.run_sysbench(
                self.p.workload,
                self.target(self.servers[arm]),
                threads=self.p.threads,
                time_s=self.p.duration_s,
                tables=self.p.tables,
                table_size=self.p.table_size,
            )
            if parsed.get("status") == "ok":
                got[arm] = float(parsed["tps"])
        if len(got) == 2:
            self.rounds.append((got[0], got[1]))
        self.seconds += time.monotonic() - t0

    def finish(self) -> None:
        for srv in self.servers:
            srv.stop()
        self.servers = []

    def values(self) -> list[tuple[float, float]]:
        return self.rounds


@dataclasses.dataclass
class _AxisCell:  # planning.axes.AxisCell for the durability options
    charset: str
    collation: str
    engine: str | None = None
    isolation: str | None = None
    durability: str | None = None
    handshake: str | None = None
    dataset_size: str | None = None


# --- figures -------------------------------------------------------------------------------
def paired(values: list[tuple[float, float]]) -> tuple[float, float, float, int] | None:
    """Geometric mean of B/A over rounds and its 95% Student-t interval; None below 2."""
    logs = [math.log(b / a) for a, b in values if a > 0 and b > 0]
    n = len(logs)
    if n < 2:
        return None
    mean, sd = statistics.fmean(logs), statistics.stdev(logs)
    half = float(sps.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half), n


def spread(values: list[tuple[float, float]]) -> str:
    """The round-to-round sd of ln(B/A): the path's own noise (plain's is the floor)."""
    logs = [math.log(b / a) for a, b in values if a > 0 and b > 0]
    return f"{statistics.stdev(logs):.3f}" if len(logs) >= 2 else "—"


def agrees(ref: tuple[float, float, float, int], got: tuple[float, float, float, int]) -> str:
    overlap = got[1] <= ref[2] and ref[1] <= got[2]
    close = abs(got[0] / ref[0] - 1) <= AGREE_POINT
    return (
        "yes"
        if overlap and close
        else f"no ({'overlap' if overlap else 'apart'}, {got[0] / ref[0] - 1:+.1%})"
    )


def table(p: Pair, turns: list[Any]) -> str:
    ref = paired(turns[0].values())
    out = [
        f"### {p.name}: {p.arms()[1]} / {p.arms()[0]}"
        + (f" on {p.a}" if p.axis else "")
        + f", {p.workload}, {p.threads} threads, {p.tables}x{p.table_size} rows, {p.duration_s} s",
        "",
        "| path | rounds | ratio B/A [95%] (paired, one formula) | sd of ln(B/A) | "
        "agrees with plain | what the path reported | s per round |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in turns:
        got = paired(t.values())
        rep = t.result.get("reported") if isinstance(t, Child) else None
        shown = "—" if got is None else f"{got[0]:.3f} [{got[1]:.3f}, {got[2]:.3f}]"
        ok = "—" if got is None or ref is None or t is turns[0] else agrees(ref, got)
        said = "—" if not rep else f"{rep[0]:.3f} [{rep[1]:.3f}, {rep[2]:.3f}] {rep[3]}"
        n = got[3] if got else 0
        per = t.seconds / n if n else math.nan
        sd = spread(t.values())
        out.append(f"| {t.path} | {n} | {shown} | {sd} | {ok} | {said} | {per:.0f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--pairs", default=",".join(PAIRS))
    ap.add_argument("--paths", default=",".join(PATHS))
    ap.add_argument("--save", type=Path, help="every path's per-round values as JSON")
    ap.add_argument("--duration", type=int, help="seconds per cell instead of the pair's")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(json.loads(a.child))
        return
    saved: dict[str, Any] = {}
    for name in a.pairs.split(","):
        p = PAIRS[name]
        if a.duration:
            p = dataclasses.replace(p, duration_s=a.duration)
        work = Path(tempfile.mkdtemp(prefix=f"ratio-fidelity-{name}-"))
        wanted = [x for x in a.paths.split(",") if x != "plain" and (x != "explain" or not p.axis)]
        plain = Plain(p, work / "plain")
        turns: list[Any] = [plain]
        try:
            for i, path in enumerate(wanted):
                turns.append(Child(path, p, a.rounds, work / f"p{i}"))
            plain.start()
            # --rounds rounds at least; then on while compare and explain have not settled by
            # their own stopping rules (plain runs in every round: all stay interleaved)
            r = 0
            while r < a.rounds or (
                r < MAX_ROUNDS_FACTOR * a.rounds and any(not t.done for t in turns[1:])
            ):
                r += 1
                shift = (r - 1) % len(turns)
                for t in turns[shift:] + turns[:shift]:
                    t.round(r)
                print(f"{name}: round {r} done ({a.rounds} asked)", flush=True)
            for t in turns:
                t.finish()
        finally:
            plain.finish()
            for t in turns[1:]:
                if t.proc.poll() is None:
                    t.proc.terminate()
                    t.proc.wait(timeout=120)
        print("\n" + table(p, turns) + "\n", flush=True)
        saved[name] = {
            t.path: {
                "values": t.values(),
                "seconds": t.seconds,
                "reported": getattr(t, "result", {}).get("reported"),
            }
            for t in turns
        }
        shutil.rmtree(work, ignore_errors=True)
    if a.save:
        a.save.write_text(json.dumps(saved, indent=1))


if __name__ == "__main__":
    main()
