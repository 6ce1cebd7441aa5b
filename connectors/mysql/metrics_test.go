package mysql

import (
	"context"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

func TestBinlogDistance(t *testing.T) {
	logs := []binlogFile{{"b.000001", 1000}, {"b.000002", 500}, {"b.000003", 300}}
	for _, c := range []struct {
		file    string
		pos     int64
		curFile string
		curPos  int64
		want    int64
	}{
		{"b.000003", 100, "b.000003", 250, 150},
		{"b.000001", 900, "b.000003", 40, 100 + 500 + 40},
		{"b.000002", 500, "b.000003", 0, 0},
		{"b.000000", 4, "b.000003", 40, -1}, // purged
	} {
		if got := binlogDistance(logs, c.file, c.pos, c.curFile, c.curPos); got != c.want {
			t.Errorf("%+v: %d", c, got)
		}
	}
}

// Against a real MariaDB: Metrics reports the queue and Connected, and once
// an offset is committed, the binlog bytes written after it (SHOW MASTER
// STATUS minus the committed position); committing a newer offset brings
// it back down.
func TestMetricsQueueAndBinlogLag(t *testing.T) {
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory; CREATE TABLE inventory.t (id INT PRIMARY KEY, pad VARCHAR(200)); INSERT INTO inventory.t VALUES (1, 'a');"); err != nil {
		t.Fatal(err)
	}
	task := newTask(flavorMariaDB)
	task.lag.Interval = 100 * time.Millisecond
	if err := task.Start(ctx, taskCtx{&memOffsets{}}, baseConfig(m)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { task.Stop() })
	recs := pollUntil(t, task, func(rs []*connect.SourceRecord) bool {
		for _, r := range rs {
			if st, ok := r.Value.(*connect.Struct); ok && st.Get("op") == "r" {
				return true
			}
		}
		return false
	})
	if mt := task.Metrics(); !mt.Connected || mt.QueueTotalCapacity != 8192 || mt.ReplicationLagBytes != -1 {
		t.Fatalf("after snapshot, before any commit: %+v", mt)
	}
	last := recs[len(recs)-1]
	task.Commit(ctx, last.SourcePartition, last.SourceOffset)
	if err := m.Exec(ctx, "inventory", "INSERT INTO t SELECT seq, REPEAT('z', 200) FROM seq_2_to_501"); err != nil {
		t.Fatal(err)
	}
	wait := func(what string, cond func(int64) bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			if v := task.Metrics().ReplicationLagBytes; cond(v) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: lag %d", what, task.Metrics().ReplicationLagBytes)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// 500 rows of 200 bytes: over 100 kB of binlog past the committed offset.
	wait("lag over 100 kB", func(v int64) bool { return v > 100_000 })
	// A streamed offset holds the position of its transaction's start
	// (Debezium's file/pos + event/row to skip), so committing the 500-row
	// transaction's last row still leaves it behind; a small transaction
	// after it moves the committed position past.
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (1000, 'x')"); err != nil {
		t.Fatal(err)
	}
	streamed := pollN(t, task, 501)
	last = streamed[len(streamed)-1]
	task.Commit(ctx, last.SourcePartition, last.SourceOffset)
	wait("lag falls after commit", func(v int64) bool { return v >= 0 && v < 10_000 })
}
