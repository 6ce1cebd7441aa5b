package transforms

import (
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
)

// MaskField is org.apache.kafka.connect.transforms.MaskField$Key and
// $Value: the listed fields are replaced by the "empty" value of their type
// (0, false, "", empty bytes/array/map, the epoch for dates and times, a
// zero Decimal), or by replacement parsed as the field's type when set
// (numbers, strings and Decimals only, as Kafka Connect). Schemas are
// unchanged; schemaless maps infer the type from the Go value. A null key
// or value passes unchanged.
type MaskField struct {
	op          operand
	fields      map[string]bool
	replacement *string
	replaceNull bool
}

var _ connect.Transformation = (*MaskField)(nil)

// Config: fields (required, non-empty), replacement, replace.null.with.default.
func (t *MaskField) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Importance: connect.High,
			Doc: "Names of fields to mask.", Validator: nonEmptyList}).
		Define(connect.ConfigKey{Name: "replacement", Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low,
			Doc: "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."}).
		Define(connect.ConfigKey{Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium,
			Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."})
}

// nonEmptyList is Kafka's ConfigDef.NonEmptyListValidator.
func nonEmptyList(v string) string {
	if len(list(v)) == 0 {
		return "Empty list"
	}
	return ""
}

// Configure reads fields and replacement.
func (t *MaskField) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.fields = set(p.List("fields"))
	if rep, ok := props["replacement"]; ok && rep != "" {
		t.replacement = &rep
	}
	t.replaceNull = p.Bool("replace.null.with.default")
	return nil
}

// Apply masks the fields.
func (t *MaskField) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	s, v := t.op.get(r)
	if v == nil {
		return r, nil
	}
	if s == nil {
		m, err := requireMap(v, "mask fields")
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			if t.fields[k] && x != nil {
				nx, err := t.masked(nil, x)
				if err != nil {
					return nil, err
				}
				x = nx
			}
			out[k] = x
		}
		return t.op.with(r, nil, out), nil
	}
	st, err := requireStruct(v, "mask fields")
	if err != nil {
		return nil, err
	}
	nv := connect.NewStruct(s)
	for _, f := range s.Fields {
		x := fieldValue(st, f, t.replaceNull)
		if t.fields[f.Name] && x != nil {
			if x, err = t.masked(f.Schema, x); err != nil {
				return nil, err
			}
		}
		nv.Values[f.Index] = x
	}
	return t.op.with(r, s, nv), nil
}

func (t *MaskField) masked(s *connect.Schema, v any) (any, error) {
	if t.replacement != nil {
		return maskReplacement(v, *t.replacement)
	}
	switch x := v.(type) {
	case int8:
		return int8(0), nil
	case int16:
		return int16(0), nil
	case int32:
		return int32(0), nil
	case int64:
		return int64(0), nil
	case int:
		return 0, nil
	case float32:
		return float32(0), nil
	case float64:
		return float64(0), nil
	case bool:
		return false, nil
	case string:
		return "", nil
	case []byte:
		return []byte{}, nil
	case []any:
		return []any{}, nil
	case map[string]any:
		return map[string]any{}, nil
	case connect.Decimal:
		return connect.Decimal{Unscaled: new(big.Int), Scale: x.Scale}, nil
	case time.Time:
		return time.Unix(0, 0).UTC(), nil
	}
	return nil, fmt.Errorf("Cannot mask value of type: %T", v)
}

func maskReplacement(v any, rep string) (any, error) {
	bad := func(err error) error {
		return fmt.Errorf("Unable to convert %s (%T) to number: %v", rep, v, err)
	}
	switch x := v.(type) {
	case string:
		return rep, nil
	case int8, int16, int32, int64, int:
		n, err := strconv.ParseInt(rep, 10, 64)
		if err != nil {
			return nil, bad(err)
		}
		switch v.(type) {
		case int8:
			return int8(n), nil
		case int16:
			return int16(n), nil
		case int32:
			return int32(n), nil
		case int:
			return int(n), nil
		}
		return n, nil
	case float32:
		f, err := strconv.ParseFloat(rep, 32)
		if err != nil {
			return nil, bad(err)
		}
		return float32(f), nil
	case float64:
		f, err := strconv.ParseFloat(rep, 64)
		if err != nil {
			return nil, bad(err)
		}
		return f, nil
	case connect.Decimal:
		r, ok := new(big.Rat).SetString(rep)
		if !ok {
			return nil, bad(fmt.Errorf("not a decimal"))
		}
		scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil)))
		return connect.Decimal{Unscaled: new(big.Int).Quo(scaled.Num(), scaled.Denom()), Scale: x.Scale}, nil
	}
	return nil, fmt.Errorf("Cannot mask value of type %T with custom replacement.", v)
}

// Close does nothing.
func (t *MaskField) Close() {}
