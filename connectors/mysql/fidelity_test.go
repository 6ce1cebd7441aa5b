package mysql

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// TestMinimalRowImageFails: a session with binlog_row_image=MINIMAL updates
// a row. The task must fail naming the table, the position and the missing
// columns, never emit other events (it used to emit a delete, a tombstone
// and a create of id 0). Debezium's MariaDbConnector fails on the same
// binlog too (testdata/debezium/mariadb_minimal.error.txt, captured with
// CHANGES=mariadb_minimal_changes.sql run-mariadb-inventory.sh).
func TestMinimalRowImageFails(t *testing.T) {
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory;\n"); err != nil {
		t.Fatal(err)
	}
	execFile(t, m, "inventory", "../../reference/debezium/scenarios/mariadb_fidelity.sql")
	task := startTask(t, baseConfig(m), nil)
	snap := pollData(t, task, 1)
	if len(snap) != 1 {
		t.Fatalf("snapshot: %d records", len(snap))
	}
	execFile(t, m, "inventory", "../../reference/debezium/scenarios/mariadb_minimal_changes.sql")
	deadline := time.Now().Add(30 * time.Second)
	for {
		rs, err := task.Poll(ctx)
		for _, r := range rs {
			if r.Topic != "dbserver1" {
				t.Fatalf("a record from the partial row image: %s %v", r.Topic, r.Value)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrPartialRowImage) {
				t.Fatalf("error %v, want ErrPartialRowImage", err)
			}
			for _, want := range []string{"update row of inventory.snap_cs", "binlog mysql-bin.000", "the before image lacks column(s) u, l, b, flag, d, dt"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no failure after 30 s")
		}
	}
}

// TestTimeAdjusterOff: enable.time.adjuster=false keeps the stored year of
// DATE and DATETIME values in the snapshot and the binlog ('0018-04-01' is
// day -712863); the default (true) is checked against Debezium by
// TestFidelityGolden (17622).
func TestTimeAdjusterOff(t *testing.T) {
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory;\n"); err != nil {
		t.Fatal(err)
	}
	if err := m.Exec(ctx, "inventory", "CREATE TABLE d (id int PRIMARY KEY, d date, dt datetime);\nINSERT INTO d VALUES (1, '0018-04-01', '0018-04-01 00:00:00');\n"); err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(m)
	cfg[KeyEnableTimeAdjuster] = "false"
	task := startTask(t, cfg, nil)
	got := []string{afterFields(t, pollData(t, task, 1)[0])}
	if err := m.Exec(ctx, "inventory", "INSERT INTO d VALUES (2, '0070-01-01', '0099-12-31 00:00:00');\n"); err != nil {
		t.Fatal(err)
	}
	got = append(got, afterFields(t, pollData(t, task, 1)[0]))
	want := []string{"id=1,d=-712863,dt=-61591363200000", "id=2,d=-693960,dt=-59011545600000"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
