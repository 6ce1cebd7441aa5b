package postgres

import (
	"context"
	"strconv"
	"testing"

	"github.com/connectd/connectd/internal/testenv"
)

// TestXidVisible: a transaction in progress is not visible to another
// session's new snapshot, and is once it committed (the check rebuild makes
// before reading the catalog after a Relation message, waitVisible).
func TestXidVisible(t *testing.T) {
	pg := testenv.PostgresT(t)
	ctx := context.Background()
	a, err := pg.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	b, err := pg.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	tx, err := a.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var full string
	if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id()::text`).Scan(&full); err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseUint(full, 10, 64)
	xid := uint32(n) // what pgoutput's BEGIN carries
	if v, err := xidVisible(ctx, b, xid); err != nil || v {
		t.Fatalf("in progress: visible=%v err=%v, want false", v, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := xidVisible(ctx, b, xid); err != nil || !v {
		t.Fatalf("committed: visible=%v err=%v, want true", v, err)
	}
	if err := waitVisible(ctx, b, xid); err != nil {
		t.Fatal(err)
	}
}
