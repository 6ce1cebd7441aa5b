#!/usr/bin/env bash
# Test peer only: reproduces testdata/debezium/mariadb_inventory.jsonl (+ offsets, + schema history).
#
# 1. starts a throwaway MariaDB (as internal/testenv/mariadb.go: log_bin, binlog_format=ROW,
#    binlog_row_image=FULL, server_id=1, GTID domain 0, UTC) on 127.0.0.1:$PORT
# 2. creates database "inventory" and loads scenarios/mariadb_inventory.sql
# 3. runs Debezium's MariaDbConnector 3.5.0.Final (capture-mysql.sh; 3.6.x is not published); once the snapshot's last
#    record is seen and the engine has been quiet 3 s, the hook runs
#    scenarios/mariadb_inventory_changes.sql (or $CHANGES) while streaming;
#    CHANGES=mariadb_ddl_changes.sql OUT=testdata/debezium/mariadb_ddl.jsonl gives the DDL scenario
# 4. stops after $IDLE s without a record, dumps offsets, kills and removes MariaDB.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
PORT="${PORT:-53306}"
OUT="${OUT:-$repo/testdata/debezium/mariadb_inventory.jsonl}"
IDLE="${IDLE:-10}"
# the statements run while streaming: scenarios/$CHANGES
CHANGES="${CHANGES:-mariadb_inventory_changes.sql}"
# loaded before the connector starts: scenarios/$SETUP
SETUP="${SETUP:-mariadb_inventory.sql}"
# the server's character_set_server (MariaDB's own default is latin1)
SERVER_CHARSET="${SERVER_CHARSET:-utf8mb4}"
# extra connector properties appended to the scenario's (a file under scenarios/, optional)
EXTRA_PROPS="${EXTRA_PROPS:-}"

work="$(mktemp -d /tmp/dbzref-mariadb.XXXXXX)"
chmod 755 "$work"
runas=()
if [[ $(id -u) == 0 ]]; then chown mysql: "$work"; runas=(--user=mysql); fi
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mariadb-install-db --no-defaults --datadir="$work/data" --auth-root-authentication-method=normal \
  --skip-test-db --skip-name-resolve "${runas[@]}" >/dev/null
/usr/sbin/mariadbd --no-defaults --datadir="$work/data" --socket="$work/mysqld.sock" \
  --pid-file="$work/mysqld.pid" --log-error="$work/server.log" --bind-address=127.0.0.1 --port="$PORT" \
  --skip-name-resolve --server-id=1 --log-bin="$work/data/mysql-bin" --binlog-format=ROW \
  --binlog-row-image=FULL --gtid-domain-id=0 --gtid-strict-mode=ON --default-time-zone=+00:00 \
  --character-set-server="$SERVER_CHARSET" --collation-server="${SERVER_CHARSET}_general_ci" --innodb-buffer-pool-size=64M \
  --innodb-log-file-size=48M --innodb-flush-log-at-trx-commit=2 --skip-innodb-doublewrite --sync-binlog=0 \
  "${runas[@]}" &
pid=$!
sql=(mariadb --no-defaults --default-character-set=utf8mb4 -S "$work/mysqld.sock" -u root --batch)
for _ in $(seq 1 600); do "${sql[@]}" -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
"${sql[@]}" <<SQL
CREATE USER 'connectd'@'%' IDENTIFIED BY 'connectd';
GRANT ALL PRIVILEGES ON *.* TO 'connectd'@'%' WITH GRANT OPTION;
CREATE DATABASE inventory;
SQL
"${sql[@]}" inventory < "$here/scenarios/$SETUP"

sed -e "s|@PORT@|$PORT|" -e "s|@OFFSETS@|$work/offsets.dat|" -e "s|@HISTORY@|$work/history.dat|" \
  "$here/scenarios/mariadb_inventory.properties.in" > "$work/connector.properties"
if [[ -n "$EXTRA_PROPS" ]]; then cat "$here/scenarios/$EXTRA_PROPS" >> "$work/connector.properties"; fi

mkdir -p "$(dirname "$OUT")"
hook="${sql[*]} inventory < $here/scenarios/$CHANGES"
"$here/capture-mysql.sh" "$work/connector.properties" "$OUT" 0 "$IDLE" "$hook"
cp "$work/history.dat" "$OUT.history.jsonl"
echo "wrote $OUT and $OUT.{offsets,snapshot.offsets,record-offsets,history}.jsonl" >&2
