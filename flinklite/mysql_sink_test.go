package flinklite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/connectd/connectd/sinks/jdbc"
)

// The MySQL/MariaDB upsert sink against a real MariaDB, as
// TestPostgresUpsertSinkIsIdempotent: a first checkpoint of deletes only
// (a window emptied before its table exists) creates nothing and fails
// nothing; rows buffered between checkpoints are written in one
// transaction (INSERT … ON DUPLICATE KEY UPDATE, the JDBC sink
// connector's SQL); writing the same results again leaves the table as it
// was; a later firing updates its row and a delete removes it; a table
// name may be database-qualified.
func TestMySQLUpsertSinkIsIdempotent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := testenv.MariaDBT(t)
	if err := m.CreateDatabase(ctx, "sums"); err != nil {
		t.Fatal(err)
	}
	_, dsn, err := jdbc.DriverDSN(fmt.Sprintf("jdbc:mysql://%s/sums", m.Addr()), m.User, m.Password)
	if err != nil {
		t.Fatal(err)
	}
	env := NewEnv()
	in := NewInput[windowSum](env, 1)
	ToMySQLUpsert(in.Stream(), MySQLUpsertConfig{DSN: dsn, Table: "sums.window_sums"}, func(c Change[windowSum]) (UpsertRow, error) {
		start := time.UnixMilli(c.Value.Start).UTC()
		return UpsertRow{
			Key: []UpsertColumn{
				{Name: "window_start", Value: start, Type: "datetime(3)"},
				{Name: "window_end", Value: start.Add(time.Minute), Type: "datetime(3)"},
				{Name: "customer", Value: c.Value.Key, Type: "varchar(255)"},
			},
			Values: []UpsertColumn{{Name: "total", Value: c.Value.Sum, Type: "decimal(65,0)"}},
			Delete: c.Value.Sum < 0,
		}, nil
	})
	sink := env.syncSinks[0]
	defer sink.close()
	emit := emitAndFlush(ctx, t, in, sink)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	table := func() string {
		rows, err := db.QueryContext(ctx, `SELECT customer, unix_timestamp(window_start), unix_timestamp(window_end), total FROM window_sums ORDER BY 1, 2`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var c, s, e, total string
			if err := rows.Scan(&c, &s, &e, &total); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s@%s-%s=%s", c, s, e, total))
		}
		return strings.Join(out, " ")
	}
	emit(windowSum{"z", 0, -1}) // deletes only, no table yet
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sums'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("tables after a delete-only checkpoint: %d %v", n, err)
	}
	checkUpsertSequence(ctx, t, emit, sink, table, "a@0.000-60.000=12 a@60.000-120.000=3 b@0.000-60.000=7", "a@0.000-60.000=12 a@60.000-120.000=4")
}
