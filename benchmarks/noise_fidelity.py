"""Noise fidelity (issue 22 item 1): the A/A spread of `perftrack run` against plain sysbench.

One session, everything interleaved round by round (the order of the variants rotates
every round). Every variant measures the same A/A pair: the cached MariaDB 10.11.18 (A)
and an in-memory copy of its catalog entry under another id (A', `mariadb-10.11.18+aa`:
the same binary), so a round of a variant is A then A' (A' then A the next round).

- `plain`: sysbench by hand against two servers started once and kept up (started with
  perftrack's server lifecycle, one prepare and one warm-up each at the start), each round
  one measured run per side, no per-round warm-up: the reference.
- harness variants: `perftrack run`'s real path (`run.runner.Runner` on a matrix of A and
  A' with repeats = rounds), each in its own child process paused between rounds
  (Runner.before_group) so the rounds interleave with the other variants'. A variant is
  `LIFETIME[+copy][,warmup=N][,duration=N][,pin]`: LIFETIME `group` (a fresh server per
  group) or `run` (servers kept up for the run), `+copy` datasets prepared once as a
  template datadir and copied per group (--reuse-datasets), `pin` the client (and perftrack)
  on CPU 0 and the servers on CPU 1 (taskset; needs >= 2 CPUs).

Per variant: the per-round log-ratio spread (std of log(A'/A) over rounds, what paired
statistics live on), the per-cell CV (tps across rounds, mean of both sides), the ratio of
spreads to `plain` with a 90% interval (F distribution), machine seconds per round, and the
ratio at equal machine time (spread x sqrt(seconds per round), relative to plain).

    .venv/bin/python benchmarks/noise_fidelity.py                 # ~15 min, 6 rounds
    .venv/bin/python benchmarks/noise_fidelity.py --rounds 20     # a decision: ~50 min
    .venv/bin/python benchmarks/noise_fidelity.py --rounds 3 --duration 2 --variants group,run
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
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
from perftrack.planning import matrix
from perftrack.run import runner
from perftrack.run.server import BENCH_DB, BENCH_USER, Server
from perftrack.servers import catalog, providers
from perftrack.servers.catalog import Catalog

A = "mariadb-10.11.18"
A2 = f"{A}+aa"  # the same catalog entry under a second id
DEFAULT_VARIANTS = (
    "group",  # perftrack run today: a fresh server per group, prepare in every group
    "group+copy",  # dataset template copied per group (cold buffer pool)
    "group,warmup=5",
    "run",  # servers kept up for the run
    "run,warmup=0",
    "run,warmup=5",
    "run,duration=2x",  # twice the cell length
    "run,pin",
)


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    lifetime: str
    copy: bool
    warmup_s: int
    duration_s: int
    pin: bool

    @classmethod
    def parse(cls, text: str, warmup_s: int, duration_s: int) -> Variant:
        head, *knobs = text.split(",")
        lifetime, _, copy = head.partition("+")
        if lifetime not in matrix.SERVER_LIFETIMES or copy not in ("", "copy"):
            raise SystemExit(f"error: variant {text!r}: start with group or run (+copy)")
        v = cls(text, lifetime, copy == "copy", warmup_s, duration_s, False)
        for knob in knobs:
            key, _, val = knob.partition("=")
            if key == "pin" and not val:
                v = dataclasses.replace(v, pin=True)
            elif key == "warmup" and val.isdigit():
                v = dataclasses.replace(v, warmup_s=int(val))
            elif key == "duration" and (val.isdigit() or val.endswith("x")):
                n = int(val[:-1]) * duration_s if val.endswith("x") else int(val)
                v = dataclasses.replace(v, duration_s=n)
            else:
                raise SystemExit(f"error: variant {text!r}: unknown knob {knob!r}")
        return v


def aa_catalog() -> Catalog:
    cat = catalog.read_catalog()
    twin = dataclasses.replace(cat.get(A), id=A2, stand_in=f"{A} under a second id (A/A)")
    return Catalog(cat.path, (*cat.entries, twin))


# --- a harness variant, in its own process ------------------------------------------------
def child(spec: dict[str, Any]) -> None:
    """Run the variant's matrix through the real runner, pausing before each new round
    until the coordinator says go (one line on stdin); progress goes to a log file."""
    v = Variant(**spec["variant"])
    cat = aa_catalog()
    if v.pin:
        os.sched_setaffinity(0, {0})  # perftrack and the sysbench it starts: CPU 0
        fetch = providers.fetch

        def pinned(entry: Any, **kw: Any) -> Any:  # servers (init and mysqld): CPU 1
            inst = fetch(entry, **kw)
            return dataclasses.replace(inst, launcher=("taskset", "-c", "1", *inst.launcher))

        providers.fetch = pinned  # type: ignore[assignment]
    m = matrix.from_dict(
        {
            "name": "aa",
            "servers": [A, A2],
            "workloads": [spec["workload"]],
            "charsets": ["latin1"],
            "threads": [spec["threads"]],
            "repeats": spec["rounds"],
            "duration_s": v.duration_s,
            "warmup_s": v.warmup_s,
            "tables": spec["tables"],
            "table_size": spec["table_size"],
            "server_lifetime": v.lifetime,
        },
        cat=cat,
    )
    out = Path(spec["out"])
    rd = runner.create(m, cat, out / "runs", "noise-fidelity")
    log = (out / "progress.log").open("a")
    at = [0]

    def pace(cells: list[Any]) -> None:
        if cells[0].round != at[0]:
            at[0] = cells[0].round
            print(f"READY {at[0]} {rd.path}", flush=True)
            if sys.stdin.readline().strip() != "GO":
                raise SystemExit("coordinator gone")

    r = runner.Runner(
        rd=rd,
        catalog=cat,
        config_dir=paths.config_dir(),
        emit=lambda line: print(line, file=log, flush=True),
        retries=0,
        workroot=out / "w",
        reuse_datasets=v.copy,
        before_group=pace,
    )
    r.run()
    print(f"DONE {rd.path}", flush=True)


class Child:
    def __init__(self, v: Variant, a: argparse.Namespace, out: Path) -> None:
        self.v, self.seconds = v, 0.0
        spec = {
            "variant": dataclasses.asdict(v),
            "out": str(out),
            **{k: getattr(a, k) for k in ("rounds", "workload", "threads", "tables", "table_size")},
        }
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--child", json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.run_dir = self._wait()  # installed, planned, paused before round 1

    def _wait(self) -> Path:
        """Until the child pauses before its next round (READY) or is done (DONE)."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(("READY ", "DONE ")):
                return Path(line.split()[-1])
        raise SystemExit(f"error: variant {self.v.name} stopped (exit {self.proc.wait()})")

    def round(self) -> None:
        assert self.proc.stdin is not None
        t0 = time.monotonic()
        self.proc.stdin.write("GO\n")
        self.proc.stdin.flush()
        self._wait()
        self.seconds += time.monotonic() - t0

    def tps(self) -> dict[int, dict[str, float]]:
        self.proc.wait(timeout=600)
        out: dict[int, dict[str, float]] = {}
        for recs in runner.RunDir(self.run_dir).attempts().values():
            rec = recs[-1]
            if rec["status"] == "ok":
                out.setdefault(rec["cell"]["round"], {})[rec["server"]["id"]] = rec["result"]["tps"]
        return out


