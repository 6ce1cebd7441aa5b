package postgres

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// streamingDB creates database db with table big (id int PRIMARY KEY, pad
// text) whose walsenders stream any transaction above 64kB of changes
// (logical_decoding_work_mem, read by the walsender when it connects).
func streamingDB(t *testing.T, pg *testenv.Postgres, db string) {
	t.Helper()
	if err := pg.CreateDatabase(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, db, `ALTER DATABASE `+db+` SET logical_decoding_work_mem = '64kB'`)
	exec(t, pg, db, `CREATE TABLE big (id int PRIMARY KEY, pad text)`)
}

func keyID(r *connect.SourceRecord) int32 { return r.Key.(*connect.Struct).Get("id").(int32) }

// TestStreamedTransactionBoundedMemory commits one transaction of 200,000
// rows of ~400 bytes (~90 MB of pgoutput messages) that the server streams
// while in progress (protocol version 2, streaming 'on'), and checks that
// every row arrives once, in order, only after the commit, with the Go heap
// staying far below what keeping the transaction in memory would take: the
// spill counter shows the whole transaction went through the temp file.
func TestStreamedTransactionBoundedMemory(t *testing.T) {
	const rows = 200000
	pg := testenv.PostgresT(t)
	streamingDB(t, pg, "big")
	cfg := baseConfig(pg, "big")
	cfg["snapshot.mode"] = "no_data"
	cfg["max.queue.size"] = "512"
	cfg["max.batch.size"] = "512"
	cfg["pgoutput.streaming.memory.bytes"] = "1048576"
	task := startTask(t, cfg, &memOffsets{})

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()

	committed := make(chan error, 1)
	go func() {
		committed <- pg.Exec(context.Background(), "big",
			fmt.Sprintf(`INSERT INTO big SELECT g, repeat('x', 400) FROM generate_series(1, %d) g`, rows))
	}()
	var commitDone bool
	next := int32(1)
	var last *connect.SourceRecord
	deadline := time.Now().Add(60 * time.Second)
	for next <= rows {
		if time.Now().After(deadline) {
			t.Fatalf("got %d of %d rows", next-1, rows)
		}
		if !commitDone {
			select {
			case err := <-committed:
				if err != nil {
					t.Fatal(err)
				}
				commitDone = true
			default:
			}
		}
		b, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b {
			if id := keyID(r); id != next || r.Value.(*connect.Struct).Get("op") != "c" {
				t.Fatalf("record %d: id %d op %v (order or duplicate)", next, id, r.Value.(*connect.Struct).Get("op"))
			}
			next++
			last = r
		}
	}
	close(stop)
	wg.Wait()
	pollQuiet(t, task, 300*time.Millisecond)

	st := &task.streamStats
	t.Logf("streamed txns %d, spilled %d MB, peak heap in use %d MB over a base of %d MB",
		st.committed.Load(), st.spilledBytes.Load()>>20, (peak.Load()-base)>>20, base>>20)
	if st.committed.Load() != 1 {
		t.Fatalf("streamed transactions committed = %d, want 1 (was the transaction streamed?)", st.committed.Load())
	}
	// A non-streaming implementation that buffers the in-progress
	// transaction holds at least its message bytes: more than 80 MB.
	if st.spilledBytes.Load() < rows*400 {
		t.Fatalf("spilled %d bytes, want the whole transaction (>= %d)", st.spilledBytes.Load(), rows*400)
	}
	const bound = 48 << 20
	if grow := peak.Load() - base; peak.Load() < base || grow > bound {
		t.Fatalf("peak heap in use grew by %d MB, bound %d MB", grow>>20, bound>>20)
	}

	// invariant 1: the streamed transaction's commit is confirmed only via
	// an offset past it (the next transaction's lsn_commit)
	exec(t, pg, "big", `INSERT INTO big VALUES (0, 'after')`)
	after := pollN(t, task, 1)[0]
	lo, _ := parseOffset(last.SourceOffset)
	ao, _ := parseOffset(after.SourceOffset)
	if *ao.lsnCommit <= *lo.lsn {
		t.Fatalf("next transaction's lsn_commit %d not past the streamed changes (last lsn %d)", *ao.lsnCommit, *lo.lsn)
	}
	if err := task.Commit(context.Background(), task.partition, after.SourceOffset); err != nil {
		t.Fatal(err)
	}
	waitSlotFlush(t, pg, "big", *ao.lsnCommit)
}

