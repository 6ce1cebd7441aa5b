// Package heartbeat builds Debezium's heartbeat records
// (heartbeat.interval.ms): topic "<topic.heartbeat.prefix>.<topic.prefix>"
// (default prefix "__debezium-heartbeat"), key
// io.debezium.connector.common.ServerNameKey {serverName}, value
// io.debezium.connector.common.Heartbeat {ts_ms}, as Debezium 3.6's
// HeartbeatImpl. The record carries the connector's current offset, so
// committing it moves the source position forward while no change arrives.
package heartbeat

import (
	"time"

	"github.com/connectd/connectd/connect"
)

// DefaultTopicsPrefix is topic.heartbeat.prefix's default.
const DefaultTopicsPrefix = "__debezium-heartbeat"

var keySchema = connect.StructSchema().Name("io.debezium.connector.common.ServerNameKey").Version(1).
	Field("serverName", connect.Prim(connect.String, false)).Build()

var valueSchema = connect.StructSchema().Name("io.debezium.connector.common.Heartbeat").Version(1).
	Field("ts_ms", connect.Prim(connect.Int64, false)).Build()

// Topic returns the heartbeat topic of a connector: topicsPrefix + "." + serverName.
func Topic(topicsPrefix, serverName string) string { return topicsPrefix + "." + serverName }

// Record returns a heartbeat record of serverName (topic.prefix) on topic,
// carrying partition and offset; now is written to ts_ms.
func Record(topic, serverName string, partition, offset map[string]any, now time.Time) *connect.SourceRecord {
	return &connect.SourceRecord{
		SourcePartition: partition,
		SourceOffset:    offset,
		Topic:           topic,
		KeySchema:       keySchema,
		Key:             &connect.Struct{Schema: keySchema, Values: []any{serverName}},
		ValueSchema:     valueSchema,
		Value:           &connect.Struct{Schema: valueSchema, Values: []any{now.UnixMilli()}},
	}
}
