package converters

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javafloat"
)

// JSONConverterClass is the Kafka Connect class name of the JSON converter.
const JSONConverterClass = "org.apache.kafka.connect.json.JsonConverter"

// JSONConverter is org.apache.kafka.connect.json.JsonConverter. With
// schemas.enable=true (the default) it writes {"schema":...,"payload":...};
// otherwise the payload alone. Decimals are written as base64 of the
// two's-complement unscaled value (decimal.format=BASE64, the default).
type JSONConverter struct {
	SchemasEnable  bool
	DecimalNumeric bool // decimal.format=NUMERIC

	// schemaCache holds, per recently used schema, its serialised JSON
	// (as JsonConverter's schemas.cache.size, default 1000, does:
	// connectors reuse one *Schema per table, so this turns the largest
	// part of each record into one copy) and the plan its values are
	// written by.
	cacheMu     sync.Mutex
	schemaCache map[*connect.Schema]*schemaEntry
	// lastEntry is the entry of the last schema looked up: a task's
	// records mostly share one, found without the lock.
	lastEntry atomic.Pointer[schemaEntry]
}

// schemaEntry is the serialised JSON of one schema, the plan its values
// are written by, and the size of the last record written with it.
type schemaEntry struct {
	schema *connect.Schema
	json   []byte
	plan   *jsonPlan
	// last is the length in bytes of the last record written with this
	// schema: a buffer is grown to it (plus a margin) once, instead of
	// doubling while the record is written.
	last atomic.Int64
}

const schemaCacheSize = 1000

// entry returns the cached JSON and plan of s, making them on first use.
func (c *JSONConverter) entry(s *connect.Schema) *schemaEntry {
	if e := c.lastEntry.Load(); e != nil && e.schema == s {
		return e
	}
	c.cacheMu.Lock()
	e, ok := c.schemaCache[s]
	c.cacheMu.Unlock()
	if ok {
		c.lastEntry.Store(e)
		return e
	}
	var buf bytes.Buffer
	c.writeSchema(&buf, s, "")
	e = &schemaEntry{schema: s, json: buf.Bytes(), plan: compilePlan(s)}
	c.lastEntry.Store(e)
	c.cacheMu.Lock()
	if c.schemaCache == nil || len(c.schemaCache) >= schemaCacheSize {
		c.schemaCache = make(map[*connect.Schema]*schemaEntry)
	}
	c.schemaCache[s] = e
	c.cacheMu.Unlock()
	return e
}

// Logical types a jsonPlan node recognises by schema name.
const (
	logicalNone uint8 = iota
	logicalDecimal
	logicalDate
	logicalTimestamp
	logicalTime
)

// jsonPlan is a schema prepared for writing values: what writeValue would
// otherwise work out for every value of every record (the logical type
// from the schema name, each struct field's escaped `"name":`) is worked
// out once per schema (bench/postgres, issue 3: a struct's field names
// were looked up under a lock for every struct of every record).
type jsonPlan struct {
	s       *connect.Schema
	logical uint8
	// keys are a struct's `"name":` per field, with the separating comma
	// before every field but the first.
	keys []string
	// fields are a struct's field plans; elem is an array's or map's
	// value plan.
	fields []*jsonPlan
	elem   *jsonPlan
	// memo is the JSON of the last frozen struct (connect.Struct.Freeze)
	// written with this plan: events that share one frozen struct (the
	// source block of a table's snapshot rows) have it written once.
	memo atomic.Pointer[jsonMemo]
}

// jsonMemo is the JSON a frozen struct was written as.
type jsonMemo struct {
	st  *connect.Struct
	out []byte
}

