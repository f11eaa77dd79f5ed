#!/usr/bin/env bash
# The local Supabase-shaped stack without Docker: Postgres 15 (pg_cron, pgTAP, pgmq
# from the pgmq crate), PgBouncer in transaction mode in front of it (the functions'
# way to the database, as Supavisor's port 6543 is on a hosted project), the local double
# of Supabase Auth's HTTP API, the Edge Functions under Deno behind an nginx gateway
# on :54321, the SendGrid, SMS and Web Push doubles, the webhook receiver double (a
# tenant's endpoint for outbound webhooks), and the front-desk example (examples/front-desk),
# built and served on an origin of its own. The ports follow PMS_PORT_BASE
# (scripts/ports.sh); unset, they are the ones above.
#   stack.sh up       bring everything up (idempotent)
#   stack.sh stop     stop every process of the stack
#   stack.sh reset    stop, drop all state, bring up an empty migrated seeded stack
#   stack.sh status   print the status block
#   stack.sh clean    stop, then remove everything the stack made for this checkout, the
#                     front-desk example's build too
#   stack.sh db stop|start   only the Postgres cluster (the fault tests restart it)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE="$ROOT/.stack"
LOGS="$STATE/logs"
RUN="$STATE/run"
ENV_FILE="$STATE/stack.env"
PG_MAJOR=15
PGBIN="/usr/lib/postgresql/$PG_MAJOR/bin"
NGINX=/usr/sbin/nginx
PGBOUNCER=/usr/sbin/pgbouncer
# shellcheck source=scripts/ports.sh
. "$ROOT/scripts/ports.sh"
# The SMS capture server's account (Twilio-shaped: an AC SID and an auth token) and
# the one number it lets that account send from.
SMS_ACCOUNT_SID=AC00000000000000000000000000000001
SMS_AUTH_TOKEN=local-capture-token
SMS_FROM_NUMBER=+15005550006
# What the functions send mail with (the capture server takes any key) and the
# worker's backoff: base * 2^(attempt - 1) seconds, capped.
SENDGRID_API_KEY=SG.local-capture
NOTIFICATIONS_FROM_EMAIL=stays@pms.test
NOTIFICATIONS_FROM_NAME="PMS local"
NOTIFICATIONS_RETRY_BASE_SECONDS=1
NOTIFICATIONS_RETRY_MAX_SECONDS=30
# How long a send whose provider's answer was lost waits for the provider's report before it
# goes again (15 minutes when deployed), and how often it is looked at meanwhile: short here,
# where the doubles report within a second and the tests wait for the outcome, but longer
# than a claim's sends may take to start and be answered (src/notifications/worker.ts).
NOTIFICATIONS_UNCONFIRMED_WAIT_SECONDS=60
NOTIFICATIONS_UNCONFIRMED_RECHECK_SECONDS=2
# The push channel's contact for the push services (the VAPID JWT's sub, RFC 8292): a
# mailto: or https: URL. Its key pair is made once per stack, with the other keys.
VAPID_SUBJECT=mailto:push@pms.test
# Push subscriptions may point at loopback http: the local push double. Never set where real
# users subscribe (src/notifications/push.ts, src/push/settings.ts).
PUSH_ALLOW_LOOPBACK_HTTP=true
# Webhook subscriptions may name loopback http: the local webhook receiver. Never set where
# tenants save URLs (src/webhook-delivery/endpoint.ts).
WEBHOOKS_ALLOW_LOOPBACK_HTTP=true
# The browser origins the api function answers cross-origin (comma-separated; src/http/cors.ts):
# the front-desk example's, unless the environment names others (an app of your own on its dev server).
CORS_ALLOWED_ORIGINS=${CORS_ALLOWED_ORIGINS:-$FRONT_DESK_URL}
WORKER_EVERY_SECONDS=10
DENO="$ROOT/node_modules/.bin/deno"
# The functions' npm dependencies; a DENO_DIR already set (npm test's) is shared.
export DENO_DIR="${DENO_DIR:-$STATE/deno}"
# The Deno release line Supabase's Edge Runtime implements, which the functions run under
# (local/edge-runtime): npm's build of Deno 2.1.4 for this machine, with a cache of its own
# (two Deno releases do not share one), and the functions' own configuration and lockfile.
case "$(uname -m)" in
  aarch64 | arm64) EDGE_DENO="$ROOT/node_modules/deno-edge-runtime-linux-arm64/deno" ;;
  *) EDGE_DENO="$ROOT/node_modules/deno-edge-runtime-linux-x64/deno" ;;
esac
EDGE_DENO_DIR="$STATE/deno-edge"
FUNCTIONS_CONFIG="$ROOT/supabase/functions/deno.json"
SUPABASE_CLI="$ROOT/node_modules/.bin/supabase"

say() { printf '[stack] %s\n' "$*" >&2; }
die() { printf '[stack] error: %s\n' "$*" >&2; exit 1; }
is_root() { [ "$(id -u)" -eq 0 ]; }

# Postgres refuses to run as root, so as root the cluster belongs to the postgres user,
# who runs from / because the checkout may be closed to it.
as_pg() { if is_root; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }

# The cluster's files live in .stack, unless the cluster's user cannot reach it (a
# checkout inside a folder closed to others, as root): then in /var/lib, one folder
# per checkout.
cluster_home() {
  mkdir -p "$STATE"
  if is_root && ! runuser -u postgres -- test -x "$STATE" 2>/dev/null; then
    echo "/var/lib/pms-stack/$(printf '%s' "$ROOT" | sha1sum | cut -c1-12)"
  else
    echo "$STATE"
  fi
}
PG_HOME=$(cluster_home)
PGDATA_DIR="$PG_HOME/pgdata"

psql_admin() { PGPASSWORD=postgres PGOPTIONS='-c client_min_messages=warning' "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$DB_PORT" -U postgres -d postgres "$@"; }

pid_alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }

wait_for_http() { # name url seconds
  local deadline=$((SECONDS + $3))
  until curl -fsS -o /dev/null "$2" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || { tail -n 30 "$LOGS/$1.log" >&2 || true; die "$1 did not answer on $2 (log: $LOGS/$1.log)"; }
    sleep 0.2
  done
}

# A function is up once it answers anything itself, rather than the gateway's 502.
wait_for_function() { # name seconds
  local deadline=$((SECONDS + $2)) code
  for (( ; ; )); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$API_URL/functions/v1/$1/" 2>/dev/null || true)
    [ "$code" != "000" ] && [ "$code" != "502" ] && return
    [ $SECONDS -lt $deadline ] || { tail -n 30 "$LOGS/fn-$1.log" >&2 || true; die "function $1 did not start (log: $LOGS/fn-$1.log)"; }
    sleep 0.2
  done
}

