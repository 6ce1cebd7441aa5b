package integration

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// DESIGN.md invariants 1, 3 and 4 for MariaDB: SIGKILL the worker
// mid-stream, keep writing while it is down, restart it on the same data
// dir: every change arrives, in order per key; duplicates only as a replay
// of a suffix (at-least-once). Some transactions touch several keys, so a
// restart inside a multi-row transaction is exercised too.
func TestMariaDBSIGKILLMidStreamLosesNothing(t *testing.T) {
	testMariaDBSIGKILLMidStream(t, startMariaDB(t))
}

// testMariaDBSIGKILLMidStream runs TestMariaDBSIGKILLMidStreamLosesNothing
// against m, a server with an empty inventory database (a local process or
// a container).
func testMariaDBSIGKILLMidStream(t *testing.T, m *testenv.MariaDB) {
	ctx := context.Background()
	mariaExec(t, m, `CREATE TABLE counters (id int PRIMARY KEY, v int NOT NULL)`)
	d := newDaemon(t)
	d.start()
	code, body := d.do("POST", "/connectors", map[string]any{"name": "inv",
		"config": mariaConnector(m, map[string]string{"table.include.list": "inventory.counters"})})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("inv", "RUNNING")
	// The snapshot's schema change events (SET, DROP TABLE, DROP/CREATE
	// DATABASE, USE, CREATE TABLE) come after its binlog position was
	// read: every write from here on is streamed.
	newConsumer(t, d.kafka, `^dbserver1$`).until(6, 60*time.Second)

	const keys = 20
	conn, err := m.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	next := make([]int, keys)
	var mu sync.Mutex
	one := func(k int) {
		mu.Lock()
		v := next[k]
		next[k]++
		mu.Unlock()
		var err error
		if v == 0 {
			_, err = conn.Execute(`INSERT INTO counters VALUES (?, 0)`, k)
		} else {
			_, err = conn.Execute(`UPDATE counters SET v = ? WHERE id = ?`, v, k)
		}
		if err != nil {
			t.Error(err)
		}
	}
	changes := 0
	write := func(n int) {
		for i := 0; i < n; i++ {
			if i%10 == 9 {
				// a transaction of 5 rows (5 row events)
				if _, err := conn.Execute("BEGIN"); err != nil {
					t.Fatal(err)
				}
				for j := 0; j < 5; j++ {
					one((i + j) % keys)
				}
				if _, err := conn.Execute("COMMIT"); err != nil {
					t.Fatal(err)
				}
				changes += 5
				continue
			}
			one(i % keys)
			changes++
		}
	}
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.counters$`)
	// The writer runs across the kill: some changes are written while the
	// worker streams, some while it is down, some after the restart.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); write(3000) }()
	c.until(300, 60*time.Second) // the worker is streaming
	// Kill only once a streaming offset is stored: a kill before that
	// takes the (empty) snapshot again, which by design does not replay
	// the intermediate versions this test counts.
	waitStreamingOffset(t, d, "inv")
	d.kill() // mid-stream, while changes keep coming
	time.Sleep(500 * time.Millisecond)
	d.start()
	wg.Wait()
	write(500) // after restart
	t.Cleanup(func() {
		if t.Failed() {
			_, b := d.do("GET", "/connectors/inv/status", nil)
			t.Logf("status after restart: %s", b)
			_, b = d.do("GET", "/connectors/inv/offsets", nil)
			t.Logf("offsets: %s", b)
			d.cmd.Process.Signal(syscall.SIGQUIT)
			<-d.exited
		}
	})
	evs := c.until(changes, 60*time.Second)
	evs = c.drain(time.Second)

	dups := checkPerKeyAtLeastOnce(t, evs, next)
	t.Logf("%d events for %d changes; %d duplicates replayed after SIGKILL", len(evs), changes, dups)
	d.stop()
}

// waitStreamingOffset waits until the stored offset of connector name is a
// binlog streaming offset (has "event"), not the snapshot's.
func waitStreamingOffset(t *testing.T, d *daemon, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, b := d.do("GET", "/connectors/"+name+"/offsets", nil)
		if code == 200 && strings.Contains(string(b), `"event"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no streaming offset stored: %d %s", code, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
