// Package headers builds the Kafka Connect headers Debezium's relational
// connectors put on change events: the context headers of every data
// change event (extended.headers.enabled; DebeziumHeaderProducer) and the
// __debezium.newkey / __debezium.oldkey headers of a primary-key change
// (RelationalChangeRecordEmitter).
//
// Invariant: the slice Context returns is shared by every record of a run;
// its capacity is its length, so appending copies it, and nothing may
// change its elements in place.
package headers

import (
	"crypto/rand"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
)

// Header keys of a primary-key change: the delete (and its tombstone) of
// the old key carries NewKey, the create of the new key OldKey.
const (
	NewKey = "__debezium.newkey"
	OldKey = "__debezium.oldkey"
)

// Context returns Debezium's context headers, in DebeziumHeaderProducer's
// order: __debezium.context.connectorLogicalName (topicPrefix),
// .taskId ("0"), .connectorName (connectorName: "postgresql", "mariadb",
// "mysql") and .runId, a UUID (version 7) drawn from now and randomness,
// the same for every record of the run.
func Context(connectorName, topicPrefix string, now time.Time) []connect.Header {
	h := []connect.Header{
		{Key: "__debezium.context.connectorLogicalName", Value: []byte(topicPrefix)},
		{Key: "__debezium.context.taskId", Value: []byte("0")},
		{Key: "__debezium.context.connectorName", Value: []byte(connectorName)},
		{Key: "__debezium.context.runId", Value: []byte(uuidV7(now))},
	}
	return h[:len(h):len(h)]
}

// With returns own followed by ctx without changing either's backing array
// when own is not empty; with own empty it returns ctx itself (shared).
func With(own, ctx []connect.Header) []connect.Header {
	if len(ctx) == 0 {
		return own
	}
	if len(own) == 0 {
		return ctx
	}
	return append(own[:len(own):len(own)], ctx...)
}

// uuidV7 returns a random UUID of version 7 (RFC 9562: 48-bit Unix time in
// ms, then random bits) in its text form.
func uuidV7(now time.Time) string {
	var u [16]byte
	rand.Read(u[6:])
	ms := uint64(now.UnixMilli())
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (40 - 8*i))
	}
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // variant 10
	return uuid.UUID(u).String()
}

// KeyValue renders a key struct as Kafka Connect's SimpleHeaderConverter
// writes a Struct header: {"id":3} (field names quoted, strings quoted,
// other values as their text, null as null); nil for a nil key.
func KeyValue(key any) []byte {
	st, ok := key.(*connect.Struct)
	if !ok || st == nil {
		return nil
	}
	b := []byte{'{'}
	for i, f := range st.Schema.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, f.Name)
		b = append(b, ':')
		switch v := st.Values[i].(type) {
		case nil:
			b = append(b, "null"...)
		case string:
			b = strconv.AppendQuote(b, v)
		default:
			b = fmt.Append(b, v)
		}
	}
	return append(b, '}')
}
