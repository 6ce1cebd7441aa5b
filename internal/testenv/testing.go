package testenv

import (
	"context"
	"testing"
)

// PostgresT starts a PostgreSQL server for a test and stops it at cleanup.
// A failure to start fails the test: real-database tests never skip.
func PostgresT(t testing.TB) *Postgres {
	t.Helper()
	pg, err := StartPostgres(context.Background())
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if err := pg.Stop(); err != nil {
			t.Logf("stop PostgreSQL: %v", err)
		}
	})
	return pg
}

// MariaDBT starts a MariaDB server (binlog ROW) for a test and stops it at
// cleanup. A failure to start fails the test: real-database tests never skip.
func MariaDBT(t testing.TB, options ...string) *MariaDB {
	t.Helper()
	m, err := StartMariaDBWith(context.Background(), options...)
	if err != nil {
		t.Fatalf("start MariaDB: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Logf("stop MariaDB: %v", err)
		}
	})
	return m
}
