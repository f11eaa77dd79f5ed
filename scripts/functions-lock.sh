#!/usr/bin/env bash
# npm run functions:lock: writes supabase/functions/deno.lock again with the Deno the
# functions run under (the Edge Runtime's line, 2.1.4), so that it is the lockfile version
# that runtime reads (4) and pins every package supabase/functions/deno.json imports. Run
# it after changing the functions' imports; it needs the registry.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/stack.sh
. "$ROOT/scripts/stack.sh"
[ -x "$EDGE_DENO" ] || die "no Deno for the functions at $EDGE_DENO: run npm install"
entrypoints=()
for name in $(function_names); do entrypoints+=("$ROOT/supabase/functions/$name/index.ts"); done
rm -f "$ROOT/supabase/functions/deno.lock"
mkdir -p "$EDGE_DENO_DIR"
DENO_DIR="$EDGE_DENO_DIR" DENO_TLS_CA_STORE=system,mozilla NO_COLOR=1 \
  "$EDGE_DENO" cache --quiet --frozen=false --config "$FUNCTIONS_CONFIG" "${entrypoints[@]}"
echo "supabase/functions/deno.lock: version $(sed -nE 's/^  "version": "([0-9]+)",?$/\1/p' "$ROOT/supabase/functions/deno.lock")"
