package connect

import (
	"context"
	"github.com/twmb/franz-go/pkg/kgo"
	"log/slog"
)

// Connector is the part common to source and sink connectors
// (org.apache.kafka.connect.connector.Connector).
type Connector interface {
	// Version is the plugin version shown by the REST API.
	Version() string
	// Config returns the definition of every key the connector accepts; it
	// drives validation, defaults and the REST validate response.
	Config() *ConfigDef
	// Validate checks a full connector config beyond per-key rules (for
	// example, keys that depend on each other). Per-key rules are in Config.
	Validate(cfg map[string]string) []ConfigError
	// TaskConfigs splits the work into at most maxTasks task configs.
	TaskConfigs(cfg map[string]string, maxTasks int) ([]map[string]string, error)
}

// SourceConnector creates source tasks.
type SourceConnector interface {
	Connector
	NewTask() SourceTask
}

// OffsetReader reads the last committed offset of a source partition
// (org.apache.kafka.connect.storage.OffsetStorageReader). It returns nil and
// no error when no offset was ever committed.
type OffsetReader interface {
	Offset(ctx context.Context, partition map[string]any) (map[string]any, error)
}

// OffsetWriter is implemented by the SourceTaskContext of workers that let
// a task store offsets of source partitions of its own without a record:
// state the task needs to replay its records exactly as it first emitted
// them (the PostgreSQL connector's relation history). WriteOffsets returns
// once the offsets are durable, as the worker's offset commit (acks=all,
// synced by an embedded broker); a nil Offset deletes the partition's. They
// live with the connector's other offsets: listed, altered and reset with
// them (KIP-875). Errors are the offset store's.
type OffsetWriter interface {
	WriteOffsets(ctx context.Context, offsets []PartitionOffset) error
}

// SourceTaskContext is what the worker gives a source task.
type SourceTaskContext interface {
	OffsetReader() OffsetReader
}

// SourceTask reads from an upstream system
// (org.apache.kafka.connect.source.SourceTask).
//
// The worker calls Start once, then Poll in a loop from one goroutine, and
// Commit from another goroutine whenever an offset has become durable. Stop
// is called once after the poll loop has ended.
type SourceTask interface {
	// Start connects to the upstream system; an error fails the task.
	Start(ctx context.Context, tc SourceTaskContext, cfg map[string]string) error
	// Poll blocks until records are available or ctx is done; it returns
	// (nil, nil) when it has nothing to return for now. An error fails the task.
	Poll(ctx context.Context) ([]*SourceRecord, error)
	// Commit tells the task that every record up to and including the one
	// carrying offset (in partition) was acknowledged by Kafka and that this
	// offset is durably stored. Only then may the task confirm the position
	// to the upstream system (DESIGN.md section 3, invariant 1).
	Commit(ctx context.Context, partition, offset map[string]any) error
	// Stop releases every resource. It must be safe after a failed Start.
	Stop() error
}

// Converter turns Connect data into the bytes of a Kafka record key or value
// (org.apache.kafka.connect.storage.Converter).
type Converter interface {
	// Configure receives the converter's properties with the "key.converter."
	// or "value.converter." prefix removed.
	Configure(props map[string]string, isKey bool) error
	// FromConnect serialises value v of schema s for topic. A nil schema and
	// nil value give nil bytes (a tombstone).
	FromConnect(topic string, s *Schema, v any) ([]byte, error)
}

// AppendConverter is implemented by converters that can serialise into a
// buffer the caller owns, so that a worker can reuse the buffers of records
// Kafka has acknowledged instead of allocating one per record.
// AppendFromConnect appends exactly the bytes FromConnect(topic, s, v)
// returns to dst and returns the extended slice (dst's array when it has
// the capacity). A tombstone (nil schema and nil value) returns nil, not
// dst; errors are FromConnect's.
type AppendConverter interface {
	AppendFromConnect(dst []byte, topic string, s *Schema, v any) ([]byte, error)
}

// OffsetAlterer is implemented by source connectors that manage offsets
// outside the offsets topic, as SourceConnector.alterOffsets (KIP-875).
// AlterOffsets is called before the worker writes offsets (nil offset =
// reset) for a STOPPED connector; it returns true when the connector has
// applied the change itself. Connectors that do not implement it leave
// the offsets to the framework (Kafka Connect's default returns false).
type OffsetAlterer interface {
	AlterOffsets(cfg map[string]string, offsets []PartitionOffset) (bool, error)
}

