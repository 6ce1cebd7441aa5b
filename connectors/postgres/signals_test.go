package postgres

import (
	"context"
	"encoding/json"
	"math/rand"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/incsnap"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/testenv"
)

// Expected behaviour in these tests comes from the Debezium 3.6
// documentation ("Sending signals to a Debezium connector", "Incremental
// snapshots": signal table columns id/type/data, the execute-snapshot,
// stop-snapshot, pause-snapshot and resume-snapshot data, op "r" with
// source.snapshot "incremental") and from Debezium's source
// (AbstractIncrementalSnapshotContext: the incremental_snapshot_* offset
// keys and their encodings; AbstractIncrementalSnapshotChangeEventSource:
// chunking by key, window deduplication, resume after the last key sent).

// signalDB creates database db with table t(id int PK, v int, note text) of
// n rows and the signal table public.debezium_signal, and returns a
// connector configuration (snapshot.mode no_data: only signals snapshot).
func signalDB(t *testing.T, db string, n int, chunk int) (*testenv.Postgres, map[string]string) {
	t.Helper()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropScenarioDB(t, pg, db) })
	exec(t, pg, db, `CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL, note text);
		INSERT INTO t SELECT g, 0, 'row ' || g FROM generate_series(1, `+itoa(n)+`) g;
		CREATE TABLE debezium_signal (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048));`)
	cfg := baseConfig(pg, db)
	cfg["slot.name"], cfg["publication.name"] = db, db
	cfg["snapshot.mode"] = "no_data"
	cfg["table.include.list"] = "public.t"
	cfg["signal.data.collection"] = "public.debezium_signal"
	cfg["incremental.snapshot.chunk.size"] = itoa(chunk)
	return pg, cfg
}

func sendSignal(t *testing.T, pg *testenv.Postgres, db, id, typ, data string) {
	t.Helper()
	c, err := pg.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(context.Background(), `INSERT INTO debezium_signal VALUES ($1, $2, $3)`, id, typ, data); err != nil {
		t.Fatal(err)
	}
}

// recID returns the id of a record of table t (key {id}).
func recID(r *connect.SourceRecord) int32 {
	return r.Key.(*connect.Struct).Get("id").(int32)
}

func recOp(r *connect.SourceRecord) string {
	return r.Value.(*connect.Struct).Get("op").(string)
}

func recSnapshot(r *connect.SourceRecord) string {
	return r.Value.(*connect.Struct).Get("source").(*connect.Struct).Get("snapshot").(string)
}

// signalTopic is the signal table's topic: Debezium emits the signal table's
// changes (signals, watermarks) even when table.include.list leaves it out.
const signalTopic = "dbserver1.public.debezium_signal"

// collect polls until done(the records of table t so far) or the timeout;
// the signal table's records are dropped.
func collect(t *testing.T, task *Task, timeout time.Duration, done func([]*connect.SourceRecord) bool) []*connect.SourceRecord {
	t.Helper()
	var out []*connect.SourceRecord
	deadline := time.Now().Add(timeout)
	for !done(out) {
		if time.Now().After(deadline) {
			t.Fatalf("condition not reached in %v (%d records)", timeout, len(out))
		}
		b, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		for _, r := range b {
			if r.Value != nil && r.Topic != signalTopic { // no tombstones
				out = append(out, r)
			}
		}
	}
	return out
}

// pollT polls until n records of table t arrived.
func pollT(t *testing.T, task *Task, n int) []*connect.SourceRecord {
	t.Helper()
	out := collect(t, task, 30*time.Second, func(rs []*connect.SourceRecord) bool { return len(rs) >= n })
	if len(out) != n {
		t.Fatalf("got %d records, want %d", len(out), n)
	}
	return out
}

func countOp(rs []*connect.SourceRecord, op string) int {
	n := 0
	for _, r := range rs {
		if recOp(r) == op {
			n++
		}
	}
	return n
}

// pollUntilQuiet polls until nothing arrived for d.
func pollUntilQuiet(t *testing.T, task *Task, d time.Duration) []*connect.SourceRecord {
	t.Helper()
	var out []*connect.SourceRecord
	last := time.Now()
	for time.Since(last) < d {
		b, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		for _, r := range b {
			if r.Value != nil && r.Topic != signalTopic {
				out = append(out, r)
			}
		}
		if len(b) > 0 {
			last = time.Now()
		}
	}
	return out
}

