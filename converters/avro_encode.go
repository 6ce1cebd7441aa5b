package converters

import (
	"fmt"
	"sort"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/hamba/avro/v2"
)

// avroEncFn writes one Connect value in Avro binary encoding.
type avroEncFn func(w *avro.Writer, v any) error

// compileAvroEncoder builds the encoder of s once, matching the Avro
// schema avroSchemaJSON gives for s (union branch order included), so
// that a record costs no schema walk and no reflection: hamba/avro's
// Writer does the binary primitives (zig-zag varints, length-prefixed
// strings, IEEE floats, blocks).
func compileAvroEncoder(s *connect.Schema) avroEncFn {
	return compileAvroEncoderOpts(s, avroDataConfig{metaData: true})
}

// compileAvroEncoderOpts is compileAvroEncoder for a converter's AvroData
// options (enhanced.avro.schema.support writes enum strings as the index
// of their symbol).
func compileAvroEncoderOpts(s *connect.Schema, o avroDataConfig) avroEncFn {
	base := compileAvroBase(s, o)
	if !s.Optional {
		if s.Default != nil {
			def := s.Default
			return func(w *avro.Writer, v any) error {
				if v == nil {
					v = def // Struct.get returns the default for a null
				}
				return base(w, v)
			}
		}
		return func(w *avro.Writer, v any) error {
			if v == nil {
				return fmt.Errorf("avro converter: null value for a required %s field", s.Type)
			}
			return base(w, v)
		}
	}
	nullIdx, valIdx := int64(0), int64(1)
	if s.Default != nil && s.Type != connect.StructT {
		nullIdx, valIdx = 1, 0
	}
	def := s.Default
	return func(w *avro.Writer, v any) error {
		if v == nil {
			v = def
		}
		if v == nil {
			w.WriteLong(nullIdx)
			return nil
		}
		w.WriteLong(valIdx)
		return base(w, v)
	}
}

