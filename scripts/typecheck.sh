#!/usr/bin/env bash
# tsc over tsconfig.json (deployed code and the local stack) with Deno's own
# declarations, deno check over everything Deno runs, tests included, and deno check of
# the front-desk example against the DOM's declarations and the generated API types.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
mkdir -p .stack/types
export DENO_DIR="$ROOT/.stack/deno"
node_modules/.bin/deno types > .stack/types/deno.d.ts
node_modules/.bin/tsc -p tsconfig.json
node_modules/.bin/deno check --quiet --config deno.json supabase/functions/*/index.ts local/*.ts local/*/main.ts test/ bench/run.ts bench/verify.bench.ts
node_modules/.bin/deno check --quiet --config examples/front-desk/deno.json examples/front-desk/src/main.ts
