package signal

import (
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Configuration keys, as Debezium 3.6's CommonConnectorConfig and
// KafkaSignalChannel.
const (
	KeyDataCollection   = "signal.data.collection"
	KeyEnabledChannels  = "signal.enabled.channels"
	KeyKafkaTopic       = "signal.kafka.topic"
	KeyKafkaBootstrap   = "signal.kafka.bootstrap.servers"
	KeyKafkaGroupID     = "signal.kafka.groupId"
	KeyKafkaPollTimeout = "signal.kafka.poll.timeout.ms"
)

// ConfigKeys returns the signal keys for a connector's ConfigDef.
func ConfigKeys() []connect.ConfigKey {
	return []connect.ConfigKey{
		{Name: KeyDataCollection, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Medium, Group: "Signals",
			Doc: "Fully-qualified name of the signal table (<schema>.<table> for PostgreSQL) with columns id, type, data (text). An INSERT into it, read from the change stream, is a signal; the connector also writes incremental snapshot watermarks into it. It must be in the publication.",
			Validator: func(v string) string {
				if v != "" && strings.Count(v, ".") < 1 {
					return "must be a fully-qualified table name (<schema>.<table>)"
				}
				return ""
			}},
		{Name: KeyEnabledChannels, Type: connect.TypeList, Default: connect.Str(ChannelSource), Importance: connect.Medium, Group: "Signals",
			Doc: "Comma-separated signal channels: source (the signal table) and kafka (signal.kafka.topic). Debezium's jmx, file and custom channels are not supported.",
			Validator: func(v string) string {
				for _, c := range strings.Split(v, ",") {
					switch c = strings.TrimSpace(c); c {
					case "", ChannelSource, ChannelKafka:
					case "jmx", "file", "in-process":
						return "channel " + c + " is not supported by connectd (supported: source, kafka)"
					default:
						return "unknown channel " + strconv.Quote(c) + " (supported: source, kafka)"
					}
				}
				return ""
			}},
		{Name: KeyKafkaTopic, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low, Group: "Signals",
			Doc: "Topic of the kafka signal channel (default <topic.prefix>-signal; partition 0 is read). A record whose key is topic.prefix and whose value is {\"id\": …, \"type\": …, \"data\": {…}} is a signal."},
		{Name: KeyKafkaBootstrap, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Low, Group: "Signals",
			Doc: "Kafka brokers (host:port list) of the kafka signal channel; required when signal.enabled.channels contains kafka."},
		{Name: KeyKafkaGroupID, Type: connect.TypeString, Default: connect.Str("kafka-signal"), Importance: connect.Low, Group: "Signals",
			Doc: "Consumer group whose committed offset on the signal topic records the signals already processed."},
		{Name: KeyKafkaPollTimeout, Type: connect.TypeInt, Default: connect.Str("0"), Importance: connect.Low, Group: "Signals",
			Doc: "Maximum time in ms one poll of the signal topic waits (connectd reads the topic on its own goroutine; 0 polls every 100 ms).",
			Validator: func(v string) string {
				if n, err := strconv.Atoi(v); err != nil || n < 0 {
					return "must be a non-negative integer"
				}
				return ""
			}},
	}
}

// Config is the parsed signal configuration.
type Config struct {
	DataCollection string // "<schema>.<table>", "" = none
	Source, Kafka  bool   // enabled channels
	KafkaTopic     string
	KafkaBrokers   []string
	KafkaGroupID   string
	KafkaPollMs    int
}

// ParseConfig reads the signal keys of a validated configuration p;
// topicPrefix gives the default signal topic.
func ParseConfig(p connect.Parsed, topicPrefix string) Config {
	c := Config{DataCollection: p.String(KeyDataCollection), KafkaTopic: p.String(KeyKafkaTopic),
		KafkaBrokers: p.List(KeyKafkaBootstrap), KafkaGroupID: p.String(KeyKafkaGroupID), KafkaPollMs: p.Int(KeyKafkaPollTimeout)}
	for _, ch := range p.List(KeyEnabledChannels) {
		switch ch {
		case ChannelSource:
			c.Source = true
		case ChannelKafka:
			c.Kafka = true
		}
	}
	if c.KafkaTopic == "" {
		c.KafkaTopic = topicPrefix + "-signal"
	}
	return c
}

// Validate reports cross-key errors: the kafka channel needs brokers.
func Validate(cfg map[string]string) []connect.ConfigError {
	var errs []connect.ConfigError
	kafka := false
	for _, ch := range strings.Split(cfg[KeyEnabledChannels], ",") {
		if strings.TrimSpace(ch) == ChannelKafka {
			kafka = true
		}
	}
	if kafka && strings.TrimSpace(cfg[KeyKafkaBootstrap]) == "" {
		errs = append(errs, connect.ConfigError{Key: KeyKafkaBootstrap,
			Message: "Invalid value for configuration " + KeyKafkaBootstrap + ": must be set when " + KeyEnabledChannels + " contains kafka"})
	}
	return errs
}
