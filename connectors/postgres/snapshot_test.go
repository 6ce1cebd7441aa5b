package postgres

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// logBuf collects a task's log lines (a TaskLogger for tests).
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type logTaskCtx struct {
	taskCtx
	log *slog.Logger
}

func (c logTaskCtx) Logger() *slog.Logger { return c.log }

// startTaskLog starts a task whose log goes to the returned buffer; tune,
// when set, adjusts the task before Start.
func startTaskLog(t *testing.T, cfg map[string]string, off *memOffsets, tune func(*Task)) (*Task, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	task := NewTask()
	if tune != nil {
		tune(task)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tc := logTaskCtx{taskCtx{off}, slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if err := task.Start(ctx, tc, cfg); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { task.Stop() })
	return task, lb
}

// commitAndWait commits off and waits until the slot confirmed its LSN.
func commitAndWait(t *testing.T, pg *testenv.Postgres, db string, task *Task, off map[string]any) {
	t.Helper()
	if err := task.Commit(context.Background(), task.partition, off); err != nil {
		t.Fatal(err)
	}
	o, _ := parseOffset(off)
	want, _ := o.confirmLSN()
	deadline := time.Now().Add(10 * time.Second)
	for slotFlush(t, pg, db) != want {
		if time.Now().After(deadline) {
			t.Fatalf("confirmed_flush_lsn = %d, want %d", slotFlush(t, pg, db), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func setOffset(off *memOffsets, m map[string]any) {
	off.mu.Lock()
	off.m = m
	off.mu.Unlock()
}

// TestSnapshotModesOnRestart walks one slot through restarts under each
// snapshot.mode and checks what is snapshotted and streamed. Expected
// behaviour: Debezium 3.6 PostgreSQL connector documentation, snapshot.mode
// ("initial": snapshot only without offsets or after an unfinished
// snapshot; "always": at every start; "when_needed": also when the offset's
// position is no longer available; "configuration_based" with
// snapshot.data=true and start.stream=false: snapshot, no stream; "never":
// removed, read as no_data).
func TestSnapshotModesOnRestart(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	cfg := baseConfig(pg, "shop")
	cfg["table.include.list"] = `public\.item`
	off := &memOffsets{}
	withMode := func(mode string) map[string]string {
		c := map[string]string{}
		for k, v := range cfg {
			c[k] = v
		}
		c["snapshot.mode"] = mode
		return c
	}

	// initial, no offset: snapshot, then stream.
	task := startTask(t, withMode("initial"), off)
	if got := ids(pollN(t, task, 1)); got != "r:1" {
		t.Fatalf("initial: snapshot = %s", got)
	}
	exec(t, pg, "shop", `INSERT INTO item VALUES (2, 'b')`)
	recs := pollN(t, task, 1)
	commitAndWait(t, pg, "shop", task, recs[0].SourceOffset)
	task.Stop()
	setOffset(off, recs[0].SourceOffset)
	offAfter2 := recs[0].SourceOffset

	// initial, offset of streaming: no snapshot.
	exec(t, pg, "shop", `INSERT INTO item VALUES (3, 'c')`)
	task = startTask(t, withMode("initial"), off)
	recs = pollN(t, task, 1)
	if got := ids(recs); got != "c:3" {
		t.Fatalf("initial with offset: %s, want c:3 only", got)
	}
	pollQuiet(t, task, 300*time.Millisecond)
	commitAndWait(t, pg, "shop", task, recs[0].SourceOffset)
	task.Stop()
	setOffset(off, recs[0].SourceOffset)

	// always: snapshot at every start. Row 4 commits before the start but
	// after the kept slot's confirmed position, so it is read by the
	// snapshot and streamed again after it (the stream starts at the kept
	// slot's confirmed_flush_lsn: at-least-once, no change lost;
	// TestResnapshotWithKeptSlotStreamsUnconfirmedChanges), row 5 after it.
	exec(t, pg, "shop", `INSERT INTO item VALUES (4, 'd')`)
	task = startTask(t, withMode("always"), off)
	snap := pollN(t, task, 4)
	if got := ids(snap); got != "r:1 r:2 r:3 r:4" {
		t.Fatalf("always: snapshot = %s", got)
	}
	exec(t, pg, "shop", `INSERT INTO item VALUES (5, 'e')`)
	recs = pollN(t, task, 2)
	if got := ids(recs); got != "c:4 c:5" {
		t.Fatalf("always: stream = %s, want c:4 (not confirmed by the slot before the start) c:5", got)
	}
	recs = recs[1:]
	pollQuiet(t, task, 300*time.Millisecond)
	commitAndWait(t, pg, "shop", task, recs[0].SourceOffset)
	task.Stop()
	var slots int
	c, err := pg.Connect(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if err := c.QueryRow(context.Background(), `SELECT count(*) FROM pg_replication_slots`).Scan(&slots); err != nil || slots != 1 {
		t.Fatalf("slots after always = %d (%v), want only the kept slot (temporary snapshot slot dropped)", slots, err)
	}

	// initial, offset of an unfinished snapshot: the snapshot is redone.
	setOffset(off, snap[1].SourceOffset) // last_snapshot_record=false
	task = startTask(t, withMode("initial"), off)
	if got := ids(pollN(t, task, 5)); got != "r:1 r:2 r:3 r:4 r:5" {
		t.Fatalf("initial after unfinished snapshot: %s", got)
	}
	// The slot confirmed c:5's lsn_commit (the end of the transaction before
	// row 5's, as Debezium confirms), and the unfinished snapshot's offset
	// has no resume position: row 5's transaction is streamed again.
	exec(t, pg, "shop", `INSERT INTO item VALUES (6, 'f')`)
	recs = pollN(t, task, 2)
	if got := ids(recs); got != "c:5 c:6" {
		t.Fatalf("stream after redone snapshot = %s, want c:5 c:6", got)
	}
	recs = recs[1:]
	commitAndWait(t, pg, "shop", task, recs[0].SourceOffset)
	task.Stop()
	setOffset(off, recs[0].SourceOffset)

	// when_needed, offset still available: stream only.
	exec(t, pg, "shop", `INSERT INTO item VALUES (7, 'g')`)
	task = startTask(t, withMode("when_needed"), off)
	if got := ids(pollN(t, task, 1)); got != "c:7" {
		t.Fatalf("when_needed with available offset: %s", got)
	}
	pollQuiet(t, task, 300*time.Millisecond)
	task.Stop()

	// when_needed, offset older than the slot's confirmed position: snapshot.
	setOffset(off, offAfter2)
	task, lb := startTaskLog(t, withMode("when_needed"), off, nil)
	if got := ids(pollN(t, task, 7)); got != "r:1 r:2 r:3 r:4 r:5 r:6 r:7" {
		t.Fatalf("when_needed with unavailable offset: %s", got)
	}
	if !strings.Contains(lb.String(), "no longer available in the replication slot") {
		t.Errorf("when_needed: no log line saying why it snapshots:\n%s", lb.String())
	}
	// The slot confirmed c:6's lsn_commit (before row 6's transaction) and
	// row 7 was streamed by the previous start but never confirmed: both
	// are streamed again after the snapshot (the stored offset is older
	// than the slot, so no resume position applies).
	exec(t, pg, "shop", `INSERT INTO item VALUES (8, 'h')`)
	recs = pollN(t, task, 3)
	if got := ids(recs); got != "c:6 c:7 c:8" {
		t.Fatalf("when_needed: stream = %s, want c:6 c:7 c:8", got)
	}
	recs = recs[2:]
	commitAndWait(t, pg, "shop", task, recs[0].SourceOffset)
	task.Stop()
	setOffset(off, recs[0].SourceOffset)

	// configuration_based: data, no stream.
	cb := withMode("configuration_based")
	cb[KeySnapshotData], cb[KeySnapshotStartStream] = "true", "false"
	task = startTask(t, cb, off)
	if got := ids(pollN(t, task, 8)); got != "r:1 r:2 r:3 r:4 r:5 r:6 r:7 r:8" {
		t.Fatalf("configuration_based: snapshot = %s", got)
	}
	exec(t, pg, "shop", `INSERT INTO item VALUES (9, 'i')`)
	pollQuiet(t, task, 500*time.Millisecond)
	task.Stop()

	// never (removed in Debezium 3): no_data with a deprecation warning.
	task, lb = startTaskLog(t, withMode("never"), off, nil)
	if got := ids(pollN(t, task, 1)); got != "c:9" {
		t.Fatalf("never: %s, want c:9", got)
	}
	if !strings.Contains(lb.String(), "snapshot.mode=never is deprecated") {
		t.Errorf("never: no deprecation warning in the log:\n%s", lb.String())
	}
}

// TestParallelSnapshot reads three tables with snapshot.max.threads=3 and
// snapshot.fetch.size=7 while rows are inserted, one with a
// snapshot.select.statement.overrides statement, one table left out by
// snapshot.include.collection.list, and checks the handoff, per-table order,
// markers (Debezium's SnapshotRecord), offsets and progress counters. It
// runs legacy.snapshot.max.threads (whole tables per thread): chunked
// tables interleave their rows (TestChunkedSnapshot).
func TestParallelSnapshot(t *testing.T) {
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), "par"); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, "par", `CREATE TABLE a (id int PRIMARY KEY, v text);
		CREATE TABLE b (id int PRIMARY KEY, name text, qty int);
		CREATE TABLE c (id int PRIMARY KEY);
		CREATE TABLE d (id int PRIMARY KEY);
		INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 250) g;
		INSERT INTO b SELECT g, 'b' || g, g FROM generate_series(1, 120) g;
		INSERT INTO c SELECT g FROM generate_series(1, 5) g;
		INSERT INTO d SELECT g FROM generate_series(1, 3) g;
		ANALYZE a; ANALYZE b; ANALYZE c; ANALYZE d;`)
	cfg := baseConfig(pg, "par")
	cfg[KeySnapshotMaxThreads] = "3"
	cfg[KeyLegacySnapshotMaxThreads] = "true"
	cfg[KeySnapshotFetchSize] = "7"
	cfg[KeySnapshotIncludeCollection] = `public\.(a|b|c)`
	cfg[KeySnapshotSelectOverrides] = "public.b"
	cfg[KeySnapshotSelectOverrides+".public.b"] = "SELECT name, id FROM public.b WHERE id > 20"
	// Committed after the slot's consistent point and before any snapshot
	// transaction begins: only the imported snapshot keeps them out of the
	// snapshot (invariant 2); they must be streamed, never read.
	task, lb := startTaskLog(t, cfg, &memOffsets{}, func(task *Task) {
		task.progressLogInterval = time.Millisecond
		task.beforeSnapshot = func() {
			if err := pg.Exec(context.Background(), "par", `INSERT INTO a SELECT g, 'new' FROM generate_series(1001, 1010) g;
				INSERT INTO b VALUES (1001, 'new', 1); INSERT INTO c VALUES (1001)`); err != nil {
				t.Error(err)
			}
			if err := pg.Exec(context.Background(), "par", `INSERT INTO d VALUES (4)`); err != nil {
				t.Error(err)
			}
		}
	})

	recs := pollN(t, task, 250+100+5+13)
	snap, stream := recs[:355], recs[355:]
	perTable := map[string][]*connect.SourceRecord{}
	for i, r := range snap {
		v := r.Value.(*connect.Struct)
		if v.Get("op") != "r" {
			t.Fatalf("record %d op %v inside the snapshot", i, v.Get("op"))
		}
		perTable[r.Topic] = append(perTable[r.Topic], r)
		o := r.SourceOffset
		last := i == len(snap)-1
		if o["last_snapshot_record"] != last || o["snapshot_completed"] != last || o["snapshot"] != "INITIAL" {
			t.Errorf("snapshot offset %d = %v", i, o)
		}
		if last && sourceOf(r).Get("snapshot") != "last" {
			t.Errorf("final snapshot record marker %v, want last", sourceOf(r).Get("snapshot"))
		}
	}
	want := map[string][2]int{"dbserver1.public.a": {1, 250}, "dbserver1.public.b": {21, 120}, "dbserver1.public.c": {1, 5}}
	if len(perTable) != len(want) {
		t.Fatalf("snapshot topics %v", len(perTable))
	}
	for topic, rng := range want {
		rs := perTable[topic]
		if len(rs) != rng[1]-rng[0]+1 {
			t.Fatalf("%s: %d rows, want %d", topic, len(rs), rng[1]-rng[0]+1)
		}
		for i, r := range rs {
			after := r.Value.(*connect.Struct).Get("after").(*connect.Struct)
			if id := after.Get("id"); id != int32(rng[0]+i) {
				t.Fatalf("%s row %d: id %v, want %d (per-table order)", topic, i, id, rng[0]+i)
			}
			if topic == "dbserver1.public.b" && (after.Get("name") != fmt.Sprintf("b%d", rng[0]+i) || after.Get("qty") != nil) {
				t.Fatalf("override row %v: name %v qty %v (qty is not selected: null)", after.Get("id"), after.Get("name"), after.Get("qty"))
			}
			m := sourceOf(r).Get("snapshot")
			wantM := "true"
			switch {
			case i == 0 && topic == "dbserver1.public.a":
				wantM = "first"
			case i == 0:
				wantM = "first_in_data_collection"
			case i == len(rs)-1:
				wantM = "last_in_data_collection"
			}
			if m != wantM && !(m == "last" && r == snap[len(snap)-1]) {
				t.Errorf("%s row %d marker %v, want %s", topic, i, m, wantM)
			}
		}
	}
	var got []string
	for _, r := range stream {
		got = append(got, r.Topic[len("dbserver1.public."):]+":"+ids([]*connect.SourceRecord{r}))
	}
	wantStream := "a:c:1001 a:c:1002 a:c:1003 a:c:1004 a:c:1005 a:c:1006 a:c:1007 a:c:1008 a:c:1009 a:c:1010 b:c:1001 c:c:1001 d:c:4"
	if strings.Join(got, " ") != wantStream {
		t.Fatalf("stream = %s\nwant     %s", strings.Join(got, " "), wantStream)
	}

	p := task.SnapshotProgress()
	if !p.Completed || p.Running || len(p.Tables) != 3 {
		t.Fatalf("progress = %+v", p)
	}
	wantP := []TableSnapshotProgress{{"public.a", 250, 250, true}, {"public.b", 100, 120, true}, {"public.c", 5, 5, true}}
	for i, w := range wantP {
		if p.Tables[i] != w {
			t.Errorf("progress[%d] = %+v, want %+v", i, p.Tables[i], w)
		}
	}
	log := lb.String()
	for _, s := range []string{"threads=3", `table=public.a rows=250 estimated=250 progress="250 / 250"`, `table=public.b rows=100 estimated=120`} {
		if !strings.Contains(log, s) {
			t.Errorf("log lacks %q:\n%s", s, log)
		}
	}
}

// TestSnapshotReaderErrorFailsTask: a snapshot query that cannot be mapped
// to the table fails the task with a message naming the table and the
// query, also while other readers are running (snapshot.max.threads=2).
func TestSnapshotReaderErrorFailsTask(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	exec(t, pg, "shop", `INSERT INTO item SELECT g, 'x' FROM generate_series(2, 3000) g`)
	cfg := baseConfig(pg, "shop")
	cfg[KeySnapshotMaxThreads] = "2"
	cfg[KeySnapshotFetchSize] = "10"
	cfg[KeySnapshotSelectOverrides] = "public.log"
	cfg[KeySnapshotSelectOverrides+".public.log"] = "SELECT msg AS nope FROM public.log"
	task := startTask(t, cfg, &memOffsets{})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("no error from Poll")
		}
		_, err := task.Poll(context.Background())
		if err != nil {
			want := `snapshot public.log: the snapshot query returns column "nope", which the table does not have (query: SELECT msg AS nope FROM public.log)`
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("Poll error %q, want it to contain %q", err, want)
			}
			break
		}
	}
	if p := task.SnapshotProgress(); p.Completed {
		t.Errorf("progress says completed after a failed snapshot: %+v", p)
	}
}

