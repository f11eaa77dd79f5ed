#!/usr/bin/env bash
# Builds the front-desk example (examples/front-desk) into examples/front-desk/dist: the
# bundle (deno bundle of src/main.ts, with supabase-js and openapi-fetch from node_modules,
# as package.json pins them), the page and its style, and config.json, which tells the app
# where the project is. The anon key is public by design: every browser of the app holds it.
#   front-desk-build.sh SUPABASE_URL ANON_KEY
# scripts/stack.sh runs it on every `up` with the local stack's URL and anon key; for a
# hosted project give its URL and anon key, and serve dist/ from any static host.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: front-desk-build.sh SUPABASE_URL ANON_KEY" >&2; exit 2; }
supabase_url=${1%/} anon_key=$2
# Both go into config.json as they are, so neither may hold a quote, a backslash or a space.
url_pattern='^https?://[][A-Za-z0-9.:_~%/-]+$'
[[ $supabase_url =~ $url_pattern ]] || { echo "SUPABASE_URL must be an http(s) URL, not '$supabase_url'" >&2; exit 2; }
[[ $anon_key =~ ^[A-Za-z0-9._-]+$ ]] || { echo "the anon key is a JWT or a publishable key, not '$anon_key'" >&2; exit 2; }
example="$ROOT/examples/front-desk"
dist="$example/dist"
export DENO_DIR="${DENO_DIR:-$ROOT/.stack/deno}" NO_COLOR=1
mkdir -p "$dist"
# Each file is written beside its place and moved in, so a server reading dist/ meanwhile
# serves the old file or the new one, never half of one.
"$ROOT/node_modules/.bin/deno" bundle --quiet --config "$example/deno.json" --platform browser --minify \
  --output "$dist/app.js.tmp" "$example/src/main.ts"
mv -f "$dist/app.js.tmp" "$dist/app.js"
for file in index.html style.css; do
  cp "$example/public/$file" "$dist/$file.tmp"
  mv -f "$dist/$file.tmp" "$dist/$file"
done
printf '{"supabaseUrl":"%s","anonKey":"%s"}\n' "$supabase_url" "$anon_key" > "$dist/config.json.tmp"
mv -f "$dist/config.json.tmp" "$dist/config.json"
