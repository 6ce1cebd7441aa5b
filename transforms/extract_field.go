package transforms

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// ExtractField is org.apache.kafka.connect.transforms.ExtractField$Key and
// $Value: the key or value becomes one of its fields, with that field's
// schema. With field.syntax.version=V2 (KIP-821) a dotted field name is a
// path into nested structs or maps. A null struct or map gives a null
// result with the field's schema (a tombstone stays a tombstone).
type ExtractField struct {
	op          operand
	path        []string
	replaceNull bool
}

var _ connect.Transformation = (*ExtractField)(nil)

// Config: field (required), field.syntax.version, replace.null.with.default.
func (t *ExtractField) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Importance: connect.Medium,
			Doc: "Field name to extract."}).
		Define(connect.ConfigKey{Name: "field.syntax.version", Type: connect.TypeString, Default: connect.Str("V1"), Importance: connect.High,
			Doc:     "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access the elements at the root level of the struct or map. If set to `V2`, the syntax will support accessing nested elements. To access nested elements, dotted notation is used. If dots are already included in the field name, then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield `baz` from a field named \"foo.bar\" in a struct/map the following format can be used to access its elements: \"`foo.bar`.baz\".",
			Allowed: []string{"V1", "V2"}}).
		Define(connect.ConfigKey{Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium,
			Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."})
}

// Configure reads field.
func (t *ExtractField) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.path = fieldPath(p.String("field"), p.String("field.syntax.version"))
	t.replaceNull = p.Bool("replace.null.with.default")
	return nil
}

// fieldPath splits a KIP-821 field path: V1 is one name; V2 splits on dots
// outside backtick pairs.
func fieldPath(field, version string) []string {
	if !strings.EqualFold(version, "V2") {
		return []string{field}
	}
	var out []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(field); i++ {
		c := field[i]
		switch {
		case c == '`':
			quoted = !quoted
		case c == '.' && !quoted:
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(out, cur.String())
}

// Apply extracts the field.
func (t *ExtractField) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	s, v := t.op.get(r)
	if s == nil {
		if v == nil {
			return t.op.with(r, nil, nil), nil
		}
		var cur any = v
		for _, name := range t.path {
			m, err := requireMap(cur, "field extraction")
			if err != nil {
				return nil, err
			}
			cur = m[name]
			if cur == nil {
				break
			}
		}
		return t.op.with(r, nil, cur), nil
	}
	if v != nil {
		if _, err := requireStruct(v, "field extraction"); err != nil {
			return nil, err
		}
	}
	cs, cv := s, v
	for _, name := range t.path {
		f := cs.Field(name)
		if f == nil {
			return nil, fmt.Errorf("Unknown field: %s", strings.Join(t.path, "."))
		}
		var next any
		if st, ok := cv.(*connect.Struct); ok {
			next = fieldValue(st, *f, t.replaceNull)
		}
		cs, cv = f.Schema, next
	}
	return t.op.with(r, cs, cv), nil
}

// Close does nothing.
func (t *ExtractField) Close() {}
