package converters

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

var _ connect.ToConnectConverter = (*AvroConverter)(nil)

// avroReader decodes the Avro binary encoding of one writer schema
// straight into Connect data.
type avroReader struct {
	schema *connect.Schema
	read   avroReadFn
}

type avroReadFn func(b []byte) (any, []byte, error)

var errAvroShort = errors.New("avro: truncated data")

// ToConnect reads Confluent's wire format back into Connect data, as
// AvroConverter.toConnectData with AvroData.toConnectSchema: magic byte 0,
// the schema id (looked up in the registry once per id), then the Avro
// binary value. Nullable unions become optional schemas; records become
// structs named by their connect.name property (else the Avro full name);
// connect.version, connect.doc and connect.parameters are restored;
// int with connect.type int8/int16 gives INT8/INT16; the logical types
// decimal, date, time-millis and timestamp-millis give Connect's Decimal,
// Date, Time and Timestamp (values as connect.Decimal and time.Time);
// enums give strings; arrays of MapEntry records give maps. A nil b gives
// (nil, nil, nil). Errors: a bad magic byte, an unknown schema id, data
// that does not match its schema.
func (c *AvroConverter) ToConnect(_ string, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	if len(b) < 5 || b[0] != 0 {
		return nil, nil, fmt.Errorf("Converting byte[] to Kafka Connect data failed due to serialization error: Unknown magic byte!")
	}
	id := int(binary.BigEndian.Uint32(b[1:5]))
	r, err := c.readerFor(id)
	if err != nil {
		return nil, nil, err
	}
	v, rest, err := r.read(b[5:])
	if err != nil {
		return nil, nil, fmt.Errorf("Converting byte[] to Kafka Connect data failed due to serialization error of schema id %d: %w", id, err)
	}
	if len(rest) != 0 {
		return nil, nil, fmt.Errorf("Converting byte[] to Kafka Connect data failed: %d trailing bytes after the value of schema id %d", len(rest), id)
	}
	return r.schema, v, nil
}

func (c *AvroConverter) readerFor(id int) (*avroReader, error) {
	c.mu.RLock()
	r := c.readers[id]
	c.mu.RUnlock()
	if r != nil {
		return r, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	ss, err := c.client.SchemaByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("Failed to retrieve Avro schema for id %d: %w", id, err)
	}
	dec := json.NewDecoder(strings.NewReader(ss.Schema))
	dec.UseNumber()
	doc, err := decodeOrdered(dec)
	if err != nil {
		return nil, fmt.Errorf("avro schema id %d: %w", id, err)
	}
	p := &avroParser{named: map[string]*avroReader{}}
	r, err = p.parse(doc, "")
	if err != nil {
		return nil, fmt.Errorf("avro schema id %d: %w", id, err)
	}
	c.mu.Lock()
	if c.readers == nil {
		c.readers = map[int]*avroReader{}
	}
	c.readers[id] = r
	c.mu.Unlock()
	return r, nil
}

type avroParser struct {
	named map[string]*avroReader
}

func avroProp(m map[string]any, k string) (string, bool) {
	switch v := m[k].(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	}
	return "", false
}

// parse builds the reader of Avro schema node n (a string, an object or
// a union array); ns is the enclosing namespace.
func (p *avroParser) parse(n any, ns string) (*avroReader, error) {
	switch x := n.(type) {
	case string:
		return p.primitive(x, nil, ns)
	case []any:
		return p.union(x, ns)
	case map[string]any:
		t, _ := x["type"].(string)
		if t == "" {
			if inner, ok := x["type"]; ok {
				return p.parse(inner, ns)
			}
			return nil, fmt.Errorf("avro: schema without type")
		}
		switch t {
		case "record", "error":
			return p.record(x, ns)
		case "enum":
			return p.enum(x, ns)
		case "array":
			return p.array(x, ns)
		case "map":
			return p.avroMap(x, ns)
		case "fixed":
			size, _ := x["size"].(json.Number)
			nsz, _ := size.Int64()
			r := &avroReader{schema: connect.NewSchema(connect.Bytes).Build()}
			r.read = func(b []byte) (any, []byte, error) {
				if int64(len(b)) < nsz {
					return nil, nil, errAvroShort
				}
				return append([]byte(nil), b[:nsz]...), b[nsz:], nil
			}
			p.register(x, ns, r)
			return r, nil
		}
		return p.primitive(t, x, ns)
	}
	return nil, fmt.Errorf("avro: unexpected schema node %T", n)
}

