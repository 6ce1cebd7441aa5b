package transforms

import "github.com/connectd/connectd/connect"

// DropHeaders is org.apache.kafka.connect.transforms.DropHeaders: it
// removes every header whose key is in headers.
type DropHeaders struct{ names map[string]bool }

var _ connect.Transformation = (*DropHeaders)(nil)

// Config: headers (required, non-empty).
func (t *DropHeaders) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "headers", Type: connect.TypeList, Importance: connect.High,
		Doc: "The name of the headers to be removed.", Validator: nonEmptyList})
}

// Configure reads headers.
func (t *DropHeaders) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.names = set(p.List("headers"))
	return nil
}

// Apply removes the headers.
func (t *DropHeaders) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	out := withRecord(r)
	out.Headers = out.Headers[:0]
	for _, h := range r.Headers {
		if !t.names[h.Key] {
			out.Headers = append(out.Headers, h)
		}
	}
	return out, nil
}

// Close does nothing.
func (t *DropHeaders) Close() {}
