package runtime

import "strings"

// ReferencePages names the generated reference page (under docs/reference,
// internal/docgen) of each shipped connector class: errors and warnings
// about a connector's keys point to it.
var ReferencePages = map[string]string{
	"io.debezium.connector.postgresql.PostgresConnector": "connectors/postgresql.md",
	"io.debezium.connector.mysql.MySqlConnector":         "connectors/mysql.md",
	"io.debezium.connector.mariadb.MariaDbConnector":     "connectors/mariadb.md",
	"io.debezium.connector.jdbc.JdbcSinkConnector":       "sinks/jdbc.md",
}

// referencePageOf is the repository path of class's reference page
// (docs/reference/connectors/postgresql.md), "" for a class without one.
// class may be the full name or, as Kafka Connect accepts it, the simple
// name, with or without the Connector suffix.
func referencePageOf(class string) string {
	class = strings.TrimSpace(class)
	for full, page := range ReferencePages {
		simple := full[strings.LastIndex(full, ".")+1:]
		if class == full || class == simple || class+"Connector" == simple {
			return "docs/reference/" + page
		}
	}
	return ""
}
