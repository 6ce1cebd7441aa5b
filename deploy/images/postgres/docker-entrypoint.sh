#!/bin/bash
# Initialises $PGDATA on first start (as the official postgres image does),
# then execs postgres with the given arguments.
set -euo pipefail
if [ "${1:0:1}" = - ]; then set -- postgres "$@"; fi
if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  user=${POSTGRES_USER:-postgres}
  auth=${POSTGRES_HOST_AUTH_METHOD:-}
  if [ -z "$auth" ]; then
    [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "set POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust)" >&2; exit 1; }
    auth=scram-sha-256
  fi
  pwfile=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host="$auth" -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  {
    echo "listen_addresses = '*'"
    echo "wal_level = logical"
    echo "max_wal_senders = 10"
    echo "max_replication_slots = 10"
  } >>"$PGDATA/postgresql.conf"
  # Logical replication connections name their database, so "all" covers them.
  echo "host all all all $auth" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start >/dev/null
  db=${POSTGRES_DB:-$user}
  if [ "$db" != postgres ]; then psql -v ON_ERROR_STOP=1 -U "$user" -d postgres -qc "CREATE DATABASE \"$db\""; fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sql) echo "running $f"; psql -v ON_ERROR_STOP=1 -U "$user" -d "$db" -q -f "$f" ;;
      *.sh) echo "running $f"; . "$f" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "PostgreSQL init process complete; ready for start up."
fi
exec "$@"
