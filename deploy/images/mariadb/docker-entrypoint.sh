#!/bin/bash
# Initialises /var/lib/mysql on first start (as the official mariadb image
# does), then execs mariadbd with the given arguments.
set -euo pipefail
if [ "${1:0:1}" = - ]; then set -- mariadbd "$@"; fi
if [ "$1" = mariadbd ] && [ ! -d /var/lib/mysql/mysql ]; then
  if [ -z "${MARIADB_ROOT_PASSWORD:-}" ] && [ -z "${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:-}" ]; then
    echo "set MARIADB_ROOT_PASSWORD (or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1)" >&2; exit 1
  fi
  mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db --auth-root-authentication-method=normal >/dev/null
  sock=/run/mysqld/init.sock
  mariadbd --skip-networking --socket="$sock" --skip-log-bin &
  pid=$!
  for _ in $(seq 60); do mariadb -uroot -S "$sock" -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.5; done
  q() { mariadb -uroot -S "$sock" --batch "$@"; }
  {
    echo "SET @@SESSION.SQL_LOG_BIN=0;"
    # mariadb-install-db's other root and anonymous accounts (password-less;
    # root@127.0.0.1 would shadow root@'%' for TCP on loopback).
    echo "DROP USER IF EXISTS ''@'localhost', ''@'${HOSTNAME}', 'root'@'127.0.0.1', 'root'@'::1', 'root'@'${HOSTNAME}';"
    echo "CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '${MARIADB_ROOT_PASSWORD:-}';"
    echo "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
    echo "ALTER USER 'root'@'localhost' IDENTIFIED BY '${MARIADB_ROOT_PASSWORD:-}';"
    [ -n "${MARIADB_DATABASE:-}" ] && echo "CREATE DATABASE IF NOT EXISTS \`$MARIADB_DATABASE\`;"
    if [ -n "${MARIADB_USER:-}" ]; then
      echo "CREATE USER '$MARIADB_USER'@'%' IDENTIFIED BY '${MARIADB_PASSWORD:-}';"
      [ -n "${MARIADB_DATABASE:-}" ] && echo "GRANT ALL ON \`$MARIADB_DATABASE\`.* TO '$MARIADB_USER'@'%';"
    fi
    echo "FLUSH PRIVILEGES;"
  } | q
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sql) echo "running $f"; q -p"${MARIADB_ROOT_PASSWORD:-}" ${MARIADB_DATABASE:+"$MARIADB_DATABASE"} <"$f" ;;
      *.sh) echo "running $f"; . "$f" ;;
    esac
  done
  kill "$pid"; wait "$pid" || true
  echo "MariaDB init process done. Ready for start up."
fi
exec "$@"