// PartitionOffset is one source partition and its offset (nil = reset).
type PartitionOffset struct {
	Partition map[string]any
	Offset    map[string]any
}

// TaskLogger is implemented by the SourceTaskContext of workers that give
// tasks a logger named after the connector class (for Debezium connectors,
// under "io.debezium"), whose level follows PUT /admin/loggers.
type TaskLogger interface {
	Logger() *slog.Logger
}

// WorkerInfo describes the worker a task runs in.
type WorkerInfo struct {
	// BootstrapServers are the worker's Kafka brokers (host:port), the
	// embedded broker's listener when the worker runs one.
	BootstrapServers []string
	// KafkaClientOpts are the franz-go options that reach those brokers
	// with the worker's producer security settings (security.protocol,
	// sasl.*, ssl.*: a TLS dialer, a SASL mechanism); nil for PLAINTEXT.
	KafkaClientOpts []kgo.Opt
}

// WorkerInfoProvider is implemented by the SourceTaskContext of workers
// that tell tasks about themselves; tasks check for it with a type
// assertion (e.g. Debezium's schema history defaults its
// schema.history.internal.kafka.bootstrap.servers to the worker's brokers).
type WorkerInfoProvider interface {
	WorkerInfo() WorkerInfo
}

// CurrentReader is implemented by source tasks that can read the current
// state of what they capture (connectd verify): ReadCurrent reads every
// captured table as a snapshot would, giving each row's record (op "r", the
// connector's topic, key, schema and value) to emit, without changing
// anything on the source (no slot, no offsets). The task value is fresh and
// is not started. It returns the source position the read is consistent with
// (for example {"lsn": …}), or nil when the connector cannot tell.
type CurrentReader interface {
	ReadCurrent(ctx context.Context, cfg map[string]string, emit func(*SourceRecord) error) (map[string]any, error)
}

// SourceQuerier is implemented by source tasks that can run a read-only
// query on their database (connectd verify --against JOB: a SQL job's
// SELECT on the source). The task value is fresh and is not started; each
// call opens a connection of its own with the connector's settings.
//
// SourceTable returns the table a topic of the connector captures (its
// schema and name) and the columns of the topic's record key, in key order;
// an error when the topic is not one of the connector's tables.
//
// QuerySource runs one SELECT in a REPEATABLE READ READ ONLY transaction
// and gives each row to emit as JSON-like values: nil, bool, string,
// json.Number (integers, exact decimals and floats as the database writes
// them); a column of another type is an error naming it. It returns the
// source position the rows are consistent with (for example {"lsn": …}).
type SourceQuerier interface {
	SourceTable(ctx context.Context, cfg map[string]string, topic string) (schema, table string, key []string, err error)
	QuerySource(ctx context.Context, cfg map[string]string, query string, emit func(row []any) error) (map[string]any, error)
}

// SinkVerifier is implemented by sink tasks whose target can be compared
// with the rows a set of records would leave there (connectd verify
// --against SINK_CONNECTOR). StartVerification opens a comparison with the
// sink connector's task config; it must not change the target.
type SinkVerifier interface {
	StartVerification(ctx context.Context, cfg map[string]string) (SinkVerification, error)
}

// SinkVerification is one comparison: Put hands it the expected records
// (the source's current rows as the sink would receive them), Compare
// compares, Close releases what it made.
type SinkVerification interface {
	Put(ctx context.Context, records []*SinkRecord) error
	Compare(ctx context.Context, examples int) ([]SinkVerifyTable, error)
	Close() error
}

// SinkVerifyTable is the comparison of one target table.
type SinkVerifyTable struct {
	Table     string // the target table
	Problem   string // why it could not be compared (e.g. it does not exist)
	Expected  int64  // rows the records leave in the table
	Rows      int64  // rows the table holds
	Missing   int64  // expected keys the table lacks
	Extra     int64  // keys of the table not expected
	Different int64  // keys in both, with other column values
	Examples  []SinkVerifyExample
}

// SinkVerifyExample is one differing key: its columns, the expected and
// the actual row as text (column → value, null as nil), and the columns
// that differ.
type SinkVerifyExample struct {
	Kind     string // missing, extra, different
	Key      map[string]*string
	Columns  []string
	Expected map[string]*string
	Actual   map[string]*string
}
