#!/usr/bin/env bash
# npm test: brings the local stack up if it is not running, then the type check,
# the pgTAP suites (pg_prove), the Deno tests and the fuzzer (scripts/fuzz.sh); ends
# with "N passed, N failed".
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# The stack's ports (PMS_PORT_BASE); exported so the stack and the tests agree.
. scripts/ports.sh
export PMS_PORT_BASE
export NO_COLOR=1 DENO_DIR="$ROOT/.stack/deno"

# Debian packages only the tests use: chromium renders the API reference page
# (test/docs), jq runs the documents' curl blocks as written, openssl makes the
# self-signed certificate a webhook is posted over TLS to (test/webhook-delivery).
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v jq >/dev/null || missing+=(jq)
command -v openssl >/dev/null || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "the tests need Debian's ${missing[*]}: run npm test once as root, or: sudo apt-get install -y ${missing[*]}"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "installing ${missing[*]} (for the tests)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; } ||
    ! command -v chromium >/dev/null || ! command -v jq >/dev/null || ! command -v openssl >/dev/null; then
    echo "could not install Debian's ${missing[*]}"
    echo "0 passed, 1 failed"
    exit 1
  fi
fi

if ! bash scripts/stack.sh up; then
  echo "the local stack did not come up"
  echo "0 passed, 1 failed"
  exit 1
fi

# The tests run the notifications worker themselves, at the moments they choose;
# the stack's own schedule resumes when they end.
bash scripts/stack.sh scheduler off
trap 'bash scripts/stack.sh scheduler on >/dev/null 2>&1' EXIT

passed=0
failed=0
tally() { passed=$((passed + $1)); failed=$((failed + $2)); }

echo "== type check"
if bash scripts/typecheck.sh; then echo "type check: ok"; tally 1 0; else echo "type check: FAILED"; tally 0 1; fi

echo "== pgTAP (supabase/tests)"
tap_log=$(mktemp)
# The Auth users the suites borrow, made through Auth's admin API.
(set -a; . .stack/stack.env; SUPABASE_URL=$API_URL SUPABASE_SERVICE_ROLE_KEY=$SERVICE_ROLE_KEY \
  node_modules/.bin/deno run --quiet --config deno.json --allow-net=127.0.0.1 --allow-env test/support/pgtap-users.ts) ||
  echo "the pgTAP user pool could not be made"
PGPASSWORD=postgres pg_prove --verbose --ext .sql -r -h 127.0.0.1 -p "$DB_PORT" -U postgres -d postgres \
  supabase/tests >"$tap_log" 2>&1
tap_status=$?
grep -E '^not ok |^# |\.\. ?(ok|Failed|Dubious)|^Result|^Files=' "$tap_log" || true
tap_passed=$(grep -cE '^ok [0-9]+' "$tap_log")
tap_failed=$(grep -cE '^not ok [0-9]+' "$tap_log")
# A file that dies before its plan is done reports no "not ok", only a bad status.
if [ "$tap_status" -ne 0 ] && [ "$tap_failed" -eq 0 ]; then tap_failed=1; cat "$tap_log"; fi
tally "$tap_passed" "$tap_failed"
rm -f "$tap_log"

echo "== Deno tests (test/)"
deno_log=$(mktemp)
node_modules/.bin/deno test --config deno.json --allow-net --allow-env --allow-read --allow-write --allow-run test/ 2>&1 | tee "$deno_log"
# Deno's last line: "ok | 18 passed (3 steps) | 0 failed (1s)".
deno_summary=$(grep -E '^(ok|FAILED) \| [0-9]+ passed' "$deno_log" | tail -n 1)
if [ -n "$deno_summary" ]; then
  tally "$(sed -E 's/^[A-Z a-z]+\| ([0-9]+) passed.*/\1/' <<<"$deno_summary")" \
        "$(sed -E 's/.*\| ([0-9]+) failed.*/\1/' <<<"$deno_summary")"
else
  tally 0 1
fi
rm -f "$deno_log"

# Last, so the data it leaves in its own tenant is no test's concern: Schemathesis over
# the served OpenAPI document, one count per run (scripts/fuzz.sh).
fuzz_log=$(mktemp)
bash scripts/fuzz.sh 2>&1 | tee "$fuzz_log"
fuzz_summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$fuzz_log" | tail -n 1)
if [ -n "$fuzz_summary" ]; then
  tally "$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$fuzz_summary")" "$(sed -E 's/.*, ([0-9]+) failed/\1/' <<<"$fuzz_summary")"
else
  tally 0 1
fi
rm -f "$fuzz_log"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
