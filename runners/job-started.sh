#!/usr/bin/env bash
# The runner's job-started hook (ACTIONS_RUNNER_HOOK_JOB_STARTED, set by
# perftrack-runner.service): runs before the first step of every job; a non-zero exit and
# the job does not run. Refuses every job that is not from one of the trusted workflow
# files on the default branch of this repository (runners/trust.py), then binds the job's
# record key to its night, the workflow run id GitHub set (runners/record-signer: before
# any step runs, so no step can bind it to another night). Installed root-owned outside
# the runner directory by runners/provision, so no job can change it.
set -euo pipefail
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# -I: ignore PYTHON* variables and the user's site directory.
/usr/bin/python3 -I "$here/trust.py" hook
if [[ -n "${PERFTRACK_RECORD_SIGNER:-}" ]]; then
  if ! "$PERFTRACK_RECORD_SIGNER" bind "${GITHUB_RUN_ID:-}"; then
    echo "::error::perftrack runner gate: cannot bind the job's record key to run '${GITHUB_RUN_ID:-}'"
    exit 1
  fi
fi
