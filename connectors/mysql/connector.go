package mysql

import (
	"maps"

	"github.com/connectd/connectd/connect"
)

// Class names this package implements.
const (
	ClassName        = "io.debezium.connector.mysql.MySqlConnector"
	MariaDBClassName = "io.debezium.connector.mariadb.MariaDbConnector"
)

// Aliases are the other names Kafka Connect accepts for ClassName and
// MariaDBClassName.
var (
	Aliases        = []string{"MySqlConnector", "MySql"}
	MariaDBAliases = []string{"MariaDbConnector", "MariaDb"}
)

// Connector is MySqlConnector or MariaDbConnector (flavor).
type Connector struct{ flavor flavor }

var _ connect.SourceConnector = (*Connector)(nil)

// New returns the MySQL source connector.
func New() connect.SourceConnector { return &Connector{flavor: flavorMySQL} }

// NewMariaDB returns the MariaDB source connector.
func NewMariaDB() connect.SourceConnector { return &Connector{flavor: flavorMariaDB} }

// Version returns the Debezium version whose behaviour the connector follows.
func (*Connector) Version() string { return DebeziumVersion }

// Config returns the definition of every key the connector accepts.
func (c *Connector) Config() *connect.ConfigDef { return configDef(c.flavor) }

// Validate checks a full connector configuration; each error names its key.
func (c *Connector) Validate(cfg map[string]string) []connect.ConfigError {
	return validate(c.flavor, cfg)
}

// TaskConfigs returns one task config: a binlog is read by one task.
func (*Connector) TaskConfigs(cfg map[string]string, maxTasks int) ([]map[string]string, error) {
	return []map[string]string{maps.Clone(cfg)}, nil
}

// NewTask returns a new, unstarted task.
func (c *Connector) NewTask() connect.SourceTask { return newTask(c.flavor) }
