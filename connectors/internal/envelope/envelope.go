// Package envelope builds Debezium change-event envelopes (io.debezium.data.Envelope)
// shared by the PostgreSQL and MySQL connectors.
//
// The envelope schema is named "<topic>.Envelope", version 2, with the fields
// before, after, source, transaction, op, ts_ms, ts_us, ts_ns in that order,
// exactly as Debezium 3.x's SchemaFactory/TableSchemaBuilder build it.
package envelope

import (
	"time"

	"github.com/connectd/connectd/connect"
)

// Operation codes of the envelope's "op" field (Envelope.Operation).
const (
	OpRead     = "r"
	OpCreate   = "c"
	OpUpdate   = "u"
	OpDelete   = "d"
	OpTruncate = "t"
	OpMessage  = "m"
)

// SchemaVersion is the version Debezium sets on every envelope schema.
const SchemaVersion = 2

var transactionSchema = connect.StructSchema().Optional().Name("event.block").Version(1).
	Field("id", connect.Prim(connect.String, false)).
	Field("total_order", connect.Prim(connect.Int64, false)).
	Field("data_collection_order", connect.Prim(connect.Int64, false)).
	Build()

// TransactionSchema returns the optional "event.block" (version 1) struct of the
// envelope's transaction field: id string, total_order int64,
// data_collection_order int64.
func TransactionSchema() *connect.Schema { return transactionSchema }

// Schema builds "<topic>.Envelope" for a row schema (used, as Debezium does,
// for both before and after; it must be optional) and a source block schema.
func Schema(topic string, row, source *connect.Schema) *connect.Schema {
	return connect.StructSchema().Name(topic+".Envelope").Version(SchemaVersion).
		Field("before", row).
		Field("after", row).
		Field("source", source).
		Field("transaction", transactionSchema).
		Field("op", connect.Prim(connect.String, false)).
		Field("ts_ms", connect.Prim(connect.Int64, true)).
		Field("ts_us", connect.Prim(connect.Int64, true)).
		Field("ts_ns", connect.Prim(connect.Int64, true)).
		Build()
}

// standardFields are the fields of an envelope made by Schema, in order.
var standardFields = [...]string{"before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"}

// isStandard reports whether env has Schema's fields in Schema's order.
func isStandard(env *connect.Schema) bool {
	if len(env.Fields) != len(standardFields) {
		return false
	}
	for i, f := range env.Fields {
		if f.Name != standardFields[i] {
			return false
		}
	}
	return true
}

// Value builds an envelope struct of schema env. before and after may be nil;
// now is the processing time written to ts_ms/ts_us/ts_ns (Debezium uses the
// connector's clock, not the database's).
func Value(env *connect.Schema, op string, before, after, source *connect.Struct, now time.Time) *connect.Struct {
	st := connect.NewStruct(env)
	if isStandard(env) {
		// The fields by position (Schema's order): no lookup by name
		// for every event (bench/postgres, issue 3).
		v := st.Values
		if before != nil {
			v[0] = before
		}
		if after != nil {
			v[1] = after
		}
		v[2], v[4] = source, op
		v[5], v[6], v[7] = now.UnixMilli(), now.UnixMicro(), now.UnixNano()
		return st
	}
	if before != nil {
		st.Put("before", before)
	}
	if after != nil {
		st.Put("after", after)
	}
	st.Put("source", source)
	st.Put("op", op)
	st.Put("ts_ms", now.UnixMilli())
	st.Put("ts_us", now.UnixMicro())
	st.Put("ts_ns", now.UnixNano())
	return st
}

// Read returns an "r" (snapshot) envelope.
func Read(env *connect.Schema, after, source *connect.Struct, now time.Time) *connect.Struct {
	return Value(env, OpRead, nil, after, source, now)
}

// Create returns a "c" envelope.
func Create(env *connect.Schema, after, source *connect.Struct, now time.Time) *connect.Struct {
	return Value(env, OpCreate, nil, after, source, now)
}

// Update returns a "u" envelope; before is nil when the database did not
// provide the old row (PostgreSQL REPLICA IDENTITY DEFAULT).
func Update(env *connect.Schema, before, after, source *connect.Struct, now time.Time) *connect.Struct {
	return Value(env, OpUpdate, before, after, source, now)
}

// Delete returns a "d" envelope.
func Delete(env *connect.Schema, before, source *connect.Struct, now time.Time) *connect.Struct {
	return Value(env, OpDelete, before, nil, source, now)
}

// Tombstone returns the record Debezium emits after a delete when
// tombstones.on.delete=true: same topic, partition, offset, key and key
// schema, and a null value with a null value schema.
func Tombstone(del *connect.SourceRecord) *connect.SourceRecord {
	return &connect.SourceRecord{
		SourcePartition: del.SourcePartition,
		SourceOffset:    del.SourceOffset,
		Topic:           del.Topic,
		Partition:       del.Partition,
		KeySchema:       del.KeySchema,
		Key:             del.Key,
		Timestamp:       del.Timestamp,
	}
}
