#!/usr/bin/env bash
# Vendors the site's JavaScript libraries into site/vendor/ at the versions pinned in
# site/package.json + package-lock.json (npm registry only), records their sha256 in
# site/vendor/SHA256SUMS and their versions in site/vendor/VERSIONS. The result is
# committed, so `perftrack site build` needs no npm and the site loads nothing from a CDN.
#
# - vega, vega-lite, vega-embed: their minified builds, as published (every chart page).
# - The SQL page only: @duckdb/duckdb-wasm, its browser API module bundled by esbuild
#   (pinned) with the apache-arrow it imports into one ES module, duckdb-browser.mjs, and
#   the "eh" worker and its .wasm as published. Only the eh bundle (WebAssembly
#   exceptions) is vendored: smaller and faster than "mvp", in every current browser;
#   "coi" needs cross-origin-isolation headers a static host cannot send. And
#   parquet-wasm's ES module and .wasm as published: the npm DuckDB-WASM has no Parquet
#   reader built in (it would fetch its parquet extension from outside the site), so the
#   page decodes the Parquet files to Arrow with parquet-wasm. docs/site.md.
#
# To update: edit the versions in package.json, run `npm install --package-lock-only`
# in site/, then this script; rebuild the site and run tests/publish/site/.
set -euo pipefail
cd "$(dirname "$0")"

npm ci --no-audit --no-fund --ignore-scripts

mkdir -p vendor
rm -f vendor/*.js vendor/*.mjs vendor/*.wasm vendor/LICENSE-* vendor/SHA256SUMS vendor/VERSIONS
version() { node -p "require('./node_modules/$1/package.json').version"; }
# Drop source-map comments: the maps are not vendored, and a dangling reference makes
# browsers' developer tools fetch a missing file.
nomap() { sed '/^\/\/# sourceMappingURL=/d' "$1" >"$2"; }

declare -A builds=(
  [vega]=node_modules/vega/build/vega.min.js
  [vega-lite]=node_modules/vega-lite/build/vega-lite.min.js
  [vega-embed]=node_modules/vega-embed/build/vega-embed.min.js
)
for pkg in vega vega-lite vega-embed; do
  nomap "${builds[$pkg]}" "vendor/$pkg.min.js"
  cp "node_modules/$pkg/LICENSE" "vendor/LICENSE-$pkg"
  echo "$pkg $(version "$pkg")" >>vendor/VERSIONS
done

duck=node_modules/@duckdb/duckdb-wasm
# esbuild's platform binary comes from the npm registry as an optional dependency; with
# --ignore-scripts its postinstall step (an optimisation only) does not run.
node_modules/.bin/esbuild "$duck/dist/duckdb-browser.mjs" --bundle --format=esm --minify \
  --platform=browser --legal-comments=none --log-level=warning --outfile=vendor/duckdb-browser.mjs
nomap "$duck/dist/duckdb-browser-eh.worker.js" vendor/duckdb-browser-eh.worker.js
cp "$duck/dist/duckdb-eh.wasm" vendor/duckdb-eh.wasm
# The npm package ships no licence file; its package.json names the licence.
printf '@duckdb/duckdb-wasm %s: licence "%s" (its package.json; the npm package ships no\nlicence file). The .wasm is DuckDB itself, also MIT.\n' \
  "$(version @duckdb/duckdb-wasm)" "$(node -p "require('./$duck/package.json').license")" \
  >vendor/LICENSE-duckdb-wasm
cp node_modules/apache-arrow/LICENSE.txt vendor/LICENSE-apache-arrow
cp node_modules/parquet-wasm/esm/parquet_wasm.js vendor/parquet_wasm.js
cp node_modules/parquet-wasm/esm/parquet_wasm_bg.wasm vendor/parquet_wasm_bg.wasm
cat node_modules/parquet-wasm/LICENSE_MIT node_modules/parquet-wasm/LICENSE_APACHE >vendor/LICENSE-parquet-wasm
for pkg in @duckdb/duckdb-wasm apache-arrow parquet-wasm esbuild; do
  echo "$pkg $(version "$pkg")" >>vendor/VERSIONS
done

(cd vendor && sha256sum ./*.min.js ./duckdb-* ./parquet_wasm* | sed 's# \./# #' >SHA256SUMS)
cat vendor/VERSIONS
ls -l vendor
