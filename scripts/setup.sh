#!/usr/bin/env bash
# Installs what connectd's demo and tests need on a fresh Debian machine,
# from the package registries this machine reaches, and does nothing when
# everything is there already (so a second run downloads nothing).
#   scripts/setup.sh demo   PostgreSQL 15 server binaries, Go modules
#   scripts/setup.sh test   the above + MariaDB server (row binlog tests), Java 17 +
#                           Maven and the Apache Kafka broker jars (scripts/kafka.sh),
#                           Flink SQL 1.20 and 2.2 with its Kafka connector (scripts/flink.sh),
#                           Chromium (dashboard browser test), promtool (alert rules),
#                           Docker (started if not running) and the local images
#                           of scripts/images.sh db (testcontainers suite)
set -euo pipefail
mode=${1:-test}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

need_apt=()
[ -x "$PG_BIN/initdb" ] || need_apt+=(postgresql-15)
if [ "$mode" = test ]; then
  command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need_apt+=(mariadb-server)
  # A real Apache Kafka broker (KRaft) for the integration tests: Java + Maven.
  command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
  command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
  # The dashboard's browser test (integration/metrics_test.go) and make screenshot.
  command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
  # promtool checks and unit-tests the alert rules under deploy/.
  command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
  # Docker for the testcontainers suite and make compose-smoke: Debian's
  # engine, docker-compose (v1, when the client has no compose plugin) and
  # debootstrap for the local images (scripts/images.sh).
  command -v dockerd >/dev/null 2>&1 || need_apt+=(docker.io)
  command -v debootstrap >/dev/null 2>&1 || need_apt+=(debootstrap)
  { docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1; } || need_apt+=(docker-compose)
  # Locale sources for the server locales of TestMoneyLocale (localedef below).
  { command -v localedef >/dev/null 2>&1 && [ -d /usr/share/i18n/locales ]; } || need_apt+=(locales)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing ${need_apt[*]}; run as root or install them (apt-get install ${need_apt[*]})" >&2
    exit 1
  fi
  echo "setup: installing ${need_apt[*]} from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  # The packages start system services we do not use: tests start their own.
  for svc in postgresql mariadb prometheus; do
    (service "$svc" stop >/dev/null 2>&1 || true)
  done
fi
[ -x "$PG_BIN/initdb" ] || { echo "setup: PostgreSQL server binaries still missing in $PG_BIN" >&2; exit 1; }
if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
  echo "setup: the postgres system user is missing (PostgreSQL refuses to run as root)" >&2
  exit 1
fi
go mod download
if [ "$mode" = test ]; then
  # lc_monetary locales of connectors/postgres TestMoneyLocale (money text
  # "1.234,11 €", "1 234,11 €", whole yen); generated once.
  for loc in de_DE fr_FR ja_JP; do
    if ! locale -a 2>/dev/null | grep -qi "^$loc\.utf-\?8$"; then
      if [ "$(id -u)" -ne 0 ]; then
        echo "setup: locale $loc.UTF-8 missing; run as root: localedef -i $loc -f UTF-8 $loc.UTF-8" >&2
        exit 1
      fi
      localedef -i "$loc" -f UTF-8 "$loc.UTF-8"
    fi
  done
  # The Avro end-to-end test decodes our topics with a consumer that is not
  # ours: Python confluent-kafka's AvroDeserializer + SchemaRegistryClient.
  py_check='from confluent_kafka.schema_registry.avro import AvroDeserializer; import fastavro'
  if ! python3 -c "$py_check" >/dev/null 2>&1; then
    echo "setup: installing Python confluent-kafka[avro] and fastavro from PyPI"
    python3 -m pip install -q "confluent-kafka[avro]==2.16.1" "fastavro==1.13.1" ||
      { echo "setup: pip install confluent-kafka[avro] fastavro failed" >&2; exit 1; }
    python3 -c "$py_check" || { echo "setup: confluent-kafka's AvroDeserializer still not importable" >&2; exit 1; }
  fi
  # The non-Java clients compared on the embedded broker and Kafka
  # (integration/python_clients_test.go): librdkafka through
  # confluent-kafka (above) and the pure-Python kafka-python.
  if ! python3 -c 'import kafka' >/dev/null 2>&1; then
    echo "setup: installing Python kafka-python from PyPI"
    python3 -m pip install -q "kafka-python==3.0.12" || { echo "setup: pip install kafka-python failed" >&2; exit 1; }
  fi
