package transforms

import (
	"errors"
	"strconv"

	"github.com/connectd/connectd/connect"
)

// SetSchemaMetadata is org.apache.kafka.connect.transforms.SetSchemaMetadata$Key
// and $Value: it sets the name (schema.name) and/or version
// (schema.version) of the key or value schema, keeping everything else; a
// STRUCT value is re-attached to the new schema. Schemaless records fail,
// as in Kafka Connect; a tombstone with a schema gets the new schema.
type SetSchemaMetadata struct {
	op      operand
	name    string
	version int
}

var _ connect.Transformation = (*SetSchemaMetadata)(nil)

// Config: schema.name, schema.version (at least one needed).
func (t *SetSchemaMetadata) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "schema.name", Type: connect.TypeString, Default: connect.Str(""), Importance: connect.High, Doc: "Schema name to set."}).
		Define(connect.ConfigKey{Name: "schema.version", Type: connect.TypeInt, Default: connect.Str(""), Importance: connect.High, Doc: "Schema version to set."})
}

// Configure reads the name and version.
func (t *SetSchemaMetadata) Configure(props map[string]string) error {
	if v, ok := props["schema.version"]; ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return invalid("schema.version", v, "Not a number of type INT")
		}
		t.version = int(n)
	}
	t.name = props["schema.name"]
	if t.name == "" && t.version == 0 {
		return configErr("schema.name", "Neither schema name nor version configured")
	}
	return nil
}

// Apply sets the metadata.
func (t *SetSchemaMetadata) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	s, v := t.op.get(r)
	if s == nil {
		return nil, errors.New("Schema required for [updating schema metadata]")
	}
	ns := copySchema(s, false)
	if t.name != "" {
		ns.Name = t.name
	}
	if t.version != 0 {
		ns.Version = t.version
	}
	if st, ok := v.(*connect.Struct); ok {
		v = &connect.Struct{Schema: ns, Values: st.Values}
	}
	return t.op.with(r, ns, v), nil
}

// Close does nothing.
func (t *SetSchemaMetadata) Close() {}