// TestStopDuringParallelSnapshot stops a task whose readers are blocked on a
// full queue (max.queue.size): Stop returns promptly and cleanly.
func TestStopDuringParallelSnapshot(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	exec(t, pg, "shop", `INSERT INTO item SELECT g, 'x' FROM generate_series(2, 20000) g;
		INSERT INTO log SELECT 'm' || g FROM generate_series(1, 20000) g`)
	cfg := baseConfig(pg, "shop")
	cfg[KeySnapshotMaxThreads] = "2"
	cfg[KeySnapshotFetchSize] = "100"
	cfg["max.queue.size"] = "10"
	cfg["max.batch.size"] = "10"
	task := startTask(t, cfg, &memOffsets{})
	// At least 10 records: two snapshot threads fill batches of up to
	// max.batch.size each, so the poll that crosses 10 may return more (CI
	// saw 6 then 10).
	for n := 0; n < 10; {
		b, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		n += len(b)
	}
	if p := task.SnapshotProgress(); !p.Running || p.Completed || len(p.Tables) != 2 {
		t.Fatalf("progress while running = %+v", p)
	}
	start := time.Now()
	if err := task.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Stop took %v", d)
	}
}

// TestResnapshotWithKeptSlotStreamsUnconfirmedChanges is the lowest-level
// reproduction of the rows left in the sinks by integration
// TestJdbcSinkConvergesAfterSIGKILL: a run streamed c:2 (it reached Kafka)
// and died before its offset was stored, so the slot never confirmed it
// (invariant 1). Row 2 is deleted before the next start, which has no
// offset and snapshots again through a temporary slot while keeping the
// slot. The snapshot does not see row 2; unless the stream starts at the
// kept slot's confirmed_flush_lsn, PostgreSQL skips every transaction
// committed before the temporary slot's consistent point, and the delete of
// row 2 is never emitted: every sink keeps row 2 for good. The snapshot's
// offsets carry the same start, so a restart after the completed snapshot
// streams the unconfirmed changes too.
func TestResnapshotWithKeptSlotStreamsUnconfirmedChanges(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	cfg := baseConfig(pg, "shop")
	cfg["table.include.list"] = `public\.item`
	off := &memOffsets{}

	task := startTask(t, cfg, off)
	if got := ids(pollN(t, task, 1)); got != "r:1" {
		t.Fatalf("first start: snapshot = %s", got)
	}
	confirmed := slotFlush(t, pg, "shop")
	exec(t, pg, "shop", `INSERT INTO item VALUES (2, 'b')`)
	if got := ids(pollN(t, task, 1)); got != "c:2" {
		t.Fatalf("first start: stream = %s", got)
	}
	task.Stop() // no offset committed: the worker died before its flush
	if got := slotFlush(t, pg, "shop"); got != confirmed {
		t.Fatalf("the slot confirmed %d without a committed offset, want %d", got, confirmed)
	}

	exec(t, pg, "shop", `DELETE FROM item WHERE id = 2`)
	exec(t, pg, "shop", `INSERT INTO item VALUES (3, 'c')`)
	task, lb := startTaskLog(t, cfg, off, nil)
	snap := pollN(t, task, 2)
	if got := ids(snap); got != "r:1 r:3" {
		t.Fatalf("second start: snapshot = %s", got)
	}
	// Debezium's delete event of row 2 (op d, then the tombstone,
	// tombstones.on.delete=true) must reach Kafka; c:2 and c:3 come again
	// (at-least-once).
	if got := ids(pollN(t, task, 4)); got != "c:2 d:2 tomb c:3" {
		t.Fatalf("second start: stream after the snapshot = %s, want c:2 d:2 tomb c:3", got)
	}
	pollQuiet(t, task, 300*time.Millisecond)
	if !strings.Contains(lb.String(), "streamed again after it") {
		t.Errorf("no log line saying that unconfirmed changes are streamed again:\n%s", lb.String())
	}
	last, _ := parseOffset(snap[1].SourceOffset)
	if lsn, _ := last.confirmLSN(); lsn != confirmed || last.snapshotInProgress() {
		t.Fatalf("last snapshot record's offset: lsn %d completed %v, want the slot's confirmed_flush_lsn %d, completed", lsn, !last.snapshotInProgress(), confirmed)
	}
	task.Stop()

	// Died after the snapshot's last offset was stored, before any stream
	// offset: no snapshot, and the unconfirmed changes come again.
	setOffset(off, snap[1].SourceOffset)
	task = startTask(t, cfg, off)
	if got := ids(pollN(t, task, 4)); got != "c:2 d:2 tomb c:3" {
		t.Fatalf("restart after the completed snapshot: %s, want c:2 d:2 tomb c:3", got)
	}
	pollQuiet(t, task, 300*time.Millisecond)
}
