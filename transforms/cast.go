package transforms

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

// Cast is org.apache.kafka.connect.transforms.Cast$Key and $Value: spec is
// "field:type,..." (or one bare "type" for the whole key or value), type
// one of int8, int16, int32, int64, float32, float64, boolean, string.
// Cast fields keep their optionality and get their default cast too; the
// STRUCT schema keeps its name, version, doc and parameters. Sources may be
// numbers, booleans, strings, Decimals, and (to string only) Date, Time,
// Timestamp and bytes (base64). A null key or value passes unchanged.
type Cast struct {
	op          operand
	casts       map[string]connect.Type
	whole       connect.Type
	replaceNull bool
}

var _ connect.Transformation = (*Cast)(nil)

// Config: spec (required), replace.null.with.default.
func (t *Cast) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "spec", Type: connect.TypeList, Importance: connect.High,
			Doc: "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string.",
			Validator: func(v string) string {
				if _, _, err := parseCastSpec(v); err != "" {
					return err
				}
				return ""
			}}).
		Define(connect.ConfigKey{Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium,
			Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."})
}

var castTypes = map[string]connect.Type{
	"int8": connect.Int8, "int16": connect.Int16, "int32": connect.Int32, "int64": connect.Int64,
	"float32": connect.Float32, "float64": connect.Float64, "boolean": connect.Boolean, "string": connect.String,
}

func parseCastSpec(v string) (map[string]connect.Type, connect.Type, string) {
	items := list(v)
	if len(items) == 0 {
		return nil, "", "Must specify at least one field to cast."
	}
	casts := map[string]connect.Type{}
	for _, it := range items {
		field, typ, ok := strings.Cut(it, ":")
		if !ok {
			if len(items) > 1 {
				return nil, "", "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec"
			}
			ct, known := castTypes[strings.ToLower(strings.TrimSpace(it))]
			if !known {
				return nil, "", "Invalid type found in casting spec: " + it
			}
			return nil, ct, ""
		}
		ct, known := castTypes[strings.ToLower(strings.TrimSpace(typ))]
		if !known {
			return nil, "", "Invalid type found in casting spec: " + typ
		}
		casts[strings.TrimSpace(field)] = ct
	}
	return casts, "", ""
}

// Configure reads spec.
func (t *Cast) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.casts, t.whole, _ = parseCastSpec(p.String("spec"))
	t.replaceNull = p.Bool("replace.null.with.default")
	return nil
}

func castSchema(orig *connect.Schema, target connect.Type, whole bool) (*connect.Schema, error) {
	var b *connect.SchemaBuilder
	if whole {
		b = copyBasics(orig, target)
	} else {
		b = connect.NewSchema(target)
	}
	if orig.Optional {
		b.Optional()
	}
	if orig.Default != nil {
		d, err := castValue(orig, orig.Default, target)
		if err != nil {
			return nil, err
		}
		b.Default(d)
	}
	return b.Build(), nil
}

// Apply casts the fields or the whole key/value.
func (t *Cast) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	s, v := t.op.get(r)
	if v == nil {
		return r, nil
	}
	if t.whole != "" {
		nv, err := castValue(s, v, t.whole)
		if err != nil {
			return nil, err
		}
		var ns *connect.Schema
		if s != nil {
			if ns, err = castSchema(s, t.whole, true); err != nil {
				return nil, err
			}
		}
		return t.op.with(r, ns, nv), nil
	}
	if s == nil {
		m, err := requireMap(v, "cast types")
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			if ct, ok := t.casts[k]; ok {
				if x, err = castValue(nil, x, ct); err != nil {
					return nil, err
				}
			}
			out[k] = x
		}
		return t.op.with(r, nil, out), nil
	}
	st, err := requireStruct(v, "cast types")
	if err != nil {
		return nil, err
	}
	b := copyBasics(s, connect.StructT)
	if s.Optional {
		b.Optional()
	}
	for _, f := range s.Fields {
		fs := f.Schema
		if ct, ok := t.casts[f.Name]; ok {
			if fs, err = castSchema(f.Schema, ct, false); err != nil {
				return nil, err
			}
		}
		b.Field(f.Name, fs)
	}
	ns := b.Build()
	nv := connect.NewStruct(ns)
	for _, f := range s.Fields {
		x := fieldValue(st, f, t.replaceNull)
		if ct, ok := t.casts[f.Name]; ok && x != nil {
			if x, err = castValue(f.Schema, x, ct); err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		nv.Values[f.Index] = x
	}
	return t.op.with(r, ns, nv), nil
}

// castValue converts v (of schema s, nil when schemaless) to target, as
// Cast.castValueToType.
func castValue(s *connect.Schema, v any, target connect.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	if target == connect.String {
		switch x := v.(type) {
		case string:
			return x, nil
		case bool:
			return strconv.FormatBool(x), nil
		case float32:
			return converters.JavaFloat(float64(x), 32), nil
		case float64:
			return converters.JavaFloat(x, 64), nil
		case connect.Decimal:
			return decimalString(x), nil
		case []byte:
			return base64.StdEncoding.EncodeToString(x), nil
		case time.Time:
			var sch *connect.Schema
			if s != nil {
				sch = s
			} else {
				sch = connect.NewSchema(connect.Int64).Name(connect.TimestampName).Build()
			}
			return string(headerBytes(sch, x)), nil
		}
		if n, ok := toInt64(v); ok {
			return strconv.FormatInt(n, 10), nil
		}
		return nil, fmt.Errorf("Unexpected type in Cast transformation: %T", v)
	}
	// numeric or boolean target: reduce the source to an int64 or float64
	var (
		i       int64
		f       float64
		isFloat bool
	)
	switch x := v.(type) {
	case bool:
		if x {
			i = 1
		}
	case float32:
		f, isFloat = float64(x), true
	case float64:
		f, isFloat = x, true
	case connect.Decimal:
		r := new(big.Rat).SetFrac(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		f, _ = r.Float64()
		isFloat = true
	case string:
		switch target {
		case connect.Boolean:
			return strings.EqualFold(strings.TrimSpace(x), "true"), nil
		case connect.Float32, connect.Float64:
			pf, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return nil, fmt.Errorf("Value (%s) was out of range for requested data type: %w", x, err)
			}
			f, isFloat = pf, true
		default:
			pi, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("Value (%s) was out of range for requested data type: %w", x, err)
			}
			i = pi
		}
	default:
		n, ok := toInt64(v)
		if !ok {
			return nil, fmt.Errorf("Unexpected type in Cast transformation: %T", v)
		}
		i = n
	}
	if isFloat && target != connect.Float32 && target != connect.Float64 && target != connect.Boolean {
		i = int64(f)
	}
	if !isFloat {
		f = float64(i)
	}
	switch target {
	case connect.Int8:
		return int8(i), nil
	case connect.Int16:
		return int16(i), nil
	case connect.Int32:
		return int32(i), nil
	case connect.Int64:
		return i, nil
	case connect.Float32:
		return float32(f), nil
	case connect.Float64:
		return f, nil
	case connect.Boolean:
		if isFloat {
			return f != 0, nil
		}
		return i != 0, nil
	}
	return nil, fmt.Errorf("Unexpected type in Cast transformation: %s", target)
}

// Close does nothing.
func (t *Cast) Close() {}
