"""Run records signed by the bench job that wrote them (runners/record-signer).

On a bench host `perftrack-runner.service` sets ``PERFTRACK_RECORD_SIGNER`` to the runner
user's way to the root-owned signer (runners/sign-record). Then every run record and
every run's ``plan.json`` written gets ``<file>.sig``: ``v1 NIGHT HEX``, an HMAC of the
file's bytes and the night (the workflow run id) the job-started hook bound the job to,
under a key the runner user never reads. A kept run is later uploaded by
``perftrack runner salvage`` or resumed by ``perftrack run --night-id`` only with its
files signed for its own night: records a job planted for another night (an earlier one,
or a run id still to come) are refused, whatever they say.

Without the variable (a laptop, CI) nothing is signed and nothing is checked.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from perftrack.core import files
from perftrack.core.errors import EnvironmentProblem

ENV_SIGNER = "PERFTRACK_RECORD_SIGNER"
SUFFIX = ".sig"
SIGNATURE_RE = re.compile(r"^v1 ([A-Za-z0-9][A-Za-z0-9._-]{0,63}) ([0-9a-f]{64})\n?\Z")
SIGNER_TIMEOUT_S = 60  # sudo and a small Python script: well under a second
MAX_SIGNATURE_BYTES = 256


def signer() -> str | None:
    """The signer command, when this host signs records; None otherwise."""
    return os.environ.get(ENV_SIGNER) or None


def _call(command: str, args: list[str], content: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [command, *args],
            input=content,
            capture_output=True,
            timeout=SIGNER_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentProblem(
            f"the record signer {command} cannot run ({exc}); check {ENV_SIGNER} "
            "and runners/provision's sudoers entry"
        ) from None


def sign(path: Path) -> None:
    """Write ``path``'s signature beside it, when this host signs records."""
    command = signer()
    if command is None:
        return
    done = _call(command, ["sign"], path.read_bytes())
    text = done.stdout.decode("ascii", "replace")
    if done.returncode != 0 or not SIGNATURE_RE.match(text):
        reason = " ".join(done.stderr.decode("utf-8", "replace").split())[:200]
        raise EnvironmentProblem(
            f"the record signer refused to sign {path.name} ({reason or 'no signature'}): "
            "records of this job would not be accepted later; fix the runner's setup"
        )
    files.replace_text(path.with_name(path.name + SUFFIX), text)


def refusal(path: Path, night: str) -> str | None:
    """Why ``path`` is not accepted as written by night ``night``'s job, or None (also
    None when this host signs nothing)."""
    command = signer()
    if command is None:
        return None
    sig = path.with_name(path.name + SUFFIX)
    try:
        text = sig.read_bytes()[:MAX_SIGNATURE_BYTES].decode("ascii")
        content = path.read_bytes()
    except (OSError, UnicodeDecodeError):
        return "not signed by the job that wrote it"
    m = SIGNATURE_RE.match(text)
    if m is None:
        return "not signed by the job that wrote it"
    if m.group(1) != night:
        return f"signed for night {m.group(1)}, not {night}"
    if _call(command, ["verify", night, m.group(2)], content).returncode != 0:
        return "its signature does not match it (changed after it was written)"
    return None
