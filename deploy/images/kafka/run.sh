#!/bin/bash
# KAFKA_* -> /opt/kafka/server.properties, format the log dirs once, start
# kafka.Kafka (KRaft). Defaults make a single combined node on :9092.
set -euo pipefail
props=/var/lib/kafka/server.properties
: "${KAFKA_NODE_ID:=1}" "${KAFKA_PROCESS_ROLES:=broker,controller}"
: "${KAFKA_LISTENERS:=PLAINTEXT://:9092,CONTROLLER://:9093}"
: "${KAFKA_ADVERTISED_LISTENERS:=PLAINTEXT://localhost:9092}"
: "${KAFKA_CONTROLLER_LISTENER_NAMES:=CONTROLLER}"
: "${KAFKA_LISTENER_SECURITY_PROTOCOL_MAP:=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT}"
: "${KAFKA_CONTROLLER_QUORUM_VOTERS:=${KAFKA_NODE_ID}@localhost:9093}"
: "${KAFKA_LOG_DIRS:=/var/lib/kafka/data}"
: "${KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR:=1}" "${KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR:=1}"
: "${KAFKA_TRANSACTION_STATE_LOG_MIN_ISR:=1}" "${KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS:=0}"
export ${!KAFKA_*}
: >"$props"
for v in ${!KAFKA_*}; do
  case "$v" in KAFKA_HEAP_OPTS|KAFKA_OPTS) continue ;; esac
  key=$(echo "${v#KAFKA_}" | tr 'A-Z' 'a-z' | sed -e 's/___/-/g' -e 's/__/@/g' -e 's/_/./g' -e 's/@/_/g')
  printf '%s=%s\n' "$key" "${!v}" >>"$props"
done
cp=/opt/kafka/libs/*
java=(java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} -XX:+UseSerialGC ${KAFKA_OPTS:-} -cp "$cp")
if [ ! -f "$KAFKA_LOG_DIRS/meta.properties" ]; then
  "${java[@]}" kafka.tools.StorageTool format -t "${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}" -c "$props" --ignore-formatted
fi
exec "${java[@]}" kafka.Kafka "$props"
