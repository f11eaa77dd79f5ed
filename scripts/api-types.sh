#!/usr/bin/env bash
# npm run api:types: writes test/support/api-types.ts, the tests' types of the API's
# requests and responses, generated from the OpenAPI document built in-process (no stack
# needed). See scripts/api-types.ts.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export NO_COLOR=1 DENO_DIR="$ROOT/.stack/deno"
node_modules/.bin/deno run --quiet --config deno.json --allow-read=. --allow-write=test/support/api-types.ts --allow-env \
  scripts/api-types.ts
