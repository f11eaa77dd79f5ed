# The stack's ports, from one setting, so a second stack (another work tree, a CI
# clone beside a developer's stack) runs beside the first. Sourced by stack.sh,
# test.sh, db-types.sh and bench.sh.
#   PMS_PORT_BASE   the base; unset: the base the stack in this tree last came up
#                   with (kept in .stack/stack.env), else 54320, Supabase's own ports.
# The ports sit where `supabase start` puts them relative to its base: API +1, DB +2,
# mail +4, Auth +5, SMS +6, the push service double +7, the webhook receiver double +8,
# the connection pooler +9, the functions from +10 on, the webhook receiver double's https
# port +16; the benchmark's own function instances take +18, +19 and +20 while it runs.
# +3, Supabase Studio's, serves the front-desk example (examples/front-desk), a browser
# app on an origin of its own.
ports_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -z "${PMS_PORT_BASE:-}" ] && [ -f "$ports_root/.stack/stack.env" ]; then
  PMS_PORT_BASE=$(sed -nE "s/^PMS_PORT_BASE='?([0-9]+)'?$/\1/p" "$ports_root/.stack/stack.env")
fi
PMS_PORT_BASE=${PMS_PORT_BASE:-54320}
case "$PMS_PORT_BASE" in
  *[!0-9]* | "") echo "PMS_PORT_BASE must be a number, not '$PMS_PORT_BASE'" >&2; exit 2 ;;
esac
if [ "$PMS_PORT_BASE" -lt 1024 ] || [ "$PMS_PORT_BASE" -gt 65400 ]; then
  echo "PMS_PORT_BASE must be between 1024 and 65400, not $PMS_PORT_BASE" >&2; exit 2
fi
API_PORT=$((PMS_PORT_BASE + 1))
DB_PORT=$((PMS_PORT_BASE + 2))
FRONT_DESK_PORT=$((PMS_PORT_BASE + 3))
MAIL_PORT=$((PMS_PORT_BASE + 4))
AUTH_PORT=$((PMS_PORT_BASE + 5))
SMS_PORT=$((PMS_PORT_BASE + 6))
PUSH_PORT=$((PMS_PORT_BASE + 7))
WEBHOOK_RECEIVER_PORT=$((PMS_PORT_BASE + 8))
POOLER_PORT=$((PMS_PORT_BASE + 9))
FUNCTIONS_FIRST_PORT=$((PMS_PORT_BASE + 10))
WEBHOOK_RECEIVER_TLS_PORT=$((PMS_PORT_BASE + 16))
BENCH_FIRST_PORT=$((PMS_PORT_BASE + 18))
DB_URL="postgresql://postgres:postgres@127.0.0.1:$DB_PORT/postgres"
# PgBouncer in transaction mode in front of the same database: what the functions use.
POOLER_URL="postgresql://postgres:postgres@127.0.0.1:$POOLER_PORT/postgres"
API_URL="http://127.0.0.1:$API_PORT"
AUTH_URL="http://127.0.0.1:$AUTH_PORT"
MAIL_URL="http://127.0.0.1:$MAIL_PORT"
SMS_URL="http://127.0.0.1:$SMS_PORT"
PUSH_URL="http://127.0.0.1:$PUSH_PORT"
WEBHOOK_RECEIVER_URL="http://127.0.0.1:$WEBHOOK_RECEIVER_PORT"
# Its certificate, issued by the stack's own CA (.stack/tls), names localhost.
WEBHOOK_RECEIVER_HTTPS_URL="https://localhost:$WEBHOOK_RECEIVER_TLS_PORT"
FRONT_DESK_URL="http://127.0.0.1:$FRONT_DESK_PORT"
unset ports_root
