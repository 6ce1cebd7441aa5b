package connect

import "time"

// Header is one Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// SourceRecord is a record produced by a source task, as
// org.apache.kafka.connect.source.SourceRecord. SourcePartition and
// SourceOffset are JSON-serialisable maps; the worker stores the latest
// acknowledged offset per partition in the offsets topic in Kafka Connect's
// format. A nil Value is a tombstone.
type SourceRecord struct {
	SourcePartition map[string]any
	SourceOffset    map[string]any

	Topic     string
	Partition *int32 // nil = the producer's partitioner decides (by key)

	KeySchema   *Schema
	Key         any
	ValueSchema *Schema
	Value       any

	Timestamp time.Time // zero = broker/producer time
	Headers   []Header
}
