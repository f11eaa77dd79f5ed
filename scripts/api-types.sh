#!/usr/bin/env bash
# npm run api:types: writes examples/front-desk/src/api-types.ts, the types of the API's
# requests and responses that the front-desk example and the tests use, generated from the OpenAPI document built in-process (no stack needed). See
# scripts/api-types.ts.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export NO_COLOR=1 DENO_DIR="$ROOT/.stack/deno"
node_modules/.bin/deno run --quiet --config deno.json --allow-read=. --allow-write=examples/front-desk/src/api-types.ts --allow-env \
  scripts/api-types.ts
