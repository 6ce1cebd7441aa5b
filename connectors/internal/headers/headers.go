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
	"encoding/base64"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
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

// KeyValue renders a key struct as a worker's default header converter
// (SimpleHeaderConverter) writes the Struct header Debezium sets: Kafka
// Connect's Values.convertToString. Field names and strings are quoted
// (only backslash and double quote escaped; tabs and newlines stay raw),
// numbers in Java's toString (BigDecimal 150.000 or 1E-7, Double 2.0),
// bytes in Base64, Kafka Connect's Date/Time/Timestamp as java.util.Date
// through SimpleDateFormat (time "HH:mm:ss.SSS'Z'" below one day of
// milliseconds, date "yyyy-MM-dd" on a day boundary, timestamp otherwise;
// UTC, the worker's time zone in the references), null as null. nil for a
// nil key.
func KeyValue(key any) []byte {
	st, ok := key.(*connect.Struct)
	if !ok || st == nil {
		return nil
	}
	return appendValue(nil, st.Schema, st, false)
}

// appendValue is Values.append(sb, value, embedded) for a value of schema s.
func appendValue(b []byte, s *connect.Schema, v any, embedded bool) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	if s != nil {
		if ms, ok := javaDateMillis(s, v); ok {
			return appendJavaDate(b, ms)
		}
	}
	switch x := v.(type) {
	case string:
		if !embedded {
			return append(b, x...)
		}
		b = append(b, '"')
		for i := 0; i < len(x); i++ {
			if x[i] == '\\' || x[i] == '"' {
				b = append(b, '\\')
			}
			b = append(b, x[i])
		}
		return append(b, '"')
	case bool:
		return strconv.AppendBool(b, x)
	case int8, int16, int32, int64, int, uint8, uint16, uint32:
		return fmt.Append(b, x)
	case uint64:
		return strconv.AppendUint(b, x, 10)
	case float32:
		return append(b, converters.JavaFloat(float64(x), 32)...)
	case float64:
		return append(b, converters.JavaFloat(x, 64)...)
	case connect.Decimal:
		return appendBigDecimal(b, x.Unscaled, x.Scale)
	case *big.Int:
		return append(b, x.String()...)
	case []byte:
		if embedded {
			b = append(b, '"')
		}
		b = base64.StdEncoding.AppendEncode(b, x)
		if embedded {
			b = append(b, '"')
		}
		return b
	case []any:
		var elem *connect.Schema
		if s != nil {
			elem = s.ValueSchema
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, elem, e, true)
		}
		return append(b, ']')
	case map[string]any:
		var elem *connect.Schema
		if s != nil {
			elem = s.ValueSchema
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, nil, k, true)
			b = append(b, ':')
			b = appendValue(b, elem, x[k], true)
		}
		return append(b, '}')
	case *connect.Struct:
		b = append(b, '{')
		for i, f := range x.Schema.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, nil, f.Name, true)
			b = append(b, ':')
			// Kafka's Struct.get(field): a null value reads as the
			// field's schema default, if it has one.
			v := x.Values[i]
			if v == nil && f.Schema != nil && f.Schema.Default != nil {
				v = f.Schema.Default
			}
			b = appendValue(b, f.Schema, v, true)
		}
		return append(b, '}')
	case time.Time:
		return appendJavaDate(b, x.UnixMilli())
	}
	return fmt.Append(b, v)
}

// javaDateMillis: a value of Kafka Connect's Date (days), Time (ms of the
// day) or Timestamp (ms) logical type as the milliseconds of the
// java.util.Date Kafka Connect holds.
func javaDateMillis(s *connect.Schema, v any) (int64, bool) {
	var n int64
	switch x := v.(type) {
	case int32:
		n = int64(x)
	case int64:
		n = x
	case time.Time:
		if s.Name == connect.DateName || s.Name == connect.TimeName || s.Name == connect.TimestampName {
			return x.UnixMilli(), true
		}
		return 0, false
	default:
		return 0, false
	}
	switch s.Name {
	case connect.DateName:
		return n * 86400000, true
	case connect.TimeName, connect.TimestampName:
		return n, true
	}
	return 0, false
}

// appendJavaDate formats ms as Values.dateFormatFor picks the pattern.
func appendJavaDate(b []byte, ms int64) []byte {
	const day = 86400000
	t := time.UnixMilli(ms).UTC()
	switch {
	case ms < day:
		return t.AppendFormat(b, "15:04:05.000Z")
	case ms%day == 0:
		return t.AppendFormat(b, "2006-01-02")
	}
	return t.AppendFormat(b, "2006-01-02T15:04:05.000Z")
}

// appendBigDecimal appends Java's BigDecimal.toString of unscaled×10^-scale:
// plain notation unless the scale is negative or the adjusted exponent is
// below -6, then scientific (1E-7, 1.5E+3).
func appendBigDecimal(b []byte, unscaled *big.Int, scale int) []byte {
	if unscaled == nil {
		unscaled = new(big.Int)
	}
	digits := new(big.Int).Abs(unscaled).String()
	if unscaled.Sign() < 0 {
		b = append(b, '-')
	}
	adjusted := len(digits) - 1 - scale
	if scale >= 0 && adjusted >= -6 {
		if scale == 0 {
			return append(b, digits...)
		}
		if point := len(digits) - scale; point > 0 {
			b = append(b, digits[:point]...)
			b = append(b, '.')
			return append(b, digits[point:]...)
		} else {
			b = append(b, "0."...)
			for ; point < 0; point++ {
				b = append(b, '0')
			}
			return append(b, digits...)
		}
	}
	b = append(b, digits[0])
	if len(digits) > 1 {
		b = append(b, '.')
		b = append(b, digits[1:]...)
	}
	b = append(b, 'E')
	if adjusted >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, int64(adjusted), 10)
}
