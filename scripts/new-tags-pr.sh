#!/usr/bin/env bash
# The new-tags workflow's second half: commit the catalog entries that
# `perftrack tags check --write` appended, push them to a new branch and open a pull
# request. The nightly's pins job uses it too, for the digests its plan pinned (trust on
# first use) that the night's records used (`perftrack servers pin --from-night --write`).
# A PR opened with the workflow's own GITHUB_TOKEN triggers no workflows, so:
#   PERFTRACK_PR_TOKEN set    push and open the PR with it (a GitHub App installation token
#                             or a fine-grained PAT): pr-check runs on the PR as usual
#   PERFTRACK_PR_TOKEN unset  push and open the PR with GITHUB_TOKEN, then dispatch
#                             pr-check.yml on the PR's branch with the PR number
#                             (workflow_dispatch is the exception that GITHUB_TOKEN may trigger)
# See docs/new-tags-and-pr-checks.md.
#
# Environment (set by .github/workflows/new-tags.yml; never ${{ }} in shell lines):
#   ADDED              server ids that were added, space-separated (tags check's output)
#   PINNED             server ids whose digest `servers pin` recorded (may be empty)
#   PIN_ORIGIN         who pinned them: new-tags (default, `servers pin`) or nightly
#                      (pinned when the night was planned, `servers pin --from-night`)
#   GITHUB_REPOSITORY  OWNER/NAME
#   GITHUB_TOKEN       the workflow token (contents, pull-requests, actions: write)
#   PERFTRACK_PR_TOKEN optional, see above
#   BASE_BRANCH        the branch the PR targets (default: main)
#   PERFTRACK_GITHUB_API_URL  the API base for tests (else GITHUB_API_URL, api.github.com)
set -euo pipefail

die() {
  echo "error: $*" >&2
  exit 2
}

id_list='^([A-Za-z0-9][A-Za-z0-9._+-]*( [A-Za-z0-9][A-Za-z0-9._+-]*)*)?$'
[[ "${ADDED:-}" =~ $id_list ]] || die "ADDED='${ADDED:-}' is not a space-separated list of server ids"
[[ "${PINNED:-}" =~ $id_list ]] || die "PINNED='${PINNED:-}' is not a space-separated list of server ids"
[ -n "${ADDED:-}${PINNED:-}" ] || die "neither ADDED nor PINNED names a server: nothing to propose"
ADDED=${ADDED:-}
PINNED=${PINNED:-}
origin=${PIN_ORIGIN:-new-tags}
case "$origin" in
  new-tags)
    how_pinned="pinned by \`perftrack servers pin --write\` (the Docker Hub digest of entries marked unpinned), in the new-tags workflow"
    ;;
  nightly)
    how_pinned="pinned when the nightly was planned (\`perftrack plan --pin-unpinned\`: the Docker Hub digest of entries marked unpinned, asked twice, trust on first use) and used by that night's run records (\`perftrack servers pin --from-night --write\`)"
    ;;
  *) die "PIN_ORIGIN='$origin' is not new-tags or nightly" ;;
esac
[[ "${GITHUB_REPOSITORY:-}" =~ ^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$ ]] ||
  die "GITHUB_REPOSITORY='${GITHUB_REPOSITORY:-}' is not OWNER/NAME"
