package converters

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
)

var _ connect.ToConnectConverter = (*JSONConverter)(nil)

// ToConnect reads b back into Connect data as JsonConverter.toConnectData:
// with schemas.enable=true b must be {"schema":…,"payload":…} and the
// payload is typed by the schema (ints as int8/int16/int32/int64, floats
// as float32/float64, bytes from base64, structs as *connect.Struct,
// Decimal as connect.Decimal, Date/Time/Timestamp as time.Time in UTC);
// with schemas.enable=false the schema is nil and the value is the plain
// JSON value (numbers as int64 or float64, objects as map[string]any).
// A nil b gives (nil, nil, nil). Errors: malformed JSON, a missing
// envelope, a payload that does not fit its schema.
func (c *JSONConverter) ToConnect(_ string, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	doc, err := decodeOrdered(dec)
	if err != nil {
		return nil, nil, fmt.Errorf("Converting byte[] to Kafka Connect data failed due to serialization error: %w", err)
	}
	if !c.SchemasEnable {
		return nil, schemalessValue(doc), nil
	}
	env, ok := doc.(map[string]any)
	delete(env, orderKey)
	_, hasSchema := env["schema"]
	_, hasPayload := env["payload"]
	if !ok || len(env) != 2 || !hasSchema || !hasPayload {
		return nil, nil, fmt.Errorf(`JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.`)
	}
	if env["schema"] == nil {
		return nil, schemalessValue(env["payload"]), nil
	}
	s, err := schemaFromJSON(env["schema"])
	if err != nil {
		return nil, nil, err
	}
	v, err := valueFromJSON(s, env["payload"])
	if err != nil {
		return nil, nil, err
	}
	return s, v, nil
}

func schemalessValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = schemalessValue(x[i])
		}
		return x
	case map[string]any:
		delete(x, orderKey)
		for k := range x {
			x[k] = schemalessValue(x[k])
		}
		return x
	}
	return v
}

// schemaFromJSON parses JsonConverter's schema JSON (asConnectSchema).
func schemaFromJSON(v any) (*connect.Schema, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("json converter: schema is not an object")
	}
	t, _ := m["type"].(string)
	b := connect.NewSchema(connect.Type(t))
	switch connect.Type(t) {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64, connect.Float32, connect.Float64,
		connect.Boolean, connect.String, connect.Bytes:
	case connect.Array:
		items, err := schemaFromJSON(m["items"])
		if err != nil {
			return nil, err
		}
		b.Items(items)
	case connect.Map:
		k, err := schemaFromJSON(m["keys"])
		if err != nil {
			return nil, err
		}
		val, err := schemaFromJSON(m["values"])
		if err != nil {
			return nil, err
		}
		b.Items(val)
		b.Build().KeySchema = k
	case connect.StructT:
		fs, _ := m["fields"].([]any)
		for _, f := range fs {
			fm, _ := f.(map[string]any)
			name, _ := fm["field"].(string)
			fsch, err := schemaFromJSON(fm)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", name, err)
			}
			b.Field(name, fsch)
		}
	default:
		return nil, fmt.Errorf("Unknown schema type: %q", t)
	}
	if o, _ := m["optional"].(bool); o {
		b.Optional()
	}
	if n, ok := m["name"].(string); ok {
		b.Name(n)
	}
	if ver, ok := m["version"].(json.Number); ok {
		n, _ := ver.Int64()
		b.Version(int(n))
	}
	if d, ok := m["doc"].(string); ok {
		b.Doc(d)
	}
	if ps, ok := m["parameters"].(map[string]any); ok {
		for _, k := range orderOf(ps) {
			if s, ok := ps[k].(string); ok {
				b.Param(k, s)
			}
		}
	}
	s := b.Build()
	if d, ok := m["default"]; ok && d != nil {
		dv, err := valueFromJSON(s, d)
		if err == nil {
			s.Default = dv
		}
	}
	return s, nil
}

