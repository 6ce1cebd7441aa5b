package integration

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// DESIGN.md invariant 2 for MariaDB: rows are updated continuously while
// the snapshot reads them; per key, the events after the snapshot's read of
// that row must be exactly the later versions, with no gap and no
// duplicate. In the kill variant the worker is SIGKILLed at the first
// snapshot record and restarted: the unfinished snapshot is taken again,
// and after the last snapshot read of each row the versions continue
// without gap.
func TestMariaDBSnapshotStreamHandoff(t *testing.T) {
	t.Run("no-kill", func(t *testing.T) { testMariaDBHandoff(t, 20000, 0) })
	t.Run("kill-mid-snapshot", func(t *testing.T) { testMariaDBHandoff(t, 60000, 1) })
}

func testMariaDBHandoff(t *testing.T, rows, killAfter int) {
	kill := killAfter > 0
	ctx := context.Background()
	m := startMariaDB(t)
	mariaExec(t, m, fmt.Sprintf(`CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL, pad varchar(255) NOT NULL);
		INSERT INTO items SELECT seq, 0, REPEAT('x', 200) FROM seq_1_to_%d;`, rows))
	d := newDaemon(t)
	d.start()

	// Writer: bump v of random rows, one row per transaction, from before
	// the connector exists until told to stop.
	conn, err := m.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stopUpdates := startRandomUpdates(t, rows, func(id int) error {
		_, err := conn.Execute(`UPDATE items SET v = v + 1 WHERE id = ?`, id)
		return err
	})
	time.Sleep(200 * time.Millisecond)
	cfg := map[string]string{"table.include.list": "inventory.items"}
	if killAfter == 1 {
		// The kill must land inside the snapshot (see testHandoff): the
		// select override pauses the server 30 ms every 1000 rows.
		cfg["snapshot.select.statement.overrides"] = "inventory.items"
		cfg["snapshot.select.statement.overrides.inventory.items"] = "SELECT id, v, pad FROM inventory.items WHERE id % 1000 <> 0 OR SLEEP(0.03) = 0"
	}
	code, body := d.do("POST", "/connectors", map[string]any{"name": "items", "config": mariaConnector(m, cfg)})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.items$`)
	if kill {
		c.until(killAfter, 60*time.Second)
		d.kill()
		time.Sleep(300 * time.Millisecond)
		d.start()
	}
	c.until(rows, 60*time.Second)
	time.Sleep(500 * time.Millisecond)
	writes := stopUpdates()

	final := map[float64]float64{}
	r, err := conn.Execute(`SELECT id, v FROM items`)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Values {
		id, _ := r.GetInt(i, 0)
		v, _ := r.GetInt(i, 1)
		final[float64(id)] = float64(v)
	}
	evs, snapshotReads := checkHandoff(t, c, final, rows, kill, 60*time.Second, 500*time.Millisecond)
	t.Logf("%d rows, %d updates during the test, %d snapshot reads, %d events", rows, writes, snapshotReads, len(evs))
	if !kill && snapshotReads != rows {
		t.Fatalf("%d snapshot reads, want %d", snapshotReads, rows)
	}
	if kill && snapshotReads <= rows {
		t.Fatalf("%d snapshot reads: the killed snapshot was not taken again", snapshotReads)
	}
	d.stop()
}