// compilePlan returns the plan of s (nil for a nil schema).
func compilePlan(s *connect.Schema) *jsonPlan {
	if s == nil {
		return nil
	}
	p := &jsonPlan{s: s}
	switch s.Name {
	case connect.DecimalName:
		p.logical = logicalDecimal
	case connect.DateName:
		p.logical = logicalDate
	case connect.TimestampName:
		p.logical = logicalTimestamp
	case connect.TimeName:
		p.logical = logicalTime
	}
	switch s.Type {
	case connect.Array, connect.Map:
		p.elem = compilePlan(s.ValueSchema)
	case connect.StructT:
		p.keys = make([]string, len(s.Fields))
		p.fields = make([]*jsonPlan, len(s.Fields))
		for i, f := range s.Fields {
			var k []byte
			if i > 0 {
				k = append(k, ',')
			}
			k = appendString(k, f.Name)
			p.keys[i] = string(append(k, ':'))
			p.fields[i] = compilePlan(f.Schema)
		}
	}
	return p
}

var _ connect.Converter = (*JSONConverter)(nil)

// NewJSONConverter returns a converter with Kafka Connect's defaults.
func NewJSONConverter() *JSONConverter { return &JSONConverter{SchemasEnable: true} }

// Configure reads schemas.enable (true|false) and decimal.format (BASE64|NUMERIC).
func (c *JSONConverter) Configure(props map[string]string, _ bool) error {
	c.SchemasEnable = true
	c.schemaCache = nil
	if v, ok := props["schemas.enable"]; ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
		case "false":
			c.SchemasEnable = false
		default:
			return fmt.Errorf("Invalid value %s for configuration schemas.enable: Expected value to be either true or false", v)
		}
	}
	if v, ok := props["decimal.format"]; ok {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case "BASE64":
		case "NUMERIC":
			c.DecimalNumeric = true
		default:
			return fmt.Errorf("Invalid value %s for configuration decimal.format: String must be one of: BASE64, NUMERIC", v)
		}
	}
	return nil
}

// FromConnect serialises v. Errors name the field whose value does not fit
// its schema.
func (c *JSONConverter) FromConnect(_ string, s *connect.Schema, v any) ([]byte, error) {
	if s == nil && v == nil {
		return nil, nil
	}
	p := scratchBuffers.Get().(*[]byte)
	out, err := c.appendRecord((*p)[:0], s, v)
	if err != nil {
		releaseScratch(p, out)
		return nil, err
	}
	// The record keeps an exact-size copy (no zeroing, no spare capacity
	// held by the producer's buffer until it is acknowledged); the
	// scratch buffer goes back to the pool.
	rec := bytes.Clone(out)
	releaseScratch(p, out)
	return rec, nil
}

var _ connect.AppendConverter = (*JSONConverter)(nil)

