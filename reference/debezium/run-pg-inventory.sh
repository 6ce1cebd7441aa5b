#!/usr/bin/env bash
# Test peer only: reproduces testdata/debezium/pg_inventory_snapshot_stream.jsonl (+ offsets).
#
# 1. starts a throwaway PostgreSQL 15 (wal_level=logical, UTC, trust auth) on 127.0.0.1:$PGPORT
# 2. creates database "inventory" and loads scenarios/inventory.sql
# 3. runs Debezium 3.6.1.Final (capture.sh); once the snapshot's last record is seen and the
#    engine has been quiet 3 s, the hook runs scenarios/changes.sql with psql while streaming
# 4. stops after 10 s without a record, dumps offsets, stops and removes PostgreSQL.
#
# Must run as root (uses runuser -u postgres) or as the postgres user.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
PGBIN="${PGBIN:-/usr/lib/postgresql/15/bin}"
PGPORT="${PGPORT:-55432}"
OUT="${OUT:-$repo/testdata/debezium/pg_inventory_snapshot_stream.jsonl}"
IDLE="${IDLE:-10}"

aspg() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

work="$(mktemp -d /tmp/dbzref.XXXXXX)"
chmod 755 "$work"
[[ $(id -u) == 0 ]] && chown postgres: "$work"
cleanup() {
  aspg "$PGBIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

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

psql=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PGPORT" -U postgres)
"${psql[@]}" -d postgres -c 'CREATE DATABASE inventory'
"${psql[@]}" -d inventory -f "$here/scenarios/inventory.sql"

sed -e "s|@PGPORT@|$PGPORT|" -e "s|@OFFSETS@|$work/offsets.dat|" \
  "$here/scenarios/pg_inventory.properties.in" > "$work/connector.properties"

mkdir -p "$(dirname "$OUT")"
hook="${psql[*]} -d inventory -f $here/scenarios/changes.sql"
"$here/capture.sh" "$work/connector.properties" "$OUT" 0 "$IDLE" "$hook"
# the snapshot-time offsets are a by-product of the hook step
echo "wrote $OUT and $OUT.{offsets,snapshot.offsets,record-offsets}.jsonl" >&2
