#!/usr/bin/env bash
# Test peer only (never part of connectd): builds (once) and runs ref.Capture, the real
# Debezium embedded engine writing change events as JSON lines.
#
#   capture.sh PROPS OUTPUT MAX_RECORDS IDLE_SECONDS [HOOK_CMD]
#
# The jar and its dependencies are cached in reference/debezium/target; delete that directory
# (or set REBUILD=1) to rebuild. Maven uses the default ~/.m2 cache. BUILD_ONLY=1 builds (if
# needed) and exits (scripts/setup.sh test does that).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jar="$here/target/debezium-capture.jar"
if [[ "${REBUILD:-0}" == 1 || ! -f "$jar" || "$here/pom.xml" -nt "$jar" || "$here/src/main/java/ref/Capture.java" -nt "$jar" ]]; then
  echo "[capture.sh] building $jar" >&2
  (cd "$here" && mvn -q -DskipTests package)
fi
[[ "${BUILD_ONLY:-0}" == 1 ]] && exit 0
exec java ${JAVA_OPTS:-} -Dorg.slf4j.simpleLogger.defaultLogLevel="${LOG_LEVEL:-warn}" \
  -jar "$jar" "$@"