func waitSlotFlush(t *testing.T, pg *testenv.Postgres, db string, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for slotFlush(t, pg, db) != want {
		if time.Now().After(deadline) {
			t.Fatalf("confirmed_flush_lsn = %d, want %d", slotFlush(t, pg, db), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStreamedSavepointAbortAndRestart streams transactions while in
// progress and checks, with the kept messages in memory and in a temp file:
// a subtransaction rolled back (ROLLBACK TO SAVEPOINT) drops only its rows
// (Stream Abort with its subxid), an aborted streamed transaction emits
// nothing, a small transaction committed while a streamed one is in
// progress comes first (commit order), and a restart from an offset in the
// middle of a streamed transaction emits exactly the rest of it (the server
// streams it again; lsn_proc/txId skip what was delivered, as Debezium's
// resume).
func TestStreamedSavepointAbortAndRestart(t *testing.T) {
	for _, mode := range []struct {
		name   string
		memory string
	}{{"memory", "67108864"}, {"file", "65536"}} {
		t.Run(mode.name, func(t *testing.T) {
			pg := testenv.PostgresT(t)
			ctx := context.Background()
			streamingDB(t, pg, "sp")
			cfg := baseConfig(pg, "sp")
			cfg["snapshot.mode"] = "no_data"
			cfg["pgoutput.streaming.memory.bytes"] = mode.memory
			off := &memOffsets{}
			task := startTask(t, cfg, off)

			a, err := pg.Connect(ctx, "sp")
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(ctx)
			run := func(sql string) {
				t.Helper()
				if _, err := a.Exec(ctx, sql); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
			}
			ins := func(from, to int) string {
				return fmt.Sprintf(`INSERT INTO big SELECT g, repeat('p', 100) FROM generate_series(%d, %d) g`, from, to)
			}
			run("BEGIN")
			run(ins(1, 5000))
			run("SAVEPOINT s1")
			run(ins(5001, 10000))
			run("ROLLBACK TO SAVEPOINT s1")
			exec(t, pg, "sp", `INSERT INTO big VALUES (50000, 'small')`) // commits while the big one is open
			run(ins(10001, 15000))
			// only committed data leaves: the small transaction, nothing of
			// the streamed one while it is open
			first := pollN(t, task, 1)
			pollQuiet(t, task, 500*time.Millisecond)
			run("COMMIT")
			run("BEGIN")
			run(ins(20001, 30000))
			run("ROLLBACK")
			exec(t, pg, "sp", `INSERT INTO big VALUES (99999, 'marker')`)

			recs := append(first, pollN(t, task, 10001)...)
			want := []int32{50000}
			for i := int32(1); i <= 5000; i++ {
				want = append(want, i)
			}
			for i := int32(10001); i <= 15000; i++ {
				want = append(want, i)
			}
			want = append(want, 99999)
			for i, r := range recs {
				if keyID(r) != want[i] {
					t.Fatalf("record %d: id %d, want %d", i, keyID(r), want[i])
				}
			}
			pollQuiet(t, task, 300*time.Millisecond)
			st := &task.streamStats
			if st.committed.Load() != 1 || st.aborted.Load() != 1 || st.subAborted.Load() < 1 {
				t.Fatalf("streamed commits %d, aborts %d, subtransaction aborts %d; want 1, 1, >= 1",
					st.committed.Load(), st.aborted.Load(), st.subAborted.Load())
			}
			if spilled := st.spilledBytes.Load(); (mode.name == "file") != (spilled > 0) {
				t.Fatalf("%s mode spilled %d bytes", mode.name, spilled)
			}

			// restart from the offset of the 3,000th row of the streamed
			// transaction (recs[3000]); the slot confirms only lsn_commit,
			// i.e. the small transaction's commit
			mid := recs[3000].SourceOffset
			if err := task.Commit(ctx, task.partition, mid); err != nil {
				t.Fatal(err)
			}
			mo, _ := parseOffset(mid)
			waitSlotFlush(t, pg, "sp", *mo.lsnCommit)
			task.Stop()
			off.mu.Lock()
			off.m = mid
			off.mu.Unlock()
			task2 := startTask(t, cfg, off)
			rest := pollN(t, task2, len(want)-3001)
			for i, r := range rest {
				if keyID(r) != want[3001+i] {
					t.Fatalf("after restart record %d: id %d, want %d", i, keyID(r), want[3001+i])
				}
			}
			pollQuiet(t, task2, 300*time.Millisecond)
		})
	}
}

// BenchmarkStreamedTransaction commits one INSERT of 5,000,000 rows (~100
// bytes of text each; CONNECTD_BENCH_ROWS overrides the count) and reads it
// through the task with default settings, the consumer dropping every
// record: with pgoutput.streaming on (the server streams it while in
// progress, past its default 64MB logical_decoding_work_mem; connectd keeps
// it in a temp file) and off (proto_version 1 as Debezium: the walsender
// spills it and sends it after the commit). It reports the process's peak
// RSS (VmHWM, reset before each run), the time from the INSERT's start to
// the last record, and the bytes connectd spilled. Not part of the test
// suite; run it with
//
//	go test -run '^$' -bench StreamedTransaction -benchtime 1x ./connectors/postgres/
func BenchmarkStreamedTransaction(b *testing.B) {
	rows := 5_000_000
	if v := os.Getenv("CONNECTD_BENCH_ROWS"); v != "" {
		rows, _ = strconv.Atoi(v)
	}
	pg := testenv.PostgresT(b)
	for _, streaming := range []string{"true", "false"} {
		b.Run("streaming="+streaming, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				db := fmt.Sprintf("bench_%s_%d", streaming, i)
				if err := pg.CreateDatabase(context.Background(), db); err != nil {
					b.Fatal(err)
				}
				if err := pg.Exec(context.Background(), db, `CREATE TABLE big (id int PRIMARY KEY, pad text)`); err != nil {
					b.Fatal(err)
				}
				cfg := baseConfig(pg, db)
				cfg["snapshot.mode"] = "no_data"
				cfg["slot.name"] = db
				cfg["pgoutput.streaming"] = streaming
				task := NewTask()
				if err := task.Start(context.Background(), taskCtx{&memOffsets{}}, cfg); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // reset VmHWM
				start := time.Now()
				errc := make(chan error, 1)
				go func() {
					errc <- pg.Exec(context.Background(), db,
						fmt.Sprintf(`INSERT INTO big SELECT g, repeat('x', 100) FROM generate_series(1, %d) g`, rows))
				}()
				n := 0
				for n < rows {
					recs, err := task.Poll(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					n += len(recs)
				}
				elapsed := time.Since(start)
				if err := <-errc; err != nil {
					b.Fatal(err)
				}
				task.Stop()
				hwm := vmHWM()
				b.ReportMetric(hwm, "peak-RSS-MiB")
				b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
				b.ReportMetric(float64(task.streamStats.spilledBytes.Load())/(1<<20), "spilled-MiB")
				b.Logf("%d rows, streaming=%s: %.1fs, peak RSS %.0f MiB, connectd spilled %d MiB, streamed txns %d",
					rows, streaming, elapsed.Seconds(), hwm, task.streamStats.spilledBytes.Load()>>20, task.streamStats.committed.Load())
			}
		})
	}
}

// vmHWM returns this process's peak resident set size in MiB.
func vmHWM() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.Atoi(strings.Fields(l)[1])
			return float64(kb) / 1024
		}
	}
	return -1
}

