package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/flinklite"
)

// Row is one row of a job: its fields and its event time in ms since the
// epoch. Field values are nil, string, bool, int64 (every integer type),
// float64 (float and double), Decimal (Kafka Connect Decimal, Debezium
// VariableScaleDecimal, decimal literals of JSON records) or string (times,
// bytes, structs and arrays as text). A Row's JSON (MarshalJSON) keeps the
// kind of each number, so a row is the same before and after a checkpoint
// restore and a retraction finds the value it retracts.
type Row struct {
	Fields map[string]any
	Time   int64
}

// MarshalJSON writes {"f": {field: value...}, "t": ms} with the values in
// appendValue's encoding.
func (r Row) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(r.Fields))
	for k := range r.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte(`{"f":{`)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(append(b, kb...), ':')
		var err error
		if b, err = appendValue(b, r.Fields[k]); err != nil {
			return nil, fmt.Errorf("field %s: %w", k, err)
		}
	}
	b = append(b, `},"t":`...)
	b = strconv.AppendInt(b, r.Time, 10)
	return append(b, '}'), nil
}

// UnmarshalJSON reads MarshalJSON's form (and, from checkpoints of
// earlier versions, plain JSON numbers: integers become int64).
func (r *Row) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var w struct {
		F map[string]any `json:"f"`
		T int64          `json:"t"`
	}
	if err := dec.Decode(&w); err != nil {
		return err
	}
	for k, v := range w.F {
		x, err := fromJSON(v)
		if err != nil {
			return fmt.Errorf("field %s: %w", k, err)
		}
		w.F[k] = x
	}
	r.Fields, r.Time = w.F, w.T
	return nil
}

// normalize turns a Kafka Connect value into a Row field value: integers
// int64, floats float64, decimals Decimal (exact), times RFC 3339 strings,
// bytes strings; structs, arrays and maps their JSON. schemaName is the
// field's Kafka Connect schema name (Debezium's VariableScaleDecimal is a
// struct of "scale" and "value", the unscaled two's-complement bytes).
func normalize(v any, schemaName string) any {
	switch x := v.(type) {
	case nil, string, bool, float64, int64, Decimal:
		return x
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case float32:
		return float64(x)
	case connect.Decimal:
		if x.Unscaled == nil {
			return nil
		}
		// shared, not copied: a Decimal is never changed in place
		return Decimal{Unscaled: x.Unscaled, Scale: int32(x.Scale)}
	case *connect.Decimal:
		if x == nil {
			return nil
		}
		return normalize(*x, "")
	case *connect.Struct:
		if schemaName == variableScaleDecimal && x != nil {
			sc, ok := asInt(x.Get("scale"))
			raw, ok2 := x.Get("value").([]byte)
			if ok && ok2 {
				return Decimal{Unscaled: fromTwosComplement(raw), Scale: int32(sc)}
			}
		}
	case json.Number:
		return jsonNumber(x)
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

// variableScaleDecimal is Debezium's schema name of a decimal without a
// fixed scale (decimal.handling.mode=precise: PostgreSQL numeric without
// scale, MySQL/MariaDB DECIMAL of variable scale).
const variableScaleDecimal = "io.debezium.data.VariableScaleDecimal"

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
	case Decimal:
		if x.Scale < 0 {
			return new(big.Int).Mul(x.Unscaled, pow10(-x.Scale)).Int64(), true
		}
		return new(big.Int).Quo(x.Unscaled, pow10(x.Scale)).Int64(), true
	}
	return 0, false
}

// structRow decodes a Debezium row image. With an event-time field, an
// image where it is NULL or absent is skipped (flinklite.ErrSkipRow): with
// REPLICA IDENTITY DEFAULT a delete's before image has only the key.
func structRow(s *connect.Struct, meta flinklite.ChangeMeta, et EventTimeSpec) (Row, error) {
	r := Row{Fields: make(map[string]any, len(s.Schema.Fields))}
	for _, f := range s.Schema.Fields {
		name := ""
		if f.Schema != nil {
			name = f.Schema.Name
		}
		r.Fields[f.Name] = normalize(s.Get(f.Name), name)
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
	if m.Value == nil {
		return Row{}, false, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(m.Value, &raw); err != nil || raw == nil {
		if err == nil {
			err = errors.New("null")
		}
		return Row{}, false, fmt.Errorf("record %s/%d@%d is not a JSON object: %w", m.Topic, m.Partition, m.Offset, err)
	}
	f := make(map[string]any, len(raw))
	for k, v := range raw {
		x, err := jsonField(v)
		if err != nil {
			return Row{}, false, fmt.Errorf("record %s/%d@%d: field %s: %w", m.Topic, m.Partition, m.Offset, k, err)
		}
		f[k] = x
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

// compare orders a and b: numbers numerically and exactly, whatever
// their kind (compareNumbers), strings lexically, bools false < true. ok
// is false for NULL or mixed types (SQL's UNKNOWN).
func compare(a, b any) (int, bool) {
	if isNumber(a) {
		return compareNumbers(a, b)
	}
	switch x := a.(type) {
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

// jsonField is the row value of one field of a JSON record: numbers exact
// (jsonNumber: int64, Decimal, or float64 with an exponent), strings,
// booleans, null, and objects and arrays as their JSON text (normalize).
func jsonField(v json.RawMessage) (any, error) {
	if len(v) == 0 {
		return nil, errors.New("empty value")
	}
	switch c := v[0]; {
	case c == '-' || c >= '0' && c <= '9':
		return jsonNumber(json.Number(v)), nil
	case c == '"':
		if s := v[1 : len(v)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
			return string(s), nil // no escape: the text as it is
		}
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	case c == 't':
		return true, nil
	case c == 'f':
		return false, nil
	case c == 'n':
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	return normalize(x, ""), nil
}

// compiled is c with its value(s) as row values (literalValue), once
// instead of per row.
func (c Condition) compiled() Condition {
	if xs, ok := c.Value.([]any); ok {
		vals := make([]any, len(xs))
		for i, x := range xs {
			vals[i] = literalValue(x)
		}
		c.Value = vals
	} else if c.Value != nil {
		c.Value = literalValue(c.Value)
	}
	return c
}

// matches evaluates one filter condition (compiled) on r.
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

// literalValue is the row value of a constant of a spec: a number as
// written is an int64, a Decimal or a float64 (jsonNumber; a float64 from
// a Go-built spec by literalNumber), strings and booleans as they are,
// objects and arrays their JSON.
func literalValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		return jsonNumber(x)
	case float64:
		return literalNumber(x)
	case nil, string, bool:
		return x
	}
	return normalize(v, "")
}

// apply computes one projection into a copy-on-write of r's fields.
func (p Projection) apply(f map[string]any) {
	if p.Value != nil {
		f[p.As] = p.Value // compiled: literalValue
		return
	}
	v := f[p.Field]
	switch x := v.(type) {
	case int64, float64, Decimal:
		// exact for exact values: amount × 100 of a Decimal is a Decimal
		if p.Multiply != nil {
			v = mulLiteral(v, p.mul, *p.Multiply)
		}
		if p.Add != nil {
			v = addNumbers(v, p.add)
		}
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
