package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// Metrics reports the snapshot (Debezium's SnapshotCompleted, RowsScanned
// per table), the queue (QueueTotalCapacity = max.queue.size), Connected,
// and the slot's lag in bytes read from pg_replication_slots: it grows
// while changes are not committed, and falls once the worker commits their
// offset (the reader confirms the LSN to the server).
func TestMetricsSnapshotQueueAndSlotLag(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	task := NewTask()
	task.lag.Interval = 100 * time.Millisecond
	if m := task.Metrics(); m.Connected || m.QueueTotalCapacity != 0 || m.ReplicationLagBytes != -1 || m.Snapshot != nil {
		t.Fatalf("before Start: %+v", m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := task.Start(ctx, taskCtx{&memOffsets{}}, baseConfig(pg, "shop")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { task.Stop() })
	pollN(t, task, 1)
	m := task.Metrics()
	if !m.Connected || m.QueueTotalCapacity != 8192 || m.Snapshot == nil || !m.Snapshot.Completed || m.Snapshot.Running {
		t.Fatalf("after snapshot: %+v %+v", m, m.Snapshot)
	}
	rows := map[string]int64{}
	for _, tb := range m.Snapshot.Tables {
		rows[tb.Table] = tb.RowsScanned
	}
	if rows["public.item"] != 1 || rows["public.log"] != 0 || len(rows) != 2 {
		t.Fatalf("rows scanned %v", rows)
	}

	exec(t, pg, "shop", `INSERT INTO public.log SELECT repeat('x', 100) FROM generate_series(1, 2000)`)
	recs := pollN(t, task, 2000)
	waitLag := func(what string, cond func(connect.SourceTaskMetrics) bool) connect.SourceTaskMetrics {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			m := task.Metrics()
			if cond(m) {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %+v", what, m)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// 2000 rows of ~100 bytes are > 200 kB of WAL nobody confirmed.
	high := waitLag("lag over 200 kB before commit", func(m connect.SourceTaskMetrics) bool { return m.ReplicationLagBytes > 200_000 })
	if high.RetainedBytes < high.ReplicationLagBytes || high.LagSampledAt.IsZero() {
		t.Fatalf("retained %d < lag %d (restart_lsn <= confirmed_flush_lsn), sampled %v", high.RetainedBytes, high.ReplicationLagBytes, high.LagSampledAt)
	}
	last := recs[len(recs)-1]
	if err := task.Commit(ctx, last.SourcePartition, last.SourceOffset); err != nil {
		t.Fatal(err)
	}
	waitLag("lag falls after commit", func(m connect.SourceTaskMetrics) bool {
		return m.ReplicationLagBytes >= 0 && m.ReplicationLagBytes < 100_000
	})
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	if m := task.Metrics(); m.Connected {
		t.Fatal("Connected after Stop")
	}
}
