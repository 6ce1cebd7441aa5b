package transforms

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

// copyBasics starts a builder of type t with the name, version, doc and
// parameters of s, as Kafka Connect's SchemaUtil.copySchemaBasics (which
// copies neither optionality nor default).
func copyBasics(s *connect.Schema, t connect.Type) *connect.SchemaBuilder {
	b := connect.NewSchema(t).Name(s.Name).Version(s.Version).Doc(s.Doc)
	for _, k := range s.ParamKeys() {
		v, _ := s.Param(k)
		b.Param(k, v)
	}
	return b
}

// copySchema returns a copy of s made optional when optional is true (as
// SchemaBuilder built from the same pieces plus optional()). The default is
// kept.
func copySchema(s *connect.Schema, optional bool) *connect.Schema {
	b := copyBasics(s, s.Type)
	if s.Optional || optional {
		b.Optional()
	}
	if s.Default != nil {
		b.Default(s.Default)
	}
	for _, f := range s.Fields {
		b.Field(f.Name, f.Schema)
	}
	out := b.Build()
	out.KeySchema, out.ValueSchema = s.KeySchema, s.ValueSchema
	return out
}

// mapSchema builds a MAP schema.
func mapSchema(key, value *connect.Schema, optional bool) *connect.Schema {
	b := connect.NewSchema(connect.Map)
	if optional {
		b.Optional()
	}
	s := b.Build()
	s.KeySchema, s.ValueSchema = key, value
	return s
}

// requireStruct returns v as a struct, or an error naming purpose, as
// Kafka Connect's Requirements.requireStruct.
func requireStruct(v any, purpose string) (*connect.Struct, error) {
	st, ok := v.(*connect.Struct)
	if !ok {
		return nil, fmt.Errorf("Only Struct objects supported for [%s], found: %s: %w", purpose, typeName(v), ErrUnexpectedType)
	}
	return st, nil
}

// requireMap returns v as a schemaless map, as Requirements.requireMap.
func requireMap(v any, purpose string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("Only Map objects supported in absence of schema for [%s], found: %s: %w", purpose, typeName(v), ErrUnexpectedType)
	}
	return m, nil
}

func typeName(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// getOrDefault returns the value of field f of st, or the field's default
// when the value is null, as Struct.get.
func getOrDefault(st *connect.Struct, f connect.Field) any {
	if v := st.Values[f.Index]; v != nil {
		return v
	}
	return f.Schema.Default
}

// withRecord returns a shallow copy of r, as ConnectRecord.newRecord: same
// source partition and offset, headers copied so that adding or removing
// one does not affect r.
func withRecord(r *connect.SourceRecord) *connect.SourceRecord {
	out := *r
	out.Headers = append([]connect.Header(nil), r.Headers...)
	return &out
}

// operand is the key or the value of a record: the $Key and $Value
// variants of Kafka Connect's transformations.
type operand bool

const (
	keyOp   operand = true
	valueOp operand = false
)

func (o operand) get(r *connect.SourceRecord) (*connect.Schema, any) {
	if o == keyOp {
		return r.KeySchema, r.Key
	}
	return r.ValueSchema, r.Value
}

// with returns a copy of r whose key or value is replaced.
func (o operand) with(r *connect.SourceRecord, s *connect.Schema, v any) *connect.SourceRecord {
	out := withRecord(r)
	if o == keyOp {
		out.KeySchema, out.Key = s, v
	} else {
		out.ValueSchema, out.Value = s, v
	}
	return out
}

// HeaderText is headerBytes for the runtime: the in-memory form of a
// header value (connect.Header's bytes) a sink's header.converter read.
func HeaderText(s *connect.Schema, v any) []byte { return headerBytes(s, v) }

// headerBytes serialises a header value as Kafka Connect's default header
// converter (SimpleHeaderConverter, Values.convertToString) does: strings
// as they are, numbers and booleans as Java prints them, logical dates and
// times in ISO-8601, bytes base64, structs, maps and arrays as JSON. A null
// value gives a nil header value.
func headerBytes(s *connect.Schema, v any) []byte {
	if v == nil {
		return nil
	}
	var b bytes.Buffer
	appendHeaderValue(&b, s, v, false)
	return b.Bytes()
}

func appendHeaderValue(b *bytes.Buffer, s *connect.Schema, v any, embedded bool) {
	if v == nil {
		b.WriteString("null")
		return
	}
	if s != nil {
		if t, ok := v.(time.Time); ok {
			switch s.Name {
			case connect.DateName:
				b.WriteString(t.UTC().Format("2006-01-02"))
				return
			case connect.TimeName:
				b.WriteString(t.UTC().Format("15:04:05.000Z"))
				return
			case connect.TimestampName:
				b.WriteString(t.UTC().Format("2006-01-02T15:04:05.000Z"))
				return
			}
		}
	}
	switch x := v.(type) {
	case string:
		if embedded {
			b.WriteString(strconv.Quote(x))
		} else {
			b.WriteString(x)
		}
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float32:
		b.WriteString(converters.JavaFloat(float64(x), 32))
	case float64:
		b.WriteString(converters.JavaFloat(x, 64))
	case []byte:
		b.WriteString(base64.StdEncoding.EncodeToString(x))
	case connect.Decimal:
		b.WriteString(decimalString(x))
	case *connect.Struct:
		b.WriteByte('{')
		for i, f := range x.Schema.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(f.Name))
			b.WriteByte(':')
			appendHeaderValue(b, f.Schema, x.Values[i], true)
		}
		b.WriteByte('}')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var vs *connect.Schema
		if s != nil {
			vs = s.ValueSchema
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			appendHeaderValue(b, vs, x[k], true)
		}
		b.WriteByte('}')
	case []any:
		var vs *connect.Schema
		if s != nil {
			vs = s.ValueSchema
		}
		b.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			appendHeaderValue(b, vs, it, true)
		}
		b.WriteByte(']')
	default:
		if n, ok := toInt64(v); ok {
			b.WriteString(strconv.FormatInt(n, 10))
			return
		}
		fmt.Fprint(b, v)
	}
}

func decimalString(d connect.Decimal) string {
	s := d.Unscaled.String()
	if d.Scale <= 0 {
		return s
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	for len(s) <= d.Scale {
		s = "0" + s
	}
	s = s[:len(s)-d.Scale] + "." + s[len(s)-d.Scale:]
	if neg {
		s = "-" + s
	}
	return s
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

// headerIndex returns the position of the last header called key, or -1.
func headerIndex(hs []connect.Header, key string) int {
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].Key == key {
			return i
		}
	}
	return -1
}