# --- the reference: plain sysbench against servers kept up ---------------------------------
class Plain:
    def __init__(self, a: argparse.Namespace, work: Path) -> None:
        self.a, self.work, self.seconds = a, work, 0.0
        self.values: dict[int, dict[str, float]] = {}
        self.servers: dict[str, Server] = {}
        self.size = dict(tables=a.tables, table_size=a.table_size)

    def start(self) -> None:
        """Both servers up, their data prepared and warmed once (5x the harness warm-up)."""
        cat = aa_catalog()
        opts: dict[str, str | None] = {
            "character-set-server": "latin1",
            "collation-server": "latin1_swedish_ci",
        }
        for sid in (A, A2):
            srv = self.servers[sid] = Server(
                install=providers.fetch(cat.get(sid)), options=opts, workroot=self.work
            )
            srv.__enter__()
            srv.create_database("latin1", "latin1_swedish_ci")
            sysbench.prepare(self.a.workload, self.target(srv), **self.size)
            warm = max(5, 5 * self.a.warmup)
            sysbench.run_sysbench(
                self.a.workload, self.target(srv), threads=self.a.threads, time_s=warm, **self.size
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
        order = [A, A2] if r % 2 else [A2, A]  # as the runner rotates the servers
        for sid in order:
            cmd = sysbench.command(
                self.a.workload,
                "run",
                self.target(self.servers[sid]),
                threads=self.a.threads,
                time_s=self.a.duration,
                **self.size,
            )
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            line = next(ln for ln in out.splitlines() if "transactions:" in ln)
            self.values.setdefault(r, {})[sid] = float(line.split("(")[1].split()[0])
        self.seconds += time.monotonic() - t0

    def stop(self) -> None:
        for srv in self.servers.values():
            srv.stop()


# --- figures -------------------------------------------------------------------------------
def figures(values: dict[int, dict[str, float]]) -> tuple[list[float], float]:
    """Per-round log(A'/A) and the per-cell CV (tps across rounds, mean of both sides)."""
    rounds = [r for r in sorted(values) if {A, A2} <= set(values[r])]
    logs = [math.log(values[r][A2] / values[r][A]) for r in rounds]
    cvs = []
    for sid in (A, A2):
        xs = [values[r][sid] for r in rounds]
        cvs.append(statistics.stdev(xs) / statistics.mean(xs) if len(xs) > 1 else math.nan)
    return logs, statistics.mean(cvs)


def sd_ratio_interval(ratio: float, n1: int, n2: int, level: float = 0.90) -> tuple[float, float]:
    """Interval of sd1/sd2 from the F distribution of the variance ratio."""
    lo_q, hi_q = sps.f.ppf([(1 + level) / 2, (1 - level) / 2], n1 - 1, n2 - 1)
    return ratio / math.sqrt(lo_q), ratio / math.sqrt(hi_q)


def table(rows: list[tuple[str, dict[int, dict[str, float]], float]], rounds: int) -> str:
    ref_logs, _ = figures(rows[0][1])
    ref_sd = statistics.stdev(ref_logs)
    ref_s = rows[0][2] / rounds
    out = [
        "| variant | rounds | log-ratio spread | per-cell CV | ratio to plain [90%] | "
        "s per round | ratio at equal machine time |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, values, seconds in rows:
        logs, cv = figures(values)
        sd = statistics.stdev(logs) if len(logs) > 1 else math.nan
        ratio = sd / ref_sd
        lo, hi = sd_ratio_interval(ratio, len(logs), len(ref_logs))
        per = seconds / rounds
        out.append(
            f"| {name} | {len(logs)} | {sd:.1%} | {cv:.1%} | {ratio:.2f} [{lo:.2f}, {hi:.2f}] | "
            f"{per:.0f} | {ratio * math.sqrt(per / ref_s):.2f} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--duration", type=int, default=5, help="seconds per measured cell")
    ap.add_argument("--warmup", type=int, default=1, help="harness warm-up (plain: 5x once)")
    ap.add_argument("--workload", default="oltp_point_select")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tables", type=int, default=2)
    ap.add_argument("--table-size", type=int, default=10_000)
    ap.add_argument(
        "--variants",
        default=";".join(DEFAULT_VARIANTS),
        help="';'-separated variants, e.g. 'group;run,warmup=0;run,pin'",
    )
    ap.add_argument(
        "--save",
        type=Path,
        help="write every variant's per-round tps (A and A') and machine seconds to this "
        "JSON file: the real paired A/A rounds benchmarks/paired_power.py replays",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(json.loads(a.child))
        return
    variants = [Variant.parse(t, a.warmup, a.duration) for t in a.variants.split(";") if t]
    if len(os.sched_getaffinity(0)) < 2:
        variants = [v for v in variants if not v.pin]
        print("one CPU: the pinned variant is left out")
    work = Path(tempfile.mkdtemp(prefix="noise-fidelity-"))
    children: list[Child] = []
    cat = aa_catalog()
    for sid in (A, A2):  # installed before any round is timed
        providers.fetch(cat.get(sid))
    plain = Plain(a, work / "plain")
    try:
        for i, v in enumerate(variants):
            children.append(Child(v, a, work / f"v{i}"))
        plain.start()
        turns: list[Plain | Child] = [plain, *children]
        for r in range(1, a.rounds + 1):
            shift = (r - 1) % len(turns)
            for t in turns[shift:] + turns[:shift]:
                if isinstance(t, Plain):
                    t.round(r)
                else:
                    t.round()
            print(f"round {r} of {a.rounds} done", flush=True)
        plain.stop()
        rows = [("plain (servers kept up)", plain.values, plain.seconds)]
        rows += [(f"perftrack run: {c.v.name}", c.tps(), c.seconds) for c in children]
    finally:
        plain.stop()
        for c in children:
            if c.proc.poll() is None:
                c.proc.terminate()  # the runner stops its servers on SIGTERM
                c.proc.wait(timeout=120)
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"\n{a.workload}, {a.threads} threads, {a.tables}x{a.table_size} rows, "
        f"{a.duration} s cells (warm-up {a.warmup} s unless the variant says), "
        f"{a.rounds} rounds, A = {A}, A' = the same server under a second id\n"
    )
    print(table(rows, a.rounds))
    if a.save:
        a.save.write_text(
            json.dumps(
                {
                    "settings": {
                        k: getattr(a, k)
                        for k in ("rounds", "duration", "warmup", "workload", "threads")
                    }
                    | {"tables": a.tables, "table_size": a.table_size, "A": A, "A2": A2},
                    "host": os.uname().nodename,
                    "variants": [
                        {"name": n, "seconds": s, "rounds": {str(r): v for r, v in vals.items()}}
                        for n, vals, s in rows
                    ],
                },
                indent=1,
            )
        )
        print(f"saved {a.save}")


if __name__ == "__main__":
    main()
