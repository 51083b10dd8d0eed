#!/usr/bin/env bash
# Vendors vega, vega-lite and vega-embed into site/vendor/ at the versions pinned in
# site/package.json + package-lock.json (npm registry only), records their sha256 in
# site/vendor/SHA256SUMS and their versions in site/vendor/VERSIONS. The result is
# committed, so `perftrack site build` needs no npm and the site loads nothing from a CDN.
#
# To update: edit the versions in package.json, run `npm install --package-lock-only`
# in site/, then this script; rebuild the site and run tests/site/.
set -euo pipefail
cd "$(dirname "$0")"

npm ci --no-audit --no-fund --ignore-scripts

mkdir -p vendor
rm -f vendor/*.js vendor/LICENSE-* vendor/SHA256SUMS vendor/VERSIONS
declare -A builds=(
  [vega]=node_modules/vega/build/vega.min.js
  [vega-lite]=node_modules/vega-lite/build/vega-lite.min.js
  [vega-embed]=node_modules/vega-embed/build/vega-embed.min.js
)
for pkg in vega vega-lite vega-embed; do
  # Drop the source-map comment: the maps are not vendored, and a dangling reference
  # makes browsers' developer tools fetch a missing file.
  sed '/^\/\/# sourceMappingURL=/d' "${builds[$pkg]}" >"vendor/$pkg.min.js"
  cp "node_modules/$pkg/LICENSE" "vendor/LICENSE-$pkg"
  version=$(node -p "require('./node_modules/$pkg/package.json').version")
  echo "$pkg $version" >>vendor/VERSIONS
done
(cd vendor && sha256sum ./*.min.js | sed 's# \./# #' >SHA256SUMS)
cat vendor/VERSIONS
ls -l vendor
