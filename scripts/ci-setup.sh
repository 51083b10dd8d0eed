#!/usr/bin/env bash
# Makes `perftrack` available to the later steps of a GitHub Actions job (via $GITHUB_PATH).
#
#   scripts/ci-setup.sh          the Python package only, in .venv/ (plan and publish jobs on
#                                GitHub-hosted runners: no servers, no sysbench needed), every
#                                dependency hash-locked (requirements/ci.lock:
#                                pip --require-hashes, binary wheels only, no pip upgrade,
#                                no dev extras): these jobs hold write tokens
#   scripts/ci-setup.sh --bench  the same hash-locked install, on a bench runner: first checks
#                                that the host has what runners/provision installs (sysbench,
#                                the MariaDB client, python3-venv, ...) and stops with one line
#                                naming what is missing. It never calls apt-get or sudo: a bench
#                                job uses only what provisioning put there
#
# PERFTRACK_VENV=DIR reuses an existing virtualenv that already has perftrack installed
# instead of installing one per job: the act tests set it to the checkout's .venv so a
# local workflow run does not pip-install in every job (docs/workflows.md). Never set on
# GitHub.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-python}
case "$mode" in
  python | --bench) ;;
  *) echo "error: unknown option '$mode'; use no option or --bench" >&2; exit 2 ;;
esac

# The commands a bench job runs that provisioning installs (runners/provision PACKAGES).
BENCH_TOOLS=(sysbench mariadb mariadb-slap git docker python3)
if [ "$mode" = --bench ]; then
  missing=()
  for tool in "${BENCH_TOOLS[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=("python3-venv")
  if [ ${#missing[@]} -gt 0 ]; then
    echo "error: this bench host lacks ${missing[*]}: run runners/provision on it (a bench job installs nothing but perftrack's locked Python packages)" >&2
    exit 3
  fi
fi

if [ -n "${PERFTRACK_VENV:-}" ]; then
  if [ ! -x "$PERFTRACK_VENV/bin/perftrack" ]; then
    echo "error: PERFTRACK_VENV=$PERFTRACK_VENV has no bin/perftrack; unset it or run make setup there" >&2
    exit 2
  fi
  venv=$PERFTRACK_VENV
else
  # The Python half of `make setup`, hash-locked: no apt, no root, no unpinned download.
  python3 -m venv .venv
  # --no-compile: the virtualenv serves one job; what it imports is compiled on first use
  # (a byte-compiled scipy etc. took 14 s of a 15 s install, tests/runners/test_fresh_host.py)
  .venv/bin/pip install -q --no-compile --require-hashes --only-binary :all: -r requirements/ci.lock
  # perftrack itself from this checkout, built with the locked setuptools (no isolation:
  # build isolation would download an unhashed setuptools).
  .venv/bin/pip install -q --no-deps --no-build-isolation -e .
  venv=$PWD/.venv
fi

if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$venv/bin" >>"$GITHUB_PATH"
fi
"$venv/bin/perftrack" version
