#!/usr/bin/env bash
# Test peer only (never part of connectd): capture.sh for the MariaDB/MySQL connectors. Builds
# (once) pom-$FLAVOR.xml into target-$FLAVOR/ (same ref.Capture as capture.sh) and runs it.
# FLAVOR=mariadb (default; Debezium 3.5.0.Final, see pom-mariadb.xml) or mysql (3.6.1.Final).
#
#   [FLAVOR=mariadb] capture-mysql.sh PROPS OUTPUT MAX_RECORDS IDLE_SECONDS [HOOK_CMD]
# BUILD_ONLY=1 builds (if needed) and exits (scripts/setup.sh test does that for mariadb).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FLAVOR="${FLAVOR:-mariadb}"
jar="$here/target-$FLAVOR/debezium-capture.jar"
if [[ "${REBUILD:-0}" == 1 || ! -f "$jar" || "$here/pom-$FLAVOR.xml" -nt "$jar" || "$here/src/main/java/ref/Capture.java" -nt "$jar" ]]; then
  echo "[capture-mysql.sh] building $jar" >&2
  (cd "$here" && mvn -q -DskipTests -f "pom-$FLAVOR.xml" package)
fi
[[ "${BUILD_ONLY:-0}" == 1 ]] && exit 0
exec java ${JAVA_OPTS:-} -Dorg.slf4j.simpleLogger.defaultLogLevel="${LOG_LEVEL:-warn}" \
  -jar "$jar" "$@"
