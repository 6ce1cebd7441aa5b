package transforms

import (
	"fmt"

	"github.com/connectd/connectd/connect"
)

// HeaderFrom is org.apache.kafka.connect.transforms.HeaderFrom$Key and
// $Value: for each pair of fields[i] and headers[i], the field's value
// becomes header headers[i] (serialised as the default
// SimpleHeaderConverter does); with operation=move the fields are also
// removed from the key or value (its STRUCT schema rebuilt without them),
// with copy they stay. Schemaless maps are supported. A null key or value
// passes unchanged.
type HeaderFrom struct {
	op          operand
	fields      []string
	headers     []string
	move        bool
	replaceNull bool
}

var _ connect.Transformation = (*HeaderFrom)(nil)

// Config: fields, headers (required, same length), operation (move|copy),
// replace.null.with.default.
func (t *HeaderFrom) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Importance: connect.High,
			Doc: "Field names in the record whose values are to be copied or moved to headers.", Validator: nonEmptyList}).
		Define(connect.ConfigKey{Name: "headers", Type: connect.TypeList, Importance: connect.High,
			Doc: "Header names, in the same order as the field names listed in the fields configuration property.", Validator: nonEmptyList}).
		Define(connect.ConfigKey{Name: "operation", Type: connect.TypeString, Importance: connect.High,
			Doc:     "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value).",
			Allowed: []string{"move", "copy"}}).
		Define(connect.ConfigKey{Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium,
			Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."})
}

// Configure reads the keys of Config.
func (t *HeaderFrom) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.fields, t.headers = p.List("fields"), p.List("headers")
	if len(t.fields) != len(t.headers) {
		return configErr("headers", fmt.Sprintf("'fields' config must have the same number of elements as 'headers' config."))
	}
	t.move = p.String("operation") == "move"
	t.replaceNull = p.Bool("replace.null.with.default")
	return nil
}

// Apply copies or moves the fields to headers.
func (t *HeaderFrom) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	s, v := t.op.get(r)
	if v == nil {
		return r, nil
	}
	out := withRecord(r)
	if s == nil {
		m, err := requireMap(v, "header "+map[bool]string{true: "move", false: "copy"}[t.move])
		if err != nil {
			return nil, err
		}
		nm := make(map[string]any, len(m))
		for k, x := range m {
			nm[k] = x
		}
		for i, f := range t.fields {
			out.Headers = append(out.Headers, connect.Header{Key: t.headers[i], Value: headerBytes(nil, m[f])})
			if t.move {
				delete(nm, f)
			}
		}
		return t.op.with(out, nil, nm), nil
	}
	st, err := requireStruct(v, "header copy/move")
	if err != nil {
		return nil, err
	}
	for i, name := range t.fields {
		f := s.Field(name)
		if f == nil {
			return nil, fmt.Errorf("Field %s not found in schema %s", name, s.Name)
		}
		out.Headers = append(out.Headers, connect.Header{Key: t.headers[i], Value: headerBytes(f.Schema, fieldValue(st, *f, t.replaceNull))})
	}
	if !t.move {
		return out, nil
	}
	drop := set(t.fields)
	b := copyBasics(s, connect.StructT)
	if s.Optional {
		b.Optional()
	}
	var idx []int
	for _, f := range s.Fields {
		if !drop[f.Name] {
			b.Field(f.Name, f.Schema)
			idx = append(idx, f.Index)
		}
	}
	ns := b.Build()
	nv := connect.NewStruct(ns)
	for i, j := range idx {
		nv.Values[i] = fieldValue(st, s.Fields[j], t.replaceNull)
	}
	return t.op.with(out, ns, nv), nil
}

// Close does nothing.
func (t *HeaderFrom) Close() {}
