# shellcheck shell=bash
# Sourced by runners/tune and runners/preflight: find the perftrack command.
# $PERFTRACK if set, else this checkout's .venv/bin/perftrack, else perftrack on PATH.
perftrack_cmd() {
  local repo
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  if [[ -n "${PERFTRACK:-}" ]]; then
    printf '%s\n' "$PERFTRACK"
  elif [[ -x "$repo/.venv/bin/perftrack" ]]; then
    printf '%s\n' "$repo/.venv/bin/perftrack"
  elif command -v perftrack >/dev/null 2>&1; then
    command -v perftrack
  else
    echo "error: perftrack not found: run 'make setup' in $repo or set PERFTRACK" >&2
    return 3
  fi
}