base=${BASE_BRANCH:-main}
[[ "$base" =~ ^[A-Za-z0-9][A-Za-z0-9._/-]*$ ]] || die "BASE_BRANCH='$base' is not a branch name"
api=${PERFTRACK_GITHUB_API_URL:-${GITHUB_API_URL:-https://api.github.com}}
case "$api" in
  https://* | http://127.0.0.1:*) ;;
  *) die "the API URL '$api' must be https:// (http only on 127.0.0.1)" ;;
esac

if [ -n "${PERFTRACK_PR_TOKEN:-}" ]; then
  token=$PERFTRACK_PR_TOKEN
  mode=pr-token
else
  token=${GITHUB_TOKEN:-}
  [ -n "$token" ] || die "GITHUB_TOKEN is not set"
  mode=dispatch
fi

if [ -n "$ADDED" ]; then
  branch="perftrack/new-tags-${ADDED// /-}"
else # pins only: one branch per set of pins (the same pins are proposed once)
  branch="perftrack/pins-$(git diff -- configs/versions.yaml | sha256sum | cut -c1-12)"
fi
if git ls-remote --exit-code --heads origin "$branch" >/dev/null; then
  echo "branch $branch exists already (its PR is open, merged or closed): nothing to do"
  exit 0
fi

git add configs/versions.yaml
git -c user.name="github-actions[bot]" \
  -c user.email="41898282+github-actions[bot]@users.noreply.github.com" \
  commit --quiet -m "catalog: new MySQL release(s) ${ADDED:-none}; pinned: ${PINNED:-none}" \
  -m "Added by \`perftrack tags check --write\` (a release tag on both Docker Hub and GitHub); $how_pinned."

# The token reaches git through the environment only (not argv, not .git/config).
auth=$(printf 'x-access-token:%s' "$token" | base64 -w0)
echo "::add-mask::$auth"
GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraheader \
  GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $auth" \
  git push --quiet origin "HEAD:refs/heads/$branch"

# curl reads the Authorization header from a private file, not from argv.
headers=$(mktemp)
trap 'rm -f "$headers"' EXIT
chmod 600 "$headers"
printf 'Authorization: Bearer %s\nAccept: application/vnd.github+json\nX-GitHub-Api-Version: 2022-11-28\n' \
  "$token" >"$headers"

request() { # METHOD PATH JSON -> response body on stdout
  curl --silent --show-error --fail-with-body --max-time 60 -X "$1" -H "@$headers" \
    -H "Content-Type: application/json" --data "$3" "$api$2"
}

pr_json=$(python3 - "$ADDED" "$branch" "$base" "$mode" "$PINNED" "$origin" <<'PY'
import json, sys
added, branch, base, mode, pinned, origin = sys.argv[1:]
ids = added.split()
lines = [f"- `{i}`: image `mysql:{i.removeprefix('mysql-')}`" for i in ids]
pins = pinned.split()
if pins and origin == "nightly":
    lines.append("Digests pinned when the nightly was planned, for entries marked unpinned "
                 "(trust on first use: the Docker Hub digest, asked twice while planning), "
                 "and used by that night's run records (`perftrack servers pin "
                 "--from-night`). Merging records them in the catalog; until then each "
                 "night pins them again:\n")
    lines += [f"- `{i}`" for i in pins]
elif pins:
    lines.append("\nDigests recorded by `perftrack servers pin` for entries marked unpinned "
                 "(trust on first use; their cells were skipped until now):\n")
    lines += [f"- `{i}`" for i in pins]
how = ("The PR check runs on this PR as usual (opened with PERFTRACK_PR_TOKEN)."
       if mode == "pr-token" else
       "Opened with the workflow token, which triggers no workflows: the PR check was "
       "dispatched on this branch instead (Actions > pr-check). Set PERFTRACK_PR_TOKEN to "
       "have it run on the PR directly (docs/new-tags-and-pr-checks.md).")
title = (f"catalog: new MySQL release(s) {' '.join(ids)}" if ids
         else f"catalog: pin {len(pins)} image digest(s)")
print(json.dumps({
    "title": title,
    "head": branch,
    "base": base,
    "body": ("New release tags found by `perftrack tags check` on Docker Hub and GitHub:\n\n"
             if ids else "")
            + "\n".join(lines).lstrip("\n") + "\n\n" + how + "\n",
    "maintainer_can_modify": True,
}))
PY
)
response=$(request POST "/repos/$GITHUB_REPOSITORY/pulls" "$pr_json")
number=$(printf '%s' "$response" | python3 -c '
import json, sys
n = json.load(sys.stdin).get("number")
if not isinstance(n, int) or n <= 0:
    sys.exit("error: the answer to creating the PR has no number")
print(n)')
echo "opened PR #$number from $branch ($mode)"

if [ "$mode" = dispatch ]; then
  dispatch_json=$(printf '{"ref": "%s", "inputs": {"pr": "%s", "base": "origin/%s"}}' \
    "$branch" "$number" "$base")
  request POST "/repos/$GITHUB_REPOSITORY/actions/workflows/pr-check.yml/dispatches" \
    "$dispatch_json" >/dev/null
  echo "dispatched pr-check.yml on $branch for PR #$number"
fi

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    if [ "$origin" = nightly ]; then
      echo "### Tonight's pins: PR #$number"
    else
      echo "### New MySQL releases: PR #$number"
    fi
    echo
    echo "Added: ${ADDED:-none}; pinned: ${PINNED:-none} (branch \`$branch\`)."
    if [ "$mode" = dispatch ]; then
      echo "The PR check was dispatched (no PERFTRACK_PR_TOKEN set)."
    fi
  } >>"$GITHUB_STEP_SUMMARY"
fi
