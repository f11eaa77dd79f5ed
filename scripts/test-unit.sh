#!/usr/bin/env bash
# npm run test:unit: the Deno tests that need no stack (test/**/*.unit.test.ts), in
# seconds, with nothing started. They may read the checkout and the environment, but
# not the stack's settings (.stack/stack.env, .stack/auth.env), nor reach the network,
# nor run programs: a unit test that reaches for the stack fails at once instead of
# passing on a machine where one happens to run. Ends with "N passed, N failed".
# npm test runs these too, with everything else.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export NO_COLOR=1 DENO_DIR="$ROOT/.stack/deno"

mapfile -t files < <(find test -name '*.unit.test.ts' | sort)
if [ ${#files[@]} -eq 0 ]; then
  echo "no unit tests found under test/"
  echo "0 passed, 1 failed"
  exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
node_modules/.bin/deno test --config deno.json --allow-read=. --deny-read=.stack/stack.env,.stack/auth.env --allow-env "${files[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# Deno's last line: "ok | 18 passed (3 steps) | 0 failed (1s)".
summary=$(grep -E '^(ok|FAILED) \| [0-9]+ passed' "$log" | tail -n 1)
if [ -n "$summary" ]; then
  passed=$(sed -E 's/^[A-Z a-z]+\| ([0-9]+) passed.*/\1/' <<<"$summary")
  failed=$(sed -E 's/.*\| ([0-9]+) failed.*/\1/' <<<"$summary")
else
  passed=0 failed=1
fi
# A run that failed before any test (a type error) still counts as a failure.
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
