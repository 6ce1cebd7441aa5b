#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME each (default 1m; the soak's is 10m):
#   FUZZTIME=10m bash scripts/fuzz.sh
# A failing input is written under the package's testdata/fuzz/<Target>/ by
# go test (kept in the repository: it becomes a regression case that plain
# go test runs). Exit status: the first failing target's.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${FUZZTIME:-1m}
targets=(
  ./connectors/postgres:FuzzWALDecoder
  ./connectors/postgres:FuzzWALDecoderStream
  ./connectors/postgres:FuzzTextParse
  ./connectors/mysql:FuzzNormalizeMariaDB
  ./connectors/mysql:FuzzApplyDDL
  ./converters:FuzzJSONToConnect
  ./broker:FuzzRequestDecoding
  ./rest:FuzzRESTBodies
)
for pt in "${targets[@]}"; do
  pkg=${pt%%:*} name=${pt##*:}
  echo "fuzz: $pkg $name for $t"
  go test -run '^$' -fuzz "^${name}\$" -fuzztime "$t" "$pkg"
done
