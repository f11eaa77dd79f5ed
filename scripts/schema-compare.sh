#!/usr/bin/env bash
# Whether two databases built from this repository are the same database. Each is built in
# a throwaway Postgres cluster of its own, prepared as scripts/stack.sh prepares the
# stack's: the stack's settings (pg_cron, whose jobs live in the database that
# cron.database_name names, so a scratch database inside one cluster would not do),
# local/postgres/supabase-baseline.sql, Auth's schema as the local Auth double makes it
# (local/auth/schema.sql), then the project's own objects. No seed.
#
#   scripts/schema-compare.sh OLD_REF [NEW_REF]
#       two migration chains: OLD_REF's and NEW_REF's supabase/migrations (and
#       supabase/config.toml), each applied through the Supabase CLI's `db push`; without
#       NEW_REF the new chain is this checkout's working tree.
#   scripts/schema-compare.sh --schemas [REF]
#       one tree's two definitions of the database: the chain of its supabase/migrations
#       (through `db push`, as above) against its supabase/schemas, the files that
#       supabase/config.toml's [db.migrations] schema_paths lists, applied with psql in
#       that order in one transaction. REF is a git ref; without it, the working tree.
#   scripts/schema-compare.sh --schemas --sql [REF]
#       the same two databases, but instead of comparing them it prints what the Supabase
#       CLI's `supabase db diff --from <chain's database> --to <schema files' database>`
#       prints: the statements that take a database of the chain to the schema files'
#       state, the draft of the migration for a change made in the schema files (nothing
#       when the two agree). It writes no data: what a schema diff does not capture
#       (roles, role settings, queues, schedules) is for the author to add.
#
# What is compared, from each cluster:
#   - `pg_dump --schema-only` of the whole database: every schema the project touches
#     (public, private, pgmq with the queue's tables, cron, extensions, auth), with
#     ownership, grants (ACLs), RLS policies, triggers, functions, constraints, indexes;
#     but supabase_migrations, the CLI's record of the migrations it applied;
#   - `pg_dumpall --roles-only --no-role-passwords`: the roles, their attributes,
#     settings and memberships;
#   - rows that are data but make the schema: pg_cron's jobs (jobname, schedule,
#     command, database, username, active), pgmq's queues (pgmq.meta), the installed
#     extensions and their versions, database-level settings.
# Each is normalised: split into statements (dollar quotes kept whole), comments,
# blank lines, SET and set_config lines and psql's \restrict lines dropped, each
# statement on one line, sorted. The two are then diffed: the order things were created
# in does not matter, their final form does.
#
# Prints "schemas identical: <old> = <new>" and exits 0, or prints the diff (`-` old,
# `+` new) and exits 1; exits 2 on a usage error or when a cluster cannot be prepared
# (a migration or a schema file that fails says so on stderr). Needs what the stack
# needs (it installs the same packages the same way when they are missing); it leaves
# the stack itself alone. The clusters take two free ports below 32768
# (SCHEMA_COMPARE_PORTS="p1 p2" chooses them) and are removed on exit;
# SCHEMA_COMPARE_KEEP=<folder> keeps the dumps and their normalised forms there.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The stack's settings and functions: init_cluster, apply_supabase_baseline,
# run_auth_migrations, push_migrations, as_pg, psql_admin and the rest.
# shellcheck source=scripts/stack.sh
. "$ROOT/scripts/stack.sh"

