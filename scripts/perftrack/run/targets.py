"""What the sampler measures: the server's process (or its container's cgroup) and its
counters from /proc and cgroup files: CPU time, context switches, I/O, memory high-water."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
PROC = Path("/proc")
CGROUP_ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))
SERVER_NAMES = ("mysqld", "mariadbd")
DOCKER_TIMEOUT_S = 20.0


@dataclass(kw_only=True)
class Counters:
    """Cumulative counters of the server at one instant (None: not readable)."""

    cpu_user_us: float | None = None
    cpu_sys_us: float | None = None
    ctx: dict[int, tuple[int, int]] = field(default_factory=dict)  # tid -> (vol, invol)
    read_bytes: int | None = None
    write_bytes: int | None = None
    peak_rss_bytes: int | None = None
    unavailable: dict[str, str] = field(default_factory=dict)


def read_file(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _kv(text: str | None, sep: str = ":") -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (text or "").splitlines():
        k, _, v = line.partition(sep)
        out[k.strip()] = v.strip()
    return out


def _stat_times(pid: int) -> tuple[float, float] | None:
    """(user µs, sys µs) of the whole process from /proc/PID/stat."""
    text = read_file(PROC / str(pid) / "stat")
    if text is None:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return utime * 1e6 / CLK_TCK, stime * 1e6 / CLK_TCK


def _thread_ctx(pids: list[int]) -> dict[int, tuple[int, int]]:
    out: dict[int, tuple[int, int]] = {}
    for pid in pids:
        try:
            tids = os.listdir(PROC / str(pid) / "task")
        except OSError:
            continue
        for tid in tids:
            kv = _kv(read_file(PROC / str(pid) / "task" / tid / "status"))
            if "voluntary_ctxt_switches" in kv:
                out[int(tid)] = (
                    int(kv["voluntary_ctxt_switches"]),
                    int(kv["nonvoluntary_ctxt_switches"]),
                )
    return out


def _hwm_bytes(pid: int) -> int | None:
    m = re.match(r"(\d+)\s*kB", _kv(read_file(PROC / str(pid) / "status")).get("VmHWM", ""))
    return int(m.group(1)) * 1024 if m else None


@dataclass(frozen=True)
class ProcTarget:
    """A server process on this host (tarball, maven, path, debian, debian-chroot)."""

    pid: int
    source: str = "proc"

    def counters(self) -> Counters:
        c = Counters()
        times = _stat_times(self.pid)
        if times is None:
            c.unavailable["cpu"] = f"/proc/{self.pid}/stat is not readable"
        else:
            c.cpu_user_us, c.cpu_sys_us = times
        c.ctx = _thread_ctx([self.pid])
        if not c.ctx:
            c.unavailable["ctx"] = f"/proc/{self.pid}/task/*/status is not readable"
        io = _kv(read_file(PROC / str(self.pid) / "io"))
        if "read_bytes" in io:
            c.read_bytes, c.write_bytes = int(io["read_bytes"]), int(io["write_bytes"])
        else:
            c.unavailable["io"] = (
                f"/proc/{self.pid}/io is not readable (another user's process, or no "
                "task IO accounting in this kernel)"
            )
        c.peak_rss_bytes = _hwm_bytes(self.pid)
        if c.peak_rss_bytes is None:
            c.unavailable["rss"] = f"/proc/{self.pid}/status has no VmHWM"
        return c


@dataclass(frozen=True)
class CgroupTarget:
    """A server in its own cgroup (the docker provider's container)."""

    path: Path  # the cgroup's directory (v2: cpu.stat, io.stat, memory.peak)
    pid: int | None = None  # the server process as the host sees it (for perf)
    source: str = "cgroup"

    def pids(self) -> list[int]:
        text = read_file(self.path / "cgroup.procs") or ""
        return [int(p) for p in text.split() if p.isdigit()]

    def counters(self) -> Counters:
        """cgroup files; where a controller is off (io.stat, memory.peak absent, e.g. a
        hybrid v1/v2 host), the server process's own /proc files instead."""
        c = Counters()
        proc = ProcTarget(self.pid).counters() if self.pid is not None else None
        cpu = _kv(read_file(self.path / "cpu.stat"), " ")
        if "user_usec" in cpu:
            c.cpu_user_us, c.cpu_sys_us = float(cpu["user_usec"]), float(cpu["system_usec"])
        else:
            c.unavailable["cpu"] = f"{self.path}/cpu.stat has no user_usec"
        c.ctx = _thread_ctx(self.pids())
        if not c.ctx:
            c.unavailable["ctx"] = f"no readable threads in {self.path}/cgroup.procs"
        io = read_file(self.path / "io.stat")
        if io is None and proc is not None and proc.read_bytes is not None:
            c.read_bytes, c.write_bytes = proc.read_bytes, proc.write_bytes
        elif io is None:
            c.unavailable["io"] = f"{self.path}/io.stat is absent (io controller not enabled)"
        else:
            rb = sum(int(m) for m in re.findall(r"\brbytes=(\d+)", io))
            wb = sum(int(m) for m in re.findall(r"\bwbytes=(\d+)", io))
            c.read_bytes, c.write_bytes = rb, wb
        peak = read_file(self.path / "memory.peak")
        if (peak is None or not peak.strip().isdigit()) and proc and proc.peak_rss_bytes:
            c.peak_rss_bytes = proc.peak_rss_bytes
        elif peak is None or not peak.strip().isdigit():
            c.unavailable["rss"] = (
                f"{self.path}/memory.peak is absent (memory controller not enabled, or a "
                "kernel older than 5.19)"
            )
        else:
            c.peak_rss_bytes = int(peak)
        return c


Target = ProcTarget | CgroupTarget


def _comm(pid: int) -> str:
    return (read_file(PROC / str(pid) / "comm") or "").strip()


def _children(pid: int) -> list[int]:
    """Direct children of a process (via /proc/PID/task/*/children)."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(PROC / str(pid) / "task"):
            text = read_file(PROC / str(pid) / "task" / tid / "children") or ""
            out += [int(p) for p in text.split()]
    return out


def find_server_pid(root_pid: int) -> int | None:
    """The mysqld/mariadbd process at or below `root_pid` (a launcher may fork it)."""
    todo, seen = [root_pid], set()
    while todo:
        pid = todo.pop(0)
        if pid in seen:
            continue
        seen.add(pid)
        if _comm(pid) in SERVER_NAMES:
            return pid
        todo += _children(pid)
    return None


def cgroup_dir(pid: int) -> Path | None:
    """The cgroup v2 directory of a process, if a v2 hierarchy is mounted."""
    for line in (read_file(PROC / str(pid) / "cgroup") or "").splitlines():
        if line.startswith("0::"):
            rel = line[3:].strip().lstrip("/")
            if not rel:  # the root cgroup is the whole machine, not the server
                return None
            for root in CGROUP_ROOTS:
                cand = root / rel
                if (root / "cgroup.controllers").is_file() and (cand / "cpu.stat").is_file():
                    return cand
    return None


def docker_server_pid(server_dir: Path) -> int | None:
    """Host PID of the server in the container the docker launcher started for `server_dir`
    (containers carry the label io.perftrack.server-dir=DIR)."""
    from perftrack.servers.providers.docker_run import LABEL

    docker = shutil.which("docker")
    if docker is None:
        return None
    try:
        ids = subprocess.run(
            [docker, "ps", "-q", "--filter", f"label={LABEL}={server_dir}"],
            capture_output=True,
            text=True,
            timeout=DOCKER_TIMEOUT_S,
            check=False,
        ).stdout.split()
        if not ids:
            return None
        out = subprocess.run(
            [docker, "inspect", "-f", "{{.State.Pid}}", ids[0]],
            capture_output=True,
            text=True,
            timeout=DOCKER_TIMEOUT_S,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return int(out) if out.isdigit() and int(out) > 0 else None


def target_for(srv: Any) -> tuple[Target | None, str | None]:
    """The sampling target of a running `Server`, or (None, why not)."""
    proc = getattr(srv, "process", None)
    if proc is None or proc.poll() is not None:
        return None, "the server is not running"
    if srv.install.provider == "docker":
        pid = docker_server_pid(srv.dir)
        if pid is None:
            return None, "the server's container was not found (docker ps)"
        cg = cgroup_dir(pid)
        if cg is None:
            return ProcTarget(pid), None  # cgroup v1 host: the container's process, seen here
        return CgroupTarget(cg, pid), None
    pid = find_server_pid(proc.pid)
    if pid is None:
        pidfile = read_file(srv.dir / "mysqld.pid")
        pid = int(pidfile.strip()) if pidfile and pidfile.strip().isdigit() else None
    if pid is None:
        return None, f"no mysqld/mariadbd process under pid {proc.pid}"
    return ProcTarget(pid), None