fi
if [ "$mode" = test ]; then
  # The integration tests run connectd against a real Apache Kafka broker
  # (KRaft) from Maven Central; its jars are cached (scripts/kafka.sh).
  bash "$(dirname "$0")/kafka.sh" >/dev/null || { echo "setup: fetching Apache Kafka from Maven Central failed" >&2; exit 1; }
  # Kafka's command-line tools and older Java clients, which the tests run
  # against the embedded broker (integration/java_clients_test.go).
  for extra in tools connect-file "clients 3.4.1" "clients 3.7.2"; do
    bash "$(dirname "$0")/kafka.sh" $extra >/dev/null || { echo "setup: fetching Kafka $extra from Maven Central failed" >&2; exit 1; }
  done
  # Flink SQL (Table API, Kafka connector, debezium-json) 1.20 and 2.2 for
  # the Flink jobs on connectd's topics (integration/flink_test.go).
  for v in 1.20 2.2; do
    bash "$(dirname "$0")/flink.sh" "$v" >/dev/null || { echo "setup: fetching Flink $v from Maven Central failed" >&2; exit 1; }
  done
fi
if [ "$mode" = test ]; then
  # The differential suite (internal/difftest/pgdiff) and the golden tests'
  # reference: the real Debezium 3.6.1 embedded engine, built once by Maven
  # (reference/debezium/target, rebuilt when pom.xml or Capture.java changes).
  BUILD_ONLY=1 bash "$(dirname "$0")/../reference/debezium/capture.sh" ||
    { echo "setup: building the Debezium reference (reference/debezium) failed" >&2; exit 1; }
  # The MariaDB differential suite (internal/difftest/mariadiff) and the
  # MariaDB golden tests' reference: Debezium's MariaDbConnector 3.5.0
  # (reference/debezium/target-mariadb, built once).
  FLAVOR=mariadb BUILD_ONLY=1 bash "$(dirname "$0")/../reference/debezium/capture-mysql.sh" ||
    { echo "setup: building the Debezium MariaDB reference (reference/debezium/pom-mariadb.xml) failed" >&2; exit 1; }
  # The migration guide's test (integration TestMigrateFromKafkaConnect): a
  # stock Kafka Connect 4.3 worker with the real Debezium 3.6.1 PostgreSQL
  # plugin (reference/connect/target, fetched once).
  BUILD_ONLY=1 bash "$(dirname "$0")/../reference/connect/capture.sh" ||
    { echo "setup: fetching Kafka Connect and the Debezium plugin (reference/connect) failed" >&2; exit 1; }
fi
if [ "$mode" = test ]; then
  # The testcontainers suite needs a running Docker engine and the local
  # images. Without systemd, start dockerd here (log: /var/log/dockerd.log).
  # Where it cannot run, make test runs without that suite (it says so).
  if ! docker info >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] && command -v dockerd >/dev/null 2>&1; then
    echo "setup: starting dockerd (log: /var/log/dockerd.log)"
    (setsid nohup dockerd >>/var/log/dockerd.log 2>&1 &)
    for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
    docker info >/dev/null 2>&1 || echo "setup: dockerd did not start (see /var/log/dockerd.log)" >&2
  fi
  if docker info >/dev/null 2>&1; then
    bash "$(dirname "$0")/images.sh" db >/dev/null || { echo "setup: building the local images (scripts/images.sh db) failed" >&2; exit 1; }
  fi
fi
