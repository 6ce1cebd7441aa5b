// Package txmeta builds Debezium's transaction metadata
// (provide.transaction.metadata=true): the BEGIN/END events of the
// transaction topic and the envelope's transaction block, as
// io.debezium.pipeline.txmetadata.TransactionMonitor and TransactionContext
// (Debezium 3.6) do.
//
// A Context counts the events of one transaction: in total (total_order) and
// per data collection (data_collection_order, "<schema>.<table>"), in the
// order the collections first appear (the END event lists them in Java
// HashMap order, as Debezium iterates its per-collection counts). It is not
// safe for concurrent use.
package txmeta

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
	"github.com/connectd/connectd/internal/javamap"
)

// Status values of the transaction topic.
const (
	StatusBegin = "BEGIN"
	StatusEnd   = "END"
)

// Offset keys of TransactionContext (offsets of events inside a transaction).
const (
	OffsetTransactionID = "transaction_id"
	// OffsetCollectionOrderPrefix + "<schema>.<table>" holds that
	// collection's event count so far.
	OffsetCollectionOrderPrefix = "transaction_data_collection_order_"
)

var keySchema = connect.StructSchema().Name("io.debezium.connector.common.TransactionMetadataKey").Version(1).
	Field("id", connect.Prim(connect.String, false)).Build()

var collectionSchema = connect.StructSchema().Optional().Name("event.collection").Version(1).
	Field("data_collection", connect.Prim(connect.String, false)).
	Field("event_count", connect.Prim(connect.Int64, false)).Build()

var valueSchema = connect.StructSchema().Name("io.debezium.connector.common.TransactionMetadataValue").Version(1).
	Field("status", connect.Prim(connect.String, false)).
	Field("id", connect.Prim(connect.String, false)).
	Field("event_count", connect.Prim(connect.Int64, true)).
	Field("data_collections", connect.NewSchema(connect.Array).Optional().Items(collectionSchema).Build()).
	Field("ts_ms", connect.Prim(connect.Int64, false)).Build()

// KeySchema is io.debezium.connector.common.TransactionMetadataKey {id}.
func KeySchema() *connect.Schema { return keySchema }

// ValueSchema is io.debezium.connector.common.TransactionMetadataValue
// {status, id, event_count, data_collections[{data_collection, event_count}], ts_ms}.
func ValueSchema() *connect.Schema { return valueSchema }

// Context is the transaction in progress.
type Context struct {
	ID     string // the database's transaction id as text (offset transaction_id)
	total  int64
	names  []string // collections in order of first appearance
	counts []int64
}

// Begin starts transaction id, forgetting the previous one's counts.
func (c *Context) Begin(id string) {
	c.ID, c.total = id, 0
	c.names, c.counts = c.names[:0], c.counts[:0]
}

// Event counts one event of collection and returns its transaction block
// (envelope.TransactionSchema) with id eventID.
func (c *Context) Event(collection, eventID string) *connect.Struct {
	c.total++
	i := 0
	for i < len(c.names) && c.names[i] != collection {
		i++
	}
	if i == len(c.names) {
		c.names = append(c.names, collection)
		c.counts = append(c.counts, 0)
	}
	c.counts[i]++
	return &connect.Struct{Schema: envelope.TransactionSchema(), Values: []any{eventID, c.total, c.counts[i]}}
}

// PutOffset adds the transaction keys (transaction_id and each collection's
// count so far) to an offset map.
func (c *Context) PutOffset(m map[string]any) {
	m[OffsetTransactionID] = c.ID
	for i, n := range c.names {
		m[OffsetCollectionOrderPrefix+n] = c.counts[i]
	}
}

// Record returns the key and value of a BEGIN (eventCount and collections
// null) or END event of transaction event id eventID; tsMs is the commit
// time in ms.
func (c *Context) Record(status, eventID string, tsMs int64) (key, value *connect.Struct) {
	key = &connect.Struct{Schema: keySchema, Values: []any{eventID}}
	value = &connect.Struct{Schema: valueSchema, Values: []any{status, eventID, nil, nil, tsMs}}
	if status == StatusEnd {
		// Debezium's TransactionContext counts per collection in a HashMap
		// and lists its entries: Java's HashMap order, not first appearance.
		cols := make([]any, 0, len(c.names))
		for _, n := range javamap.Order(c.names) {
			i := 0
			for c.names[i] != n {
				i++
			}
			cols = append(cols, &connect.Struct{Schema: collectionSchema, Values: []any{n, c.counts[i]}})
		}
		value.Values[2], value.Values[3] = c.total, cols
	}
	return key, value
}
