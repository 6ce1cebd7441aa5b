package transforms

import "github.com/connectd/connectd/connect"

// HoistField is org.apache.kafka.connect.transforms.HoistField$Key and
// $Value: the key or value is wrapped in a struct with one field (an
// unnamed, required STRUCT schema), or in a one-entry map when schemaless.
// A schemaless tombstone becomes {field: null}, as Kafka Connect does.
type HoistField struct {
	op    operand
	field string
}

var _ connect.Transformation = (*HoistField)(nil)

// Config: field (required).
func (t *HoistField) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Importance: connect.Medium,
		Doc: "Field name for the single field that will be created in the resulting Struct or Map."})
}

// Configure reads field.
func (t *HoistField) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.field = p.String("field")
	return nil
}

// Apply wraps the key or value.
func (t *HoistField) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	s, v := t.op.get(r)
	if s == nil {
		return t.op.with(r, nil, map[string]any{t.field: v}), nil
	}
	ns := connect.StructSchema().Field(t.field, s).Build()
	return t.op.with(r, ns, connect.NewStruct(ns).Put(t.field, v)), nil
}

// Close does nothing.
func (t *HoistField) Close() {}
