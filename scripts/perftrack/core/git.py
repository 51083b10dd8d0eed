"""The one way perftrack runs git: `git -C DIR …`, bounded in time, never prompting.

Callers decide what a failure means (the store's restore hint treats it as "no history",
publish as a push error, the PR check as "not a checkout"); this module only runs git and
says when it is missing.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Literal, overload

from perftrack.core.errors import EnvironmentProblem

GIT_TIMEOUT_S = 120.0  # a fetch or push of the results DB over a slow link; never forever


def quiet_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment git runs with: no terminal prompt (a missing credential fails at
    once instead of hanging a CI job), C locale (messages perftrack can read)."""
    return {**(os.environ if base is None else base), "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


@overload
def run_git(
    directory: Path | str,
    *args: str,
    env: dict[str, str] | None = ...,
    timeout: float = ...,
    text: Literal[True] = ...,
) -> subprocess.CompletedProcess[str]: ...
@overload
def run_git(
    directory: Path | str,
    *args: str,
    env: dict[str, str] | None = ...,
    timeout: float = ...,
    text: Literal[False],
) -> subprocess.CompletedProcess[bytes]: ...
def run_git(
    directory: Path | str,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = GIT_TIMEOUT_S,
    text: bool = True,
) -> subprocess.CompletedProcess[str] | subprocess.CompletedProcess[bytes]:
    """`git -C directory args…`, output captured, not checked (look at returncode).
    EnvironmentProblem when git is not installed; subprocess.TimeoutExpired past `timeout`."""
    try:
        return subprocess.run(
            ["git", "-C", str(directory), *args],
            capture_output=True,
            text=text,
            env=quiet_env(env),
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise EnvironmentProblem(
            "git is not installed: install git (apt-get install git)"
        ) from None


def toplevel(directory: Path | str) -> Path | None:
    """The work tree `directory` is in, or None when it is in none (or git fails)."""
    try:
        p = run_git(directory, "rev-parse", "--show-toplevel", timeout=60)
    except (EnvironmentProblem, subprocess.TimeoutExpired):
        return None
    return Path(p.stdout.strip()).resolve() if p.returncode == 0 else None
