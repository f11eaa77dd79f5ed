#!/usr/bin/env bash
# npm run fuzz, and a step of npm test: Schemathesis, pinned (test/fuzz/requirements.txt),
# over every operation of the OpenAPI document the running stack serves, in three runs:
#   member       signed in as an admin of a tenant of its own (test/fuzz/setup.ts), with
#                its x-tenant-id: every route but /v1/external and sign-out (which would
#                end the session the run stands on)
#   integration  /v1/external with that tenant's property API key
#   anonymous    every route with no credentials at all
# Each run executes every check Schemathesis has (test/fuzz/schemathesis.toml) in all its
# phases, stateful included (the document links each create to its reads and writes).
# FUZZ_EXAMPLES (default 40) bounds the cases per operation; the seed is random and
# printed, so a failure can be replayed with FUZZ_SEED=<seed>. Prints one line per run and
# ends with "N passed, N failed" (runs).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
. scripts/ports.sh
export PMS_PORT_BASE NO_COLOR=1 DENO_DIR="$ROOT/.stack/deno"
examples=${FUZZ_EXAMPLES:-40}
seed=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}

if ! venv=$(bash scripts/python-venv.sh schemathesis test/fuzz/requirements.txt); then
  echo "could not install Schemathesis"
  echo "0 passed, 1 failed"
  exit 1
fi

reports=.stack/fuzz
rm -rf "$reports" && mkdir -p "$reports"
if ! setup=$(node_modules/.bin/deno run --quiet --config deno.json --allow-net=127.0.0.1 --allow-env --allow-read \
  --allow-write="$reports" test/fuzz/setup.ts "$reports/dictionaries"); then
  echo "the fuzzer's tenant could not be set up (is the stack up? bash scripts/stack.sh up)"
  echo "0 passed, 1 failed"
  exit 1
fi
eval "$setup"
base="$API_URL/functions/v1/api"

passed=0
failed=0

# fuzz NAME [schemathesis options...]
fuzz() {
  local name=$1
  shift
  local log="$reports/$name.log" started=$SECONDS status
  "$venv/bin/schemathesis" --config-file test/fuzz/schemathesis.toml run "$base/v1/openapi.json" --url "$base" \
    --checks all --max-examples "$examples" --seed "$seed" --workers 2 --no-color \
    --request-timeout 30 --generation-database "$ROOT/.stack/fuzz-examples" --report junit --report-junit-path "$reports/$name.xml" "$@" >"$log" 2>&1
  status=$?
  local cases
  cases=$(sed -nE 's/^ *([0-9]+) generated.*/\1/p' "$log" | tail -n 1)
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    echo "fuzz $name: ok, ${cases:-?} cases in $((SECONDS - started)) s (seed $seed)"
  else
    failed=$((failed + 1))
    echo "fuzz $name: FAILED, ${cases:-?} cases in $((SECONDS - started)) s (seed $seed; FUZZ_SEED=$seed npm run fuzz replays it)"
    sed -n '/= FAILURES =\|= ERRORS =/,$p' "$log"
  fi
}

echo "== fuzzer (Schemathesis over /v1/openapi.json, $examples cases per operation at most)"
fuzz member -H "Authorization: Bearer $FUZZ_TOKEN" -H "x-tenant-id: $FUZZ_TENANT_ID" \
  --exclude-path-regex '^/v1/external/' --exclude-operation-id signOut
# Both ways of sending the key, so whichever security scheme the fuzzer picks carries it.
fuzz integration -H "Authorization: Bearer $FUZZ_API_KEY" -H "X-Api-Key: $FUZZ_API_KEY" --include-path-regex '^/v1/external/'
fuzz anonymous
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