start_process() { # name env-assignments... -- command...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  setsid env "${envs[@]}" "$@" >"$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$RUN/$name.pid"
}

stop_process() {
  if pid_alive "$1"; then
    local pid; pid=$(cat "$RUN/$1.pid")
    kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 -- -"$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$1.pid"
}

ensure_system_packages() {
  local missing=()
  [ -x "$PGBIN/postgres" ] || missing+=("postgresql-$PG_MAJOR")
  [ -f "/usr/share/postgresql/$PG_MAJOR/extension/pg_cron.control" ] || missing+=("postgresql-$PG_MAJOR-cron")
  [ -f "/usr/share/postgresql/$PG_MAJOR/extension/pgtap.control" ] || missing+=("postgresql-$PG_MAJOR-pgtap")
  command -v pg_prove >/dev/null || missing+=(libtap-parser-sourcehandler-pgtap-perl)
  command -v curl >/dev/null || missing+=(curl)
  command -v openssl >/dev/null || missing+=(openssl)
  [ -x "$NGINX" ] || missing+=(nginx)
  [ -x "$PGBOUNCER" ] || missing+=(pgbouncer)
  [ ${#missing[@]} -eq 0 ] && return
  is_root || die "missing Debian packages: ${missing[*]}. Run as root, or: sudo apt-get install -y ${missing[*]}"
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_node_tools() {
  if ! [ -x "$DENO" ] || ! [ -x "$SUPABASE_CLI" ] || ! [ -f "$ROOT/node_modules/@scalar/api-reference/package.json" ]; then
    say "installing npm dependencies"
    (cd "$ROOT" && npm install --no-fund --no-audit >/dev/null)
  fi
  # The reference page's renderer, beside the api function (npm's postinstall does it too).
  bash "$ROOT/scripts/reference-renderer.sh"
}

# pgmq, the queue extension hosted Supabase ships, comes from the pgmq crate, which
# carries the extension's own files: local/pgmq-crate/Cargo.toml pins the crate, the
# archive's sha256 and the pgmq version inside. Cargo puts the archive in its cache
# (`cargo info` takes that one crate; `cargo fetch` on the manifest would take its
# 190 dependencies too, some 250 MB unpacked, and stays as the fallback for a cargo
# without `info`); the archive must have the pinned sha256, its pgmq.control the
# pinned default_version. pgmq.control and the embedded pgmq.sql, as
# pgmq--<version>.sql, then go into Postgres's extension folder when they differ.
PGMQ_MANIFEST="$ROOT/local/pgmq-crate/Cargo.toml"
manifest_value() { sed -nE "s/^$1 = \{? *(version = )?\"=?([^\"]+)\".*/\2/p" "$PGMQ_MANIFEST" | head -n 1; }
PGMQ_CRATE_VERSION=$(manifest_value pgmq)
PGMQ_CRATE_SHA256=$(manifest_value pgmq-crate-sha256)
PGMQ_VERSION=$(manifest_value pgmq-version)

cargo_bin() {
  if command -v cargo >/dev/null; then command -v cargo
  elif [ -x "$HOME/.cargo/bin/cargo" ]; then echo "$HOME/.cargo/bin/cargo"
  else return 1; fi
}

# The cached archive with the pinned checksum, if cargo has it.
pgmq_crate_archive() {
  local archive
  for archive in "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"pgmq-$PGMQ_CRATE_VERSION.crate"; do
    [ -f "$archive" ] || continue
    if [ "$(sha256sum "$archive" | cut -d' ' -f1)" = "$PGMQ_CRATE_SHA256" ]; then echo "$archive"; return 0; fi
    say "ignoring $archive: its sha256 is not the pinned $PGMQ_CRATE_SHA256"
  done
  return 1
}

ensure_pgmq_extension() {
  [ -n "$PGMQ_CRATE_VERSION" ] && [ -n "$PGMQ_CRATE_SHA256" ] && [ -n "$PGMQ_VERSION" ] \
    || die "$PGMQ_MANIFEST must give the pgmq crate's version, pgmq-crate-sha256 and pgmq-version"
  local target="/usr/share/postgresql/$PG_MAJOR/extension" archive cargo work embedded
  if ! archive=$(pgmq_crate_archive); then
    cargo=$(cargo_bin) || die "cargo is needed to fetch the pgmq crate $PGMQ_CRATE_VERSION (install Rust's toolchain with rustup)"
    say "fetching the pgmq crate $PGMQ_CRATE_VERSION with cargo"
    # Run outside any Cargo workspace, so that cargo resolves nothing else.
    (cd "$STATE" && "$cargo" info --quiet "pgmq@$PGMQ_CRATE_VERSION" >"$LOGS/pgmq-crate.log" 2>&1) || true
    if ! archive=$(pgmq_crate_archive); then
      say "cargo info left no archive; fetching with cargo fetch (with the crate's dependencies)"
      "$cargo" fetch --quiet --manifest-path "$PGMQ_MANIFEST" >>"$LOGS/pgmq-crate.log" 2>&1 \
        || { cat "$LOGS/pgmq-crate.log" >&2; die "cargo could not fetch the pgmq crate $PGMQ_CRATE_VERSION"; }
      archive=$(pgmq_crate_archive) \
        || die "no pgmq-$PGMQ_CRATE_VERSION.crate with the sha256 $PGMQ_CRATE_SHA256 in cargo's cache after fetching"
    fi
  fi
  work=$(mktemp -d)
  embedded="pgmq-$PGMQ_CRATE_VERSION/src/install/embedded"
  tar -xzf "$archive" -C "$work" "$embedded/pgmq.control" "$embedded/sql/pgmq.sql" \
    || { rm -rf "$work"; die "$archive holds no $embedded/pgmq.control and sql/pgmq.sql"; }
  local control="$work/$embedded/pgmq.control" script="$work/$embedded/sql/pgmq.sql" found
  found=$(sed -nE "s/^default_version *= *'([^']+)'.*/\1/p" "$control")
  [ "$found" = "$PGMQ_VERSION" ] \
    || { rm -rf "$work"; die "the pgmq crate $PGMQ_CRATE_VERSION embeds pgmq $found, not the pinned $PGMQ_VERSION"; }
  # The stack installs SQL only: a pgmq that needed its C library would not load.
  ! grep -q MODULE_PATHNAME "$script" \
    || { rm -rf "$work"; die "pgmq $PGMQ_VERSION's script loads a C library, which the stack does not build"; }
  local file name
  for file in "$control:pgmq.control" "$script:pgmq--$PGMQ_VERSION.sql"; do
    name=${file##*:}; file=${file%:*}
    if ! cmp -s "$file" "$target/$name"; then
      is_root || { rm -rf "$work"; die "pgmq $PGMQ_VERSION must be installed into $target: run once as root"; }
      say "installing pgmq $PGMQ_VERSION's $name (from the pgmq crate $PGMQ_CRATE_VERSION)"
      install -m 0644 "$file" "$target/$name"
    fi
  done
  rm -rf "$work"
}

# A cluster keeps the pgmq it was created with: one made with another version is
# reset before its tests mean anything.
check_pgmq_version() {
  local installed
  installed=$(psql_admin -At -c "select extversion from pg_extension where extname = 'pgmq'")
  [ -z "$installed" ] || [ "$installed" = "$PGMQ_VERSION" ] \
    || die "this cluster has pgmq $installed, the stack pins $PGMQ_VERSION: run stack.sh reset (it drops the cluster's data)"
}

socket_dir() {
  if is_root; then echo /var/run/postgresql; else echo "$STATE/socket"; fi
}

# A new cluster in <data>, listening on 127.0.0.1:<port> and in <socket dir>, with the
# stack's settings; pg_cron runs in the database cron.database_name names. The schema
# comparison (scripts/schema-compare.sh) makes its throwaway clusters with this too.
init_cluster() { # data port socket-dir initdb-log
  local data=$1 port=$2 sock=$3 pwfile
  mkdir -p "$data"; chmod 700 "$data"
  is_root && chown postgres: "$data"
  pwfile=$(mktemp); echo postgres > "$pwfile"; chmod 644 "$pwfile"
  as_pg "$PGBIN/initdb" -D "$data" -U postgres --pwfile="$pwfile" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$4"
  rm -f "$pwfile"
  cat >> "$data/postgresql.conf" <<EOF
# pms local stack
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$sock'
shared_preload_libraries = 'pg_cron, pg_stat_statements'
cron.database_name = 'postgres'
max_connections = 300
shared_buffers = 512MB
fsync = on
log_min_messages = warning
# What a stall in a benchmark's tail would be: checkpoints are logged by default; lock
# waits past deadlock_timeout (1 s) and autovacuum runs over a second are not.
log_lock_waits = on
log_autovacuum_min_duration = 1s
EOF
}

# What a Supabase database has before any migration, into the cluster at DB_PORT.
apply_supabase_baseline() { psql_admin -f "$ROOT/local/postgres/supabase-baseline.sql" >/dev/null; }

# The command line every start of the cluster gets. The port on it wins over the one
# written at initdb, so a cluster follows PMS_PORT_BASE when it changes between runs.
# pg_cron runs a job over a libpq connection of its own, to localhost by default, where
# the cluster asks for a password it does not have: every job failed with "connection
# failed". Over the socket the postgres role is trusted, as Supabase's own database lets
# pg_cron in.
postgres_options() { echo "-p $DB_PORT -c cron.host=$(socket_dir)"; }

ensure_cluster() {
  local data="$PGDATA_DIR" log="$LOGS/postgres.log" sock
  sock=$(socket_dir)
  mkdir -p "$sock"; is_root && chown postgres: "$sock"
  if [ "$PG_HOME" != "$STATE" ]; then
    log="$PG_HOME/postgres.log"
    mkdir -p "$PG_HOME"; chmod 700 "$PG_HOME"; chown postgres: "$PG_HOME"
  fi
  if [ ! -f "$data/PG_VERSION" ]; then
    say "creating the Postgres $PG_MAJOR cluster in $data"
    init_cluster "$data" "$DB_PORT" "$sock" "$LOGS/initdb.log"
  fi
  touch "$log"; is_root && chown postgres: "$log"
  [ "$log" = "$LOGS/postgres.log" ] || ln -sfn "$log" "$LOGS/postgres.log"
  if ! as_pg "$PGBIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    say "starting Postgres on 127.0.0.1:$DB_PORT"
    as_pg "$PGBIN/pg_ctl" -D "$data" -l "$log" -o "$(postgres_options)" -w -t 60 start >/dev/null
  fi
  apply_supabase_baseline
}

# The settings the functions run with besides the keys, written to stack.env too so
# that the tests read the stack's values instead of repeating them.
# The port base and the URLs it gives are there too: the tests and the benchmarks reach
# the stack through them, and scripts/ports.sh takes the base from there when unset.
ENV_SETTINGS=(PMS_PORT_BASE API_URL DB_URL POOLER_PORT POOLER_URL AUTH_URL FUNCTION_PORTS MAIL_URL SMS_URL PUSH_URL WEBHOOK_RECEIVER_URL
  WEBHOOK_RECEIVER_HTTPS_URL LOCAL_CA
  FRONT_DESK_URL CORS_ALLOWED_ORIGINS
  SMS_ACCOUNT_SID SMS_AUTH_TOKEN SMS_FROM_NUMBER SENDGRID_API_KEY NOTIFICATIONS_FROM_EMAIL
  NOTIFICATIONS_FROM_NAME NOTIFICATIONS_RETRY_BASE_SECONDS NOTIFICATIONS_RETRY_MAX_SECONDS
  NOTIFICATIONS_UNCONFIRMED_WAIT_SECONDS NOTIFICATIONS_UNCONFIRMED_RECHECK_SECONDS VAPID_SUBJECT
  PUSH_ALLOW_LOOPBACK_HTTP WEBHOOKS_ALLOW_LOOPBACK_HTTP)

# The stack's keys (local/keys.ts: the legacy HS256 secret, the anon and service_role
# API keys signed with it, and Auth's ES256 signing key; the key pair of the SendGrid
# double's signed Event Webhook; the push channel's VAPID key pair), kept for the stack's
# life, each group made when the file lacks it; the settings after them are rewritten on
# every `up`, so a running stack's file follows this script. Values are single-quoted for `.`.
STACK_KEYS='^(JWT_SECRET|ANON_KEY|SERVICE_ROLE_KEY|AUTH_JWT_KEYS)='
WEBHOOK_KEYS='^(SENDGRID_WEBHOOK_VERIFICATION_KEY|SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY)='
VAPID_KEYS='^(VAPID_PUBLIC_KEY|VAPID_PRIVATE_KEY)='
ensure_keys() {
  local keys webhook_keys vapid_keys
  if [ -f "$ENV_FILE" ] && [ "$(grep -cE "$STACK_KEYS" "$ENV_FILE")" -eq 4 ]; then
    keys=$(grep -E "$STACK_KEYS" "$ENV_FILE")
  else
    say "generating the stack's JWT secret, API keys and Auth's signing key"
    keys=$("$DENO" run --quiet --config "$ROOT/deno.json" "$ROOT/local/keys.ts" jwt)
  fi
  if [ -f "$ENV_FILE" ] && [ "$(grep -cE "$WEBHOOK_KEYS" "$ENV_FILE")" -eq 2 ]; then
    webhook_keys=$(grep -E "$WEBHOOK_KEYS" "$ENV_FILE")
  else
    say "generating the key pair that signs the SendGrid double's event webhook"
    webhook_keys=$("$DENO" run --quiet --config "$ROOT/deno.json" "$ROOT/local/keys.ts" sendgrid-webhook)
  fi
  if [ -f "$ENV_FILE" ] && [ "$(grep -cE "$VAPID_KEYS" "$ENV_FILE")" -eq 2 ]; then
    vapid_keys=$(grep -E "$VAPID_KEYS" "$ENV_FILE")
  else
    say "generating the push channel's VAPID key pair"
    # web-push's encryption module reads ECE_KEYLOG when it loads (local/keys.ts).
    vapid_keys=$("$DENO" run --quiet --config "$ROOT/deno.json" --allow-env=ECE_KEYLOG "$ROOT/local/keys.ts" vapid)
  fi
  local name
  {
    printf '%s\n' "$keys" "$webhook_keys" "$vapid_keys"
    for name in "${ENV_SETTINGS[@]}"; do printf "%s='%s'\n" "$name" "${!name}"; done
  } > "$ENV_FILE.tmp"
  chmod 600 "$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
}

load_keys() { set -a; . "$ENV_FILE"; set +a; }

# The stack's own certificate authority, and the certificate it issued the webhook receiver
# double for the name localhost, so that webhooks go to it over https as they go to a
# tenant's endpoint; the functions trust the CA beside the runtime's roots (DENO_CERT). Made
# once with openssl, and again when the receiver's certificate has less than a month left.
TLS_DIR="$STATE/tls"
LOCAL_CA="$TLS_DIR/ca.pem"
ensure_local_ca() {
  if [ -f "$TLS_DIR/receiver.pem" ] && openssl x509 -checkend 2592000 -noout -in "$TLS_DIR/receiver.pem" >/dev/null 2>&1; then
    return
  fi
  say "making the stack's certificate authority and the webhook receiver's certificate"
  mkdir -p "$TLS_DIR"
  (
    cd "$TLS_DIR"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
      -subj "/CN=PMS local stack CA" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" -keyout ca.key -out ca.pem
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
      -keyout receiver.key -out receiver.csr
    printf '%s\n' "basicConstraints=critical,CA:FALSE" "subjectAltName=DNS:localhost" \
      "extendedKeyUsage=serverAuth" > receiver.ext
    openssl x509 -req -in receiver.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 365 \
      -extfile receiver.ext -out receiver.pem
    rm -f receiver.csr receiver.ext ca.srl
    chmod 600 ca.key receiver.key
  ) >"$LOGS/tls.log" 2>&1 || { cat "$LOGS/tls.log" >&2; die "making the stack's certificates failed (log: $LOGS/tls.log)"; }
}

# Auth's environment, written to .stack/auth.env: Supabase Auth's own variables, with the
# stack's URLs, database and keys, and the settings from supabase/config.toml's [auth]
# section (local/auth/settings.ts). The double reads them as Auth does, so the file would
# configure a real Auth the same way; the tests start Auth processes of their own from it.
# A browser app's supabase-js sends its project key as `apikey`, which a hosted project's
# gateway takes before Auth; Auth's own CORS answers here, so it is told to allow it too.
write_auth_env() {
  local settings
  settings=$("$DENO" run --quiet --config "$ROOT/deno.json" --allow-read="$ROOT/supabase/config.toml" \
    "$ROOT/local/auth/settings.ts" --config "$ROOT/supabase/config.toml") || die "reading supabase/config.toml's [auth] failed"
  {
    printf "%s='%s'\n" \
      GOTRUE_API_HOST 127.0.0.1 \
      PORT "$AUTH_PORT" \
      API_EXTERNAL_URL "$API_URL/auth/v1" \
      GOTRUE_DB_DRIVER postgres \
      GOTRUE_DB_DATABASE_URL "postgresql://supabase_auth_admin:postgres@127.0.0.1:$DB_PORT/postgres" \
      GOTRUE_JWT_SECRET "$JWT_SECRET" \
      GOTRUE_JWT_KEYS "$AUTH_JWT_KEYS" \
      GOTRUE_JWT_ISSUER "$API_URL/auth/v1" \
      GOTRUE_JWT_AUD authenticated \
      GOTRUE_JWT_DEFAULT_GROUP_NAME authenticated \
      GOTRUE_JWT_ADMIN_ROLES service_role \
      GOTRUE_CORS_ALLOWED_HEADERS apikey \
      GOTRUE_LOG_LEVEL info
    printf '%s\n' "$settings"
  } > "$STATE/auth.env.tmp"
  chmod 600 "$STATE/auth.env.tmp"
  if cmp -s "$STATE/auth.env.tmp" "$STATE/auth.env"; then rm -f "$STATE/auth.env.tmp"; else mv "$STATE/auth.env.tmp" "$STATE/auth.env"; fi
}

# The command that runs the Auth double (local/auth/main.ts): Deno, reaching only loopback,
# reading its schema file and its settings from the environment.
AUTH_DOUBLE=("$DENO" run --quiet --config "$ROOT/deno.json" --allow-net=127.0.0.1 --allow-env
  --allow-read="$ROOT/local/auth/schema.sql" "$ROOT/local/auth/main.ts")

# The double restarts when its sources or its settings changed since it started.
ensure_auth() {
  write_auth_env
  local fingerprint
  fingerprint=$(cd "$ROOT" && cat local/auth/*.ts local/auth/schema.sql deno.json "$STATE/auth.env" | sha1sum | cut -c1-40)
  [ "$(cat "$RUN/auth.fingerprint" 2>/dev/null)" = "$fingerprint" ] || stop_process auth
  echo "$fingerprint" > "$RUN/auth.fingerprint"
  pid_alive auth && return
  say "starting the local double of Supabase Auth on 127.0.0.1:$AUTH_PORT"
  local envs=()
  mapfile -t envs < <(set -a; . "$STATE/auth.env"; set +a; sed -nE 's/^([A-Z_]+)=.*/\1/p' "$STATE/auth.env" \
    | while read -r name; do printf '%s=%s\n' "$name" "${!name}"; done)
  start_process auth DENO_DIR="$DENO_DIR" NO_COLOR=1 "${envs[@]}" -- "${AUTH_DOUBLE[@]}"
  wait_for_http auth "$AUTH_URL/health" 120
}

# The demo tenant's people, made through Auth's admin API as any user is (an existing
# one is left as it is); supabase/seed.sql then gives them their places in the tenant.
DEMO_PASSWORD=demo-password-1
DEMO_USERS=(
  "d0000000-0000-4000-8000-000000000001 owner@demo.test Olivia Owner"
  "d0000000-0000-4000-8000-000000000002 staff@demo.test Sam Staff"
)
create_demo_users() {
  local entry id email name status
  for entry in "${DEMO_USERS[@]}"; do
    read -r id email name <<<"$entry"
    status=$(curl -sS -o "$LOGS/demo-user.json" -w '%{http_code}' -X POST "$AUTH_URL/admin/users" \
      -H "authorization: Bearer $SERVICE_ROLE_KEY" -H "apikey: $SERVICE_ROLE_KEY" -H 'content-type: application/json' \
      -d "{\"id\":\"$id\",\"email\":\"$email\",\"password\":\"$DEMO_PASSWORD\",\"email_confirm\":true,\"user_metadata\":{\"full_name\":\"$name\"}}")
    case "$status" in
      200 | 201) ;;
      422) grep -q '"email_exists"' "$LOGS/demo-user.json" || die "Auth refused the demo user $email: $(cat "$LOGS/demo-user.json")" ;;
      *) die "Auth answered $status for the demo user $email: $(cat "$LOGS/demo-user.json")" ;;
    esac
  done
}

# Auth's schema into the database at <db port>, the step the double takes itself when it
# starts, for a database no Auth serves: the schema comparison's.
run_auth_migrations() { # db-port log
  env -i PATH="$PATH" DENO_DIR="$DENO_DIR" NO_COLOR=1 \
    GOTRUE_DB_DATABASE_URL="postgresql://supabase_auth_admin:postgres@127.0.0.1:$1/postgres" \
    GOTRUE_JWT_SECRET=migrations-only-signs-nothing-0000000 GOTRUE_SITE_URL=http://127.0.0.1 \
    "${AUTH_DOUBLE[@]}" migrate >"$2" 2>&1 || { cat "$2" >&2; die "Auth's schema failed on port $1 (log: $2)"; }
}

# The migrations of the project in <dir> (its supabase/migrations), pushed to <db url>.
push_migrations() { # project-dir db-url log
  (cd "$1" && "$SUPABASE_CLI" db push --db-url "$2" --include-all --yes) \
    >"$3" 2>&1 || { cat "$3" >&2; die "migrations failed (log: $3)"; }
}

migrate() {
  say "applying migrations with the Supabase CLI"
  push_migrations "$ROOT" "$DB_URL" "$LOGS/migrations.log"
  if [ ! -f "$STATE/seeded" ]; then
    say "creating the demo users through Auth and loading supabase/seed.sql"
    create_demo_users
    psql_admin -f "$ROOT/supabase/seed.sql" >/dev/null
    touch "$STATE/seeded"
  fi
}

# PgBouncer (Debian's package) in transaction mode between the functions and Postgres,
# standing for the transaction pooler (Supavisor, port 6543) a hosted project's
# functions should use: a server connection is a client's for one transaction only, so
# nothing a session keeps (a setting, a named prepared statement) may outlive one.
# Auth, the migrations, the tests' own connections and the benchmark's SQL go direct.
# It runs as the cluster's user (PgBouncer refuses root), from files that user can read:
# the ini and a userlist holding the postgres role's SCRAM secret as the cluster stores
# it, so clients authenticate with SCRAM and PgBouncer logs in to Postgres with the
# client's proof (no password in the files).
#   postgres      the functions' pool: 60 server connections at most
#   one_server    one server connection for every client: the tests that prove
#                 nothing of one transaction reaches the next use it
#   two_servers   two, handed between many clients: the tests that show the
#                 functions' statements never depend on meeting one server connection
#   two_servers_broken  two more for the control that does (named prepared
#                 statements), whose statements that never get an answer hold
#                 their server connections until its clients close
# The admin console (database `pgbouncer`, user postgres) answers SHOW POOLS, CLIENTS
# and SERVERS; a backend that came through PgBouncer is one whose pid SHOW SERVERS lists
# (remote_pid). PgBouncer gives a server connection the application_name of the client
# it serves with a SET whenever the two differ, a statement and a round trip to Postgres
# before that client's transaction. Every connection of a function's pool carries the
# same name, so the SET comes only when a server connection goes from one function to
# another; with application_name_add_host, which appends each client's address, it came
# before nearly every transaction (docs/benchmarks.md says what that cost).
# Supavisor's transaction mode sends none: its server connections keep its own name.
pooler_dir() { if [ "$PG_HOME" = "$STATE" ]; then echo "$RUN"; else echo "$PG_HOME/run"; fi; }

# Writes the ini and the userlist into <dir>; succeeds when either changed.
write_pooler_config() { # dir
  local dir=$1 secret
  secret=$(psql_admin -At -c "select rolpassword from pg_authid where rolname = 'postgres'")
  case "$secret" in SCRAM-SHA-256\$*) ;; *) die "the postgres role has no SCRAM secret for PgBouncer" ;; esac
  printf '"postgres" "%s"\n' "$secret" > "$dir/pgbouncer-users.txt.tmp"
  cat > "$dir/pgbouncer.ini.tmp" <<INI
; Written by scripts/stack.sh; edits here are lost.
[databases]
postgres = host=127.0.0.1 port=$DB_PORT dbname=postgres
one_server = host=127.0.0.1 port=$DB_PORT dbname=postgres pool_size=1
two_servers = host=127.0.0.1 port=$DB_PORT dbname=postgres pool_size=2
two_servers_broken = host=127.0.0.1 port=$DB_PORT dbname=postgres pool_size=2

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $POOLER_PORT
unix_socket_dir =
pool_mode = transaction
auth_type = scram-sha-256
auth_file = $dir/pgbouncer-users.txt
admin_users = postgres
max_client_conn = 500
default_pool_size = 60
; After a failed login to Postgres (a restart), try again after 1 s, not the default
; 15 s during which every client is refused: the functions recover within seconds of
; Postgres being back (test/db/connection-loss.test.ts).
server_login_retry = 1
log_connections = 0
log_disconnections = 0
INI
  local file changed=1
  for file in pgbouncer.ini pgbouncer-users.txt; do
    is_root && chown postgres: "$dir/$file.tmp"
    chmod 600 "$dir/$file.tmp"
    if cmp -s "$dir/$file.tmp" "$dir/$file"; then
      rm -f "$dir/$file.tmp"
    else
      mv "$dir/$file.tmp" "$dir/$file"; changed=0
    fi
  done
  return $changed
}

