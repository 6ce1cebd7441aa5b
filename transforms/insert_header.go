package transforms

import "github.com/connectd/connectd/connect"

// InsertHeader is org.apache.kafka.connect.transforms.InsertHeader: it
// appends header with value.literal. Kafka Connect parses the literal with
// Values.parseString and the header converter writes it back; with the
// default SimpleHeaderConverter that is the literal's own text, which is
// what is written here.
type InsertHeader struct {
	header string
	value  []byte
}

var _ connect.Transformation = (*InsertHeader)(nil)

// Config: header and value.literal, both required.
func (t *InsertHeader) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "header", Type: connect.TypeString, Importance: connect.High,
			Doc: "The name of the header."}).
		Define(connect.ConfigKey{Name: "value.literal", Type: connect.TypeString, Importance: connect.High,
			Doc: "The literal value that is to be set as the header value on all records."})
}

// Configure reads header and value.literal.
func (t *InsertHeader) Configure(props map[string]string) error {
	if _, err := parse(t.Config(), props); err != nil {
		return err
	}
	t.header, t.value = props["header"], []byte(props["value.literal"])
	return nil
}

// Apply appends the header.
func (t *InsertHeader) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	out := withRecord(r)
	out.Headers = append(out.Headers, connect.Header{Key: t.header, Value: t.value})
	return out, nil
}

// Close does nothing.
func (t *InsertHeader) Close() {}