// TestIncrementalSnapshotWithConcurrentWriter: a 20k-row table is
// snapshotted incrementally while a writer updates random rows (and inserts
// and deletes some) without pause. The watermark algorithm must leave no
// stale row: for every key the last event equals the row in the database
// (deleted rows end with a delete), and every row got an event.
func TestIncrementalSnapshotWithConcurrentWriter(t *testing.T) {
	const db, n = "incsnap_writer", 20000
	pg, cfg := signalDB(t, db, n, 1024)
	task := startTask(t, cfg, &memOffsets{})

	w, err := pg.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	var stop atomic.Bool
	var writes atomic.Int64
	var wg sync.WaitGroup
	defer func() { stop.Store(true); wg.Wait() }() // also when the test fails early
	wg.Add(1)
	go func() {
		defer wg.Done()
		rnd := rand.New(rand.NewSource(1))
		next := n + 1
		for !stop.Load() {
			var err error
			switch k := rnd.Intn(20); {
			case k == 0:
				_, err = w.Exec(context.Background(), `INSERT INTO t VALUES ($1, 1, 'new')`, next)
				next++
			case k == 1:
				_, err = w.Exec(context.Background(), `DELETE FROM t WHERE id = $1`, 1+rnd.Intn(n))
			default:
				_, err = w.Exec(context.Background(), `UPDATE t SET v = v + 1, note = 'upd ' || (v + 1) WHERE id = $1`, 1+rnd.Intn(n))
			}
			if err != nil {
				t.Errorf("writer: %v", err)
				return
			}
			writes.Add(1)
		}
	}()
	// let the writer run before and during the snapshot
	time.Sleep(200 * time.Millisecond)
	sendSignal(t, pg, db, "s1", "execute-snapshot", `{"data-collections": ["public.t"], "type": "incremental"}`)

	seenRunning := false
	recs := collect(t, task, 25*time.Second, func(rs []*connect.SourceRecord) bool {
		if len(rs) == 0 {
			return false
		}
		_, running := rs[len(rs)-1].SourceOffset[incsnap.OffCollections]
		seenRunning = seenRunning || running
		// done once a record after the snapshot's end carries no snapshot state
		return seenRunning && !running
	})
	stop.Store(true)
	wg.Wait()
	recs = append(recs, pollUntilQuiet(t, task, 1500*time.Millisecond)...)

	type state struct {
		v    int32
		note string
		del  bool
	}
	last := map[int32]state{}
	reads := 0
	for _, r := range recs {
		if r.Topic != "dbserver1.public.t" {
			continue
		}
		val := r.Value.(*connect.Struct)
		switch recOp(r) {
		case "r":
			reads++
			if s := recSnapshot(r); s != "incremental" {
				t.Fatalf("op r with source.snapshot %q, want incremental", s)
			}
			fallthrough
		case "c", "u":
			a := val.Get("after").(*connect.Struct)
			last[recID(r)] = state{v: a.Get("v").(int32), note: a.Get("note").(string)}
		case "d":
			last[recID(r)] = state{del: true}
		}
	}
	rows, err := w.Query(context.Background(), `SELECT id, v, note FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	inDB := map[int32]state{}
	for rows.Next() {
		var id, v int32
		var note string
		if err := rows.Scan(&id, &v, &note); err != nil {
			t.Fatal(err)
		}
		inDB[id] = state{v: v, note: note}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	bad := 0
	for id, want := range inDB {
		got, ok := last[id]
		if !ok || got != want {
			if bad < 5 {
				t.Errorf("id %d: last event %+v (seen %v), database row %+v", id, got, ok, want)
			}
			bad++
		}
	}
	for id, got := range last {
		if _, ok := inDB[id]; !ok && !got.del {
			if bad < 5 {
				t.Errorf("id %d: deleted in the database, last event %+v", id, got)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d stale or missing rows", bad)
	}
	if reads < n/2 || reads > n+int(writes.Load()) {
		t.Fatalf("%d snapshot reads for %d rows", reads, n)
	}
	t.Logf("%d rows, %d concurrent writes, %d snapshot reads, %d records", len(inDB), writes.Load(), reads, len(recs))
}

// TestIncrementalSnapshotOffsetsAndConditions: additional-conditions limits
// the rows read; offsets carry Debezium's incremental_snapshot_* keys while
// the snapshot runs and none after it. With publication.autocreate.mode=
// filtered the signal table is added to the publication.
func TestIncrementalSnapshotOffsetsAndConditions(t *testing.T) {
	const db = "incsnap_cond"
	pg, cfg := signalDB(t, db, 1000, 30)
	cfg["publication.autocreate.mode"] = "filtered"
	task := startTask(t, cfg, &memOffsets{})
	sendSignal(t, pg, db, "s1", "execute-snapshot",
		`{"data-collections": ["public\\.t"], "additional-conditions": [{"data-collection": "public.t", "filter": "id % 10 = 0"}]}`)
	recs := collect(t, task, 20*time.Second, func(rs []*connect.SourceRecord) bool { return countOp(rs, "r") >= 100 })
	recs = append(recs, pollUntilQuiet(t, task, time.Second)...)
	if got := countOp(recs, "r"); got != 100 {
		t.Fatalf("%d snapshot records, want 100 (ids divisible by 10)", got)
	}
	for i, r := range recs {
		if id := recID(r); id%10 != 0 || id != int32(10*(i+1)) {
			t.Fatalf("record %d has id %d, want %d (key order)", i, id, 10*(i+1))
		}
	}
	off := recs[0].SourceOffset
	wantColls := `[{"incremental_snapshot_collections_id":"public.t","incremental_snapshot_collections_additional_condition":"(id % 10 = 0)","incremental_snapshot_collections_surrogate_key":null}]`
	if off[incsnap.OffCollections] != wantColls {
		t.Errorf("incremental_snapshot_collections = %v, want %s", off[incsnap.OffCollections], wantColls)
	}
	if v := off[incsnap.OffCorrelationID]; v != "s1" {
		t.Errorf("incremental_snapshot_correlation_id = %v, want the signal id s1", v)
	}
	// the first record's key is its own: Integer 10; the maximum key Integer 1000
	for k, want := range map[string][]any{incsnap.OffPrimaryKey: {int32(10)}, incsnap.OffMaximumKey: {int32(1000)}} {
		got, err := incsnap.DecodeKey(off[k].(string))
		if err != nil || len(got) != 1 || got[0] != want[0] {
			t.Errorf("%s = %v (%v), want %v", k, got, err, want)
		}
	}
	if recs[0].SourceOffset["lsn"] == nil || recs[0].SourceOffset["lsn_proc"] == nil {
		t.Errorf("snapshot record offset without stream position: %v", recs[0].SourceOffset)
	}
	exec(t, pg, db, `UPDATE t SET v = 5 WHERE id = 3`)
	after := pollT(t, task, 1)
	if _, ok := after[0].SourceOffset[incsnap.OffCollections]; ok || recOp(after[0]) != "u" {
		t.Fatalf("after the snapshot: %s %v", recOp(after[0]), after[0].SourceOffset)
	}
}

// TestIncrementalSnapshotStop: stop-snapshot ends the snapshot before all
// rows were read; later offsets carry no snapshot state.
func TestIncrementalSnapshotStop(t *testing.T) {
	const db = "incsnap_stop"
	pg, cfg := signalDB(t, db, 5000, 5)
	task := startTask(t, cfg, &memOffsets{})
	sendSignal(t, pg, db, "s1", "execute-snapshot", `{"data-collections": ["public.t"]}`)
	collect(t, task, 20*time.Second, func(rs []*connect.SourceRecord) bool { return countOp(rs, "r") > 0 })
	sendSignal(t, pg, db, "s2", "stop-snapshot", `{"data-collections": ["public.t"], "type": "incremental"}`)
	recs := pollUntilQuiet(t, task, 1500*time.Millisecond)
	if n := countOp(recs, "r"); n >= 5000-5 {
		t.Fatalf("%d snapshot records after stop-snapshot: the snapshot did not stop", n)
	}
	exec(t, pg, db, `UPDATE t SET v = 1 WHERE id = 4999`)
	after := pollT(t, task, 1)
	if _, ok := after[0].SourceOffset[incsnap.OffCollections]; ok {
		t.Fatalf("offset after stop-snapshot still has the snapshot state: %v", after[0].SourceOffset)
	}
	pollQuiet(t, task, 500*time.Millisecond)
}

// TestIncrementalSnapshotPauseResume: pause-snapshot stops reading chunks
// (streaming goes on), resume-snapshot continues after the last key sent,
// and in the end every row was read.
func TestIncrementalSnapshotPauseResume(t *testing.T) {
	const db = "incsnap_pause"
	pg, cfg := signalDB(t, db, 2000, 10)
	task := startTask(t, cfg, &memOffsets{})
	sendSignal(t, pg, db, "s1", "execute-snapshot", `{"data-collections": ["public.t"]}`)
	recs := collect(t, task, 20*time.Second, func(rs []*connect.SourceRecord) bool { return countOp(rs, "r") > 0 })
	sendSignal(t, pg, db, "s2", "pause-snapshot", "")
	recs = append(recs, pollUntilQuiet(t, task, time.Second)...)
	paused := countOp(recs, "r")
	if paused >= 2000 {
		t.Fatalf("snapshot finished (%d reads) before pause-snapshot took effect", paused)
	}
	exec(t, pg, db, `INSERT INTO t VALUES (5000, 1, 'while paused')`)
	got := pollT(t, task, 1)
	if recOp(got[0]) != "c" || got[0].SourceOffset[incsnap.OffCollections] == nil {
		t.Fatalf("while paused: op %s offset %v, want a streamed c with the snapshot state", recOp(got[0]), got[0].SourceOffset)
	}
	pollQuiet(t, task, 700*time.Millisecond)
	sendSignal(t, pg, db, "s3", "resume-snapshot", "")
	recs = append(recs, collect(t, task, 20*time.Second, func(rs []*connect.SourceRecord) bool {
		for _, r := range rs {
			if recOp(r) == "r" && recID(r) == 2000 {
				return true
			}
		}
		return false
	})...)
	seen := map[int32]bool{}
	for _, r := range recs {
		if recOp(r) == "r" {
			seen[recID(r)] = true
		}
	}
	for id := int32(1); id <= 2000; id++ {
		if !seen[id] {
			t.Fatalf("id %d never read (paused after %d reads)", id, paused)
		}
	}
	if seen[5000] {
		t.Fatalf("row inserted while paused is beyond the maximum key and must not be read")
	}
}

// TestIncrementalSnapshotResumesAfterRestart: the task is stopped in the
// middle of the snapshot; a new task started from the committed offset
// resumes after the last key sent (it does not start over) and finishes.
func TestIncrementalSnapshotResumesAfterRestart(t *testing.T) {
	const db, n = "incsnap_restart", 3000
	pg, cfg := signalDB(t, db, n, 100)
	off := &memOffsets{}
	task := NewTask()
	if err := task.Start(context.Background(), taskCtx{off}, cfg); err != nil {
		t.Fatal(err)
	}
	sendSignal(t, pg, db, "s1", "execute-snapshot", `{"data-collections": ["public.t"]}`)
	first := collect(t, task, 20*time.Second, func(rs []*connect.SourceRecord) bool { return countOp(rs, "r") >= 550 })
	// commit the offset of record 550 (the worker made it durable)
	committed := first[549]
	off.mu.Lock()
	off.m = committed.SourceOffset
	off.mu.Unlock()
	if err := task.Commit(context.Background(), committed.SourcePartition, committed.SourceOffset); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the standby status update confirms it
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	k, err := incsnap.DecodeKey(committed.SourceOffset[incsnap.OffPrimaryKey].(string))
	if err != nil || len(k) != 1 || k[0] != int32(550) {
		t.Fatalf("stored incremental_snapshot_primary_key = %v (%v), want [550]", k, err)
	}

	task2 := startTask(t, cfg, off)
	rest := collect(t, task2, 20*time.Second, func(rs []*connect.SourceRecord) bool {
		for _, r := range rs {
			if recOp(r) == "r" && recID(r) == n {
				return true
			}
		}
		return false
	})
	rest = append(rest, pollUntilQuiet(t, task2, 700*time.Millisecond)...)
	if id := recID(rest[0]); recOp(rest[0]) != "r" || id != 551 {
		t.Fatalf("restarted task's first record: op %s id %d, want r 551", recOp(rest[0]), id)
	}
	seen := map[int32]bool{}
	for _, r := range first[:550] {
		seen[recID(r)] = true
	}
	for _, r := range rest {
		if seen[recID(r)] {
			t.Fatalf("id %d read again after the restart", recID(r))
		}
		seen[recID(r)] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct ids read across the restart, want %d", len(seen), n)
	}
}

// TestBlockingSnapshotSignal: execute-snapshot type blocking reads the table
// with Debezium's snapshot markers while streaming waits, then streaming
// resumes.
func TestBlockingSnapshotSignal(t *testing.T) {
	const db = "incsnap_blocking"
	pg, cfg := signalDB(t, db, 50, 10)
	task := startTask(t, cfg, &memOffsets{})
	sendSignal(t, pg, db, "s1", "execute-snapshot", `{"data-collections": ["public.t"], "type": "BLOCKING", "additional-conditions": [{"data-collection": "public.t", "filter": "id <= 40"}]}`)
	exec(t, pg, db, `UPDATE t SET v = 9 WHERE id = 1`)
	recs := pollT(t, task, 41)
	for i, r := range recs[:40] {
		want := "true"
		switch i {
		case 0:
			want = "first"
		case 39:
			want = "last"
		}
		if recOp(r) != "r" || recID(r) != int32(i+1) || recSnapshot(r) != want {
			t.Fatalf("record %d: op %s id %d snapshot %s, want r %d %s", i, recOp(r), recID(r), recSnapshot(r), i+1, want)
		}
	}
	if o := recs[39].SourceOffset; o["snapshot"] != "BLOCKING" || o["snapshot_completed"] != true || recs[0].SourceOffset["snapshot_completed"] != false {
		t.Fatalf("blocking snapshot offsets: first %v, last %v", recs[0].SourceOffset, o)
	}
	if recOp(recs[40]) != "u" || recID(recs[40]) != 1 {
		t.Fatalf("after the blocking snapshot: op %s id %d, want the streamed update of id 1", recOp(recs[40]), recID(recs[40]))
	}
}

// TestKafkaSignalChannel: signals from signal.kafka.topic (key =
// topic.prefix, value {"id", "type", "data"}) on an in-process Kafka (kfake);
// records with another key are ignored, as Debezium's KafkaSignalChannel.
func TestKafkaSignalChannel(t *testing.T) {
	const db = "incsnap_kafka"
	pg, cfg := signalDB(t, db, 300, 64)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "dbserver1-signal"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	cfg["signal.enabled.channels"] = "source,kafka"
	cfg["signal.kafka.bootstrap.servers"] = strings.Join(kf.ListenAddrs(), ",")
	task := startTask(t, cfg, &memOffsets{})
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(key, value string) {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "dbserver1-signal", Key: []byte(key), Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce("otherserver", `{"type": "execute-snapshot", "data": {"data-collections": ["public.t"], "additional-conditions": [{"data-collection": "public.t", "filter": "id <= 5"}]}}`)
	produce("dbserver1", `{"id": "kafka-1", "type": "execute-snapshot", "data": {"data-collections": ["public.t"], "type": "INCREMENTAL"}}`)
	recs := collect(t, task, 20*time.Second, func(rs []*connect.SourceRecord) bool { return countOp(rs, "r") >= 300 })
	recs = append(recs, pollUntilQuiet(t, task, time.Second)...)
	if n := countOp(recs, "r"); n != 300 {
		t.Fatalf("%d snapshot records, want 300 (the signal with another key must be ignored)", n)
	}
	if id := recs[0].SourceOffset[incsnap.OffCorrelationID]; id != "kafka-1" {
		t.Fatalf("incremental_snapshot_correlation_id = %v, want the signal's id kafka-1", id)
	}
	// Processed signals are committed to the group: a new task, started from
	// an offset after the snapshot, does not redo them.
	exec(t, pg, db, `UPDATE t SET v = 1 WHERE id = 1`)
	upd := pollT(t, task, 1)
	if _, ok := upd[0].SourceOffset[incsnap.OffCollections]; ok {
		t.Fatalf("offset after the snapshot has its state: %v", upd[0].SourceOffset)
	}
	task.Stop()
	task2 := startTask(t, cfg, &memOffsets{m: upd[0].SourceOffset})
	if again := pollUntilQuiet(t, task2, 1500*time.Millisecond); countOp(again, "r") != 0 {
		t.Fatalf("restarted task read %d rows again: the kafka signal was processed twice", countOp(again, "r"))
	}
}

// TestSignalConfigValidation: invalid signal keys are rejected per field.
func TestSignalConfigValidation(t *testing.T) {
	cfg := map[string]string{"connector.class": ClassName, "database.hostname": "h", "database.dbname": "d", "database.user": "u",
		"topic.prefix": "p", "plugin.name": "pgoutput",
		"signal.enabled.channels": "source,kafka", "incremental.snapshot.chunk.size": "0",
		"incremental.snapshot.watermarking.strategy": "nope", "signal.data.collection": "nodot"}
	_, err := parseConfig(cfg)
	ce, ok := err.(*ConfigError)
	if !ok {
		t.Fatalf("parseConfig: %v", err)
	}
	keys := map[string]string{}
	for _, e := range ce.Errors {
		keys[e.Key] = e.Message
	}
	for _, k := range []string{"signal.kafka.bootstrap.servers", "incremental.snapshot.chunk.size", "incremental.snapshot.watermarking.strategy", "signal.data.collection"} {
		if keys[k] == "" {
			t.Errorf("no error for %s (errors: %v)", k, keys)
		}
	}
	cfg = map[string]string{"connector.class": ClassName, "database.hostname": "h", "database.dbname": "d", "database.user": "u",
		"topic.prefix": "p", "plugin.name": "pgoutput", "signal.enabled.channels": "jmx"}
	if _, err := parseConfig(cfg); err == nil || !strings.Contains(err.Error(), "jmx is not supported") {
		t.Fatalf("signal.enabled.channels=jmx: %v", err)
	}
	b, _ := json.Marshal(keys)
	t.Logf("%s", b)
}

// TestIncrementalSnapshotSurrogateKeyInsertDelete: surrogate-key chunks by
// another column (text, stored in the offset as a java.lang.String), and
// incremental.snapshot.watermarking.strategy=insert_delete closes each
// window by deleting its open row, so the signal table keeps only the
// signals sent.
func TestIncrementalSnapshotSurrogateKeyInsertDelete(t *testing.T) {
	const db = "incsnap_surrogate"
	pg, cfg := signalDB(t, db, 500, 40)
	cfg["incremental.snapshot.watermarking.strategy"] = "insert_delete"
	task := startTask(t, cfg, &memOffsets{})
	sendSignal(t, pg, db, "s1", "execute-snapshot", `{"data-collections": ["public.t"], "surrogate-key": "note"}`)
	recs := collect(t, task, 20*time.Second, func(rs []*connect.SourceRecord) bool { return countOp(rs, "r") >= 500 })
	recs = append(recs, pollUntilQuiet(t, task, time.Second)...)
	if n := countOp(recs, "r"); n != 500 {
		t.Fatalf("%d snapshot records, want 500", n)
	}
	prev := ""
	for _, r := range recs {
		note := r.Value.(*connect.Struct).Get("after").(*connect.Struct).Get("note").(string)
		if note <= prev {
			t.Fatalf("rows not in surrogate key order: %q after %q", note, prev)
		}
		prev = note
	}
	k, err := incsnap.DecodeKey(recs[0].SourceOffset[incsnap.OffPrimaryKey].(string))
	if err != nil || len(k) != 1 || k[0] != "row 1" {
		t.Fatalf("incremental_snapshot_primary_key = %v (%v), want [row 1]", k, err)
	}
	c, err := pg.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var left int
	if err := c.QueryRow(context.Background(), `SELECT count(*) FROM debezium_signal`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 1 {
		t.Fatalf("%d rows left in the signal table, want 1 (only the execute-snapshot signal)", left)
	}
}

var (
	uuidJSON    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	instantJSON = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z`)
)

