package transforms

import "github.com/connectd/connectd/connect"

// Filter is org.apache.kafka.connect.transforms.Filter: it drops every
// record it is applied to, so it is used with a predicate
// (transforms.f.predicate, optionally negate=true).
type Filter struct{}

var _ connect.Transformation = (*Filter)(nil)

// Config: no keys.
func (t *Filter) Config() *connect.ConfigDef { return connect.NewConfigDef() }

// Configure accepts any properties.
func (t *Filter) Configure(map[string]string) error { return nil }

// Apply drops r.
func (t *Filter) Apply(*connect.SourceRecord) (*connect.SourceRecord, error) { return nil, nil }

// Close does nothing.
func (t *Filter) Close() {}
