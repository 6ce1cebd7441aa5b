package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// TestExecutorShutdownTimeout: Stop waits executor.shutdown.timeout.ms for
// a reader that does not end (here held in the snapshot's start for 3 s),
// then returns an error naming the key; the reader's connections are
// closed once it ends.
func TestExecutorShutdownTimeout(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	cfg := baseConfig(pg, "shop")
	cfg[KeyExecutorShutdownTimeoutMs] = "500"
	cfg["database.initial.statements"] = "SET application_name = 'shutdown_test'"
	held := make(chan struct{})
	task, _ := startTaskLog(t, cfg, &memOffsets{}, func(task *Task) {
		task.beforeSnapshot = func() {
			close(held)
			time.Sleep(3 * time.Second) // not interruptible by Stop
		}
	})
	<-held
	start := time.Now()
	err := task.Stop()
	d := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "executor.shutdown.timeout.ms") {
		t.Fatalf("Stop = %v, want the reader not stopping within executor.shutdown.timeout.ms", err)
	}
	if d < 450*time.Millisecond || d > 2*time.Second {
		t.Fatalf("Stop took %v, want about executor.shutdown.timeout.ms=500", d)
	}
	c, err := pg.Connect(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	deadline := time.Now().Add(15 * time.Second)
	for {
		var n int
		if err := c.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'shutdown_test'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections of the stopped task still open after its reader ended", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
