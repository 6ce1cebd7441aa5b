package testenv

import (
	"context"
	"testing"
)

func TestPostgresStartsWithLogicalWAL(t *testing.T) {
	pg := PostgresT(t)
	ctx := context.Background()
	c, err := pg.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var level string
	if err := c.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "logical" {
		t.Fatalf("wal_level = %q, want logical", level)
	}
}
