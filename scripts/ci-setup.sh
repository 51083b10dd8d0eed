#!/usr/bin/env bash
# Makes `perftrack` available to the later steps of a GitHub Actions job (via $GITHUB_PATH).
#
#   scripts/ci-setup.sh          the Python package only, in .venv/ (plan and publish jobs on
#                                GitHub-hosted runners: no servers, no sysbench needed)
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
  # The Python half of `make setup` (keep the two in step): no apt, no root needed.
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e .
  .venv/bin/pip install -q --no-deps 'apache-otava==0.8.0'
  venv=$PWD/.venv
fi

if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$venv/bin" >>"$GITHUB_PATH"
fi
"$venv/bin/perftrack" version
