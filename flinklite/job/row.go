package job

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/flinklite"
)

// Row is one row of a job: its fields, with values normalized to what
// encoding/json gives back (float64 for every number, string, bool, nil),
// so that a row is the same before and after a checkpoint restore, and
// its event time in ms since the epoch.
type Row struct {
	Fields map[string]any `json:"f"`
	Time   int64          `json:"t"`
}

// normalize turns a Kafka Connect value into a Row field value: integers,
// floats and decimals become float64 (exact up to 2^53), times RFC 3339
// strings, bytes strings; structs, arrays and maps their JSON.
func normalize(v any) any {
	switch x := v.(type) {
	case nil, string, bool, float64:
		return x
	case int8:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case float32:
		return float64(x)
	case connect.Decimal:
		f, _ := new(big.Rat).SetFrac(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil)).Float64()
		return f
	case *connect.Decimal:
		if x == nil {
			return nil
		}
		return normalize(*x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// eventTimeOf returns the ms since the epoch of a field value, by its
// Kafka Connect schema name when there is one (Debezium's temporal types,
// as in its PostgreSQL connector documentation, time.precision.mode=adaptive
// and connect), else an integer in ms or an RFC 3339 string.
func eventTimeOf(v any, schemaName string) (int64, error) {
	switch schemaName {
	case "io.debezium.time.MicroTimestamp":
		if n, ok := asInt(v); ok {
			return n / 1000, nil
		}
	case "io.debezium.time.NanoTimestamp":
		if n, ok := asInt(v); ok {
			return n / 1_000_000, nil
		}
	case "io.debezium.time.Date", connect.DateName:
		if t, ok := v.(time.Time); ok {
			return t.UnixMilli(), nil
		}
		if n, ok := asInt(v); ok {
			return n * 86_400_000, nil
		}
	}
	switch x := v.(type) {
	case time.Time:
		return x.UnixMilli(), nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, x)
		if err != nil {
			return 0, fmt.Errorf("event time %q is not RFC 3339", x)
		}
		return t.UnixMilli(), nil
	}
	if n, ok := asInt(v); ok {
		return n, nil
	}
	return 0, fmt.Errorf("event time %v (%T) is not a timestamp", v, v)
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		return int64(x), true
	}
	return 0, false
}

// structRow decodes a Debezium row image. With an event-time field, an
// image where it is NULL or absent is skipped (flinklite.ErrSkipRow): with
// REPLICA IDENTITY DEFAULT a delete's before image has only the key.
func structRow(s *connect.Struct, meta flinklite.ChangeMeta, et EventTimeSpec) (Row, error) {
	r := Row{Fields: make(map[string]any, len(s.Schema.Fields))}
	for _, f := range s.Schema.Fields {
		r.Fields[f.Name] = normalize(s.Get(f.Name))
	}
	if et.KafkaTimestamp {
		r.Time = meta.Timestamp.UnixMilli()
		return r, nil
	}
	raw := s.Get(et.Field)
	if raw == nil {
		return r, flinklite.ErrSkipRow
	}
	name := ""
	if f := s.Schema.Field(et.Field); f != nil && f.Schema != nil {
		name = f.Schema.Name
	}
	t, err := eventTimeOf(raw, name)
	if err != nil {
		return r, fmt.Errorf("field %s: %w", et.Field, err)
	}
	r.Time = t
	return r, nil
}

// jsonRow decodes a plain JSON object record (source.format=json).
func jsonRow(m flinklite.Message, et EventTimeSpec) (Row, bool, error) {
	var f map[string]any
	if m.Value == nil {
		return Row{}, false, nil
	}
	if err := json.Unmarshal(m.Value, &f); err != nil {
		return Row{}, false, fmt.Errorf("record %s/%d@%d is not a JSON object: %w", m.Topic, m.Partition, m.Offset, err)
	}
	for k, v := range f {
		switch v.(type) {
		case map[string]any, []any:
			f[k] = normalize(v)
		}
	}
	r := Row{Fields: f}
	if et.KafkaTimestamp {
		r.Time = m.Timestamp.UnixMilli()
		return r, true, nil
	}
	v, ok := f[et.Field]
	if !ok || v == nil {
		return Row{}, false, fmt.Errorf("record %s/%d@%d has no event time field %s", m.Topic, m.Partition, m.Offset, et.Field)
	}
	t, err := eventTimeOf(v, "")
	if err != nil {
		return Row{}, false, fmt.Errorf("record %s/%d@%d: field %s: %w", m.Topic, m.Partition, m.Offset, et.Field, err)
	}
	r.Time = t
	return r, true, nil
}

// compare orders a and b: numbers numerically, strings lexically, bools
// false < true. ok is false for NULL or mixed types (SQL's UNKNOWN).
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	case bool:
		y, ok := b.(bool)
		if !ok {
			return 0, false
		}
		switch {
		case x == y:
			return 0, true
		case !x:
			return -1, true
		}
		return 1, true
	}
	return 0, false
}

// matches evaluates one filter condition on r.
func (c Condition) matches(r Row) bool {
	v := r.Fields[c.Field]
	switch c.Op {
	case "isNull":
		return v == nil
	case "isNotNull":
		return v != nil
	case "in":
		for _, x := range c.Value.([]any) {
			if n, ok := compare(v, x); ok && n == 0 {
				return true
			}
		}
		return false
	}
	n, ok := compare(v, c.Value)
	if !ok {
		return false
	}
	switch c.Op {
	case "=":
		return n == 0
	case "!=":
		return n != 0
	case "<":
		return n < 0
	case "<=":
		return n <= 0
	case ">":
		return n > 0
	case ">=":
		return n >= 0
	}
	return false
}

// apply computes one projection into a copy-on-write of r's fields.
func (p Projection) apply(f map[string]any) {
	if p.Value != nil {
		f[p.As] = p.Value
		return
	}
	v := f[p.Field]
	switch x := v.(type) {
	case float64:
		if p.Multiply != nil {
			x *= *p.Multiply
		}
		if p.Add != nil {
			x += *p.Add
		}
		v = x
	case string:
		switch p.Case {
		case "lower":
			v = strings.ToLower(x)
		case "upper":
			v = strings.ToUpper(x)
		}
	}
	f[p.As] = v
}
