package transforms

import (
	"fmt"

	"github.com/connectd/connectd/connect"
)

// ValueToKey is org.apache.kafka.connect.transforms.ValueToKey: the key
// becomes a struct (an unnamed, required STRUCT schema) or, for schemaless
// values, a map of the listed value fields. A null value fails, as in Kafka
// Connect (requireStruct/requireMap), so put it behind a RecordIsTombstone
// predicate with negate=true on streams with tombstones.
type ValueToKey struct {
	fields      []string
	replaceNull bool
}

var _ connect.Transformation = (*ValueToKey)(nil)

// Config: fields (required, non-empty), replace.null.with.default.
func (t *ValueToKey) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Importance: connect.High,
			Doc: "Field names on the record value to extract as the record key.", Validator: nonEmptyList}).
		Define(connect.ConfigKey{Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium,
			Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."})
}

// Configure reads fields.
func (t *ValueToKey) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.fields, t.replaceNull = p.List("fields"), p.Bool("replace.null.with.default")
	return nil
}

// Apply builds the key from the value.
func (t *ValueToKey) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	out := withRecord(r)
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, "copying fields from value to key")
		if err != nil {
			return nil, err
		}
		key := make(map[string]any, len(t.fields))
		for _, f := range t.fields {
			key[f] = m[f]
		}
		out.KeySchema, out.Key = nil, key
		return out, nil
	}
	st, err := requireStruct(r.Value, "copying fields from value to key")
	if err != nil {
		return nil, err
	}
	b := connect.StructSchema()
	for _, name := range t.fields {
		f := r.ValueSchema.Field(name)
		if f == nil {
			return nil, fmt.Errorf("Field does not exist: %s", name)
		}
		b.Field(name, f.Schema)
	}
	ks := b.Build()
	key := connect.NewStruct(ks)
	for i, name := range t.fields {
		key.Values[i] = fieldValue(st, *r.ValueSchema.Field(name), t.replaceNull)
	}
	out.KeySchema, out.Key = ks, key
	return out, nil
}

// Close does nothing.
func (t *ValueToKey) Close() {}
