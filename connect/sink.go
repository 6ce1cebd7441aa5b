package connect

import (
	"context"
	"time"
)

// SinkRecord is a record read from Kafka and handed to a sink task, as
// org.apache.kafka.connect.sink.SinkRecord: the converted key and value
// (after the connector's transformation chain) plus the Kafka coordinates
// of the original record. A nil Value is a tombstone.
type SinkRecord struct {
	Topic     string
	Partition int32
	Offset    int64 // the Kafka offset of the original record

	KeySchema   *Schema
	Key         any
	ValueSchema *Schema
	Value       any

	Timestamp time.Time
	Headers   []Header
}

// SinkConnector creates sink tasks
// (org.apache.kafka.connect.sink.SinkConnector). The worker consumes the
// connector's topics (topics or topics.regex) with the consumer group
// connect-<connector name>.
type SinkConnector interface {
	Connector
	NewTask() SinkTask
}

// ErrantRecordReporter sends a record the task could not write to the
// connector's dead letter queue (KIP-610,
// org.apache.kafka.connect.sink.ErrantRecordReporter). Report returns an
// error when errors.tolerance=none (the task must fail) or the report
// could not be written.
type ErrantRecordReporter interface {
	Report(ctx context.Context, r *SinkRecord, cause error) error
}

// SinkTaskContext is what the worker gives a sink task
// (org.apache.kafka.connect.sink.SinkTaskContext).
type SinkTaskContext interface {
	// ErrantRecordReporter returns the connector's reporter, nil when the
	// worker offers none.
	ErrantRecordReporter() ErrantRecordReporter
}

// SinkTask writes records to a downstream system
// (org.apache.kafka.connect.sink.SinkTask).
//
// The worker calls Start once, then Put from one goroutine with the
// records of each poll in Kafka order per partition, and Flush before it
// commits the consumer offsets of everything passed to Put so far. Stop is
// called once at the end.
type SinkTask interface {
	// Start connects to the downstream system; an error fails the task.
	Start(ctx context.Context, tc SinkTaskContext, cfg map[string]string) error
	// Put writes or buffers records. A *RetriableError makes the worker
	// hand the same records to Put again after a backoff; any other error
	// fails the task.
	Put(ctx context.Context, records []*SinkRecord) error
	// Flush makes every record passed to Put durable downstream. Only
	// after it returns nil does the worker commit their offsets
	// (DESIGN.md section 3, invariant 1). Errors as Put.
	Flush(ctx context.Context) error
	// Stop releases every resource. It must be safe after a failed Start.
	Stop() error
}

// ToConnectConverter is implemented by converters that can read Kafka
// bytes back into Connect data (Converter.toConnectData); sink tasks need
// it. A nil b (tombstone) gives a nil schema and value.
type ToConnectConverter interface {
	ToConnect(topic string, b []byte) (*Schema, any, error)
}
