#!/usr/bin/env bash
# Fetches the Apache Kafka broker (KRaft) the integration tests run against
# from Maven Central into a cache directory, once: a second run finds the
# jars and downloads nothing. Prints the directory holding the jars.
#   scripts/kafka.sh                  -> $CONNECTD_KAFKA_CACHE (default ~/.cache/connectd/kafka-<version>)/lib
#   scripts/kafka.sh tools            -> Kafka's command-line tools (kafka-tools) of the same version
#                                        (run with both directories on the classpath)
#   scripts/kafka.sh connect-file     -> Kafka Connect's FileStream connectors of the same version
#   scripts/kafka.sh clients VERSION  -> kafka-clients VERSION with its dependencies
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pom="$root/integration/kafka/pom.xml"
version=$(sed -n 's:.*<version.kafka>\(.*\)</version.kafka>.*:\1:p' "$pom")
cache=${CONNECTD_KAFKA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/connectd/kafka-$version}
need() {
  command -v java >/dev/null || { echo "kafka.sh: java (17+) is missing" >&2; exit 1; }
  command -v mvn >/dev/null || { echo "kafka.sh: mvn is missing" >&2; exit 1; }
}
case "${1:-}" in
  tools|connect-file|clients)
    if [ "$1" = tools ]; then artifact=kafka-tools v=$version lib="$cache/tools"
    elif [ "$1" = connect-file ]; then artifact=connect-file v=$version lib="$cache/connect-file"
    else artifact=kafka-clients v=${2:?usage: kafka.sh clients VERSION} lib="$(dirname "$cache")/kafka-clients-$v"; fi
    if [ ! -f "$lib/.complete" ]; then
      need
      echo "kafka.sh: fetching $artifact $v from Maven Central into $lib" >&2
      rm -rf "$lib" && mkdir -p "$lib"
      mvn -q -B -f "$root/integration/kafka/extra/pom.xml" dependency:copy-dependencies \
        -Dextra.artifact="$artifact" -Dextra.version="$v" -DincludeScope=runtime -DoutputDirectory="$lib" >&2
      ls "$lib/$artifact-$v.jar" >/dev/null
      touch "$lib/.complete"
    fi
    echo "$lib"
    exit 0
    ;;
esac
lib="$cache/lib"
if [ ! -f "$lib/.complete" ]; then
  need
  echo "kafka.sh: fetching Apache Kafka $version from Maven Central into $lib" >&2
  rm -rf "$lib" && mkdir -p "$lib"
  mvn -q -B -f "$pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$lib" >&2
  ls "$lib"/kafka_2.13-"$version".jar >/dev/null
  touch "$lib/.complete"
fi
echo "$lib"