pooler_answers() {
  PGPASSWORD=postgres PGCONNECT_TIMEOUT=2 "$PGBIN/psql" -X -q -At -h 127.0.0.1 -p "$POOLER_PORT" -U postgres \
    -d postgres -c 'select 1' >/dev/null 2>&1
}

ensure_pooler() {
  local dir; dir=$(pooler_dir)
  mkdir -p "$dir"; is_root && chown postgres: "$dir"
  # A new configuration (another port base, another cluster) restarts it.
  if write_pooler_config "$dir"; then stop_process pgbouncer; fi
  if ! pid_alive pgbouncer; then
    say "starting PgBouncer (transaction mode) on 127.0.0.1:$POOLER_PORT"
    if is_root; then
      start_process pgbouncer -- runuser -u postgres -- "$PGBOUNCER" "$dir/pgbouncer.ini"
    else
      start_process pgbouncer -- "$PGBOUNCER" "$dir/pgbouncer.ini"
    fi
  fi
  local deadline=$((SECONDS + 30))
  until pooler_answers; do
    [ $SECONDS -lt $deadline ] || { tail -n 30 "$LOGS/pgbouncer.log" >&2 || true; die "PgBouncer did not answer on $POOLER_PORT (log: $LOGS/pgbouncer.log)"; }
    sleep 0.2
  done
}

