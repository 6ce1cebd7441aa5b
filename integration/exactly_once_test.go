package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DESIGN.md invariant 4 with exactly.once.source.support=enabled (KIP-618)
// against a real Apache Kafka broker (KRaft) that stays up while the worker
// is SIGKILLed three times mid-stream; a read_committed consumer sees every
// row's change exactly once: the dead worker's open transaction is aborted when the
// restarted task's transactional producer (same transactional.id) fences
// it, as Kafka Connect's zombie fencing.
func TestExactlyOnceSourceRealKafka(t *testing.T) { testExactlyOnce(t, startKafka(t), 3) }

// testExactlyOnce runs the test against bootstrap ("" = the embedded
// broker), SIGKILLing the worker kills times.
func testExactlyOnce(t *testing.T, bootstrap string, kills int) {
	ctx := context.Background()
	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.counters (id int PRIMARY KEY, v int NOT NULL)`)
	d := newDaemon(t)
	d.args = []string{"-o", "exactly.once.source.support=enabled"}
	broker := d.kafka
	if bootstrap != "" {
		d.args = append(d.args, "-o", "bootstrap.servers="+bootstrap)
		broker = bootstrap
	}
	d.start()
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.counters"})}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("inv", "RUNNING")
	// Exactly-once covers streamed changes: a snapshot cut by a crash is
	// started again from scratch, as Debezium's ("If the connector stops
	// during the snapshot, the connector begins a new snapshot when it
	// restarts", PostgreSQL connector docs), so its rows are emitted twice.
	// The writer and the kills start once the snapshot is done (CI under
	// load saw the first kill land mid-snapshot: 5,997 duplicated rows).
	d.waitSnapshotDone("inv")

	conn, err := pg.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	stopWriter := startCounterWriter(ctx, t, conn, time.Millisecond) // one row per transaction, ~1000/s
	var recovered []string
	var startLogs []*syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			for i, l := range startLogs {
				for _, line := range strings.Split(l.String(), "\n") {
					if strings.Contains(line, "embedded Kafka broker started") {
						t.Logf("run %d: %s", i+1, line)
					}
				}
			}
		}
	})
	for kill := 0; kill < kills; kill++ {
		time.Sleep(1500 * time.Millisecond)
		d.kill()
		d.start()
		startLogs = append(startLogs, d.log)
		recovered = append(recovered, recoveredTransactions(d.log.String()))
	}
	time.Sleep(time.Second)
	total := stopWriter()

	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics("dbserver1.inventory.counters"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[int]int{}
	where := map[int][]string{} // offset/producer id/epoch of each copy, for the failure message
	events := 0
	deadline := time.Now().Add(90 * time.Second)
	settle := time.Time{}
	for {
		pollRowIDs(ctx, t, cl, func(id int, r *kgo.Record) {
			seen[id]++
			where[id] = append(where[id], fmt.Sprintf("o%d/p%d/e%d", r.Offset, r.ProducerID, r.ProducerEpoch))
			events++
		})
		if len(seen) == total && settle.IsZero() {
			settle = time.Now().Add(3 * time.Second) // a duplicate would come late: keep reading
		}
		if !settle.IsZero() && time.Now().After(settle) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("read_committed consumer saw %d of %d rows (%d events)", len(seen), total, events)
		}
	}
	var dups []string
	for id, n := range seen {
		if n != 1 {
			dups = append(dups, fmt.Sprintf("%d×%d%v", id, n, where[id]))
		}
	}
	if len(dups) > 0 || events != total {
		t.Fatalf("%d rows, %d events, duplicated: %v", total, events, dups)
	}
	t.Logf("%d rows written across %d SIGKILLs, each seen exactly once", total, kills)
	if bootstrap == "" {
		t.Logf("embedded broker restarts, transactions left open by each kill (committed/aborted) and indexes repaired: %s", recovered)
	}
	d.stop()
}

// recoveredTransactions returns the embedded broker's count of the
// transactions it committed and aborted at start and of the segment
// indexes it repaired (runtime.StartWorker's log line), as
// "committed/aborted/repaired".
func recoveredTransactions(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "embedded Kafka broker started") {
			continue
		}
		var c, a, r string
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "crash.transactions.committed="); ok {
				c = v
			} else if v, ok := strings.CutPrefix(f, "crash.transactions.aborted="); ok {
				a = v
			} else if v, ok := strings.CutPrefix(f, "crash.indexes.repaired="); ok {
				r = v
			}
		}
		return c + "/" + a + "/" + r
	}
	return "?"
}

// pollRowIDs runs one poll of cl (waiting at most a second) and calls each
// with the after.id of every non-tombstone record, a change event in the
// JSON converter's schemas.enable=true envelope ({"payload":{"after":
// {"id":...}}}), and the record itself. A value that is not such JSON fails
// t with its offset.
func pollRowIDs(ctx context.Context, t *testing.T, cl *kgo.Client, each func(id int, r *kgo.Record)) {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	fs := cl.PollFetches(pctx)
	cancel()
	fs.EachRecord(func(r *kgo.Record) {
		if r.Value == nil {
			return
		}
		var v struct {
			Payload struct {
				After struct {
					ID int `json:"id"`
				} `json:"after"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("offset %d: %v", r.Offset, err)
		}
		each(v.Payload.After.ID, r)
	})
}

// startCounterWriter inserts rows (i, 0), i = 0, 1, 2, ..., into
// inventory.counters through conn, one row per transaction with pause
// between them, until the returned function is called; that function
// stops the writer, waits for it and returns how many rows were inserted.
// A failed INSERT fails t and stops the writer.
func startCounterWriter(ctx context.Context, t *testing.T, conn *pgx.Conn, pause time.Duration) (stop func() int) {
	var written atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if _, err := conn.Exec(ctx, `INSERT INTO inventory.counters VALUES ($1, 0)`, i); err != nil {
				t.Error(err)
				return
			}
			written.Add(1)
			time.Sleep(pause)
		}
	}()
	return func() int {
		close(done)
		wg.Wait()
		return int(written.Load())
	}
}
