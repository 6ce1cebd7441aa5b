package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// TestMaxQueueSizeInBytes snapshots 600 rows of about 1 KiB each with
// max.queue.size.in.bytes=16384 (max.queue.size left at 8192 records) and a
// slow consumer: at every poll the queued records hold at most 16384 bytes
// (about 13 records), where without the byte bound the reader fills the
// channel with hundreds; every row still arrives, in order.
func TestMaxQueueSizeInBytes(t *testing.T) {
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), "qbytes"); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, "qbytes", `CREATE TABLE big (id int PRIMARY KEY, pad text);
		INSERT INTO big SELECT g, repeat('x', 1000) FROM generate_series(1, 600) g`)
	cfg := baseConfig(pg, "qbytes")
	cfg[KeyMaxQueueSizeInBytes] = "16384"
	cfg["max.batch.size"] = "4"
	cfg[KeySnapshotFetchSize] = "50"
	task := startTask(t, cfg, &memOffsets{})
	next, polls, maxQueued := 1, 0, 0
	deadline := time.Now().Add(60 * time.Second)
	for next <= 600 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d rows after 60s", next-1)
		}
		if polls < 20 {
			time.Sleep(20 * time.Millisecond) // a slow consumer: the reader runs ahead
		}
		if used := task.bytes.Used(); used > 16384 {
			t.Fatalf("poll %d: %d bytes queued, over max.queue.size.in.bytes=16384", polls, used)
		}
		maxQueued = max(maxQueued, len(task.records))
		b, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		polls++
		for _, r := range b {
			after := r.Value.(*connect.Struct).Get("after").(*connect.Struct).Get("id")
			if after != int32(next) {
				t.Fatalf("record %d has id %v (order)", next, after)
			}
			next++
		}
	}
	if maxQueued > 16 || maxQueued < 5 {
		t.Fatalf("at most %d records queued, want the byte bound to hold it near 16384 / ~1.1 KiB (5..16)", maxQueued)
	}
	t.Logf("at most %d records queued under a bound of %d bytes", maxQueued, task.bytes.Max())
}
