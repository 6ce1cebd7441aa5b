package transforms

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// HeaderToValue is io.debezium.transforms.HeaderToValue (Debezium 3.6
// "HeaderToValue",
// https://debezium.io/documentation/reference/stable/transformations/header-to-value.html):
// for each pair headers[i], fields[i] the header's value becomes field
// fields[i] of the value, appended after the existing fields; "a.b" places
// it as field b of the value's STRUCT field a (any depth). With
// operation=move the headers are then removed (every header of that name),
// with copy they stay. Headers that the record lacks add nothing.
//
// Schemas: the value and each STRUCT on a nested path are rebuilt with
// SchemaUtil.copySchemaBasics (name, version, doc, parameters; not the
// optionality); a nested STRUCT whose value is null stays null. connectd's
// headers carry bytes only, so a header's schema and value are those Kafka
// Connect's default SimpleHeaderConverter infers from its text
// (Values.parseString, see parseHeaderValue): "c" is a STRING, "42" an INT8,
// "1795946541581" an INT64, "true" a BOOLEAN, "3.14" a FLOAT32,
// "2026-01-01" a Date; a header without a value cannot be a field and fails
// the record, as SchemaBuilder refuses a null field schema.
//
// A non-null value must be a STRUCT (ErrUnexpectedType, as
// Requirements.requireStruct); two headers of one configured name fail the
// record (a duplicate field). One divergence from Debezium 3.6.1: the
// schema is derived per record, where Debezium caches it by the value
// schema of the first record, so a later record with other headers fails
// there. Outputs are checked against Debezium 3.6.1 by
// TestDebeziumSMTsMatchReference.
type HeaderToValue struct {
	fields  []string
	headers []string
	move    bool
}

var _ connect.Transformation = (*HeaderToValue)(nil)

// Config: headers, fields and operation (move|copy), all required.
func (t *HeaderToValue) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "headers", Type: connect.TypeList, Importance: connect.High, DisplayName: "Header names list",
			Doc: "Header names in the record whose values are to be copied or moved to record value."}).
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Importance: connect.High, DisplayName: "Field names list",
			Doc: "Field names, in the same order as the header names listed in the headers configuration property. Supports Struct nesting using dot notation."}).
		Define(connect.ConfigKey{Name: "operation", Type: connect.TypeString, Importance: connect.High, DisplayName: "Operation: mover or copy",
			Doc:     "Either <code>move</code> if the fields are to be moved to the value (removed from the headers), or <code>copy</code> if the fields are to be copied to the value (retained in the headers).",
			Allowed: []string{"move", "copy"}})
}

// Configure reads the keys of Config and checks them as Debezium's
// validateConfiguration: same number of fields and headers, no empty
// element, no space inside a name.
func (t *HeaderToValue) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	raw := func(k string) []string {
		var out []string
		for _, s := range strings.Split(props[k], ",") {
			out = append(out, strings.TrimSpace(s))
		}
		return out
	}
	t.fields, t.headers = raw("fields"), raw("headers")
	if len(t.fields) != len(t.headers) {
		return configErr("fields", "'fields' config must have the same number of elements as 'headers' config.")
	}
	for i := range t.fields {
		if t.fields[i] == "" || t.headers[i] == "" {
			return configErr("fields", "'fields' and/or 'headers' config contains a not valid empty string.")
		}
		if strings.Contains(t.headers[i], " ") {
			return configErr("headers", "'headers' config contains a field with a not valid space.")
		}
		if strings.Contains(t.fields[i], " ") {
			return configErr("fields", "'fields' config contains a field with a not valid space.")
		}
	}
	t.move = strings.EqualFold(p.String("operation"), "move")
	return nil
}

type headerField struct {
	path   []string
	schema *connect.Schema
	value  any
}

// Apply copies or moves the headers into the value.
func (t *HeaderToValue) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	if r.Value == nil {
		return r, nil // "Tombstone {} arrived and will be skipped"
	}
	value, err := requireStruct(r.Value, "Header field insertion")
	if err != nil {
		return nil, err
	}
	// As Debezium 3.6.1: the record's headers in their order, each one
	// listed in headers giving an entry for the field at the same position.
	var add []headerField
	seen := map[string]bool{}
	for _, h := range r.Headers {
		i := indexOf(t.headers, h.Key)
		if i < 0 {
			continue
		}
		if seen[t.fields[i]] {
			return nil, fmt.Errorf("Cannot create field because of field name duplication %s", t.fields[i])
		}
		seen[t.fields[i]] = true
		s, v := parseHeaderValue(string(h.Value))
		if h.Value == nil || s == nil {
			return nil, fmt.Errorf("fieldSchema for field %s cannot be null.", t.fields[i])
		}
		add = append(add, headerField{path: strings.Split(t.fields[i], "."), schema: s, value: v})
	}
	if len(add) == 0 {
		return r, nil
	}
	// ConnectRecordUtil.validateNestedFieldsExist: a path through a
	// primitive field fails; through a missing field it adds nothing.
	kept := add[:0]
	for _, a := range add {
		s, ok := value.Schema, true
		for _, name := range a.path[:len(a.path)-1] {
			f := s.Field(name)
			if f == nil {
				ok = false
				break
			}
			if f.Schema.Type != connect.StructT {
				return nil, fmt.Errorf("Field '%s' is a primitive type, not a struct. Cannot add nested field '%s'.", name, strings.Join(a.path, "."))
			}
			s = f.Schema
		}
		if ok {
			kept = append(kept, a)
		}
	}
	nv, err := withHeaderFields(value, kept, 0)
	if err != nil {
		return nil, err
	}
	out := withRecord(r)
	out.ValueSchema, out.Value = nv.Schema, nv
	if t.move {
		drop := set(t.headers)
		hs := out.Headers[:0]
		for _, h := range out.Headers {
			if !drop[h.Key] {
				hs = append(hs, h)
			}
		}
		out.Headers = hs
	}
	return out, nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// withHeaderFields rebuilds st with the header fields whose path ends at