// TestIncrementalSnapshotGolden replays reference/debezium/scenarios/pg/
// incremental_snapshot (an initial snapshot, then an execute-snapshot signal
// inserted into the signal table: chunks of 2 rows, one row excluded by an
// additional condition) and compares every record and its offset with
// Debezium 3.6.1's capture testdata/debezium/pg_incremental_snapshot.jsonl:
// the signal table's own change events (signal, window open/close rows,
// although the table is not in table.include.list), the "r" records of the
// incremental snapshot and the incremental_snapshot_* offset keys. Besides
// the scenario tests' masks, the watermark ids (random UUIDs) and their
// open/close timestamps are masked.
func TestIncrementalSnapshotGolden(t *testing.T) { signalScenarioGolden(t, "incremental_snapshot") }

// TestBlockingSnapshotGolden replays scenarios/pg/blocking_snapshot (a
// blocking execute-snapshot of two tables, one with a SELECT statement as
// additional condition, then a change) against Debezium 3.6.1's capture
// pg_blocking_snapshot.jsonl: the signal's event first, then the snapshot
// records with initial-snapshot markers and "BLOCKING" offsets at the
// signal's position, then streaming.
func TestBlockingSnapshotGolden(t *testing.T) { signalScenarioGolden(t, "blocking_snapshot") }

