#!/usr/bin/env bash
# Test peer only: reproduces testdata/debezium/mariadb_types_<mode>.jsonl (+ offsets) for each MODE
# given (default: every scenarios/mariadb_types/*.properties).
#
# Per mode: a throwaway MariaDB (as run-mariadb-inventory.sh), database "types" loaded with
# scenarios/mariadb_types.sql, Debezium's MariaDbConnector 3.5.0.Final (capture-mysql.sh) with
# scenarios/mariadb_types.properties.in plus scenarios/mariadb_types/<mode>.properties; after the
# snapshot the hook runs scenarios/mariadb_types_changes.sql.
#
#   reference/debezium/run-mariadb-types.sh [MODE...]      # PORT=53307 IDLE=8 overridable
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
PORT="${PORT:-53307}"
IDLE="${IDLE:-8}"

modes=("$@")
if [[ ${#modes[@]} == 0 ]]; then
  for f in "$here"/scenarios/mariadb_types/*.properties; do modes+=("$(basename "$f" .properties)"); done
fi

run_mode() {
  local mode="$1" out="$repo/testdata/debezium/mariadb_types_$1.jsonl"
  local work pid
  work="$(mktemp -d /tmp/dbzref-mariadb.XXXXXX)"
  chmod 755 "$work"
  local runas=()
  if [[ $(id -u) == 0 ]]; then chown mysql: "$work"; runas=(--user=mysql); fi
  mariadb-install-db --no-defaults --datadir="$work/data" --auth-root-authentication-method=normal \
    --skip-test-db --skip-name-resolve "${runas[@]}" >/dev/null
  /usr/sbin/mariadbd --no-defaults --datadir="$work/data" --socket="$work/mysqld.sock" \
    --pid-file="$work/mysqld.pid" --log-error="$work/server.log" --bind-address=127.0.0.1 --port="$PORT" \
    --skip-name-resolve --server-id=1 --log-bin="$work/data/mysql-bin" --binlog-format=ROW \
    --binlog-row-image=FULL --gtid-domain-id=0 --gtid-strict-mode=ON --default-time-zone=+00:00 \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci --innodb-buffer-pool-size=64M \
    --innodb-log-file-size=48M --innodb-flush-log-at-trx-commit=2 --skip-innodb-doublewrite --sync-binlog=0 \
    "${runas[@]}" &
  pid=$!
  # shellcheck disable=SC2064
  trap "kill -9 $pid 2>/dev/null || true; rm -rf '$work'" RETURN EXIT
  local sql=(mariadb --no-defaults --default-character-set=utf8mb4 -S "$work/mysqld.sock" -u root --batch)
  for _ in $(seq 1 600); do "${sql[@]}" -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
  "${sql[@]}" <<SQL
CREATE USER 'connectd'@'%' IDENTIFIED BY 'connectd';
GRANT ALL PRIVILEGES ON *.* TO 'connectd'@'%' WITH GRANT OPTION;
CREATE DATABASE types;
SQL
  "${sql[@]}" types < "$here/scenarios/mariadb_types.sql"
  { sed -e "s|@PORT@|$PORT|" -e "s|@OFFSETS@|$work/offsets.dat|" -e "s|@HISTORY@|$work/history.dat|" \
      "$here/scenarios/mariadb_types.properties.in"
    cat "$here/scenarios/mariadb_types/$mode.properties"; } > "$work/connector.properties"
  mkdir -p "$(dirname "$out")"
  "$here/capture-mysql.sh" "$work/connector.properties" "$out" 0 "$IDLE" \
    "${sql[*]} types < $here/scenarios/mariadb_types_changes.sql"
  echo "[$mode] wrote $out" >&2
}

for m in "${modes[@]}"; do run_mode "$m"; done