# The functions' npm packages, as their lockfile pins them, into the Edge Runtime Deno's cache,
# so that a worker starts without the network (as a deployed bundle carries its packages).
# Downloads trust the system's certificate store too, as Deno 2.1 does not by default.
cache_function_dependencies() {
  [ -x "$EDGE_DENO" ] || die "no Deno for the functions at $EDGE_DENO: run npm install (its optional dependency for this machine)"
  local stamp="$EDGE_DENO_DIR/.pms-cached" fingerprint
  fingerprint=$(cat "$FUNCTIONS_CONFIG" "$ROOT/supabase/functions/deno.lock" | sha1sum | cut -c1-40)
  [ "$(cat "$stamp" 2>/dev/null)" = "$fingerprint" ] && return
  say "caching the functions' packages for Deno $("$EDGE_DENO" --version | head -n 1 | cut -d' ' -f2)"
  mkdir -p "$EDGE_DENO_DIR"
  local entrypoints=()
  for name in $(function_names); do entrypoints+=("$ROOT/supabase/functions/$name/index.ts"); done
  DENO_DIR="$EDGE_DENO_DIR" DENO_TLS_CA_STORE=system,mozilla NO_COLOR=1 \
    "$EDGE_DENO" cache --quiet --config "$FUNCTIONS_CONFIG" "${entrypoints[@]}" >"$LOGS/functions-cache.log" 2>&1 \
    || { cat "$LOGS/functions-cache.log" >&2; die "caching the functions' packages failed (log: $LOGS/functions-cache.log)"; }
  echo "$fingerprint" > "$stamp"
}

