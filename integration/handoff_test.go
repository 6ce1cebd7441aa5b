package integration

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DESIGN.md invariant 2: the snapshot→stream handoff is exact. Rows are
// updated continuously while the snapshot reads them; per key, the events
// after the snapshot's read of that row must be exactly the later versions,
// with no gap and no duplicate. With kill=true the worker is SIGKILLed in
// the middle of the snapshot and restarted: the unfinished snapshot is
// taken again (as Debezium does), and after the last snapshot read of each
// row the versions again continue without gap.
func TestSnapshotStreamHandoff(t *testing.T) {
	for _, kill := range []bool{false, true} {
		t.Run(fmt.Sprintf("kill=%v", kill), func(t *testing.T) { testHandoff(t, kill) })
	}
}

func testHandoff(t *testing.T, kill bool) {
	const rows = 30000
	ctx := context.Background()
	pg := startInventory(t)
	mustExec(t, pg, fmt.Sprintf(`CREATE TABLE inventory.items (id int PRIMARY KEY, v int NOT NULL, pad text NOT NULL);
		INSERT INTO inventory.items SELECT g, 0, repeat('x', 200) FROM generate_series(1, %d) g;`, rows))
	d := newDaemon(t)
	d.start()

	// Writer: bump v of random rows, one row per transaction, from before
	// the connector exists until told to stop.
	conn, err := pg.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var stop atomic.Bool
	var writes atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewSource(7))
		for !stop.Load() {
			if _, err := conn.Exec(ctx, `UPDATE inventory.items SET v = v + 1 WHERE id = $1`, 1+rng.Intn(rows)); err != nil {
				t.Error(err)
				return
			}
			writes.Add(1)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	code, body := d.do("POST", "/connectors", map[string]any{"name": "items", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.items"})})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.items$`)
	if kill {
		c.until(rows/5, 60*time.Second) // snapshot under way
		d.kill()
		time.Sleep(300 * time.Millisecond)
		d.start()
	}
	c.until(rows, 120*time.Second)
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()

	// The final state of every row, read from the database.
	final := map[float64]float64{}
	rs, err := conn.Query(ctx, `SELECT id, v FROM inventory.items`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var id, v int
		rs.Scan(&id, &v)
		final[float64(id)] = float64(v)
	}
	var updates float64
	for _, v := range final {
		updates += v
	}
	// Wait until every row's final version has arrived.
	deadline := time.Now().Add(120 * time.Second)
	var evs []event
	for {
		evs = c.drain(time.Second)
		latest := map[float64]float64{}
		for _, e := range evs {
			latest[e.Key["id"].(float64)] = e.After["v"].(float64)
		}
		done := 0
		for id, v := range final {
			if lv, ok := latest[id]; ok && lv == v {
				done++
			}
		}
		if done == len(final) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d rows reached their final version", done, len(final))
		}
	}

	// Per key: after the last snapshot read (op r), versions go up by
	// exactly one per event; streamed events before that last read may
	// only come from a replay after the kill.
	perKey := map[float64][]event{}
	snapshotReads := 0
	for _, e := range evs {
		perKey[e.Key["id"].(float64)] = append(perKey[e.Key["id"].(float64)], e)
		if e.Op == "r" {
			snapshotReads++
		}
	}
	if len(perKey) != rows {
		t.Fatalf("events for %d keys, want %d", len(perKey), rows)
	}
	for id, es := range perKey {
		lastRead := -1
		for i, e := range es {
			if e.Op == "r" {
				lastRead = i
			}
		}
		if lastRead < 0 {
			t.Fatalf("key %v: no snapshot read", id)
		}
		want := es[lastRead].After["v"].(float64)
		for _, e := range es[lastRead+1:] {
			want++
			if e.Op != "u" || e.After["v"].(float64) != want {
				t.Fatalf("key %v: after the snapshot read got op %s v=%v, want u v=%v (gap or duplicate at the handoff)", id, e.Op, e.After["v"], want)
			}
		}
		if want != final[id] {
			t.Fatalf("key %v: last version %v, database has %v", id, want, final[id])
		}
		if !kill && lastRead != 0 {
			t.Fatalf("key %v: %d events before its snapshot read without a kill", id, lastRead)
		}
	}
	t.Logf("%d rows, %d updates (%d during the test), %d snapshot reads, %d events", rows, int(updates), writes.Load(), snapshotReads, len(evs))
	if !kill && snapshotReads != rows {
		t.Fatalf("%d snapshot reads, want %d", snapshotReads, rows)
	}
	d.stop()
}
