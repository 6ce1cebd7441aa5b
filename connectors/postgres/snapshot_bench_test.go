package postgres

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// BenchmarkSnapshotRows measures the connector's CPU (user+sys of this
// process, getrusage) per snapshot row: 100000 rows (int key, two text
// columns) read by an initial_only snapshot, one thread, then polled.
// Reported as cpu-ns/row; the database server's CPU is not counted.
func BenchmarkSnapshotRows(b *testing.B) {
	pg := testenv.PostgresT(b)
	ctx := context.Background()
	if err := pg.CreateDatabase(ctx, "bsnap"); err != nil {
		b.Fatal(err)
	}
	if err := pg.Exec(ctx, "bsnap", `CREATE TABLE r (id int PRIMARY KEY, a text, c text);
		INSERT INTO r SELECT g, 'name ' || g, md5(g::text) FROM generate_series(1, 100000) g`); err != nil {
		b.Fatal(err)
	}
	const rows = 100000
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cfg := baseConfig(pg, "bsnap")
		cfg[KeySnapshotMode] = SnapshotInitialOnly
		cfg[KeySlotName] = fmt.Sprintf("bsnap%d", i)
		cfg["max.batch.size"] = "4096"
		before := rusage()
		task := NewTask()
		if err := task.Start(ctx, taskCtx{&memOffsets{}}, cfg); err != nil {
			b.Fatal(err)
		}
		for n := 0; n < rows; {
			batch, err := task.Poll(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n += len(batch)
		}
		task.Stop()
		cpu += rusage() - before
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*rows), "cpu-ns/row")
}

func rusage() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
