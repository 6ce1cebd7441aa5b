package transforms

import (
	"github.com/connectd/connectd/connect"
)

// Flatten is org.apache.kafka.connect.transforms.Flatten$Key and $Value:
// nested STRUCT fields become top-level fields named by joining the path
// with delimiter (default "."); a field under an optional struct becomes
// optional. Arrays and maps inside a STRUCT stay as they are; schemaless
// maps are flattened recursively. A null key or value passes unchanged.
type Flatten struct {
	op    operand
	delim string
}

var _ connect.Transformation = (*Flatten)(nil)

// Config: delimiter.
func (t *Flatten) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "delimiter", Type: connect.TypeString, Default: connect.Str("."), Importance: connect.Medium,
		Doc: "Delimiter to insert between field names from the input record when generating field names for the output record"})
}

// Configure reads delimiter.
func (t *Flatten) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.delim = p.String("delimiter")
	return nil
}

// Apply flattens the key or value.
func (t *Flatten) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	s, v := t.op.get(r)
	if v == nil {
		return r, nil
	}
	if s == nil {
		m, err := requireMap(v, "flattening")
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		t.flattenMap("", m, out)
		return t.op.with(r, nil, out), nil
	}
	st, err := requireStruct(v, "flattening")
	if err != nil {
		return nil, err
	}
	b := copyBasics(s, connect.StructT)
	if s.Optional {
		b.Optional()
	}
	var vals []any
	t.flattenStruct("", s, st, false, b, &vals)
	ns := b.Build()
	return t.op.with(r, ns, &connect.Struct{Schema: ns, Values: vals}), nil
}

func (t *Flatten) name(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + t.delim + field
}

func (t *Flatten) flattenStruct(prefix string, s *connect.Schema, st *connect.Struct, optional bool, b *connect.SchemaBuilder, vals *[]any) {
	for _, f := range s.Fields {
		var v any
		if st != nil {
			v = st.Values[f.Index]
		}
		name := t.name(prefix, f.Name)
		if f.Schema.Type == connect.StructT {
			child, _ := v.(*connect.Struct)
			t.flattenStruct(name, f.Schema, child, optional || f.Schema.Optional, b, vals)
			continue
		}
		fs := f.Schema
		if optional && !fs.Optional {
			fs = copySchema(fs, true)
		}
		b.Field(name, fs)
		*vals = append(*vals, v)
	}
}

func (t *Flatten) flattenMap(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		name := t.name(prefix, k)
		if child, ok := v.(map[string]any); ok {
			t.flattenMap(name, child, out)
			continue
		}
		out[name] = v
	}
}

// Close does nothing.
func (t *Flatten) Close() {}