func signalScenarioGolden(t *testing.T, name string) {
	pg := testenv.PostgresT(t)
	db := "scen"
	if err := pg.CreateDatabase(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropScenarioDB(t, pg, db) })
	setup, err := os.ReadFile(scenarioDir + "pg/" + name + "/setup.sql")
	if err != nil {
		t.Fatal(err)
	}
	exec(t, pg, db, string(setup))
	cfg := map[string]string{}
	readProperties(t, scenarioDir+"pg_scenario.properties.in", cfg)
	readProperties(t, scenarioDir+"pg/"+name+"/connector.properties", cfg)
	for k, v := range baseConfig(pg, db) {
		cfg[k] = v
	}
	cfg["slot.name"], cfg["publication.name"] = "scen_"+name, "scen_"+name
	want := readLines(t, "../../testdata/debezium/pg_"+name+".jsonl")
	wantOff := readLines(t, "../../testdata/debezium/pg_"+name+".jsonl.record-offsets.jsonl")
	nSnap := 0 // the initial snapshot: the leading "r" records
	for _, l := range want {
		if !strings.Contains(l, `"op":"r"`) {
			break
		}
		nSnap++
	}
	task := startTask(t, cfg, &memOffsets{})
	got := pollN(t, task, nSnap)
	exec(t, pg, db, "CHECKPOINT")
	execScript(t, pg, db, scenarioDir+"pg/"+name+"/changes.sql")
	got = append(got, pollN(t, task, len(want)-nSnap)...)
	pollQuiet(t, task, 1500*time.Millisecond)

	conv := converters.NewJSONConverter()
	gc, wc := newClasses(), newClasses()
	mask := func(c *classes, s string) string {
		s = uuidJSON.ReplaceAllString(s, "UUID")
		return c.line(instantJSON.ReplaceAllString(s, "INSTANT"))
	}
	fails := 0
	for i := range want {
		g, w := mask(gc, rawRecordLine(t, conv, got[i])), mask(wc, want[i])
		if g != w {
			fails++
			t.Errorf("record %d differs from Debezium:\n%s", i, firstDiff(g, w))
		}
		var wo struct {
			Value map[string]any `json:"value"`
		}
		d := json.NewDecoder(strings.NewReader(wantOff[i]))
		d.UseNumber()
		if err := d.Decode(&wo); err != nil {
			t.Fatal(err)
		}
		gOff, wOff := gc.offset(roundTrip(got[i].SourceOffset).(map[string]any)), wc.offset(wo.Value)
		if !reflect.DeepEqual(gOff, wOff) {
			fails++
			t.Errorf("record %d offset differs from Debezium:\ngot:  %v\nwant: %v", i, gOff, wOff)
		}
		if fails > 8 {
			t.Fatal("too many differences")
		}
	}
}
