package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// TestSnapshotSelectOverrides: snapshot.select.statement.overrides lists
// <database>.<table> ids; snapshot.select.statement.overrides.<id> is the
// SELECT that table's snapshot runs instead of reading every row (Debezium's
// MySQL connector documentation, "snapshot.select.statement.overrides":
// e.g. "SELECT * FROM customers.orders WHERE delete_flag = 0 ORDER BY id
// DESC"). Rows come in the statement's order, tables not listed are read
// whole, and the override only shapes the snapshot: streaming emits every
// change. A statement returning other columns than the table's fails the
// task with an error naming the table.
func TestSnapshotSelectOverrides(t *testing.T) {
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory;\n"); err != nil {
		t.Fatal(err)
	}
	if err := m.Exec(ctx, "inventory", `CREATE TABLE orders (id int PRIMARY KEY, delete_flag tinyint NOT NULL, amount int);
CREATE TABLE other (id int PRIMARY KEY);
INSERT INTO orders VALUES (1, 0, 10), (2, 1, 20), (3, 0, 30), (4, 1, 40), (5, 0, 50);
INSERT INTO other VALUES (1), (2);
`); err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(m)
	cfg[KeyIncludeSchemaChanges] = "false"
	cfg[KeySnapshotSelectOverrides] = "inventory.orders"
	cfg[KeySnapshotSelectOverrides+".inventory.orders"] = "SELECT * FROM inventory.orders WHERE delete_flag = 0 ORDER BY id DESC"
	task := startTask(t, cfg, nil)
	snap := pollN(t, task, 5)
	var got []string
	for _, r := range snap {
		got = append(got, r.Topic+" "+afterFields(t, r)+" "+snapshotMarker(r))
	}
	// Tables are read in table id order (orders, other); "last" marks the
	// snapshot's last record, "first" its first (Debezium's SnapshotRecord).
	want := []string{
		"dbserver1.inventory.orders id=5,delete_flag=0,amount=50 first",
		"dbserver1.inventory.orders id=3,delete_flag=0,amount=30 true",
		"dbserver1.inventory.orders id=1,delete_flag=0,amount=10 last_in_data_collection",
		"dbserver1.inventory.other id=1 first_in_data_collection",
		"dbserver1.inventory.other id=2 last",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("snapshot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := m.Exec(ctx, "inventory", "INSERT INTO orders VALUES (6, 1, 60);\n"); err != nil {
		t.Fatal(err)
	}
	if f := afterFields(t, pollN(t, task, 1)[0]); f != "id=6,delete_flag=1,amount=60" {
		t.Fatalf("streamed %s, want the row the snapshot filter would skip", f)
	}
	task.Stop()

	// A statement whose columns are not the table's is refused at the
	// first row, naming the table.
	bad := baseConfig(m)
	bad[KeyServerID] = "184056"
	bad[KeySnapshotSelectOverrides] = "inventory.other"
	bad[KeySnapshotSelectOverrides+".inventory.other"] = "SELECT id, id FROM inventory.other"
	task = startTask(t, bad, nil)
	var err error
	for deadline := time.Now().Add(30 * time.Second); err == nil && time.Now().Before(deadline); {
		_, err = task.Poll(ctx)
	}
	if err == nil || !strings.Contains(err.Error(), "inventory.other") {
		t.Fatalf("override with the wrong columns: error %v, want one naming inventory.other", err)
	}
}