# Each function's port, name=port,name=port: the gateway's routes, and where a function's local
# Edge Runtime answers for itself (/_edge-runtime/, which the gateway never reaches).
function_ports() {
  local name port=$FUNCTIONS_FIRST_PORT routes=""
  for name in $(function_names); do
    routes="$routes${routes:+,}$name=$port"
    port=$((port + 1))
  done
  echo "$routes"
}

function_names() {
  local dir
  for dir in "$ROOT"/supabase/functions/*/; do
    dir=${dir%/}; dir=${dir##*/}
    [ "${dir#_}" = "$dir" ] && [ -f "$ROOT/supabase/functions/$dir/index.ts" ] && echo "$dir"
  done
}

source_fingerprint() {
  (cd "$ROOT" && find src supabase/functions local deno.json -type f -print0 | sort -z | xargs -0 sha1sum) | sha1sum | cut -c1-40
  sha1sum "$EDGE_DENO" 2>/dev/null | cut -c1-40
  # The receiver serves the stack's certificate, which the functions trust: new ones restart both.
  cat "$TLS_DIR/ca.pem" "$TLS_DIR/receiver.pem" 2>/dev/null | sha1sum | cut -c1-40
}

# What every function runs with, as a hosted project's functions do: the platform's
# variables (SUPABASE_DB_URL is the direct connection there as here) and the project's
# secrets. DATABASE_URL is the secret that sends the functions through the transaction
# pooler instead, as a hosted project's should (docs/deploy.md); DATABASE_POOL_MODE
# names the pooler's mode, which the local port does not tell (src/db/connection.ts).
# PUSH_ALLOW_LOOPBACK_HTTP lets push subscriptions point at the local push double, on
# loopback http, and WEBHOOKS_ALLOW_LOOPBACK_HTTP webhook subscriptions at the local
# receiver; a hosted project sets neither (src/notifications/push.ts, src/webhook-delivery/endpoint.ts).
# CORS_ALLOWED_ORIGINS names the browser origins the api function grants (src/http/cors.ts):
# here the front-desk example's. DENO_CERT adds the stack's CA to the roots the functions
# trust, for the receiver double's https (a hosted project's endpoints have public ones).
function_env() {
  FUNCTION_ENV=(
    SUPABASE_URL="$API_URL" SUPABASE_DB_URL="$DB_URL"
    DATABASE_URL="$POOLER_URL" DATABASE_POOL_MODE=transaction
    SUPABASE_ANON_KEY="$ANON_KEY" SUPABASE_SERVICE_ROLE_KEY="$SERVICE_ROLE_KEY"
    AUTH_URL="$AUTH_URL"
    SENDGRID_API_URL="$MAIL_URL" SENDGRID_API_KEY="$SENDGRID_API_KEY"
    NOTIFICATIONS_FROM_EMAIL="$NOTIFICATIONS_FROM_EMAIL" NOTIFICATIONS_FROM_NAME="$NOTIFICATIONS_FROM_NAME"
    SMS_API_URL="$SMS_URL" SMS_ACCOUNT_SID="$SMS_ACCOUNT_SID"
    SMS_AUTH_TOKEN="$SMS_AUTH_TOKEN" SMS_FROM_NUMBER="$SMS_FROM_NUMBER"
    SENDGRID_WEBHOOK_VERIFICATION_KEY="$SENDGRID_WEBHOOK_VERIFICATION_KEY"
    VAPID_PUBLIC_KEY="$VAPID_PUBLIC_KEY" VAPID_PRIVATE_KEY="$VAPID_PRIVATE_KEY" VAPID_SUBJECT="$VAPID_SUBJECT"
    PUSH_ALLOW_LOOPBACK_HTTP="$PUSH_ALLOW_LOOPBACK_HTTP" WEBHOOKS_ALLOW_LOOPBACK_HTTP="$WEBHOOKS_ALLOW_LOOPBACK_HTTP"
    NOTIFICATIONS_RETRY_BASE_SECONDS="$NOTIFICATIONS_RETRY_BASE_SECONDS"
    NOTIFICATIONS_RETRY_MAX_SECONDS="$NOTIFICATIONS_RETRY_MAX_SECONDS"
    NOTIFICATIONS_UNCONFIRMED_WAIT_SECONDS="$NOTIFICATIONS_UNCONFIRMED_WAIT_SECONDS"
    NOTIFICATIONS_UNCONFIRMED_RECHECK_SECONDS="$NOTIFICATIONS_UNCONFIRMED_RECHECK_SECONDS"
    CORS_ALLOWED_ORIGINS="$CORS_ALLOWED_ORIGINS"
    DENO_CERT="$LOCAL_CA"
  )
}

