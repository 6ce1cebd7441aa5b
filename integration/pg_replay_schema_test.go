package integration

import (
	"bytes"
	"fmt"
	"regexp"
	"testing"
	"time"
)

// Issue 16: a replayed event is the same record as the first time. The
// worker is SIGKILLed after DDL that changes column defaults and before the
// offsets of the events before it are committed (offsets are never flushed
// in this test); after the restart the stream replays them from the slot,
// and today's catalog has other defaults than the one the events were
// first emitted with. Each replayed record's key and value bytes must equal
// its first emission's (the envelope's own ts_ms/ts_us/ts_ns, the time of
// processing, masked; source.ts_ms, the commit time, is not).
func TestSIGKILLReplayKeepsSchemaDefaults(t *testing.T) {
	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.replayed (id int PRIMARY KEY, note text DEFAULT 'first', qty int NOT NULL DEFAULT 1)`)
	d := newDaemon(t)
	// no periodic offset flush: nothing the first run emits is committed
	d.args = []string{"-o", "offset.flush.interval.ms=3600000"}
	d.start()
	code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": pgConnector(pg, map[string]string{
		"table.include.list": "inventory.replayed", "snapshot.mode": "no_data"})})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("inv", "RUNNING")
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.replayed$`)
	// wait until the stream runs (the slot exists and the task streams)
	waitFor(t, time.Minute, "the stream emits", func() bool {
		mustExec(t, pg, `INSERT INTO inventory.replayed (id) VALUES (0) ON CONFLICT (id) DO NOTHING`)
		return len(c.drain(300*time.Millisecond)) > 0
	})
	mustExec(t, pg, `INSERT INTO inventory.replayed (id) VALUES (1)`)
	mustExec(t, pg, `INSERT INTO inventory.replayed (id, note) VALUES (2, 'two')`)
	mustExec(t, pg, `ALTER TABLE inventory.replayed ALTER COLUMN note SET DEFAULT 'second'`)
	mustExec(t, pg, `INSERT INTO inventory.replayed (id) VALUES (3)`)
	mustExec(t, pg, `ALTER TABLE inventory.replayed ALTER COLUMN qty DROP DEFAULT`)
	mustExec(t, pg, `INSERT INTO inventory.replayed (id, qty) VALUES (4, 4)`)
	mustExec(t, pg, `UPDATE inventory.replayed SET note = 'x' WHERE id = 1`)
	// a new column (a Relation message of another shape: the schema is
	// rebuilt mid-run), whose default goes again before the next change
	mustExec(t, pg, `ALTER TABLE inventory.replayed ADD COLUMN extra int DEFAULT 5`)
	mustExec(t, pg, `INSERT INTO inventory.replayed (id, qty) VALUES (5, 5)`)
	mustExec(t, pg, `ALTER TABLE inventory.replayed ALTER COLUMN extra DROP DEFAULT`)
	mustExec(t, pg, `INSERT INTO inventory.replayed (id, qty) VALUES (6, 6)`)
	// id 0 (once), then seven changes
	evs := c.until(8, time.Minute)
	first := byLSN(evs)
	if n := len(first); n != 8 {
		t.Fatalf("first run: %d distinct events, want 8", n)
	}
	// the first emissions carry the defaults the catalog had when the
	// relation was read: at its first change, and at the new column's
	for i, e := range evs {
		want := []string{`"default":"first"`, `"default":1,`}
		if i >= 6 {
			want = []string{`"default":"second"`, `"default":5,`}
		}
		for _, w := range want {
			if !bytes.Contains(e.Raw, []byte(w)) {
				t.Fatalf("first emission %d (lsn %s) has no %s in its schema: %s", i, lsnOf(e), w, e.Raw)
			}
		}
	}
	d.kill() // before any offset was committed
	d.start()
	d.waitTaskState("inv", "RUNNING")
	c.until(2*len(first), 2*time.Minute) // the first run's and the replay
	all := c.drain(3 * time.Second)
	replayed, equal := 0, 0
	seen := map[string]int{}
	for _, e := range all {
		if e.Tombstone {
			continue
		}
		lsn := lsnOf(e)
		seen[lsn]++
		if seen[lsn] != 2 {
			continue
		}
		f, ok := first[lsn]
		if !ok {
			continue
		}
		replayed++
		if !bytes.Equal(f.RawKey, e.RawKey) {
			t.Errorf("lsn %s: replayed key\n%s\nfirst emitted\n%s", lsn, e.RawKey, f.RawKey)
			continue
		}
		if fm, em := maskProcessingTime(f.Raw), maskProcessingTime(e.Raw); !bytes.Equal(fm, em) {
			t.Errorf("lsn %s: replayed value\n%s\nfirst emitted\n%s", lsn, em, fm)
			continue
		}
		equal++
	}
	if replayed != len(first) {
		t.Fatalf("replayed %d of the %d events of the first run (the run committed no offset: all are replayed)", replayed, len(first))
	}
	t.Logf("%d of %d replayed events equal their first emission byte for byte", equal, replayed)
	d.stop()
}

// processingTime matches the envelope's ts_ms/ts_us/ts_ns: the last fields
// of the payload, the time of processing.
var processingTime = regexp.MustCompile(`"ts_ms":\d+,"ts_us":\d+,"ts_ns":\d+}}$`)

func maskProcessingTime(b []byte) []byte {
	return processingTime.ReplaceAll(b, []byte(`"ts_ms":0,"ts_us":0,"ts_ns":0}}`))
}

// byLSN indexes change events by source.lsn (each LSN once: first wins).
func byLSN(evs []event) map[string]event {
	out := map[string]event{}
	for _, e := range evs {
		if e.Tombstone {
			continue
		}
		lsn := lsnOf(e)
		if _, ok := out[lsn]; !ok {
			out[lsn] = e
		}
	}
	return out
}

// lsnOf is source.lsn as a decimal number.
func lsnOf(e event) string { return fmt.Sprintf("%.0f", e.Source["lsn"]) }