// AppendFromConnect appends the bytes FromConnect returns to dst
// (connect.AppendConverter): a worker that recycles the buffers of
// acknowledged records writes each record once, with no copy and no
// allocation once its buffers have grown to the records' size.
func (c *JSONConverter) AppendFromConnect(dst []byte, _ string, s *connect.Schema, v any) ([]byte, error) {
	if s == nil && v == nil {
		return nil, nil
	}
	out, err := c.appendRecord(dst, s, v)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendRecord appends the record of v to dst: {"schema":...,"payload":...}
// with schemas.enable, else the payload alone.
func (c *JSONConverter) appendRecord(dst []byte, s *connect.Schema, v any) ([]byte, error) {
	if s == nil {
		if c.SchemasEnable {
			dst = append(dst, `{"schema":null,"payload":`...)
		}
		dst, err := appendSchemaless(dst, v)
		if err != nil {
			return dst, err
		}
		if c.SchemasEnable {
			dst = append(dst, '}')
		}
		return dst, nil
	}
	e := c.entry(s)
	if !c.SchemasEnable {
		return c.appendValue(dst, e.plan, v)
	}
	start := len(dst)
	// Room for a record like the last one of this schema, so that the
	// buffer (which the record may keep) is sized once.
	if need := int(max(e.last.Load()+e.last.Load()/8, int64(len(e.json))+512)); cap(dst)-len(dst) < need {
		dst = append(make([]byte, 0, len(dst)+need), dst...)
	}
	dst = append(dst, `{"schema":`...)
	dst = append(dst, e.json...)
	dst = append(dst, `,"payload":`...)
	dst, err := c.appendValue(dst, e.plan, v)
	if err != nil {
		return dst, err
	}
	dst = append(dst, '}')
	e.last.Store(int64(len(dst) - start))
	return dst, nil
}

// scratchBuffers hold the record FromConnect is writing; a buffer keeps
// the capacity of the largest record it wrote (up to maxScratch), so that
// writing one does not grow a buffer step by step.
var scratchBuffers = sync.Pool{New: func() any { return new([]byte) }}

const maxScratch = 1 << 20

// releaseScratch puts scratch buffer p back in the pool with out, the
// bytes last written into it (its capacity may have grown).
func releaseScratch(p *[]byte, out []byte) {
	if cap(out) <= maxScratch {
		*p = out[:0]
		scratchBuffers.Put(p)
	}
}

// writeSchema writes s as JsonConverter.asJsonSchema does: type,
// fields/items/keys+values, optional, name, version, doc, parameters,
// default, then the field name when s is a struct field.
func (c *JSONConverter) writeSchema(b *bytes.Buffer, s *connect.Schema, field string) {
	b.WriteString(`{"type":`)
	writeString(b, string(s.Type))
	switch s.Type {
	case connect.Array:
		b.WriteString(`,"items":`)
		c.writeSchema(b, s.ValueSchema, "")
	case connect.Map:
		b.WriteString(`,"keys":`)
		c.writeSchema(b, s.KeySchema, "")
		b.WriteString(`,"values":`)
		c.writeSchema(b, s.ValueSchema, "")
	case connect.StructT:
		b.WriteString(`,"fields":[`)
		for i, f := range s.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			c.writeSchema(b, f.Schema, f.Name)
		}
		b.WriteByte(']')
	}
	b.WriteString(`,"optional":`)
	b.WriteString(strconv.FormatBool(s.Optional))
	if s.Name != "" {
		b.WriteString(`,"name":`)
		writeString(b, s.Name)
	}
	if s.Version != 0 {
		b.WriteString(`,"version":`)
		b.WriteString(strconv.Itoa(s.Version))
	}
	if s.Doc != "" {
		b.WriteString(`,"doc":`)
		writeString(b, s.Doc)
	}
	if keys := s.ParamKeys(); len(keys) > 0 {
		b.WriteString(`,"parameters":{`)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			v, _ := s.Param(k)
			writeString(b, k)
			b.WriteByte(':')
			writeString(b, v)
		}
		b.WriteByte('}')
	}
	if s.Default != nil {
		b.WriteString(`,"default":`)
		if out, err := c.appendValue(b.AvailableBuffer(), compilePlan(s), s.Default); err != nil {
			b.WriteString("null")
		} else {
			b.Write(out)
		}
	}
	if field != "" {
		b.WriteString(`,"field":`)
		writeString(b, field)
	}
	b.WriteByte('}')
}

