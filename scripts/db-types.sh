#!/usr/bin/env bash
# The TypeScript types of the local database's public schema, exactly as committed in
# src/db/database.types.ts. Prints them; with --write, replaces that file instead.
# `npm run db:types` writes them and test/db/types.test.ts compares against the printed
# ones, so the file and its check can never disagree about how the types are made.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# The local database's port (PMS_PORT_BASE).
. scripts/ports.sh
export NO_COLOR=1 DENO_DIR="$ROOT/.stack/deno"

out=src/db/database.types.ts

# Only public: it is all the app queries as tables; private holds functions, pgmq its own API.
# --db-url is the spelling the project documents (v3 also takes --remote). The progress lines go to
# stderr; the types it prints are unformatted, so the pinned deno fmt makes them stable and
# readable in a diff. sslmode=disable: the local cluster has no TLS, and on a port other than
# 54322 the CLI would otherwise print a warning about it into the types.
generate() {
  node_modules/.bin/supabase gen types typescript \
    --db-url "$DB_URL?sslmode=disable" --schema public --agent no \
    | node_modules/.bin/deno fmt --ext ts -
}

case "${1:-}" in
  "")
    generate
    ;;
  --write)
    # A failed run must leave the committed file as it was, not truncated.
    tmp=$(mktemp "$out.XXXXXX")
    trap 'rm -f "$tmp"' EXIT
    generate >"$tmp"
    chmod 644 "$tmp"
    mv "$tmp" "$out"
    echo "wrote $out" >&2
    ;;
  *)
    echo "usage: $0 [--write]" >&2
    exit 2
    ;;
esac
