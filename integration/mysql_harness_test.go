package integration

import (
	"context"
	"fmt"
	"testing"

	"github.com/connectd/connectd/internal/testenv"
)

// startMariaDB starts a throwaway MariaDB with an empty database "inventory".
func startMariaDB(t *testing.T) *testenv.MariaDB {
	t.Helper()
	m := testenv.MariaDBT(t)
	if err := m.CreateDatabase(context.Background(), "inventory"); err != nil {
		t.Fatal(err)
	}
	return m
}

// mariaConnector returns a MariaDbConnector config for m's inventory
// database (topic prefix dbserver1).
func mariaConnector(m *testenv.MariaDB, extra map[string]string) map[string]string {
	cfg := map[string]string{
		"connector.class":       "io.debezium.connector.mariadb.MariaDbConnector",
		"database.hostname":     m.Host,
		"database.port":         fmt.Sprint(m.Port),
		"database.user":         m.User,
		"database.password":     m.Password,
		"database.server.id":    "184054",
		"database.include.list": "inventory",
		"topic.prefix":          "dbserver1",
		"poll.interval.ms":      "50",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

func mariaExec(t *testing.T, m *testenv.MariaDB, sql string) {
	t.Helper()
	if err := m.Exec(context.Background(), "inventory", sql); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}
