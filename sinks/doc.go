// Package sinks holds connectd's sink connectors; each lives in its own
// sub-package (sinks/jdbc: io.debezium.connector.jdbc.JdbcSinkConnector).
// Sink connectors reach the runtime only through connect.SinkConnector /
// connect.SinkTask.
package sinks