# Functions and the gateway restart when their sources or their settings changed since
# they started.
ensure_http_processes() {
  function_env
  local fingerprint
  fingerprint=$({ source_fingerprint; printf '%s\n' "${FUNCTION_ENV[@]}"; } | sha1sum | cut -c1-40)
  if [ "$(cat "$RUN/http.fingerprint" 2>/dev/null)" != "$fingerprint" ]; then
    stop_http_processes
  fi
  local deno_env=(DENO_DIR="$DENO_DIR" NO_COLOR=1)
  # The SendGrid double posts its signed events to the api function's webhook through the
  # gateway, as SendGrid posts to the project URL; the SMS double posts each message's
  # status to the callback URL the worker gives it. The push double only takes pushes, and
  # the webhook receiver only takes webhooks.
  if ! pid_alive mail; then
    start_process mail "${deno_env[@]}" SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY="$SENDGRID_EVENT_WEBHOOK_PRIVATE_KEY" \
      -- "$DENO" run --quiet --allow-net=127.0.0.1 --allow-env "$ROOT/local/sendgrid-capture/main.ts" \
      --port "$MAIL_PORT" --event-webhook-url "$API_URL/functions/v1/api/v1/webhooks/sendgrid"
  fi
  if ! pid_alive sms; then
    start_process sms "${deno_env[@]}" -- "$DENO" run --quiet --allow-net=127.0.0.1 \
      "$ROOT/local/sms-capture/main.ts" --port "$SMS_PORT" --account-sid "$SMS_ACCOUNT_SID" \
      --auth-token "$SMS_AUTH_TOKEN" --from "$SMS_FROM_NUMBER"
  fi
  if ! pid_alive push; then
    start_process push "${deno_env[@]}" -- "$DENO" run --quiet --allow-net=127.0.0.1 \
      "$ROOT/local/push-capture/main.ts" --port "$PUSH_PORT"
  fi
  if ! pid_alive webhook-receiver; then
    start_process webhook-receiver "${deno_env[@]}" -- "$DENO" run --quiet --allow-net=127.0.0.1 --allow-read="$TLS_DIR" \
      "$ROOT/local/webhook-receiver/main.ts" --port "$WEBHOOK_RECEIVER_PORT" \
      --tls-port "$WEBHOOK_RECEIVER_TLS_PORT" --cert "$TLS_DIR/receiver.pem" --key "$TLS_DIR/receiver.key"
  fi
  local route name port
  cache_function_dependencies
  # Each function behind its local Edge Runtime (local/edge-runtime/main.ts), which runs the
  # function's workers under Deno 2.1 with the runtime's permissions and holds them to its
  # limits. The runtime itself runs with every permission: Deno lets only such a process
  # read another process's /proc files, where a worker's CPU time and memory are.
  for route in ${FUNCTION_PORTS//,/ }; do
    name=${route%=*} port=${route#*=}
    if ! pid_alive "fn-$name"; then
      start_process "fn-$name" "${deno_env[@]}" "${FUNCTION_ENV[@]}" \
        -- "$DENO" run --quiet --allow-all "$ROOT/local/edge-runtime/main.ts" --name "$name" --port "$port" \
        --entrypoint "$ROOT/supabase/functions/$name/index.ts" --deno "$EDGE_DENO" --deno-dir "$EDGE_DENO_DIR" \
        --config "$FUNCTIONS_CONFIG"
    fi
  done
  if ! pid_alive gateway; then
    mkdir -p "$RUN/gateway-temp"
    # shellcheck disable=SC2086 # one NAME=PORT argument per function
    bash "$ROOT/local/gateway/nginx-conf.sh" "$API_PORT" "$AUTH_URL" "$RUN" ${FUNCTION_PORTS//,/ } \
      > "$RUN/gateway.conf"
    start_process gateway -- "$NGINX" -p "$RUN" -e stderr -c "$RUN/gateway.conf" -g "daemon off;"
  fi
  # The front-desk example, rebuilt on every `up` (a second or so) for this stack's URL and
  # anon key; its server reads the files when asked, so a running one serves the new build.
  bash "$ROOT/scripts/front-desk-build.sh" "$API_URL" "$ANON_KEY" >"$LOGS/front-desk-build.log" 2>&1 \
    || { cat "$LOGS/front-desk-build.log" >&2; die "building the front-desk example failed (log: $LOGS/front-desk-build.log)"; }
  if ! pid_alive front-desk; then
    start_process front-desk "${deno_env[@]}" -- "$DENO" run --quiet --allow-net=127.0.0.1 \
      --allow-read="$ROOT/examples/front-desk/dist" "$ROOT/local/front-desk/main.ts" \
      --port "$FRONT_DESK_PORT" --dir "$ROOT/examples/front-desk/dist"
  fi
  echo "$fingerprint" > "$RUN/http.fingerprint"
  wait_for_http mail "$MAIL_URL/_capture/messages" 60
  wait_for_http sms "$SMS_URL/_capture/messages" 60
  wait_for_http push "$PUSH_URL/_capture/messages" 60
  wait_for_http webhook-receiver "$WEBHOOK_RECEIVER_URL/_capture/requests" 60
  wait_for_http gateway "$API_URL/_gateway/health" 60
  wait_for_http front-desk "$FRONT_DESK_URL/config.json" 60
  for name in $(function_names); do
    wait_for_function "$name" 120
  done
  ensure_scheduler
}

# Runs the notifications and webhooks workers every WORKER_EVERY_SECONDS, as pg_cron does
# on a hosted project; `stack.sh scheduler off` pauses them (the tests drive the workers),
# and with them the nightly summaries' pg_cron job (the tests run nights of their choosing).
ensure_scheduler() {
  if [ -f "$RUN/scheduler.off" ]; then nightly_summaries_active false; return; fi
  local worker
  for worker in notifications-worker webhooks-worker; do
    pid_alive "scheduler-$worker" && continue
    start_process "scheduler-$worker" DENO_DIR="$DENO_DIR" NO_COLOR=1 -- "$DENO" run --quiet --allow-net=127.0.0.1 \
      "$ROOT/local/scheduler/main.ts" --url "$API_URL/functions/v1/$worker" \
      --key "$SERVICE_ROLE_KEY" --every-seconds "$WORKER_EVERY_SECONDS"
  done
}

nightly_summaries_active() {
  psql_admin -c "select cron.alter_job(jobid, active := $1) from cron.job where jobname = 'nightly-summaries'" >/dev/null
}

scheduler() {
  mkdir -p "$RUN"
  case "${1:-}" in
    off) touch "$RUN/scheduler.off"; stop_process scheduler-notifications-worker; stop_process scheduler-webhooks-worker
      nightly_summaries_active false
      say "the notifications and webhooks schedules are paused" ;;
    on) rm -f "$RUN/scheduler.off"; load_keys; ensure_scheduler; nightly_summaries_active true
      say "the notifications and webhooks workers run every ${WORKER_EVERY_SECONDS}s" ;;
    *) die "usage: stack.sh scheduler on|off" ;;
  esac
}