func fullName(m map[string]any, ns string) (string, string) {
	name, _ := m["name"].(string)
	if s, ok := m["namespace"].(string); ok {
		ns = s
	}
	if strings.Contains(name, ".") {
		return name, name[:strings.LastIndex(name, ".")]
	}
	if ns == "" {
		return name, ns
	}
	return ns + "." + name, ns
}

func (p *avroParser) register(m map[string]any, ns string, r *avroReader) {
	full, _ := fullName(m, ns)
	if full != "" {
		p.named[full] = r
	}
}

// meta applies the connect.* properties of m to builder b.
func meta(b *connect.SchemaBuilder, m map[string]any) {
	if m == nil {
		return
	}
	if v, ok := avroProp(m, connectVersionProp); ok {
		n, _ := strconv.Atoi(v)
		b.Version(n)
	}
	if v, ok := avroProp(m, connectDocProp); ok {
		b.Doc(v)
	}
	if ps, ok := m[connectParametersProp].(map[string]any); ok {
		for _, k := range orderOf(ps) {
			if v, ok := ps[k].(string); ok {
				b.Param(k, v)
			}
		}
	}
	if v, ok := avroProp(m, connectNameProp); ok {
		b.Name(v)
	}
}

func (p *avroParser) primitive(t string, m map[string]any, ns string) (*avroReader, error) {
	if r, ok := p.named[t]; ok {
		return r, nil
	}
	if r, ok := p.named[ns+"."+t]; ok && ns != "" {
		return r, nil
	}
	logical, _ := avroProp(m, "logicalType")
	var b *connect.SchemaBuilder
	var read avroReadFn
	switch t {
	case "null":
		return &avroReader{schema: nil, read: func(b []byte) (any, []byte, error) { return nil, b, nil }}, nil
	case "boolean":
		b = connect.NewSchema(connect.Boolean)
		read = func(b []byte) (any, []byte, error) {
			if len(b) < 1 {
				return nil, nil, errAvroShort
			}
			return b[0] != 0, b[1:], nil
		}
	case "int":
		ct, _ := avroProp(m, connectTypeProp)
		switch {
		case ct == "int8":
			b = connect.NewSchema(connect.Int8)
			read = func(b []byte) (any, []byte, error) { n, r, err := readLong(b); return int8(n), r, err }
		case ct == "int16":
			b = connect.NewSchema(connect.Int16)
			read = func(b []byte) (any, []byte, error) { n, r, err := readLong(b); return int16(n), r, err }
		case logical == "date":
			b = connect.NewSchema(connect.Int32).Name(connect.DateName).Version(1)
			read = func(b []byte) (any, []byte, error) {
				n, r, err := readLong(b)
				return time.Unix(n*86400, 0).UTC(), r, err
			}
		case logical == "time-millis":
			b = connect.NewSchema(connect.Int32).Name(connect.TimeName).Version(1)
			read = func(b []byte) (any, []byte, error) { n, r, err := readLong(b); return time.UnixMilli(n).UTC(), r, err }
		default:
			b = connect.NewSchema(connect.Int32)
			read = func(b []byte) (any, []byte, error) { n, r, err := readLong(b); return int32(n), r, err }
		}
	case "long":
		if logical == "timestamp-millis" {
			b = connect.NewSchema(connect.Int64).Name(connect.TimestampName).Version(1)
			read = func(b []byte) (any, []byte, error) { n, r, err := readLong(b); return time.UnixMilli(n).UTC(), r, err }
		} else {
			b = connect.NewSchema(connect.Int64)
			read = func(b []byte) (any, []byte, error) { return readLong(b) }
		}
	case "float":
		b = connect.NewSchema(connect.Float32)
		read = func(b []byte) (any, []byte, error) {
			if len(b) < 4 {
				return nil, nil, errAvroShort
			}
			return math.Float32frombits(binary.LittleEndian.Uint32(b)), b[4:], nil
		}
	case "double":
		b = connect.NewSchema(connect.Float64)
		read = func(b []byte) (any, []byte, error) {
			if len(b) < 8 {
				return nil, nil, errAvroShort
			}
			return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], nil
		}
	case "string":
		b = connect.NewSchema(connect.String)
		read = func(b []byte) (any, []byte, error) {
			raw, r, err := readBytes(b)
			return string(raw), r, err
		}
	case "bytes":
		if logical == "decimal" {
			scale, _ := avroProp(m, "scale")
			sc, _ := strconv.Atoi(scale)
			b = connect.NewSchema(connect.Bytes).Name(connect.DecimalName).Version(1).Param("scale", strconv.Itoa(sc))
			read = func(b []byte) (any, []byte, error) {
				raw, r, err := readBytes(b)
				return connect.Decimal{Unscaled: fromTwosComplement(raw), Scale: sc}, r, err
			}
		} else {
			b = connect.NewSchema(connect.Bytes)
			read = func(b []byte) (any, []byte, error) {
				raw, r, err := readBytes(b)
				return append([]byte(nil), raw...), r, err
			}
		}
	default:
		return nil, fmt.Errorf("avro: unknown type %q", t)
	}
	if logical == "decimal" || logical == "date" || logical == "time-millis" || logical == "timestamp-millis" {
		// AvroData keeps the Connect parameters; the logical type already
		// named the schema.
		if ps, ok := m[connectParametersProp].(map[string]any); ok {
			s := b.Build()
			nb := connect.NewSchema(s.Type).Name(s.Name).Version(s.Version)
			for _, k := range orderOf(ps) {
				if v, ok := ps[k].(string); ok {
					nb.Param(k, v)
				}
			}
			b = nb
		}
	} else {
		meta(b, m)
	}
	return &avroReader{schema: b.Build(), read: read}, nil
}