// appendValue appends v, a value of plan p's schema (nil: schemaless).
func (c *JSONConverter) appendValue(dst []byte, p *jsonPlan, v any) ([]byte, error) {
	if p == nil {
		if v == nil {
			return append(dst, "null"...), nil
		}
		return appendSchemaless(dst, v)
	}
	s := p.s
	if v == nil {
		if !s.Optional && s.Default == nil {
			return dst, fmt.Errorf("json converter: null value for a required %s field", s.Type)
		}
		if s.Default != nil {
			return c.appendValue(dst, p, s.Default)
		}
		return append(dst, "null"...), nil
	}
	switch p.logical {
	case logicalDecimal:
		d, ok := v.(connect.Decimal)
		if !ok {
			return dst, fmt.Errorf("json converter: %T is not a Decimal", v)
		}
		if c.DecimalNumeric {
			return append(dst, decimalString(d)...), nil
		}
		var raw [24]byte
		return appendBase64(dst, d.AppendTwosComplement(raw[:0])), nil
	case logicalDate:
		if t, ok := v.(time.Time); ok {
			return strconv.AppendInt(dst, int64(math.Floor(float64(t.Unix())/86400)), 10), nil
		}
	case logicalTimestamp:
		if t, ok := v.(time.Time); ok {
			return strconv.AppendInt(dst, t.UnixMilli(), 10), nil
		}
	case logicalTime:
		if t, ok := v.(time.Time); ok {
			ms := (int64(t.Hour())*3600+int64(t.Minute())*60+int64(t.Second()))*1000 + int64(t.Nanosecond()/1e6)
			return strconv.AppendInt(dst, ms, 10), nil
		}
	}
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		n, ok := toInt64(v)
		if !ok {
			return dst, fmt.Errorf("json converter: %T is not an %s", v, s.Type)
		}
		return strconv.AppendInt(dst, n, 10), nil
	case connect.Float32:
		f, ok := v.(float32)
		if !ok {
			return dst, fmt.Errorf("json converter: %T is not a float", v)
		}
		return appendJavaFloat(dst, float64(f), 32), nil
	case connect.Float64:
		f, ok := v.(float64)
		if !ok {
			return dst, fmt.Errorf("json converter: %T is not a double", v)
		}
		return appendJavaFloat(dst, f, 64), nil
	case connect.Boolean:
		t, ok := v.(bool)
		if !ok {
			return dst, fmt.Errorf("json converter: %T is not a boolean", v)
		}
		return strconv.AppendBool(dst, t), nil
	case connect.String:
		str, ok := v.(string)
		if !ok {
			return dst, fmt.Errorf("json converter: %T is not a string", v)
		}
		return appendString(dst, str), nil
	case connect.Bytes:
		raw, ok := v.([]byte)
		if !ok {
			return dst, fmt.Errorf("json converter: %T is not bytes", v)
		}
		return appendBase64(dst, raw), nil
	case connect.Array:
		items, ok := v.([]any)
		if !ok {
			return dst, fmt.Errorf("json converter: %T is not an array", v)
		}
		dst = append(dst, '[')
		for i, it := range items {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = c.appendValue(dst, p.elem, it); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case connect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return dst, fmt.Errorf("json converter: %T is not a map with string keys", v)
		}
		return appendObject(dst, m, func(dst []byte, v any) ([]byte, error) { return c.appendValue(dst, p.elem, v) })
	case connect.StructT:
		st, ok := v.(*connect.Struct)
		if !ok {
			return dst, fmt.Errorf("json converter: %T is not a struct", v)
		}
		frozen := st.Frozen()
		if frozen {
			if m := p.memo.Load(); m != nil && m.st == st {
				return append(dst, m.out...), nil
			}
		}
		start := len(dst)
		dst = append(dst, '{')
		for i, fp := range p.fields {
			dst = append(dst, p.keys[i]...)
			var err error
			if dst, err = c.appendValue(dst, fp, st.Values[i]); err != nil {
				return dst, fmt.Errorf("field %s: %w", s.Fields[i].Name, err)
			}
		}
		dst = append(dst, '}')
		if frozen {
			p.memo.Store(&jsonMemo{st: st, out: bytes.Clone(dst[start:])})
		}
		return dst, nil
	default:
		return dst, fmt.Errorf("json converter: unknown schema type %q", s.Type)
	}
}

// appendSchemaless appends a value that has no schema (schemas inferred
// from Go types, as JsonConverter does for schemaless maps).
func appendSchemaless(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case float64:
		return appendJavaFloat(dst, x, 64), nil
	case float32:
		return appendJavaFloat(dst, float64(x), 32), nil
	case []byte:
		return appendBase64(dst, x), nil
	case map[string]any:
		return appendObject(dst, x, appendSchemaless)
	case []any:
		dst = append(dst, '[')
		for i, it := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendSchemaless(dst, it); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	default:
		n, ok := toInt64(v)
		if !ok {
			return dst, fmt.Errorf("json converter: cannot infer a schema for %T", v)
		}
		return strconv.AppendInt(dst, n, 10), nil
	}
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
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	}
	return 0, false
}