// this depth appended, and the STRUCT fields that later paths go through
// rebuilt recursively.
func withHeaderFields(st *connect.Struct, add []headerField, depth int) (*connect.Struct, error) {
	s := st.Schema
	b := copyBasics(s, connect.StructT)
	nested := map[string][]headerField{}
	for _, a := range add {
		if len(a.path) > depth+1 {
			nested[a.path[depth]] = append(nested[a.path[depth]], a)
		}
	}
	values := make([]any, 0, len(s.Fields)+len(add))
	for _, f := range s.Fields {
		v := getOrDefault(st, f)
		fs := f.Schema
		if sub, ok := nested[f.Name]; ok && fs.Type == connect.StructT {
			if v != nil {
				child, err := requireStruct(v, "Nested field")
				if err != nil {
					return nil, err
				}
				nc, err := withHeaderFields(child, sub, depth+1)
				if err != nil {
					return nil, err
				}
				fs, v = nc.Schema, nc
			} else {
				fs = nestedSchema(fs, sub, depth+1)
			}
		}
		b.Field(f.Name, fs)
		values = append(values, v)
	}
	for _, a := range add {
		if len(a.path) == depth+1 {
			b.Field(a.path[depth], a.schema)
			values = append(values, a.value)
		}
	}
	ns := b.Build()
	out := connect.NewStruct(ns)
	copy(out.Values, values)
	return out, nil
}

// nestedSchema is the schema withHeaderFields gives a null STRUCT field.
func nestedSchema(s *connect.Schema, add []headerField, depth int) *connect.Schema {
	b := copyBasics(s, connect.StructT)
	for _, f := range s.Fields {
		fs := f.Schema
		var sub []headerField
		for _, a := range add {
			if len(a.path) > depth+1 && a.path[depth] == f.Name {
				sub = append(sub, a)
			}
		}
		if len(sub) > 0 && fs.Type == connect.StructT {
			fs = nestedSchema(fs, sub, depth+1)
		}
		b.Field(f.Name, fs)
	}
	for _, a := range add {
		if len(a.path) == depth+1 {
			b.Field(a.path[depth], a.schema)
		}
	}
	return b.Build()
}

var (
	headerNumber    = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)
	headerDate      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	headerTime      = regexp.MustCompile(`^\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
	headerTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
)

// parseHeaderValue infers a header's schema and value from its text as
// Kafka Connect's SimpleHeaderConverter.toConnectHeader
// (Values.parseString) does for the forms connectd's transforms write:
// "null" gives no schema; "true"/"false" BOOLEAN; an integral number
// ("1.0" and "1e3" included) the smallest of INT8, INT16, INT32, INT64 that
// holds it, a larger one a Decimal of scale 0; another number FLOAT32 when
// finite as a float, else FLOAT64; yyyy-MM-dd a Date, HH:mm:ss.SSS'Z' a
// Time, yyyy-MM-dd'T'HH:mm:ss.SSS'Z' a Timestamp (UTC); anything else,
// arrays and maps included, a STRING.
func parseHeaderValue(s string) (*connect.Schema, any) {
	switch s {
	case "null":
		return nil, nil
	case "true", "false":
		return connect.Prim(connect.Boolean, false), s == "true"
	}
	if headerNumber.MatchString(s) {
		r, ok := new(big.Rat).SetString(s)
		if ok {
			if r.IsInt() {
				n := r.Num()
				switch {
				case n.IsInt64() && n.Int64() >= math.MinInt8 && n.Int64() <= math.MaxInt8:
					return connect.Prim(connect.Int8, false), int8(n.Int64())
				case n.IsInt64() && n.Int64() >= math.MinInt16 && n.Int64() <= math.MaxInt16:
					return connect.Prim(connect.Int16, false), int16(n.Int64())
				case n.IsInt64() && n.Int64() >= math.MinInt32 && n.Int64() <= math.MaxInt32:
					return connect.Prim(connect.Int32, false), int32(n.Int64())
				case n.IsInt64():
					return connect.Prim(connect.Int64, false), n.Int64()
				default:
					return connect.DecimalSchema(0, false), connect.Decimal{Unscaled: n, Scale: 0}
				}
			}
			if f, err := strconv.ParseFloat(s, 32); err == nil && !math.IsInf(f, 0) {
				return connect.Prim(connect.Float32, false), float32(f)
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
				return connect.Prim(connect.Float64, false), f
			}
		}
	}
	if headerDate.MatchString(s) {
		if d, err := time.Parse("2006-01-02", s); err == nil {
			return connect.NewSchema(connect.Int32).Name(connect.DateName).Version(1).Build(), d
		}
	}
	if headerTime.MatchString(s) {
		if d, err := time.Parse("15:04:05.000Z", s); err == nil {
			return connect.NewSchema(connect.Int32).Name(connect.TimeName).Version(1).Build(), d.AddDate(1970, 0, 0)
		}
	}
	if headerTimestamp.MatchString(s) {
		if d, err := time.Parse("2006-01-02T15:04:05.000Z", s); err == nil {
			return connect.NewSchema(connect.Int64).Name(connect.TimestampName).Version(1).Build(), d
		}
	}
	return connect.Prim(connect.String, false), s
}

// Close does nothing.
func (t *HeaderToValue) Close() {}
