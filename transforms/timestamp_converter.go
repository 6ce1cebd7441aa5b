package transforms

import (
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// TimestampConverter is org.apache.kafka.connect.transforms.TimestampConverter$Key
// and $Value: it converts field (or, when empty, the whole key or value)
// between Unix epoch numbers (int64 in unix.precision: seconds,
// milliseconds (default), microseconds, nanoseconds), strings in format (a
// SimpleDateFormat pattern, UTC) and Kafka Connect's Date, Time and
// Timestamp logical types, as target.type says (string, unix, Date, Time,
// Timestamp). The source kind comes from the schema (or the Go value when
// schemaless). The converted field keeps its optionality; a null value
// stays null.
type TimestampConverter struct {
	op          operand
	field       string
	target      string
	format      string
	precision   string
	replaceNull bool
}

var _ connect.Transformation = (*TimestampConverter)(nil)

// Config: field, target.type (required), format, unix.precision,
// replace.null.with.default.
func (t *TimestampConverter) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Default: connect.Str(""), Importance: connect.High,
			Doc: "The field containing the timestamp, or empty if the entire value is a timestamp"}).
		Define(connect.ConfigKey{Name: "target.type", Type: connect.TypeString, Importance: connect.High,
			Doc:     "The desired timestamp representation: string, unix, Date, Time, or Timestamp",
			Allowed: []string{"string", "unix", "Date", "Time", "Timestamp"}}).
		Define(connect.ConfigKey{Name: "format", Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Medium,
			Doc: "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."}).
		Define(connect.ConfigKey{Name: "unix.precision", Type: connect.TypeString, Default: connect.Str("milliseconds"), Importance: connect.Low,
			Doc:     "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long.Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components.",
			Allowed: []string{"nanoseconds", "microseconds", "milliseconds", "seconds"}}).
		Define(connect.ConfigKey{Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium,
			Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."})
}

// Configure reads the keys of Config.
func (t *TimestampConverter) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.field, t.format, t.precision = p.String("field"), p.String("format"), strings.ToLower(p.String("unix.precision"))
	for _, k := range []string{"string", "unix", "Date", "Time", "Timestamp"} {
		if strings.EqualFold(k, p.String("target.type")) {
			t.target = k
		}
	}
	if t.target == "string" && t.format == "" {
		return configErr("format", "TimestampConverter requires format option to be specified when using string timestamps")
	}
	t.replaceNull = p.Bool("replace.null.with.default")
	return nil
}

func (t *TimestampConverter) targetSchema(optional bool) *connect.Schema {
	var b *connect.SchemaBuilder
	switch t.target {
	case "string":
		b = connect.NewSchema(connect.String)
	case "unix":
		b = connect.NewSchema(connect.Int64)
	case "Date":
		b = connect.NewSchema(connect.Int32).Name(connect.DateName).Version(1)
	case "Time":
		b = connect.NewSchema(connect.Int32).Name(connect.TimeName).Version(1)
	default:
		b = connect.NewSchema(connect.Int64).Name(connect.TimestampName).Version(1)
	}
	if optional {
		b.Optional()
	}
	return b.Build()
}

// toTime reads v, of schema s (nil = schemaless), as an instant.
func (t *TimestampConverter) toTime(s *connect.Schema, v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x.UTC(), nil
	case string:
		if t.format == "" {
			return time.Time{}, fmt.Errorf("TimestampConverter requires format option to be specified when using string timestamps")
		}
		tm, err := parseJava(x, t.format)
		if err != nil {
			return time.Time{}, fmt.Errorf("Could not parse timestamp: value (%s) does not match pattern (%s): %w", x, t.format, err)
		}
		return tm, nil
	}
	n, ok := toInt64(v)
	if !ok {
		return time.Time{}, fmt.Errorf("Expected timestamp to be a Long, String, or Date, but found %T", v)
	}
	switch t.precision {
	case "seconds":
		return time.Unix(n, 0).UTC(), nil
	case "microseconds":
		return time.UnixMicro(n).UTC().Truncate(time.Millisecond), nil
	case "nanoseconds":
		return time.Unix(0, n).UTC().Truncate(time.Millisecond), nil
	}
	return time.UnixMilli(n).UTC(), nil
}

func (t *TimestampConverter) convert(s *connect.Schema, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	tm, err := t.toTime(s, v)
	if err != nil {
		return nil, err
	}
	switch t.target {
	case "string":
		return formatJava(tm, t.format), nil
	case "unix":
		switch t.precision {
		case "seconds":
			return tm.Unix(), nil
		case "microseconds":
			return tm.UnixMicro(), nil
		case "nanoseconds":
			return tm.UnixNano(), nil
		}
		return tm.UnixMilli(), nil
	case "Date":
		return time.Date(tm.Year(), tm.Month(), tm.Day(), 0, 0, 0, 0, time.UTC), nil
	case "Time":
		return time.Date(1970, 1, 1, tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond(), time.UTC), nil
	}
	return tm, nil
}

// Apply converts the field or the whole key/value.
func (t *TimestampConverter) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	s, v := t.op.get(r)
	if t.field == "" {
		nv, err := t.convert(s, v)
		if err != nil {
			return nil, err
		}
		var ns *connect.Schema
		if s != nil {
			ns = t.targetSchema(s.Optional)
		}
		return t.op.with(r, ns, nv), nil
	}
	if s == nil {
		if v == nil {
			return t.op.with(r, nil, nil), nil
		}
		m, err := requireMap(v, "converting timestamp formats")
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[k] = x
		}
		if out[t.field], err = t.convert(nil, m[t.field]); err != nil {
			return nil, err
		}
		return t.op.with(r, nil, out), nil
	}
	b := copyBasics(s, connect.StructT)
	for _, f := range s.Fields {
		if f.Name == t.field {
			b.Field(f.Name, t.targetSchema(f.Schema.Optional))
		} else {
			b.Field(f.Name, f.Schema)
		}
	}
	ns := b.Build()
	if v == nil {
		return t.op.with(r, ns, nil), nil
	}
	st, err := requireStruct(v, "converting timestamp formats")
	if err != nil {
		return nil, err
	}
	nv := connect.NewStruct(ns)
	for _, f := range s.Fields {
		x := fieldValue(st, f, t.replaceNull)
		if f.Name == t.field {
			if x, err = t.convert(f.Schema, x); err != nil {
				return nil, err
			}
		}
		nv.Values[f.Index] = x
	}
	return t.op.with(r, ns, nv), nil
}

// Close does nothing.
func (t *TimestampConverter) Close() {}