// TestStreamedTransactionSameEvents reads the same WAL through two slots,
// one with pgoutput streaming (the transaction arrives in progress and is
// replayed at its commit) and one with protocol version 1 as Debezium (the
// server sends it after the commit), and requires identical records and
// offsets — keys, values, source blocks with their LSNs, transaction
// metadata BEGIN/END with event counts — apart from the envelope's own
// ts_ms/ts_us/ts_ns (the time the record was made).
func TestStreamedTransactionSameEvents(t *testing.T) {
	pg := testenv.PostgresT(t)
	streamingDB(t, pg, "same")
	tasks := map[string]*Task{}
	for _, streaming := range []string{"true", "false"} {
		cfg := baseConfig(pg, "same")
		cfg["snapshot.mode"] = "no_data"
		cfg["slot.name"] = "slot_" + streaming
		cfg["pgoutput.streaming"] = streaming
		cfg["provide.transaction.metadata"] = "true"
		tasks[streaming] = startTask(t, cfg, &memOffsets{})
	}
	// a first transaction that both read: the slots start at different
	// points, which shows in the first BEGIN's lsn_proc only
	exec(t, pg, "same", `INSERT INTO big VALUES (100000, 'warm')`)
	exec(t, pg, "same", `BEGIN;
		INSERT INTO big SELECT g, repeat('s', 100) FROM generate_series(1, 2000) g;
		SAVEPOINT s1;
		INSERT INTO big SELECT g, repeat('s', 100) FROM generate_series(2001, 3000) g;
		ROLLBACK TO SAVEPOINT s1;
		UPDATE big SET pad = 'u' WHERE id <= 10;
		DELETE FROM big WHERE id > 10 AND id <= 20;
		COMMIT`)
	exec(t, pg, "same", `INSERT INTO big VALUES (5000, 'small')`)
	const n = 3 + 1 + 2000 + 10 + 10 + 10 + 1 + 3 // warm-up BEGIN c END; BEGIN, c, u, d, tombstones, END; small BEGIN c END
	on, off := pollN(t, tasks["true"], n), pollN(t, tasks["false"], n)
	if tasks["true"].streamStats.committed.Load() != 1 || tasks["false"].streamStats.committed.Load() != 0 {
		t.Fatalf("streamed transactions: %d with streaming, %d without; want 1, 0",
			tasks["true"].streamStats.committed.Load(), tasks["false"].streamStats.committed.Load())
	}
	mask := func(r *connect.SourceRecord) map[string]any {
		m := recordJSON(r)
		if v, _ := m["value"].(map[string]any); v != nil {
			p := v["payload"].(map[string]any)
			if _, ok := p["source"]; ok {
				for _, k := range []string{"ts_ms", "ts_us", "ts_ns"} {
					delete(p, k)
				}
			}
		}
		m["offset"] = roundTrip(r.SourceOffset)
		return m
	}
	for i := 3; i < n; i++ {
		a, b := mask(on[i]), mask(off[i])
		if d := diff("", a, b); len(d) > 0 {
			t.Fatalf("record %d differs with streaming: %v", i, d)
		}
	}
	end := on[3+2031].Value.(*connect.Struct)
	if end.Get("status") != "END" || end.Get("event_count") != int64(2020) {
		t.Fatalf("END = %v", end.Values)
	}
}
