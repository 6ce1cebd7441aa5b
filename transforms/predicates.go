package transforms

import (
	"regexp"

	"github.com/connectd/connectd/connect"
)

// TopicNameMatches is
// org.apache.kafka.connect.transforms.predicates.TopicNameMatches: true when
// the whole topic name matches pattern.
type TopicNameMatches struct{ re *regexp.Regexp }

var _ connect.Predicate = (*TopicNameMatches)(nil)

// Config: pattern (required, a regex).
func (p *TopicNameMatches) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "pattern", Type: connect.TypeString, Importance: connect.Medium,
		Doc: "A Java regular expression for matching against the name of a record's topic.", Validator: func(v string) string {
			if v == "" {
				return "String must be non-empty"
			}
			return regexValidator(v)
		}})
}

// Configure reads pattern.
func (p *TopicNameMatches) Configure(props map[string]string) error {
	if _, err := parse(p.Config(), props); err != nil {
		return err
	}
	p.re, _ = compileJavaRegex(props["pattern"])
	return nil
}

// Test matches the topic.
func (p *TopicNameMatches) Test(r *connect.SourceRecord) bool { return p.re.MatchString(r.Topic) }

// HasHeaderKey is org.apache.kafka.connect.transforms.predicates.HasHeaderKey:
// true when the record has at least one header called name.
type HasHeaderKey struct{ name string }

var _ connect.Predicate = (*HasHeaderKey)(nil)

// Config: name (required).
func (p *HasHeaderKey) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "name", Type: connect.TypeString, Importance: connect.Medium,
		Doc: "The header name.", Validator: func(v string) string {
			if v == "" {
				return "String must be non-empty"
			}
			return ""
		}})
}

// Configure reads name.
func (p *HasHeaderKey) Configure(props map[string]string) error {
	if _, err := parse(p.Config(), props); err != nil {
		return err
	}
	p.name = props["name"]
	return nil
}

// Test looks for the header.
func (p *HasHeaderKey) Test(r *connect.SourceRecord) bool { return headerIndex(r.Headers, p.name) >= 0 }

// RecordIsTombstone is
// org.apache.kafka.connect.transforms.predicates.RecordIsTombstone: true
// when the record's value is null.
type RecordIsTombstone struct{}

var _ connect.Predicate = (*RecordIsTombstone)(nil)

// Config: no keys.
func (p *RecordIsTombstone) Config() *connect.ConfigDef { return connect.NewConfigDef() }

// Configure accepts any properties.
func (p *RecordIsTombstone) Configure(map[string]string) error { return nil }

// Test reports a null value.
func (p *RecordIsTombstone) Test(r *connect.SourceRecord) bool { return r.Value == nil }
