package runtime

import (
	"os"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

// An invalid config of a shipped connector names the page of its keys
// (issue 22: errors that name a key name its page); the pages exist (make
// docs writes them from the same map, internal/docgen).
func TestConfigErrorsNameTheReferencePage(t *testing.T) {
	for class, want := range map[string]string{
		"io.debezium.connector.postgresql.PostgresConnector": "docs/reference/connectors/postgresql.md",
		"PostgresConnector":     "docs/reference/connectors/postgresql.md",
		"MariaDb":               "docs/reference/connectors/mariadb.md",
		"JdbcSinkConnector":     "docs/reference/sinks/jdbc.md",
		"com.example.Other":     "",
		"io.debezium.Something": "",
	} {
		if got := referencePageOf(class); got != want {
			t.Errorf("referencePageOf(%q) = %q, want %q", class, got, want)
		}
	}
	for _, page := range ReferencePages {
		if _, err := os.Stat("../docs/reference/" + page); err != nil {
			t.Errorf("reference page: %v", err)
		}
	}
	e := &ConfigInvalidError{Errors: []connect.ConfigError{{Key: "slot.name", Message: "Invalid value x-y for configuration slot.name: bad"}}, Page: referencePageOf("PostgresConnector")}
	msg := e.Error()
	if !strings.HasPrefix(msg, "Connector configuration is invalid and contains the following 1 error(s):\nInvalid value x-y") ||
		!strings.HasSuffix(msg, "`/connector-plugins/{connectorType}/config/validate`\nEvery key of this connector is described in docs/reference/connectors/postgresql.md") {
		t.Fatalf("message:\n%s", msg)
	}
	// A plugin without a page keeps Kafka Connect's message as it is.
	if msg := (&ConfigInvalidError{Errors: e.Errors}).Error(); !strings.HasSuffix(msg, "config/validate`") {
		t.Fatalf("message without a page:\n%s", msg)
	}
}
