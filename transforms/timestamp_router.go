package transforms

import (
	"errors"
	"strings"

	"github.com/connectd/connectd/connect"
)

// TimestampRouter is org.apache.kafka.connect.transforms.TimestampRouter:
// the topic becomes topic.format (default "${topic}-${timestamp}") with
// ${topic} replaced by the topic and ${timestamp} by the record timestamp
// formatted, in UTC, with timestamp.format (a SimpleDateFormat pattern,
// default "yyyyMMdd"). A record without timestamp fails with "Timestamp
// missing on record".
type TimestampRouter struct {
	topicFormat, timestampFormat string
}

var _ connect.Transformation = (*TimestampRouter)(nil)

// Config: topic.format and timestamp.format.
func (t *TimestampRouter) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "topic.format", Type: connect.TypeString, Default: connect.Str("${topic}-${timestamp}"), Importance: connect.High,
			Doc: "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."}).
		Define(connect.ConfigKey{Name: "timestamp.format", Type: connect.TypeString, Default: connect.Str("yyyyMMdd"), Importance: connect.High,
			Doc: "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."})
}

// Configure reads the two formats.
func (t *TimestampRouter) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.topicFormat, t.timestampFormat = p.String("topic.format"), p.String("timestamp.format")
	return nil
}

// Apply reroutes r by its timestamp.
func (t *TimestampRouter) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	if r.Timestamp.IsZero() {
		return nil, errors.New("Timestamp missing on record: " + r.Topic)
	}
	out := withRecord(r)
	topic := strings.ReplaceAll(t.topicFormat, "${topic}", r.Topic)
	out.Topic = strings.ReplaceAll(topic, "${timestamp}", formatJava(r.Timestamp, t.timestampFormat))
	return out, nil
}

// Close does nothing.
func (t *TimestampRouter) Close() {}
