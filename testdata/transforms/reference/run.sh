#!/bin/sh
# Runs SmtReference.java against the Debezium 3.6.1 / Kafka 4.3.0 jars in ~/.m2
# (fetched by reference/debezium's Maven build) and rewrites
# debezium_smts.reference.jsonl. Usage: run.sh CASES_FILE
set -e
here=$(cd "$(dirname "$0")" && pwd)
m2=${M2_REPO:-$HOME/.m2/repository}
cp=$(find "$m2" -name '*.jar' \( -path '*io/debezium/*/3.6.1.Final/*' -o -path '*org/apache/kafka/connect-api/4.3.0/*' \
  -o -path '*org/apache/kafka/connect-json/4.3.0/*' -o -path '*org/apache/kafka/connect-transforms/4.3.0/*' \
  -o -path '*org/apache/kafka/kafka-clients/4.3.0/*' -o -path '*org/slf4j/slf4j-api/*' -o -path '*com/fasterxml/jackson/core/*/2.21*' -o -path '*com/fasterxml/jackson/module/jackson-module-blackbird/2.21*' \) \
  | grep -v sources | tr '\n' ':')
out=$(mktemp -d)
javac -d "$out" -cp "$cp" "$here/SmtReference.java"
java -cp "$cp:$out" SmtReference "$1" > "$here/debezium_smts.reference.jsonl"
rm -rf "$out"
