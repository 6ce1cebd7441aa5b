package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// crashPostgres stops pg at once (pg_ctl -m immediate: every connection is
// cut, as when the server crashes), keeping its data for pg.Resume. A fast
// shutdown (pg.Halt) would wait for the streaming connector to confirm the
// shutdown checkpoint's LSN, which it never does: it confirms only
// delivered changes.
func crashPostgres(t *testing.T, pg *testenv.Postgres) {
	t.Helper()
	args := []string{filepath.Join(testenv.PGBinDir(), "pg_ctl"), "-D", filepath.Join(pg.Dir, "data"), "-m", "immediate", "-w", "stop"}
	if os.Geteuid() == 0 {
		args = append([]string{"runuser", "-u", "postgres", "--"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = pg.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl stop -m immediate: %v: %s", err, out)
	}
}

// DESIGN.md invariant 6, Debezium's behaviour on a lost connection: while
// streaming, PostgreSQL goes away; the task is RESTARTING with the cause
// in its status and retries with backoff; once the server is back it
// resumes from the last committed offset and every change arrives.
func TestPostgresConnectionLossRetries(t *testing.T) {
	ctx := context.Background()
	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.counters (id int PRIMARY KEY, v int NOT NULL)`)
	d := newDaemon(t)
	d.start()
	cfg := pgConnector(pg, map[string]string{"table.include.list": "inventory.counters",
		"retriable.restart.connector.wait.ms": "300", "errors.retry.delay.max.ms": "1000"})
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": cfg}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("inv", "RUNNING")
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.counters$`)
	mustExec(t, pg, `INSERT INTO inventory.counters SELECT g, 0 FROM generate_series(0, 49) g`)
	c.until(50, 60*time.Second)

	crashPostgres(t, pg)
	st := d.waitTaskState("inv", "RESTARTING")
	if tr := st.Tasks[0].Trace; !strings.Contains(tr, "Retriable error") || !strings.Contains(tr, "of unlimited") {
		t.Fatalf("RESTARTING trace does not give the cause: %q", tr)
	}
	t.Logf("while PostgreSQL is down: %s", st.Tasks[0].Trace)
	time.Sleep(2 * time.Second) // a few failed restarts (connection refused)
	st = d.status("inv")
	if st.Tasks[0].State != "RESTARTING" || !strings.Contains(st.Tasks[0].Trace, "connection refused") {
		t.Fatalf("status while the database is down: %+v", st.Tasks[0])
	}
	if err := pg.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	d.waitTaskState("inv", "RUNNING")
	mustExec(t, pg, `INSERT INTO inventory.counters SELECT g, 0 FROM generate_series(50, 99) g`)
	evs := c.until(100, 60*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		seen := map[string]bool{}
		for _, e := range evs {
			if !e.Tombstone {
				seen[keyString(e.Key)] = true
			}
		}
		if len(seen) == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("saw %d of 100 keys after the restart (%d events)", len(seen), len(evs))
		}
		evs = c.drain(time.Second)
	}
	for i := 0; i < 100; i++ {
		found := false
		for _, e := range evs {
			if keyString(e.Key) == fmt.Sprintf(`{"id":%d}`, i) {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("no event for id %d", i)
		}
	}
	if st := d.status("inv"); st.Tasks[0].State != "RUNNING" || st.Tasks[0].Trace != "" {
		t.Fatalf("status after recovery: %+v", st.Tasks[0])
	}
	d.stop()
}
