#!/usr/bin/env bash
# The runner's job-started hook (ACTIONS_RUNNER_HOOK_JOB_STARTED, set by
# perftrack-runner.service): runs before the first step of every job; a non-zero exit and
# the job does not run. Refuses every job that is not from one of the trusted workflow
# files on the default branch of this repository (runners/trust.py). Installed root-owned
# outside the runner directory by runners/provision, so no job can change it.
set -euo pipefail
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# -I: ignore PYTHON* variables and the user's site directory.
exec /usr/bin/python3 -I "$here/trust.py" hook