usage() { echo "usage: $0 OLD_REF [NEW_REF] | $0 --schemas [--sql] [REF]" >&2; exit 2; }
MODE=chains
SQL=
if [ "${1:-}" = --schemas ]; then
  MODE=schemas
  shift
  if [ "${1:-}" = --sql ]; then SQL=1; shift; fi
  [ $# -le 1 ] || usage
  OLD_REF=${1:-}
  NEW_REF=${1:-}
else
  [ $# -ge 1 ] && [ $# -le 2 ] || usage
  OLD_REF=$1
  NEW_REF=${2:-}
fi
for ref in ${OLD_REF:+"$OLD_REF"} ${NEW_REF:+"$NEW_REF"}; do
  git -C "$ROOT" rev-parse --verify --quiet "$ref^{commit}" >/dev/null || { echo "$ref is not a commit here" >&2; exit 2; }
done

compare_say() { printf '[schema-compare] %s\n' "$*" >&2; }

WORK=$(mktemp -d)
chmod 755 "$WORK"
CLUSTERS=()
cleanup() {
  local data
  for data in ${CLUSTERS[@]+"${CLUSTERS[@]}"}; do
    as_pg "$PGBIN/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# A port no one listens on, below the range Linux hands out to outgoing connections.
free_port() {
  local port
  for _ in $(seq 200); do
    port=$((20000 + RANDOM % 12000))
    [ -z "$(ss -Htln "sport = :$port" 2>/dev/null)" ] && { echo "$port"; return 0; }
  done
  return 1
}

# The chain (and the schema files, where there are any) of <ref>, or of the working tree,
# as a project folder the CLI pushes from.
chain_folder() { # ref-or-empty folder
  local parts=(supabase/config.toml supabase/migrations)
  mkdir -p "$2"
  if [ -n "$1" ]; then
    git -C "$ROOT" cat-file -e "$1:supabase/schemas" 2>/dev/null && parts+=(supabase/schemas)
    git -C "$ROOT" archive "$1" "${parts[@]}" | tar -x -C "$2"
  else
    mkdir -p "$2/supabase"
    cp "$ROOT/supabase/config.toml" "$2/supabase/"
    cp -r "$ROOT/supabase/migrations" "$2/supabase/"
    [ ! -d "$ROOT/supabase/schemas" ] || cp -r "$ROOT/supabase/schemas" "$2/supabase/"
  fi
  ls "$2"/supabase/migrations/*.sql >/dev/null 2>&1 || { echo "no migrations in ${1:-the working tree}" >&2; exit 2; }
}

# The files that <config.toml>'s [db.migrations] schema_paths lists, in its order, one a
# line, as paths relative to the folder of config.toml (where the CLI resolves them); a
# glob among them stands for its matches in name order, each file once.
schema_files() { # config.toml
  local folder entry match
  folder=$(dirname "$1")
  declare -A seen=()
  while IFS= read -r entry; do
    [ -n "$entry" ] || continue
    local matched=0
    while IFS= read -r match; do
      [ -n "$match" ] || continue
      matched=1
      [ -n "${seen[$match]:-}" ] && continue
      seen[$match]=1
      echo "$match"
    done < <(cd "$folder" && compgen -G "$entry" | LC_ALL=C sort)
    [ "$matched" = 1 ] || { echo "schema_paths names $entry, which matches no file" >&2; return 1; }
  done < <(awk '
    /^[ \t]*\[/ { section = $0; gsub(/[ \t]/, "", section) }
    section == "[db.migrations]" && /^[ \t]*schema_paths[ \t]*=/ { on = 1 }
    on {
      line = $0; sub(/#.*/, "", line)
      while (match(line, /"[^"]*"/)) { print substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH) }
      if ($0 ~ /\]/) on = 0
    }' "$1")
}

# The schema files of the project in <folder>, in the order its config.toml lists them,
# applied to the database at DB_PORT in one transaction.
apply_schema_files() { # folder log
  local listed files=() file args=()
  listed=$(schema_files "$1/supabase/config.toml") || exit 2
  [ -z "$listed" ] || mapfile -t files <<<"$listed"
  [ ${#files[@]} -gt 0 ] || { echo "supabase/config.toml lists no schema files ([db.migrations] schema_paths)" >&2; exit 2; }
  for file in "${files[@]}"; do args+=(-f "$1/supabase/$file"); done
  compare_say "applying ${#files[@]} schema files"
  psql_admin -1 "${args[@]}" >"$2" 2>&1 || { cat "$2" >&2; echo "the schema files failed (log: $2)" >&2; exit 2; }
}

# A cluster with the baseline, Auth's migrations and the project in <folder>, built from
# its chain (`migrations`) or its schema files (`schemas`); dumps its schema into
# <folder>/schema.sql.
build_and_dump() { # name folder port migrations|schemas
  local name=$1 dir=$2 port=$3 sock="$2/socket" data="$2/pgdata"
  mkdir -p "$sock"; is_root && chown postgres: "$sock" "$dir"
  init_cluster "$data" "$port" "$sock" "$dir/initdb.log"
  CLUSTERS+=("$data")
  touch "$dir/postgres.log"; is_root && chown postgres: "$dir/postgres.log"
  as_pg "$PGBIN/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 start >/dev/null \
    || { cat "$dir/postgres.log" >&2; echo "the $name cluster did not start on port $port" >&2; exit 2; }
  DB_PORT=$port apply_supabase_baseline
  run_auth_migrations "$port" "$dir/auth-migrations.log"
  if [ "$4" = schemas ]; then
    DB_PORT=$port apply_schema_files "$dir" "$dir/schemas.log"
  else
    push_migrations "$dir" "postgresql://postgres:postgres@127.0.0.1:$port/postgres" "$dir/migrations.log"
  fi
  {
    PGPASSWORD=postgres "$PGBIN/pg_dump" --schema-only --exclude-schema=supabase_migrations \
      -h 127.0.0.1 -p "$port" -U postgres -d postgres
    PGPASSWORD=postgres "$PGBIN/pg_dumpall" --roles-only --no-role-passwords -h 127.0.0.1 -p "$port" -U postgres
    DB_PORT=$port psql_admin -At -F ' | ' <<'SQL'
select format('cron.job: %s | %s | %s | %s | %s | %s;', jobname, schedule, command, database, username, active)
from cron.job;
select format('pgmq.meta: %s | partitioned %s | unlogged %s;', queue_name, is_partitioned, is_unlogged)
from pgmq.meta;
select format('extension: %s %s in %s;', extname, extversion, extnamespace::regnamespace) from pg_extension;
select format('setting: database %s role %s: %s;', coalesce(d.datname, '*'), coalesce(r.rolname, '*'), s.setconfig)
from pg_db_role_setting s left join pg_database d on d.oid = s.setdatabase left join pg_roles r on r.oid = s.setrole;
SQL
  } >"$dir/schema.sql"
  # --sql diffs the two databases live; cleanup stops them.
  [ -n "$SQL" ] || as_pg "$PGBIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null
}

# One statement per line, sorted. Dollar-quoted bodies stay inside their statement;
# line breaks inside a statement become the two characters \n.
normalise() {
  awk '
    function flush() { if (stmt != "") print stmt; stmt = "" }
    {
      sub(/[ \t\r]+$/, "")
      if (stmt == "" && quote == "") {
        if ($0 == "" || $0 ~ /^--/ || $0 ~ /^\\/) next
        if ($0 ~ /^SET / || $0 ~ /^SELECT pg_catalog\.set_config\(/) next
      }
      stmt = (stmt == "") ? $0 : stmt "\\n" $0
      rest = $0
      while (match(rest, /\$[A-Za-z_0-9]*\$/)) {
        tag = substr(rest, RSTART, RLENGTH)
        if (quote == "") quote = tag; else if (quote == tag) quote = ""
        rest = substr(rest, RSTART + RLENGTH)
      }
      if (quote == "" && $0 ~ /;$/) flush()
    }
    END { flush() }
  ' "$1" | LC_ALL=C sort
}

ensure_system_packages
ensure_node_tools
mkdir -p "$STATE" "$LOGS"
ensure_pgmq_extension

if [ -n "${SCHEMA_COMPARE_PORTS:-}" ]; then
  read -r OLD_PORT NEW_PORT <<<"$SCHEMA_COMPARE_PORTS"
else
  OLD_PORT=$(free_port) && NEW_PORT=$(free_port) || { echo "no free port for the clusters" >&2; exit 2; }
  [ "$OLD_PORT" != "$NEW_PORT" ] || NEW_PORT=$(free_port)
fi

chain_folder "$OLD_REF" "$WORK/old"
chain_folder "$NEW_REF" "$WORK/new"
if [ "$MODE" = schemas ]; then
  OLD_NAME="migrations (${OLD_REF:-the working tree})"
  NEW_NAME="schemas (${NEW_REF:-the working tree})"
  [ -d "$WORK/new/supabase/schemas" ] || { echo "no supabase/schemas in ${NEW_REF:-the working tree}" >&2; exit 2; }
  compare_say "old: $OLD_NAME ($(ls "$WORK"/old/supabase/migrations/*.sql | wc -l) migrations) on port $OLD_PORT"
  build_and_dump old "$WORK/old" "$OLD_PORT" migrations
  compare_say "new: $NEW_NAME on port $NEW_PORT"
  build_and_dump new "$WORK/new" "$NEW_PORT" schemas
else
  OLD_NAME=$OLD_REF
  NEW_NAME=${NEW_REF:-the working tree}
  compare_say "old: $OLD_NAME ($(ls "$WORK"/old/supabase/migrations/*.sql | wc -l) migrations) on port $OLD_PORT"
  build_and_dump old "$WORK/old" "$OLD_PORT" migrations
  compare_say "new: $NEW_NAME ($(ls "$WORK"/new/supabase/migrations/*.sql | wc -l) migrations) on port $NEW_PORT"
  build_and_dump new "$WORK/new" "$NEW_PORT" migrations
fi

if [ -n "$SQL" ]; then
  compare_say "the statements from $OLD_NAME to $NEW_NAME, as supabase db diff writes them:"
  (cd "$WORK" && "$SUPABASE_CLI" db diff \
    --from "postgresql://postgres:postgres@127.0.0.1:$OLD_PORT/postgres?sslmode=disable" \
    --to "postgresql://postgres:postgres@127.0.0.1:$NEW_PORT/postgres?sslmode=disable") 2>"$WORK/db-diff.log" \
    || { cat "$WORK/db-diff.log" >&2; echo "supabase db diff failed" >&2; exit 2; }
  exit 0
fi

normalise "$WORK/old/schema.sql" >"$WORK/old.sorted"
normalise "$WORK/new/schema.sql" >"$WORK/new.sorted"
if [ -n "${SCHEMA_COMPARE_KEEP:-}" ]; then
  mkdir -p "$SCHEMA_COMPARE_KEEP"
  cp "$WORK/old/schema.sql" "$SCHEMA_COMPARE_KEEP/old.sql"; cp "$WORK/old.sorted" "$SCHEMA_COMPARE_KEEP/old.sorted"
  cp "$WORK/new/schema.sql" "$SCHEMA_COMPARE_KEEP/new.sql"; cp "$WORK/new.sorted" "$SCHEMA_COMPARE_KEEP/new.sorted"
fi
compare_say "$(wc -l <"$WORK/old.sorted") statements from the old, $(wc -l <"$WORK/new.sorted") from the new"
if diff -u --label "old ($OLD_NAME)" --label "new ($NEW_NAME)" "$WORK/old.sorted" "$WORK/new.sorted"; then
  echo "schemas identical: $OLD_NAME = $NEW_NAME"
else
  exit 1
fi
