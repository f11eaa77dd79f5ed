#!/usr/bin/env bash
# Puts the API reference page's renderer where the api function serves it from: Scalar's
# browser bundle, from the pinned @scalar/api-reference package in node_modules, as
# supabase/functions/api/static/api-reference.js. That folder is the function's static
# files (supabase/config.toml), so `supabase functions deploy` uploads it with the code;
# the file is made, not kept in git. Run by `npm install` (postinstall) and by scripts/stack.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source="$ROOT/node_modules/@scalar/api-reference/dist/browser/standalone.js"
target="$ROOT/supabase/functions/api/static/api-reference.js"
[ -f "$source" ] || { echo "reference-renderer.sh: $source is missing: run npm install" >&2; exit 1; }
mkdir -p "$(dirname "$target")"
cmp -s "$source" "$target" 2>/dev/null || cp "$source" "$target"
