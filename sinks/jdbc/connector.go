package jdbc

import (
	"maps"

	"github.com/connectd/connectd/connect"
)

// Connector is io.debezium.connector.jdbc.JdbcSinkConnector.
type Connector struct{}

var _ connect.SinkConnector = (*Connector)(nil)

// New returns the JDBC sink connector. Register it with
// plugins.RegisterSink(jdbc.ClassName, jdbc.New, jdbc.Aliases...).
func New() connect.SinkConnector { return &Connector{} }

// Version returns the Debezium version whose behaviour the connector follows.
func (*Connector) Version() string { return DebeziumVersion }

// Config returns the definition of every key the connector accepts.
func (*Connector) Config() *connect.ConfigDef { return configDef }

// Validate checks keys that depend on each other (delete.enabled needs
// primary.key.mode=record_key; upsert and update need a primary key).
func (*Connector) Validate(cfg map[string]string) []connect.ConfigError { return validate(cfg) }

// TaskConfigs gives each of maxTasks tasks the connector config; the
// consumer group spreads the topic partitions over them.
func (*Connector) TaskConfigs(cfg map[string]string, maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(cfg)
	}
	return out, nil
}

// NewTask returns a new, unstarted task.
func (*Connector) NewTask() connect.SinkTask { return &Task{} }
