#!/usr/bin/env bash
# `make compose-smoke`: brings docker-compose.yml up with the local images
# (scripts/images.sh all) on free host ports under its own project name,
# registers examples/connectors/postgres-inventory.json and
# mariadb-inventory.json, checks that change events arrive (the snapshot's
# rows, then a row inserted after it), registers jdbc-sink-mariadb.json and
# checks the rows it writes, checks that Prometheus scrapes connectd's
# /metrics, and tears everything down (also on failure).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
t0=$SECONDS
eval "$(bash scripts/images.sh all)"
if docker compose version >/dev/null 2>&1; then compose=(docker compose); else compose=(docker-compose); fi
export COMPOSE_PROJECT_NAME=connectd-smoke-$$
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
export POSTGRES_PORT=$(free_port) MARIADB_PORT=$(free_port) CONNECTD_PORT=$(free_port) CONNECTD_KAFKA_PORT=$(free_port) PROMETHEUS_PORT=$(free_port)
services=(postgres mariadb connectd prometheus) # Grafana: no local image (README)
fail() {
  echo "compose-smoke: FAIL: $*" >&2
  "${compose[@]}" ps >&2 || true
  "${compose[@]}" logs --tail=60 >&2 || true
  exit 1
}
cleanup() { "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true; }
trap cleanup EXIT
"${compose[@]}" up -d --no-build "${services[@]}" >/dev/null 2>&1 || fail "compose up"
api=http://127.0.0.1:$CONNECTD_PORT
# until SECONDS CMD...: retries CMD every 0.5 s.
until_ok() { local end=$((SECONDS + $1)); shift; until "$@" >/dev/null; do [ $SECONDS -lt $end ] || return 1; sleep 0.5; done; }
health() {
  local id; id=$("${compose[@]}" ps -q connectd)
  [ "$(docker inspect -f '{{.State.Running}}' "$id")" = true ] || fail "the connectd container exited"
  [ "$(docker inspect -f '{{.State.Health.Status}}' "$id")" = healthy ]
}
until_ok 120 health || fail "connectd's HEALTHCHECK did not pass"
for c in postgres-inventory mariadb-inventory; do
  code=$(curl -s -o /tmp/smoke-$$.json -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data @examples/connectors/$c.json "$api/connectors")
  [ "$code" = 201 ] || fail "POST $c.json: $code $(cat /tmp/smoke-$$.json)"
done
rm -f /tmp/smoke-$$.json
running() { curl -sf "$api/connectors/$1/status" | grep -q '"tasks":\[{"id":0,"state":"RUNNING"'; }
until_ok 60 running inventory-connector || fail "inventory-connector not RUNNING: $(curl -s "$api/connectors/inventory-connector/status")"
until_ok 60 running mariadb-inventory-connector || fail "mariadb-inventory-connector not RUNNING: $(curl -s "$api/connectors/mariadb-inventory-connector/status")"
# A change after the snapshot, in each database.
"${compose[@]}" exec -T postgres psql -U postgres -d inventory -qc \
  "INSERT INTO inventory.customers (first_name, last_name, email) VALUES ('Smoke', 'Test', 'smoke@example.com')" || fail "psql insert"
"${compose[@]}" exec -T mariadb mariadb -uroot -pdebezium inventory -e \
  "INSERT INTO customers (first_name, last_name, email) VALUES ('Smoke', 'Maria', 'smoke@example.com')" || fail "mariadb insert"
# tail TOPIC N: the first N events of TOPIC, read inside the connectd container.
tail_topic() { timeout 60 "${compose[@]}" exec -T connectd connectd topics tail "$1" --from-beginning --max-records "$2"; }
pg=$(tail_topic dbserver1.inventory.customers 5) || fail "reading dbserver1.inventory.customers"
# One JSON record a line: {"topic":…,"key":…,"value":{"schema":…,"payload":{…,"op":"r"}}}.
echo "$pg" | grep -c '"op":"r"' | grep -qx 4 || fail "want 4 snapshot events (op r) in dbserver1.inventory.customers: $pg"
echo "$pg" | grep '"op":"c"' | grep -q '"Smoke"' || fail "no op c event for the inserted row: $pg"
md=$(tail_topic mariadb1.inventory.customers 5) || fail "reading mariadb1.inventory.customers"
echo "$md" | grep -c '"op":"r"' | grep -qx 4 || fail "want 4 snapshot events in mariadb1.inventory.customers: $md"
echo "$md" | grep '"op":"c"' | grep -q '"Maria"' || fail "no op c event for the MariaDB insert: $md"
# The JDBC sink example copies the PostgreSQL customers into MariaDB.
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data @examples/connectors/jdbc-sink-mariadb.json "$api/connectors")
[ "$code" = 201 ] || fail "POST jdbc-sink-mariadb.json: $code"
copied() { [ "$("${compose[@]}" exec -T mariadb mariadb -uroot -pdebezium inventory -N -e "SELECT count(*) FROM pg_customers WHERE email LIKE 'smoke@%' OR id <= 4" 2>/dev/null | tr -d '[:space:]')" = 5 ]; }
until_ok 60 copied || fail "the JDBC sink did not copy 5 customers into MariaDB: $(curl -s "$api/connectors/customers-to-mariadb/status")"
# Prometheus has scraped connectd: up == 1 and connectd's own series.
prom=http://127.0.0.1:$PROMETHEUS_PORT/api/v1/query
scraped() { curl -sfG "$prom" --data-urlencode 'query=up{job="connectd"} == 1' | grep -q '"value"' &&
  curl -sfG "$prom" --data-urlencode 'query=sum(connectd_source_record_write_total) > 0' | grep -q '"value"'; }
until_ok 60 scraped || fail "Prometheus has not scraped connectd: $(curl -sG "$prom" --data-urlencode 'query=up')"
echo "compose-smoke: ok in $((SECONDS - t0)) s: snapshot + streamed events from PostgreSQL and MariaDB, the JDBC sink copied them into MariaDB, Prometheus scrapes /metrics"
