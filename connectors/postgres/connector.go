package postgres

import (
	"maps"

	"github.com/connectd/connectd/connect"
)

// ClassName is the connector class this package implements.
const ClassName = "io.debezium.connector.postgresql.PostgresConnector"

// Aliases are the other names Kafka Connect accepts for ClassName.
var Aliases = []string{"PostgresConnector", "Postgres"}

// Connector is io.debezium.connector.postgresql.PostgresConnector.
type Connector struct{}

var _ connect.SourceConnector = (*Connector)(nil)

// New returns the PostgreSQL source connector. Register it with
// plugins.RegisterSource(postgres.ClassName, postgres.New, postgres.Aliases...).
func New() connect.SourceConnector { return &Connector{} }

// Version returns the Debezium version whose behaviour the connector follows.
func (*Connector) Version() string { return DebeziumVersion }

// Config returns the definition of every key the connector accepts.
func (*Connector) Config() *connect.ConfigDef { return configDef }

// Validate checks a full connector configuration; each error names its key.
func (*Connector) Validate(cfg map[string]string) []connect.ConfigError { return validate(cfg) }

// TaskConfigs returns one task config: a PostgreSQL slot is read by one task.
func (*Connector) TaskConfigs(cfg map[string]string, maxTasks int) ([]map[string]string, error) {
	return []map[string]string{maps.Clone(cfg)}, nil
}

// NewTask returns a new, unstarted task.
func (*Connector) NewTask() connect.SourceTask { return NewTask() }