// valueFromJSON types a JSON payload by its schema (convertToConnect).
func valueFromJSON(s *connect.Schema, v any) (any, error) {
	if v == nil {
		if s.Default != nil {
			return s.Default, nil
		}
		if !s.Optional {
			return nil, fmt.Errorf("Invalid null value for required %s field", s.Type)
		}
		return nil, nil
	}
	num := func() (json.Number, error) {
		n, ok := v.(json.Number)
		if !ok {
			return "", fmt.Errorf("Invalid type for %s: %T", s.Type, v)
		}
		return n, nil
	}
	switch s.Name {
	case connect.DecimalName:
		scale, _ := s.Param("scale")
		sc, _ := strconv.Atoi(scale)
		switch x := v.(type) {
		case string:
			raw, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("Invalid bytes field: %w", err)
			}
			return connect.Decimal{Unscaled: fromTwosComplement(raw), Scale: sc}, nil
		case json.Number: // decimal.format=NUMERIC
			r, ok := new(big.Rat).SetString(x.String())
			if !ok {
				return nil, fmt.Errorf("Invalid decimal %s", x)
			}
			r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sc)), nil)))
			return connect.Decimal{Unscaled: new(big.Int).Quo(r.Num(), r.Denom()), Scale: sc}, nil
		}
	case connect.DateName, connect.TimeName, connect.TimestampName:
		n, err := num()
		if err != nil {
			return nil, err
		}
		i, _ := n.Int64()
		switch s.Name {
		case connect.DateName:
			return time.Unix(i*86400, 0).UTC(), nil
		case connect.TimeName:
			return time.UnixMilli(i).UTC(), nil
		default:
			return time.UnixMilli(i).UTC(), nil
		}
	}
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		n, err := num()
		if err != nil {
			return nil, err
		}
		i, err := n.Int64()
		if err != nil {
			return nil, fmt.Errorf("Invalid %s value %s", s.Type, n)
		}
		switch s.Type {
		case connect.Int8:
			return int8(i), nil
		case connect.Int16:
			return int16(i), nil
		case connect.Int32:
			return int32(i), nil
		}
		return i, nil
	case connect.Float32, connect.Float64:
		var f float64
		switch x := v.(type) {
		case json.Number:
			f, _ = x.Float64()
		case string: // "NaN", "Infinity" as Java writes them
			switch x {
			case "NaN":
				f = math.NaN()
			case "Infinity":
				f = math.Inf(1)
			case "-Infinity":
				f = math.Inf(-1)
			default:
				return nil, fmt.Errorf("Invalid %s value %q", s.Type, x)
			}
		default:
			return nil, fmt.Errorf("Invalid type for %s: %T", s.Type, v)
		}
		if s.Type == connect.Float32 {
			return float32(f), nil
		}
		return f, nil
	case connect.Boolean:
		t, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("Invalid type for boolean: %T", v)
		}
		return t, nil
	case connect.String:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("Invalid type for string: %T", v)
		}
		return str, nil
	case connect.Bytes:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("Invalid type for bytes: %T", v)
		}
		raw, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return nil, fmt.Errorf("Invalid bytes field: %w", err)
		}
		return raw, nil
	case connect.Array:
		items, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("Invalid type for array: %T", v)
		}
		out := make([]any, len(items))
		for i, it := range items {
			x, err := valueFromJSON(s.ValueSchema, it)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case connect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Invalid type for map: %T", v)
		}
		out := make(map[string]any, len(m))
		for k, it := range m {
			if k == orderKey {
				continue
			}
			x, err := valueFromJSON(s.ValueSchema, it)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case connect.StructT:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Invalid type for struct: %T", v)
		}
		st := connect.NewStruct(s)
		for i, f := range s.Fields {
			x, err := valueFromJSON(f.Schema, m[f.Name])
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			st.Values[i] = x
		}
		return st, nil
	}
	return nil, fmt.Errorf("Unknown schema type: %q", s.Type)
}

// fromTwosComplement decodes Java's BigInteger.toByteArray.
func fromTwosComplement(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

// orderKey holds, inside a decoded object, the order of its keys (schema
// parameters keep their order, as Kafka Connect's LinkedHashMap does).
const orderKey = "\x00order"

func orderOf(m map[string]any) []string {
	ks, _ := m[orderKey].([]string)
	return ks
}

// decodeOrdered decodes one JSON value like json.Decoder.Decode with
// UseNumber, recording each object's key order under orderKey.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch d := tok.(type) {
	case json.Delim:
		switch d {
		case '{':
			m := map[string]any{}
			var keys []string
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				m[k] = v
				keys = append(keys, k)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			if len(keys) > 0 {
				m[orderKey] = keys
			}
			return m, nil
		case '[':
			out := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return out, nil
		}
		return nil, fmt.Errorf("unexpected %v", d)
	}
	return tok, nil
}