func appendBase64(dst []byte, raw []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, raw)
	return append(dst, '"')
}

func decimalString(d connect.Decimal) string {
	if d.Scale == 0 {
		return d.Unscaled.String()
	}
	s := d.Unscaled.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for len(s) <= d.Scale {
		s = "0" + s
	}
	s = s[:len(s)-d.Scale] + "." + s[len(s)-d.Scale:]
	if neg {
		s = "-" + s
	}
	return s
}

const hexUpper = "0123456789ABCDEF"

// writeString writes s as a JSON string the way Jackson does (appendString).
func writeString(b *bytes.Buffer, s string) {
	b.Write(appendString(b.AvailableBuffer(), s))
}

// appendString appends s as a JSON string the way Jackson does: only '"',
// '\\' and control characters are escaped (\b \t \n \f \r short forms,
// others as \u00XX); non-ASCII is written as UTF-8.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// Fast path: most strings need no escaping at all.
	clean, ascii := true, true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0xf0 {
			// 0xf0.. start 4-byte sequences, written as escaped
			// surrogate pairs: take the slow path.
			clean = false
			break
		} else if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if clean && (ascii || utf8.ValidString(s)) {
		dst = append(dst, s...)
		return append(dst, '"')
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				dst = append(dst, `\"`...)
			case c == '\\':
				dst = append(dst, `\\`...)
			case c == '\n':
				dst = append(dst, `\n`...)
			case c == '\r':
				dst = append(dst, `\r`...)
			case c == '\t':
				dst = append(dst, `\t`...)
			case c == '\b':
				dst = append(dst, `\b`...)
			case c == '\f':
				dst = append(dst, `\f`...)
			case c < 0x20:
				dst = append(dst, `\u00`...)
				dst = append(dst, hexUpper[c>>4], hexUpper[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, "\ufffd"...)
		case r > 0xFFFF:
			// Jackson's UTF8JsonGenerator writes characters outside the
			// BMP as escaped surrogate pairs (observed in Debezium 3.6.1
			// output, testdata/debezium).
			hi, lo := utf16.EncodeRune(r)
			dst = appendU(dst, hi)
			dst = appendU(dst, lo)
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// appendJavaFloat appends a JSON number as Jackson does; NaN and
// infinities are written as strings ("NaN", "Infinity", "-Infinity":
// Jackson's WRITE_NAN_AS_STRINGS default, observed in Debezium 3.6.1
// output, testdata/debezium/pg_types_default.jsonl table num_special).
func appendJavaFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		dst = append(dst, '"')
		dst = javafloat.Append(dst, f, bits)
		return append(dst, '"')
	}
	return javafloat.Append(dst, f, bits)
}

// JavaFloat formats f as Java 17's Double.toString (bits=64) or
// Float.toString (bits=32), which Jackson uses for JSON numbers: plain
// notation with at least one fraction digit for 1e-3 <= |f| < 1e7,
// otherwise d.dddE±n, with Java's digits (4.9E-324 for Double.MIN_VALUE;
// see internal/javafloat). NaN and infinities are spelled NaN, Infinity,
// -Infinity (JSON output quotes them, see appendJavaFloat).
func JavaFloat(f float64, bits int) string { return javafloat.Format(f, bits) }

func appendU(dst []byte, r rune) []byte {
	dst = append(dst, `\u`...)
	for shift := 12; shift >= 0; shift -= 4 {
		dst = append(dst, hexUpper[(r>>uint(shift))&0xf])
	}
	return dst
}

// appendObject appends m as a JSON object with sorted keys, each value by
// val.
func appendObject(dst []byte, m map[string]any, val func([]byte, any) ([]byte, error)) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = val(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// writeObject writes m as a JSON object with sorted keys, each value by val.
func writeObject(b *bytes.Buffer, m map[string]any, val func(any) error) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, k)
		b.WriteByte(':')
		if err := val(m[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}