func (p *avroParser) union(branches []any, ns string) (*avroReader, error) {
	readers := make([]*avroReader, len(branches))
	var nonNull *avroReader
	nulls := 0
	for i, br := range branches {
		r, err := p.parse(br, ns)
		if err != nil {
			return nil, err
		}
		readers[i] = r
		if r.schema == nil {
			nulls++
		} else {
			nonNull = r
		}
	}
	if nulls != 1 || len(branches) != 2 {
		return nil, fmt.Errorf("avro: only [null, T] unions are supported, got %d branches", len(branches))
	}
	s := *nonNull.schema
	s.Optional = true
	return &avroReader{schema: &s, read: func(b []byte) (any, []byte, error) {
		i, r, err := readLong(b)
		if err != nil {
			return nil, nil, err
		}
		if i < 0 || int(i) >= len(readers) {
			return nil, nil, fmt.Errorf("avro: union index %d out of range", i)
		}
		return readers[i].read(r)
	}}, nil
}

func (p *avroParser) record(m map[string]any, ns string) (*avroReader, error) {
	full, inner := fullName(m, ns)
	r := &avroReader{}
	p.named[full] = r
	b := connect.StructSchema()
	if full != avroNamespace+"."+avroDefaultName && !strings.HasPrefix(full, avroNamespace+"."+avroDefaultName) {
		b.Name(full)
	}
	fields, _ := m["fields"].([]any)
	readers := make([]avroReadFn, 0, len(fields))
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		name, _ := fm["name"].(string)
		fr, err := p.parse(fm["type"], inner)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		fs := fr.schema
		if d, ok := fm["default"]; ok && d != nil && fs != nil {
			if dv, ok := avroDefaultValue(fs, d); ok {
				cp := *fs
				cp.Default = dv
				fs = &cp
			}
		}
		b.Field(name, fs)
		readers = append(readers, fr.read)
	}
	meta(b, m)
	s := b.Build()
	r.schema = s
	if it, _ := avroProp(m, "connect.internal.type"); it == "MapEntry" {
		s.Name = ""
	}
	r.read = func(data []byte) (any, []byte, error) {
		st := connect.NewStruct(s)
		var err error
		for i, rd := range readers {
			if st.Values[i], data, err = rd(data); err != nil {
				return nil, nil, err
			}
		}
		return st, data, nil
	}
	return r, nil
}

func (p *avroParser) enum(m map[string]any, ns string) (*avroReader, error) {
	syms, _ := m["symbols"].([]any)
	names := make([]string, len(syms))
	for i, s := range syms {
		names[i], _ = s.(string)
	}
	b := connect.NewSchema(connect.String)
	meta(b, m)
	r := &avroReader{schema: b.Build(), read: func(b []byte) (any, []byte, error) {
		i, rest, err := readLong(b)
		if err != nil {
			return nil, nil, err
		}
		if i < 0 || int(i) >= len(names) {
			return nil, nil, fmt.Errorf("avro: enum index %d out of range", i)
		}
		return names[i], rest, nil
	}}
	p.register(m, ns, r)
	return r, nil
}

// readBlocks reads Avro's blocked array/map encoding, calling item for
// each element.
func readBlocks(b []byte, item func([]byte) ([]byte, error)) ([]byte, error) {
	for {
		n, rest, err := readLong(b)
		if err != nil {
			return nil, err
		}
		b = rest
		if n == 0 {
			return b, nil
		}
		if n < 0 {
			n = -n
			if _, b, err = readLong(b); err != nil { // block size in bytes
				return nil, err
			}
		}
		for ; n > 0; n-- {
			if b, err = item(b); err != nil {
				return nil, err
			}
		}
	}
}

