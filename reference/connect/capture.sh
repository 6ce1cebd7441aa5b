#!/usr/bin/env bash
# Test peer only (never part of connectd): records the golden REST responses
# of a real Kafka Connect 4.3 distributed worker (connect-runtime from Maven
# Central) running the real Debezium 3.6.1 PostgreSQL connector from its
# plugin.path, against a real KRaft broker (scripts/kafka.sh) and a
# throwaway PostgreSQL 15 (internal/testenv).
#
#   reference/connect/capture.sh
#
# It fetches the jars once into reference/connect/target (lib/ and
# plugins/debezium-connector-postgres/), then runs the same Go test that
# `make test` runs against connectd (integration TestRESTCompatibility),
# in capture mode: the test drives the Java worker through the REST call
# sequence and rewrites integration/testdata/connect-compat/kafka-connect.json.
# Takes about a minute (JVM start-up dominates); not part of `make test`.
# BUILD_ONLY=1 only fetches the jars (scripts/setup.sh test does, for the
# migration test, integration TestMigrateFromKafkaConnect).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ ! -f "$here/target/.complete" || "$here/pom.xml" -nt "$here/target/.complete" || "$here/pom-plugin.xml" -nt "$here/target/.complete" ]]; then
  echo "[capture.sh] fetching Kafka Connect and the Debezium PostgreSQL plugin into $here/target" >&2
  rm -rf "$here/target" && mkdir -p "$here/target"
  mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$here/target/lib" >&2
  mvn -q -B -f "$here/pom-plugin.xml" dependency:copy-dependencies -DincludeScope=runtime -DexcludeGroupIds=org.apache.kafka \
    -DoutputDirectory="$here/target/plugins/debezium-connector-postgres" >&2
  touch "$here/target/.complete"
fi
[[ "${BUILD_ONLY:-}" == 1 ]] && exit 0
cd "$root"
exec go test -count=1 -timeout 10m -run '^TestRESTCompatibility$' ./integration/ -args -capture-kafka-connect "$@"
