#!/usr/bin/env bash
# Test peer only: reproduces testdata/debezium/pg_<NAME>.jsonl (+ offsets files) for each
# scenario NAME given (default: every directory under scenarios/pg/).
#
# A scenario is a directory scenarios/pg/<NAME>/ with
#   setup.sql               loaded into database "scen" before the connector starts
#                           (captured by the snapshot, if the scenario has one)
#   changes.sql             run with psql -f once the snapshot is over (each statement
#                           autocommits unless inside BEGIN…COMMIT)
#   connector.properties    appended to scenarios/pg_scenario.properties.in
#
# Per scenario: a throwaway PostgreSQL 15 exactly as run-pg-types.sh, then capture.sh.
# connectors/postgres/scenario_golden_test.go replays the same files through connectd.
#
#   reference/debezium/run-pg-scenario.sh [NAME...]      # PGPORT=55434 IDLE=8 overridable
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
PGBIN="${PGBIN:-/usr/lib/postgresql/15/bin}"
PGPORT="${PGPORT:-55434}"
IDLE="${IDLE:-8}"
MAX="${MAX:-0}"   # stop after MAX records (0 = when idle); needed with heartbeats

aspg() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

names=("$@")
if [[ ${#names[@]} == 0 ]]; then
  for d in "$here"/scenarios/pg/*/; do names+=("$(basename "$d")"); done
fi

run_one() {
  local name="$1" dir="$here/scenarios/pg/$1" out="$repo/testdata/debezium/pg_$1.jsonl"
  local work
  work="$(mktemp -d /tmp/dbzref.XXXXXX)"
  chmod 755 "$work"
  [[ $(id -u) == 0 ]] && chown postgres: "$work"
  # shellcheck disable=SC2064
  trap "aspg '$PGBIN/pg_ctl' -D '$work/data' -m immediate stop >/dev/null 2>&1 || true; rm -rf '$work'" RETURN
  aspg "$PGBIN/initdb" -D "$work/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  cat >> "$work/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PGPORT
unix_socket_directories = '$work'
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
max_prepared_transactions = 10
timezone = 'UTC'
log_timezone = 'UTC'
fsync = off
CONF
  cat > "$work/data/pg_hba.conf" <<HBA
local   all          all                 trust
host    all          all   127.0.0.1/32  trust
local   replication  all                 trust
host    replication  all   127.0.0.1/32  trust
HBA
  aspg "$PGBIN/pg_ctl" -D "$work/data" -l "$work/pg.log" -w start >/dev/null || { cat "$work/pg.log" >&2; return 1; }
  local psql=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres)
  "${psql[@]}" -d postgres -c 'CREATE DATABASE scen'
  "${psql[@]}" -d scen -f "$dir/setup.sql"
  { sed -e "s|@PGPORT@|$PGPORT|" -e "s|@OFFSETS@|$work/offsets.dat|" "$here/scenarios/pg_scenario.properties.in"
    cat "$dir/connector.properties"; } > "$work/connector.properties"
  mkdir -p "$(dirname "$out")"
  "$here/capture.sh" "$work/connector.properties" "$out" "$MAX" "$IDLE" "${psql[*]} -d scen -f $dir/changes.sql"
  echo "[$name] wrote $out" >&2
}

for n in "${names[@]}"; do run_one "$n"; done
