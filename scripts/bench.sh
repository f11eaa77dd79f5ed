#!/usr/bin/env bash
# npm run bench: the benchmarks against the local stack (bench/run.ts). Brings
# the stack up if needed (PMS_PORT_BASE picks its ports, as for npm test), installs
# wrk from Debian's packages when missing, pauses the notifications schedule while it
# runs, and passes its arguments on (--seconds N: how long each load point runs).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
. scripts/ports.sh
# The first of the ports the benchmark's own function instances take (bench/instances.ts).
export PMS_PORT_BASE BENCH_FIRST_PORT
export NO_COLOR=1 DENO_DIR="$ROOT/.stack/deno"

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "the benchmarks need Debian's wrk: run npm run bench once as root, or: sudo apt-get install -y wrk" >&2
    exit 1
  fi
  echo "installing wrk (for the benchmarks)" >&2
  { apt-get install -y -qq wrk >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }; } ||
    { echo "could not install Debian's wrk" >&2; exit 1; }
fi

# The stack's own output goes to its log, but for the keys and the JWT secret it prints for
# a user (.stack/stack.env holds them; no log may); a failure prints its tail.
mkdir -p .stack/logs
if ! bash scripts/stack.sh up 2>&1 | { grep -vE '^ *(JWT secret|anon key|service_role key): ' || true; } \
  >.stack/logs/bench-stack.log; then
  tail -n 30 .stack/logs/bench-stack.log >&2
  echo "the local stack did not come up" >&2
  exit 1
fi
# pgbench comes with Debian's postgresql-15, which the stack installs.
[ -x /usr/lib/postgresql/15/bin/pgbench ] || { echo "pgbench is missing from /usr/lib/postgresql/15/bin" >&2; exit 1; }

# The schedule would drain the queue behind the pipeline's back; it resumes
# afterwards only if it was running before.
if [ -f .stack/run/scheduler.off ]; then
  resume=off
else
  resume=on
fi
bash scripts/stack.sh scheduler off >/dev/null 2>&1
trap 'bash scripts/stack.sh scheduler "$resume" >/dev/null 2>&1' EXIT

node_modules/.bin/deno run --config deno.json --allow-net=127.0.0.1 --allow-read --allow-write=bench/results,.stack/bench,docs/benchmarks.md \
  --allow-env --allow-run --allow-sys bench/run.ts "$@"