func compileAvroBase(s *connect.Schema, o avroDataConfig) avroEncFn {
	if symbols, name, ok := avroEnumSymbols(s, o); ok {
		index := make(map[string]int64, len(symbols))
		for i, sym := range symbols {
			index[sym] = int64(i)
		}
		return func(w *avro.Writer, v any) error {
			str, ok := v.(string)
			if !ok {
				return fmt.Errorf("avro converter: %T is not a string (enum %s)", v, name)
			}
			i, ok := index[str]
			if !ok {
				return fmt.Errorf("avro converter: %q is not a symbol of enum %s %v", str, name, symbols)
			}
			w.WriteInt(int32(i))
			return nil
		}
	}
	switch s.Name {
	case connect.DecimalName:
		return func(w *avro.Writer, v any) error {
			d, ok := v.(connect.Decimal)
			if !ok {
				return fmt.Errorf("avro converter: %T is not a Decimal", v)
			}
			var raw [24]byte
			w.WriteBytes(d.AppendTwosComplement(raw[:0]))
			return nil
		}
	case connect.DateName, connect.TimeName:
		name := s.Name
		return func(w *avro.Writer, v any) error {
			if t, ok := v.(time.Time); ok {
				w.WriteInt(int32(logicalTimeValue(name, t)))
				return nil
			}
			n, ok := toInt64(v)
			if !ok {
				return fmt.Errorf("avro converter: %T is not a %s", v, name)
			}
			w.WriteInt(int32(n))
			return nil
		}
	case connect.TimestampName:
		return func(w *avro.Writer, v any) error {
			if t, ok := v.(time.Time); ok {
				w.WriteLong(t.UnixMilli())
				return nil
			}
			n, ok := v.(int64)
			if !ok {
				return fmt.Errorf("avro converter: %T is not a Timestamp", v)
			}
			w.WriteLong(n)
			return nil
		}
	}
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32:
		t := s.Type
		return func(w *avro.Writer, v any) error {
			switch n := v.(type) {
			case int32:
				w.WriteInt(n)
			case int16:
				w.WriteInt(int32(n))
			case int8:
				w.WriteInt(int32(n))
			default:
				x, ok := toInt64(v)
				if !ok {
					return fmt.Errorf("avro converter: %T is not an %s", v, t)
				}
				w.WriteInt(int32(x))
			}
			return nil
		}
	case connect.Int64:
		return func(w *avro.Writer, v any) error {
			if n, ok := v.(int64); ok {
				w.WriteLong(n)
				return nil
			}
			n, ok := toInt64(v)
			if !ok {
				return fmt.Errorf("avro converter: %T is not an int64", v)
			}
			w.WriteLong(n)
			return nil
		}
	case connect.Float32:
		return func(w *avro.Writer, v any) error {
			f, ok := v.(float32)
			if !ok {
				return fmt.Errorf("avro converter: %T is not a float", v)
			}
			w.WriteFloat(f)
			return nil
		}
	case connect.Float64:
		return func(w *avro.Writer, v any) error {
			f, ok := v.(float64)
			if !ok {
				return fmt.Errorf("avro converter: %T is not a double", v)
			}
			w.WriteDouble(f)
			return nil
		}
	case connect.Boolean:
		return func(w *avro.Writer, v any) error {
			b, ok := v.(bool)
			if !ok {
				return fmt.Errorf("avro converter: %T is not a boolean", v)
			}
			w.WriteBool(b)
			return nil
		}
	case connect.String:
		return func(w *avro.Writer, v any) error {
			str, ok := v.(string)
			if !ok {
				return fmt.Errorf("avro converter: %T is not a string", v)
			}
			w.WriteString(str)
			return nil
		}
	case connect.Bytes:
		return func(w *avro.Writer, v any) error {
			b, ok := v.([]byte)
			if !ok {
				return fmt.Errorf("avro converter: %T is not bytes", v)
			}
			w.WriteBytes(b)
			return nil
		}
	case connect.Array:
		item := compileAvroEncoderOpts(s.ValueSchema, o)
		return func(w *avro.Writer, v any) error {
			items, ok := v.([]any)
			if !ok {
				return fmt.Errorf("avro converter: %T is not an array", v)
			}
			if len(items) > 0 {
				w.WriteLong(int64(len(items)))
				for _, it := range items {
					if err := item(w, it); err != nil {
						return err
					}
				}
			}
			w.WriteLong(0)
			return nil
		}
	case connect.Map:
		val := compileAvroEncoderOpts(s.ValueSchema, o)
		if s.KeySchema.Type == connect.String && !s.KeySchema.Optional {
			return func(w *avro.Writer, v any) error {
				m, ok := v.(map[string]any)
				if !ok {
					return fmt.Errorf("avro converter: %T is not a map with string keys", v)
				}
				if len(m) > 0 {
					w.WriteLong(int64(len(m)))
					for _, k := range sortedMapKeys(m) {
						w.WriteString(k)
						if err := val(w, m[k]); err != nil {
							return err
						}
					}
				}
				w.WriteLong(0)
				return nil
			}
		}
		key := compileAvroEncoderOpts(s.KeySchema, o)
		return func(w *avro.Writer, v any) error {
			m, ok := v.(map[any]any)
			if !ok {
				return fmt.Errorf("avro converter: %T is not a map", v)
			}
			if len(m) > 0 {
				w.WriteLong(int64(len(m)))
				for k, x := range m {
					if err := key(w, k); err != nil {
						return err
					}
					if err := val(w, x); err != nil {
						return err
					}
				}
			}
			w.WriteLong(0)
			return nil
		}
	case connect.StructT:
		fields := make([]avroEncFn, len(s.Fields))
		for i, f := range s.Fields {
			fields[i] = compileAvroEncoderOpts(f.Schema, o)
		}
		names := make([]string, len(s.Fields))
		for i, f := range s.Fields {
			names[i] = f.Name
		}
		return func(w *avro.Writer, v any) error {
			st, ok := v.(*connect.Struct)
			if !ok {
				return fmt.Errorf("avro converter: %T is not a struct", v)
			}
			if len(st.Values) != len(fields) {
				return fmt.Errorf("avro converter: struct %s has %d values, schema has %d fields", s.Name, len(st.Values), len(fields))
			}
			for i, enc := range fields {
				if err := enc(w, st.Values[i]); err != nil {
					return fmt.Errorf("field %s: %w", names[i], err)
				}
			}
			return nil
		}
	}
	return func(*avro.Writer, any) error { return fmt.Errorf("avro converter: unknown schema type %q", s.Type) }
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