stop_http_processes() {
  local file
  for file in "$RUN"/*.pid; do
    [ -e "$file" ] || continue
    file=${file##*/}; file=${file%.pid}
    [ "$file" = auth ] || [ "$file" = pgbouncer ] || stop_process "$file"
  done
}

print_status() {
  load_keys
  local auth_state="not running" auth_settings=""
  if pid_alive auth && curl -fsS -o /dev/null "$AUTH_URL/health" 2>/dev/null; then
    auth_state="local double of Supabase Auth's HTTP API, running (local/auth)"
  fi
  if [ -f "$STATE/auth.env" ]; then
    auth_settings=$(set -a; . "$STATE/auth.env"; set +a
      printf '   Auth settings: sign-up %s, email confirmations %s, site URL %s\n' \
        "$([ "$GOTRUE_DISABLE_SIGNUP" = true ] && echo off || echo on)" \
        "$([ "$GOTRUE_MAILER_AUTOCONFIRM" = true ] && echo off || echo on)" "$GOTRUE_SITE_URL"
      printf '                  JWT expiry %ss, refresh token rotation %s (reuse interval %ss)\n' \
        "$GOTRUE_JWT_EXP" "$([ "$GOTRUE_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED" = true ] && echo on || echo off)" \
        "$GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL"
      printf '                  access tokens signed with ES256, keys at %s/auth/v1/.well-known/jwks.json\n' "$API_URL")
  fi
  cat <<EOF

         API URL: $API_URL
   Functions URL: $API_URL/functions/v1
         API v1:  $API_URL/functions/v1/api/v1
          DB URL: $DB_URL
      Pooler URL: $POOLER_URL (PgBouncer, transaction mode: the functions' way in)
            Auth: $auth_state
$auth_settings
Mail capture URL: $MAIL_URL (posts signed events to $API_URL/functions/v1/api/v1/webhooks/sendgrid)
 SMS capture URL: $SMS_URL (account $SMS_ACCOUNT_SID, from $SMS_FROM_NUMBER)
Push capture URL: $PUSH_URL (endpoints $PUSH_URL/push/<token>; VAPID subject $VAPID_SUBJECT)
Webhook receiver: $WEBHOOK_RECEIVER_URL (endpoints $WEBHOOK_RECEIVER_URL/hooks/<name>, and over https
                  $WEBHOOK_RECEIVER_HTTPS_URL/hooks/<name>, its certificate from the stack's CA $LOCAL_CA)
      Front desk: $FRONT_DESK_URL (examples/front-desk; the api function grants CORS to $CORS_ALLOWED_ORIGINS)
      JWT secret: $JWT_SECRET
        anon key: $ANON_KEY
service_role key: $SERVICE_ROLE_KEY

EOF
}

# The stack's ports sit inside the range Linux hands out to outgoing connections
# (32768-60999 by default), so another program's connection can hold one just when a
# server of the stack starts. As root the stack reserves its twenty ports, which only
# keeps the kernel from choosing them for outgoing connections.
reserve_ports() {
  is_root || return 0
  local file=/proc/sys/net/ipv4/ip_local_reserved_ports ours="$PMS_PORT_BASE-$((PMS_PORT_BASE + 19))" current
  current=$(cat "$file" 2>/dev/null) || return 0
  case ",$current," in *",$ours,"*) return 0 ;; esac
  echo "${current:+$current,}$ours" > "$file" 2>/dev/null || say "could not reserve ports $ours (continuing)"
}

up() {
  mkdir -p "$STATE" "$LOGS" "$RUN"
  reserve_ports
  ensure_system_packages
  ensure_node_tools
  ensure_pgmq_extension
  ensure_cluster
  FUNCTION_PORTS=$(function_ports)
  ensure_local_ca
  ensure_keys
  load_keys
  ensure_auth
  migrate
  check_pgmq_version
  ensure_pooler
  ensure_http_processes
  print_status
}

stop() {
  [ -d "$RUN" ] && stop_http_processes
  stop_process pgbouncer
  stop_process auth
  if [ -f "$PGDATA_DIR/PG_VERSION" ] && as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" status >/dev/null 2>&1; then
    as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -m fast -w stop >/dev/null
  fi
  say "stopped"
}

reset() {
  stop
  rm -rf "$PGDATA_DIR" "$ENV_FILE" "$STATE/auth.env" "$STATE/seeded" "$RUN"
  up
}

clean() {
  stop
  rm -rf "$PGDATA_DIR" "$STATE" "$ROOT/examples/front-desk/dist"
  [ "$PG_HOME" = "$STATE" ] || rm -rf "$PG_HOME"
}

# The cluster alone, for the fault tests: `db stop` shuts it down (fast: open sessions are
# ended), `db start` brings it back on its port.
db() {
  [ -f "$PGDATA_DIR/PG_VERSION" ] || die "no cluster in $PGDATA_DIR: run stack.sh up first"
  case "${1:-}" in
    stop) as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -m fast -w stop >/dev/null ;;
    start) as_pg "$PGBIN/pg_ctl" -D "$PGDATA_DIR" -l "$(readlink -f "$LOGS/postgres.log")" -o "$(postgres_options)" -w -t 60 start >/dev/null ;;
    *) die "usage: stack.sh db stop|start" ;;
  esac
}

# Sourced (scripts/schema-compare.sh does), the script only defines its settings and
# functions.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

case "${1:-up}" in
  up) up ;;
  clean) clean ;;
  stop) stop ;;
  reset) reset ;;
  status) print_status ;;
  scheduler) scheduler "${2:-}" ;;
  db) db "${2:-}" ;;
  *) die "usage: stack.sh up|stop|reset|status|clean|scheduler on|off|db stop|start" ;;
esac
