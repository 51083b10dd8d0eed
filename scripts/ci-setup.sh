#!/usr/bin/env bash
# Makes `perftrack` available to the later steps of a GitHub Actions job (via $GITHUB_PATH).
#
#   scripts/ci-setup.sh          the Python package only, in .venv/ (plan and publish jobs on
#                                GitHub-hosted runners: no servers, no sysbench needed), every
#                                dependency hash-locked (requirements/ci.lock:
#                                pip --require-hashes): these jobs hold write tokens
#   scripts/ci-setup.sh --full   `make setup`: the Debian packages too (benchmark runners)
#
# PERFTRACK_VENV=DIR reuses an existing virtualenv that already has perftrack installed
# instead of installing one per job: the act tests set it to the checkout's .venv so a
# local workflow run does not pip-install in every job (docs/workflows.md). Never set on
# GitHub.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-python}
case "$mode" in
  python | --full) ;;
  *) echo "error: unknown option '$mode'; use no option or --full" >&2; exit 2 ;;
esac

if [ -n "${PERFTRACK_VENV:-}" ]; then
  if [ ! -x "$PERFTRACK_VENV/bin/perftrack" ]; then
    echo "error: PERFTRACK_VENV=$PERFTRACK_VENV has no bin/perftrack; unset it or run make setup there" >&2
    exit 2
  fi
  venv=$PERFTRACK_VENV
elif [ "$mode" = --full ]; then
  make setup
  venv=$PWD/.venv
else
  # The Python half of `make setup`, hash-locked: no apt, no root, no unpinned download.
  python3 -m venv .venv
  .venv/bin/pip install -q --require-hashes --only-binary :all: -r requirements/ci.lock
  # perftrack itself from this checkout, built with the locked setuptools (no isolation:
  # build isolation would download an unhashed setuptools).
  .venv/bin/pip install -q --no-deps --no-build-isolation -e .
  venv=$PWD/.venv
fi

if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$venv/bin" >>"$GITHUB_PATH"
fi
"$venv/bin/perftrack" version
