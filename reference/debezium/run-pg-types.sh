#!/usr/bin/env bash
# Test peer only: reproduces testdata/debezium/pg_types_<mode>.jsonl (+ offsets) for each MODE
# given (default: every scenarios/pg_types/*.properties).
#
# Per mode: a throwaway PostgreSQL 15 (as run-pg-inventory.sh), database "types" loaded with
# scenarios/types.sql, Debezium 3.6.1.Final with scenarios/pg_types.properties.in plus
# scenarios/pg_types/<mode>.properties; after the snapshot the hook runs
# scenarios/types_changes.sql (one transaction copying every row, id + 100).
#
#   reference/debezium/run-pg-types.sh [MODE...]      # PGPORT=55433 IDLE=8 overridable
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
PGBIN="${PGBIN:-/usr/lib/postgresql/15/bin}"
PGPORT="${PGPORT:-55433}"
IDLE="${IDLE:-8}"

aspg() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

modes=("$@")
if [[ ${#modes[@]} == 0 ]]; then
  for f in "$here"/scenarios/pg_types/*.properties; do modes+=("$(basename "$f" .properties)"); done
fi

run_mode() {
  local mode="$1" out="$repo/testdata/debezium/pg_types_$1.jsonl"
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
  aspg "$PGBIN/pg_ctl" -D "$work/data" -l "$work/pg.log" -w start >/dev/null
  local psql=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres)
  "${psql[@]}" -d postgres -c 'CREATE DATABASE types'
  "${psql[@]}" -d types -f "$here/scenarios/types.sql"
  { sed -e "s|@PGPORT@|$PGPORT|" -e "s|@OFFSETS@|$work/offsets.dat|" "$here/scenarios/pg_types.properties.in"
    cat "$here/scenarios/pg_types/$mode.properties"; } > "$work/connector.properties"
  mkdir -p "$(dirname "$out")"
  "$here/capture.sh" "$work/connector.properties" "$out" 0 "$IDLE" "${psql[*]} -d types -f $here/scenarios/types_changes.sql"
  echo "[$mode] wrote $out" >&2
}

for m in "${modes[@]}"; do run_mode "$m"; done
