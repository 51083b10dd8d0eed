"""Where perftrack finds its configs and keeps its default outputs."""

from __future__ import annotations

import os
from pathlib import Path

from perftrack.core.errors import ConfigError

ENV_CONFIG_DIR = "PERFTRACK_CONFIG_DIR"
DEFAULT_DB = Path("data/results.duckdb")
DEFAULT_RUNS = Path("runs")
ENV_STATE_DIR = "PERFTRACK_STATE_DIR"


def state_dir() -> Path:
    """Where a runner keeps what must outlive a job's workspace (the next checkout's
    `git clean` deletes it): $PERFTRACK_STATE_DIR, else $XDG_STATE_HOME/perftrack, else
    ~/.local/state/perftrack."""
    env = os.environ.get(ENV_STATE_DIR)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "perftrack"


def nights_dir() -> Path:
    """The night directories of benchmark jobs: `nights/<night id>/shard-<N>/<run id>/`."""
    return state_dir() / "nights"


def config_dir() -> Path:
    """configs/ of the checkout: $PERFTRACK_CONFIG_DIR, else the nearest one above cwd."""
    env = os.environ.get(ENV_CONFIG_DIR)
    if env:
        p = Path(env)
        if not (p / "versions.yaml").is_file():
            raise ConfigError(f"{ENV_CONFIG_DIR}={env} has no versions.yaml")
        return p
    for d in (Path.cwd(), *Path.cwd().parents):
        if (d / "configs" / "versions.yaml").is_file():
            return d / "configs"
    here = Path(__file__).resolve().parents[3] / "configs"
    if (here / "versions.yaml").is_file():
        return here
    raise ConfigError(
        "cannot find configs/versions.yaml: run perftrack inside the "
        f"perftrack checkout or set {ENV_CONFIG_DIR}"
    )


def matrix_path(name_or_path: str) -> Path:
    """A matrix file path, or the name of one in configs/matrices/."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return p
    cand = config_dir() / "matrices" / f"{name_or_path}.yaml"
    if cand.is_file():
        return cand
    known = sorted(q.stem for q in (config_dir() / "matrices").glob("*.yaml"))
    raise ConfigError(f"no matrix '{name_or_path}'; known: {', '.join(known)}")
