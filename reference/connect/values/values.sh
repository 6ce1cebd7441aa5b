#!/usr/bin/env bash
# Test peer only: regenerates testdata/connect/header_values.tsv, Kafka
# Connect 4.3.0's Values.convertToString of the key structs in
# HeaderValues.java (the text SimpleHeaderConverter writes for Debezium's
# __debezium.newkey/oldkey headers). Uses the jars the Debezium reference
# build resolved (reference/debezium/target/lib; BUILD_ONLY=1
# reference/debezium/capture.sh makes them).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
lib="${LIB:-$repo/reference/debezium/target/lib}"
cp="$lib/connect-api-4.3.0.jar:$lib/kafka-clients-4.3.0.jar:$lib/slf4j-api-1.7.36.jar"
mkdir -p "$repo/testdata/connect"
java -Duser.timezone=UTC -cp "$cp" "$here/HeaderValues.java" > "$repo/testdata/connect/header_values.tsv"
echo "wrote $repo/testdata/connect/header_values.tsv" >&2