func (p *avroParser) array(m map[string]any, ns string) (*avroReader, error) {
	items, err := p.parse(m["items"], ns)
	if err != nil {
		return nil, err
	}
	if items.schema != nil && items.schema.Type == connect.StructT && len(items.schema.Fields) == 2 &&
		items.schema.Fields[0].Name == "key" && items.schema.Fields[1].Name == "value" && isMapEntry(m["items"]) {
		b := connect.NewSchema(connect.Map).Items(items.schema.Fields[1].Schema)
		meta(b, m)
		s := b.Build()
		s.KeySchema = items.schema.Fields[0].Schema
		return &avroReader{schema: s, read: func(data []byte) (any, []byte, error) {
			out := map[string]any{}
			rest, err := readBlocks(data, func(d []byte) ([]byte, error) {
				v, r, err := items.read(d)
				if err != nil {
					return nil, err
				}
				st := v.(*connect.Struct)
				out[fmt.Sprint(st.Values[0])] = st.Values[1]
				return r, nil
			})
			return out, rest, err
		}}, nil
	}
	b := connect.NewSchema(connect.Array).Items(items.schema)
	meta(b, m)
	return &avroReader{schema: b.Build(), read: func(data []byte) (any, []byte, error) {
		out := []any{}
		rest, err := readBlocks(data, func(d []byte) ([]byte, error) {
			v, r, err := items.read(d)
			out = append(out, v)
			return r, err
		})
		return out, rest, err
	}}, nil
}

func isMapEntry(n any) bool {
	m, ok := n.(map[string]any)
	if !ok {
		return false
	}
	it, _ := avroProp(m, "connect.internal.type")
	name, _ := m["name"].(string)
	return it == "MapEntry" || name == avroMapEntryName
}

func (p *avroParser) avroMap(m map[string]any, ns string) (*avroReader, error) {
	vals, err := p.parse(m["values"], ns)
	if err != nil {
		return nil, err
	}
	b := connect.NewSchema(connect.Map).Items(vals.schema)
	meta(b, m)
	s := b.Build()
	s.KeySchema = connect.Prim(connect.String, false)
	return &avroReader{schema: s, read: func(data []byte) (any, []byte, error) {
		out := map[string]any{}
		rest, err := readBlocks(data, func(d []byte) ([]byte, error) {
			k, r, err := readBytes(d)
			if err != nil {
				return nil, err
			}
			v, r, err := vals.read(r)
			out[string(k)] = v
			return r, err
		})
		return out, rest, err
	}}, nil
}

// readLong reads a zig-zag varint (Avro int and long).
func readLong(b []byte) (int64, []byte, error) {
	u, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, errAvroShort
	}
	return int64(u>>1) ^ -int64(u&1), b[n:], nil
}

func readBytes(b []byte) ([]byte, []byte, error) {
	n, rest, err := readLong(b)
	if err != nil {
		return nil, nil, err
	}
	if n < 0 || int64(len(rest)) < n {
		return nil, nil, errAvroShort
	}
	return rest[:n], rest[n:], nil
}

// avroDefaultValue converts an Avro field default (JSON) into the Connect
// value of s, as AvroData.defaultValueFromAvro does for primitives (bytes
// and Decimal defaults are ISO-8859-1 strings). ok=false when unsupported.
func avroDefaultValue(s *connect.Schema, d any) (any, bool) {
	switch x := d.(type) {
	case string:
		switch s.Type {
		case connect.String:
			return x, true
		case connect.Bytes:
			raw := make([]byte, 0, len(x))
			for _, r := range x {
				raw = append(raw, byte(r))
			}
			if s.Name == connect.DecimalName {
				sc, _ := strconv.Atoi(func() string { v, _ := s.Param("scale"); return v }())
				return connect.Decimal{Unscaled: fromTwosComplement(raw), Scale: sc}, true
			}
			return raw, true
		}
	case bool:
		if s.Type == connect.Boolean {
			return x, true
		}
	case json.Number:
		if s.Name != "" && (s.Name == connect.DateName || s.Name == connect.TimeName || s.Name == connect.TimestampName) {
			return nil, false
		}
		switch s.Type {
		case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
			n, err := x.Int64()
			if err != nil {
				return nil, false
			}
			switch s.Type {
			case connect.Int8:
				return int8(n), true
			case connect.Int16:
				return int16(n), true
			case connect.Int32:
				return int32(n), true
			}
			return n, true
		case connect.Float32:
			f, _ := x.Float64()
			return float32(f), true
		case connect.Float64:
			f, _ := x.Float64()
			return f, true
		}
	}
	return nil, false
}
