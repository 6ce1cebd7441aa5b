#!/usr/bin/env bash
# Apache Flink's Table API / SQL with its Kafka connector and JSON formats
# (integration/flink/pom.xml, profiles flink-1.20 and flink-2.2) from Maven
# Central, with the small SQL runner integration/flink/FlinkSql.java
# compiled against it, cached: a second run downloads and compiles nothing.
# There is no flink-dist: jobs run in a local MiniCluster inside one JVM.
#   scripts/flink.sh VERSION                  -> the classpath (jars and the runner's classes)
#   scripts/flink.sh sql VERSION FILE.sql     -> runs FILE.sql (${NAME} = environment variable NAME)
# VERSION is 1.20 or 2.2; the cache is $CONNECTD_FLINK_CACHE
# (default ~/.cache/connectd/flink-VERSION).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/integration/flink"
run=
if [ "${1:-}" = sql ]; then run=1; shift; fi
v=${1:?usage: flink.sh [sql] VERSION [FILE.sql]}
case "$v" in 1.20|2.2) ;; *) echo "flink.sh: VERSION is 1.20 or 2.2, not $v" >&2; exit 2 ;; esac
cache=${CONNECTD_FLINK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/connectd/flink-$v}
command -v java >/dev/null || { echo "flink.sh: java (17+) is missing" >&2; exit 1; }
if [ ! -f "$cache/lib/.complete" ] || [ "$src/pom.xml" -nt "$cache/lib/.complete" ]; then
  command -v mvn >/dev/null || { echo "flink.sh: mvn is missing" >&2; exit 1; }
  echo "flink.sh: fetching Flink $v (Table API, Kafka connector, JSON formats) from Maven Central into $cache/lib" >&2
  rm -rf "$cache/lib" && mkdir -p "$cache/lib"
  mvn -q -B -f "$src/pom.xml" -P "flink-$v" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$cache/lib" >&2
  ls "$cache"/lib/flink-connector-kafka-*.jar >/dev/null
  touch "$cache/lib/.complete"
fi
if [ ! -f "$cache/classes/FlinkSql.class" ] || [ "$src/FlinkSql.java" -nt "$cache/classes/FlinkSql.class" ]; then
  rm -rf "$cache/classes" && mkdir -p "$cache/classes"
  javac -nowarn -d "$cache/classes" -cp "$cache/lib/*" "$src/FlinkSql.java" >&2
fi
cp="$cache/classes:$cache/lib/*"
if [ -z "$run" ]; then echo "$cp"; exit 0; fi
file=${2:?usage: flink.sh sql VERSION FILE.sql}
# Java 17 needs these opens for Flink's (Kryo) serialization of JDK types.
opens=()
for p in java.base/java.lang java.base/java.util java.base/java.lang.reflect java.base/java.io java.base/java.nio java.base/java.net java.base/java.time java.base/java.text java.base/sun.nio.ch java.base/java.util.concurrent java.base/java.util.concurrent.atomic; do
  opens+=(--add-opens "$p=ALL-UNNAMED")
done
exec java -Xmx1g -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "${opens[@]}" \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$cp" FlinkSql "$file"
