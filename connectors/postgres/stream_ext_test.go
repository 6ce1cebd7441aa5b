package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// Tests of the streaming-side Debezium keys (config_stream.go,
// stream_ext.go) against the real PostgreSQL 15 of internal/testenv. Where
// the expected behaviour comes from: Debezium 3.6's PostgresConnectorConfig
// and the PostgreSQL connector documentation, cited in each key's doc.

// startLogged starts a task whose log lines go to the returned buffer.
func startLogged(t *testing.T, cfg map[string]string, off *memOffsets) (*Task, *logBuf) {
	t.Helper()
	return startTaskLog(t, cfg, off, nil)
}

// streamDB creates database db with the setup statements, dropped (with
// its slots) at the end of the test, and returns a no_data configuration
// whose slot and publication are named after db.
func streamDB(t *testing.T, db string, setup ...string) (*testenv.Postgres, map[string]string) {
	t.Helper()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropScenarioDB(t, pg, db) })
	for _, s := range setup {
		exec(t, pg, db, s)
	}
	cfg := baseConfig(pg, db)
	cfg["slot.name"], cfg["publication.name"] = db, db
	cfg["snapshot.mode"] = "no_data"
	return pg, cfg
}

// queryInt runs a one-value query on db.
func queryInt(t *testing.T, pg *testenv.Postgres, db, q string, args ...any) int64 {
	t.Helper()
	c, err := pg.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var n int64
	if err := c.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// pollErr polls until the task reports an error (or fails after 30 s).
func pollErr(t *testing.T, task *Task) error {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := task.Poll(context.Background())
		if err != nil {
			return err
		}
		if len(b) > 0 {
			t.Fatalf("unexpected records before the error: %s", jsonRecords(b))
		}
	}
	t.Fatal("no error within 30 s")
	return nil
}

// commitAll stores the offset of the last record and commits it, as the
// worker does once the records are in Kafka.
func commitAll(t *testing.T, task *Task, off *memOffsets, recs []*connect.SourceRecord) {
	t.Helper()
	last := recs[len(recs)-1].SourceOffset
	off.mu.Lock()
	off.m = last
	off.mu.Unlock()
	if err := task.Commit(context.Background(), task.partition, last); err != nil {
		t.Fatal(err)
	}
}

func afterField(t *testing.T, r *connect.SourceRecord, field string) any {
	t.Helper()
	v := r.Value.(*connect.Struct)
	a, _ := v.Get("after").(*connect.Struct)
	if a == nil {
		t.Fatalf("record without after: %s", jsonRecords([]*connect.SourceRecord{r}))
	}
	return a.Get(field)
}

func sourceField(r *connect.SourceRecord, field string) any {
	return r.Value.(*connect.Struct).Get("source").(*connect.Struct).Get(field)
}

// TestEventProcessingFailureHandling: changes of a table dropped before the
// task reads them cannot be turned into events (its columns are no longer
// in the catalog). event.processing.failure.handling.mode=fail (default)
// stops the task naming the event's LSN; warn logs it with the LSN and
// skips it; ignore (and skip) skip it; the next change is emitted in both
// (Debezium's EventProcessingFailureHandlingMode).
func TestEventProcessingFailureHandling(t *testing.T) {
	pg, cfg := streamDB(t, "evfail", `CREATE TABLE keep (id integer PRIMARY KEY, v text)`)
	off := &memOffsets{}
	task := startTask(t, cfg, off)
	exec(t, pg, "evfail", `INSERT INTO keep VALUES (1, 'one')`)
	commitAll(t, task, off, pollN(t, task, 1))
	task.Stop()

	exec(t, pg, "evfail", `CREATE TABLE gone (id integer PRIMARY KEY)`)
	exec(t, pg, "evfail", `INSERT INTO gone VALUES (7)`)
	exec(t, pg, "evfail", `DROP TABLE gone`)
	exec(t, pg, "evfail", `INSERT INTO keep VALUES (2, 'two')`)

	fail := startTask(t, cfg, off)
	err := pollErr(t, fail)
	for _, want := range []string{"cannot process the event at LSN", "event.processing.failure.handling.mode=fail", "public.gone not found"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("fail: error %q does not contain %q", err, want)
		}
	}
	fail.Stop()

	for _, mode := range []string{"warn", "ignore", "skip"} {
		cfg["event.processing.failure.handling.mode"] = mode
		task, logs := startLogged(t, cfg, off)
		recs := pollN(t, task, 1)
		if id := afterField(t, recs[0], "id"); id != int32(2) {
			t.Fatalf("%s: record after the skipped event has id %v, want 2", mode, id)
		}
		warned := strings.Contains(logs.String(), "level=WARN msg=\"skipping an event that cannot be processed")
		if warned != (mode == "warn") || !strings.Contains(logs.String(), "lsn=") || !strings.Contains(logs.String(), "public.gone not found") {
			t.Fatalf("%s: log (warning expected: %v):\n%s", mode, mode == "warn", logs)
		}
		task.Stop()
	}
}

// TestXminFetchInterval: with xmin.fetch.interval.ms the streamed events
// carry the slot's catalog_xmin in source.xmin and in their offset (key
// xmin), as Debezium's PostgresTaskContext.getSlotXmin /
// PostgresOffsetContext; the default 0 leaves source.xmin null and the
// offset without xmin (the goldens of testdata/debezium check the default
// byte for byte).
func TestXminFetchInterval(t *testing.T) {
	pg, cfg := streamDB(t, "xminf", `CREATE TABLE t (id integer PRIMARY KEY)`)
	task := startTask(t, cfg, &memOffsets{})
	exec(t, pg, "xminf", `INSERT INTO t VALUES (1)`)
	r := pollN(t, task, 1)[0]
	if x := sourceField(r, "xmin"); x != nil {
		t.Fatalf("default: source.xmin %v, want null", x)
	}
	if _, ok := r.SourceOffset["xmin"]; ok {
		t.Fatalf("default: offset %v has xmin", r.SourceOffset)
	}
	task.Stop()

	cfg["xmin.fetch.interval.ms"] = "100"
	cfg["slot.name"] = "xminf_2"
	task = startTask(t, cfg, &memOffsets{})
	exec(t, pg, "xminf", `INSERT INTO t VALUES (2)`)
	r = pollN(t, task, 1)[0]
	want := queryInt(t, pg, "postgres", `SELECT catalog_xmin::text::bigint FROM pg_replication_slots WHERE slot_name = 'xminf_2'`)
	if x := sourceField(r, "xmin"); x != want {
		t.Fatalf("source.xmin %v (%T), want the slot's catalog_xmin %d", x, x, want)
	}
	if x := r.SourceOffset["xmin"]; x != want {
		t.Fatalf("offset %v: xmin %v, want %d", r.SourceOffset, x, want)
	}
}

// TestLSNFlushModeManual: with lsn.flush.mode=manual (and the deprecated
// flush.lsn.source=false) the task never confirms positions to the slot:
// confirmed_flush_lsn stays put while records flow and their offsets are
// committed; with the default (connector) it moves past them.
func TestLSNFlushModeManual(t *testing.T) {
	pg, cfg := streamDB(t, "flushman", `CREATE TABLE t (id integer PRIMARY KEY)`)
	confirmed := func(slot string) int64 {
		return queryInt(t, pg, "postgres", `SELECT (confirmed_flush_lsn - '0/0')::int8 FROM pg_replication_slots WHERE slot_name = $1`, slot)
	}
	for i, c := range []struct{ key, value string }{{"lsn.flush.mode", "manual"}, {"flush.lsn.source", "false"}} {
		slot := fmt.Sprintf("flushman_%d", i)
		cfg := withKey(withKey(cfg, c.key, c.value), "slot.name", slot)
		task := startTask(t, cfg, &memOffsets{})
		start := confirmed(slot)
		for i := 0; i < 3; i++ {
			exec(t, pg, "flushman", `INSERT INTO t SELECT coalesce(max(id), 0) + 1 FROM t`)
			commitAll(t, task, &memOffsets{}, pollN(t, task, 1))
		}
		time.Sleep(time.Second) // five status update intervals
		if got := confirmed(slot); got != start {
			t.Fatalf("%s=%s: confirmed_flush_lsn moved from %d to %d", c.key, c.value, start, got)
		}
		task.Stop()
	}

	task := startTask(t, withKey(cfg, "slot.name", "flushman_c"), &memOffsets{})
	start := confirmed("flushman_c")
	exec(t, pg, "flushman", `INSERT INTO t SELECT max(id) + 1 FROM t`)
	exec(t, pg, "flushman", `INSERT INTO t SELECT max(id) + 1 FROM t`)
	commitAll(t, task, &memOffsets{}, pollN(t, task, 2))
	deadline := time.Now().Add(10 * time.Second)
	for confirmed("flushman_c") <= start {
		if time.Now().After(deadline) {
			t.Fatal("lsn.flush.mode=connector (default): confirmed_flush_lsn did not move")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// withKey returns a copy of m with k set to v.
func withKey(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for mk, mv := range m {
		if mk != k {
			out[mk] = mv
		}
	}
	return out
}

// TestLSNFlushModeConnectorAndDriver: the captured database is idle while
// another database writes WAL; no record is emitted (no heartbeats). With
// lsn.flush.mode=connector_and_driver the task confirms the keepalives'
// WAL position, so confirmed_flush_lsn follows the server; with the default
// (connector) it stays put.
func TestLSNFlushModeConnectorAndDriver(t *testing.T) {
	pg, cfg := streamDB(t, "flushdrv", `CREATE TABLE quiet (id integer PRIMARY KEY)`)
	if err := pg.CreateDatabase(context.Background(), "flushbusy"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec(t, pg, "postgres", `DROP DATABASE flushbusy WITH (FORCE)`) })
	exec(t, pg, "flushbusy", `CREATE TABLE churn (id integer, pad text)`)
	written := func() int64 { return queryInt(t, pg, "postgres", `SELECT (pg_current_wal_lsn() - '0/0')::int8`) }

	for i, mode := range []string{"connector", "connector_and_driver"} {
		slot := fmt.Sprintf("flushdrv_%d", i)
		confirmed := func() int64 {
			return queryInt(t, pg, "postgres", `SELECT (confirmed_flush_lsn - '0/0')::int8 FROM pg_replication_slots WHERE slot_name = $1`, slot)
		}
		task := startTask(t, withKey(withKey(cfg, "lsn.flush.mode", mode), "slot.name", slot), &memOffsets{})
		start := confirmed()
		exec(t, pg, "flushbusy", `INSERT INTO churn SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g`)
		target := written()
		deadline := time.Now().Add(5 * time.Second)
		if mode == "connector_and_driver" {
			deadline = time.Now().Add(30 * time.Second)
		}
		for confirmed() < target && time.Now().Before(deadline) {
			if b, err := task.Poll(context.Background()); err != nil || len(b) > 0 {
				t.Fatalf("%s: Poll %d records, %v", mode, len(b), err)
			}
		}
		got := confirmed()
		switch {
		case mode == "connector" && got != start:
			t.Fatalf("connector: confirmed_flush_lsn moved from %d to %d without any commit", start, got)
		case mode == "connector_and_driver" && got < target:
			t.Fatalf("connector_and_driver: confirmed_flush_lsn %d, want at least %d (WAL written by the other database)", got, target)
		}
		task.Stop()
	}

	// The slot is then ahead of the last stored offset, with nothing lost:
	// snapshot.mode=when_needed must stream on from it, not snapshot again.
	cfg = withKey(withKey(withKey(cfg, "lsn.flush.mode", "connector_and_driver"), "slot.name", "flushdrv_w"), "snapshot.mode", "when_needed")
	off := &memOffsets{}
	task := startTask(t, cfg, off)
	exec(t, pg, "flushdrv", `INSERT INTO quiet VALUES (1)`)
	commitAll(t, task, off, pollN(t, task, 1))
	exec(t, pg, "flushbusy", `INSERT INTO churn SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g`)
	target := written()
	deadline := time.Now().Add(30 * time.Second)
	for queryInt(t, pg, "postgres", `SELECT (confirmed_flush_lsn - '0/0')::int8 FROM pg_replication_slots WHERE slot_name = 'flushdrv_w'`) < target {
		if time.Now().After(deadline) {
			t.Fatal("when_needed: confirmed_flush_lsn did not reach the server's WAL position")
		}
		if b, err := task.Poll(context.Background()); err != nil || len(b) > 0 {
			t.Fatalf("when_needed: Poll %d records, %v", len(b), err)
		}
	}
	task.Stop()
	task = startTask(t, cfg, off)
	pollQuiet(t, task, 2*time.Second)
	exec(t, pg, "flushdrv", `INSERT INTO quiet VALUES (2)`)
	if r := pollN(t, task, 1)[0]; r.Value.(*connect.Struct).Get("op") != "c" {
		t.Fatalf("restart: %s", jsonRecords([]*connect.SourceRecord{r}))
	}
}

// TestSlotStreamParams: slot.stream.params entries reach pgoutput at
// START_REPLICATION. binary=true (PostgreSQL 15's pgoutput accepts it)
// makes the server send binary tuple data, which connectd does not decode:
// the first change then fails the task at its LSN; an option pgoutput does
// not know fails the task with the server's error and the options sent.
func TestSlotStreamParams(t *testing.T) {
	pg, cfg := streamDB(t, "streamprm", `CREATE TABLE t (id integer PRIMARY KEY)`)
	cfg["slot.stream.params"] = "binary=true;nonsense"
	task, logs := startLogged(t, cfg, &memOffsets{})
	exec(t, pg, "streamprm", `INSERT INTO t VALUES (1)`)
	err := pollErr(t, task)
	if !strings.Contains(err.Error(), "binary tuple data is not supported") || !strings.Contains(err.Error(), "cannot process the event at LSN") {
		t.Fatalf("binary=true: error %v", err)
	}
	if !strings.Contains(logs.String(), `slot.stream.params: entry is not name=value; it is ignored" entry=nonsense`) {
		t.Fatalf("no warning about the entry without '=':\n%s", logs)
	}
	task.Stop()

	cfg["slot.stream.params"] = "bogus_option=1"
	task = startTask(t, cfg, &memOffsets{})
	err = pollErr(t, task)
	for _, want := range []string{`"bogus_option" '1'`, "slot.stream.params", "bogus_option", "SQLSTATE"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("bad option: error %q does not contain %q", err, want)
		}
	}
}

// TestReplicaIdentityAutoset: replica.identity.autoset.values sets the
// REPLICA IDENTITY of the matching captured tables at start (FULL, INDEX
// <name>); a table two entries match is left as it is with an error in the
// log; an UPDATE of the FULL table then carries every old column in
// before (Debezium's ReplicaIdentityMapper and initReplicaIdentity).
func TestReplicaIdentityAutoset(t *testing.T) {
	pg, cfg := streamDB(t, "riauto",
		`CREATE TABLE a (id integer PRIMARY KEY, v text)`,
		`CREATE TABLE b (id integer PRIMARY KEY, code integer NOT NULL, v text)`,
		`CREATE UNIQUE INDEX b_uk ON b (code)`,
		`CREATE TABLE c (id integer PRIMARY KEY, v text)`,
		`CREATE TABLE other (id integer PRIMARY KEY)`)
	cfg["table.include.list"] = "public.a,public.b,public.c"
	cfg["replica.identity.autoset.values"] = "public.a:FULL, public.b:INDEX B_UK,public\\.c:NOTHING,PUBLIC.C:FULL,public.other:FULL"
	task, logs := startLogged(t, cfg, &memOffsets{})
	ident := func(table string) string {
		c, err := pg.Connect(context.Background(), "riauto")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(context.Background())
		var s string
		if err := c.QueryRow(context.Background(), `SELECT c.relreplident::text || coalesce(':' || (SELECT ic.relname FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = c.oid AND i.indisreplident), '')
FROM pg_class c WHERE c.oid = $1::regclass`, table).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for table, want := range map[string]string{"a": "f", "b": "i:b_uk", "c": "d", "other": "d"} {
		if got := ident(table); got != want {
			t.Errorf("table %s: relreplident %s, want %s", table, got, want)
		}
	}
	if !strings.Contains(logs.String(), "more than one entry matches table public.c") {
		t.Errorf("no error for the table two entries match:\n%s", logs)
	}
	exec(t, pg, "riauto", `INSERT INTO a VALUES (1, 'old')`)
	exec(t, pg, "riauto", `UPDATE a SET id = id WHERE id = 1`)
	recs := pollN(t, task, 2)
	before := recs[1].Value.(*connect.Struct).Get("before").(*connect.Struct)
	if before.Get("v") != "old" {
		t.Fatalf("REPLICA IDENTITY FULL: before %v, want v=old", before.Values)
	}
	task.Stop()

	// Started again with the same values, nothing is altered.
	_, logs = startLogged(t, cfg, &memOffsets{})
	if !strings.Contains(logs.String(), `msg="replica identity already set" table=public.a replica_identity=FULL`) ||
		!strings.Contains(logs.String(), `table=public.b replica_identity="USING INDEX b_uk"`) {
		t.Fatalf("second start:\n%s", logs)
	}
}

// TestSlotFailoverBeforePostgres17: slot.failover=true on PostgreSQL 15
// (failover slots need 17+) creates an ordinary slot and logs a warning,
// as Debezium's useFailOverSlot creates a non-failover slot there.
func TestSlotFailoverBeforePostgres17(t *testing.T) {
	pg, cfg := streamDB(t, "failover15", `CREATE TABLE t (id integer PRIMARY KEY)`)
	cfg["slot.failover"] = "true"
	task, logs := startLogged(t, cfg, &memOffsets{})
	if !strings.Contains(logs.String(), "level=WARN msg=\"slot.failover=true, but failover slots need PostgreSQL 17 or later") {
		t.Fatalf("no warning:\n%s", logs)
	}
	if n := queryInt(t, pg, "postgres", `SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'failover15'`); n != 1 {
		t.Fatalf("%d slots failover15", n)
	}
	exec(t, pg, "failover15", `INSERT INTO t VALUES (1)`)
	pollN(t, task, 1)
}

// TestExtendedHeaders: change events (snapshot and streaming) carry
// Debezium's context headers by default (extended.headers.enabled=true;
// DebeziumHeaderProducer: connectorLogicalName, taskId, connectorName, then
// runId, a UUIDv7 constant over a run, as records of Debezium 3.5/3.6 show);
// heartbeats do not; false leaves change events without headers. The
// captures of testdata/debezium kept no headers, so the names and values
// come from Debezium's DebeziumHeaders and such records.
func TestExtendedHeaders(t *testing.T) {
	pg, cfg := streamDB(t, "exthdr", `CREATE TABLE t (id integer PRIMARY KEY)`, `INSERT INTO t VALUES (1)`)
	cfg["snapshot.mode"] = "initial"
	cfg["heartbeat.interval.ms"] = "100"
	task := startTask(t, cfg, &memOffsets{})
	exec(t, pg, "exthdr", `INSERT INTO t VALUES (2)`)
	exec(t, pg, "exthdr", `DELETE FROM t WHERE id = 1`)
	want := "__debezium.context.connectorLogicalName=dbserver1 __debezium.context.taskId=0 __debezium.context.connectorName=postgresql __debezium.context.runId="
	runID := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	var run string
	changes := 0
	deadline := time.Now().Add(30 * time.Second)
	for changes < 4 && time.Now().Before(deadline) { // snapshot read, insert, delete, tombstone
		b, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b {
			var hs []string
			for _, h := range r.Headers {
				hs = append(hs, h.Key+"="+string(h.Value))
			}
			got := strings.Join(hs, " ")
			if strings.HasPrefix(r.Topic, "__debezium-heartbeat") {
				if got != "" {
					t.Fatalf("heartbeat with headers %s", got)
				}
				continue
			}
			changes++
			id := strings.TrimPrefix(got, want)
			if !strings.HasPrefix(got, want) || !runID.MatchString(id) || run != "" && id != run {
				t.Fatalf("record %d on %s: headers %q, want %q and the run's UUIDv7 (%s)", changes, r.Topic, got, want, run)
			}
			run = id
		}
	}
	if changes < 4 {
		t.Fatalf("%d change records", changes)
	}
	task.Stop()

	cfg["extended.headers.enabled"] = "false"
	cfg["snapshot.mode"] = "no_data"
	cfg["slot.name"] = "exthdr_2"
	delete(cfg, "heartbeat.interval.ms")
	task = startTask(t, cfg, &memOffsets{})
	exec(t, pg, "exthdr", `INSERT INTO t VALUES (3)`)
	if r := pollN(t, task, 1)[0]; len(r.Headers) != 0 {
		t.Fatalf("extended.headers.enabled=false: headers %v", r.Headers)
	}
	// Another run has another run id.
	if h := contextHeaders("x", time.Now()); string(h[3].Value) == run || !runID.Match(h[3].Value) {
		t.Fatalf("run ids %s and %s", h[3].Value, run)
	}
}

// TestIncludeSchemaComments: with include.schema.comments=true a column's
// COMMENT is the doc of its field schema in the key and value schemas of
// snapshot and streamed events (Debezium's TableSchemaBuilder.addField);
// by default there is no doc.
func TestIncludeSchemaComments(t *testing.T) {
	pg, cfg := streamDB(t, "schcomm", `CREATE TABLE t (id integer PRIMARY KEY, v text, w text)`,
		`COMMENT ON COLUMN t.id IS 'the key'`, `COMMENT ON COLUMN t.v IS 'a value'`, `COMMENT ON TABLE t IS 'a table'`,
		`INSERT INTO t VALUES (1, 'x', 'y')`)
	docs := func(r *connect.SourceRecord) string {
		after := r.ValueSchema.Field("after").Schema
		return r.KeySchema.Field("id").Schema.Doc + "|" + after.Field("id").Schema.Doc + "|" + after.Field("v").Schema.Doc + "|" + after.Field("w").Schema.Doc
	}
	task := startTask(t, cfg, &memOffsets{})
	exec(t, pg, "schcomm", `INSERT INTO t VALUES (2, 'x', 'y')`)
	if got := docs(pollN(t, task, 1)[0]); got != "|||" {
		t.Fatalf("default: docs %q, want none", got)
	}
	task.Stop()

	cfg["include.schema.comments"] = "true"
	cfg["snapshot.mode"] = "always"
	cfg["slot.name"] = "schcomm_2"
	task = startTask(t, cfg, &memOffsets{})
	recs := pollN(t, task, 2)
	exec(t, pg, "schcomm", `INSERT INTO t VALUES (3, 'x', 'y')`)
	recs = append(recs, pollN(t, task, 1)...)
	for i, r := range recs {
		if got := docs(r); got != "the key|the key|a value|" {
			t.Fatalf("record %d: docs %q", i, got)
		}
	}
}

// TestStreamKeysConfig: validation and parsing of the streaming keys, as
// Debezium's PostgresConnectorConfig: replica.identity.autoset.values
// (validateReplicaAutoSetField's messages), lsn.flush.mode resolved with
// the deprecated flush.lsn.source (resolveLsnFlushMode), skip = ignore,
// slot.stream.params split on ';' and '='.
func TestStreamKeysConfig(t *testing.T) {
	cfg := validConfig()
	cfg["replica.identity.autoset.values"] = "public.a:FULL,public.b:SOMETHING"
	if msg := errorsOn(cfg, "replica.identity.autoset.values"); !strings.Contains(msg, "public.b:SOMETHING has an invalid format (expecting '(?i)^\\s*(?P<tablepredicate>[^\\s:]+):(?P<replicaidentity>DEFAULT|(INDEX) (?P<indexname>.\\w*)|FULL|NOTHING)\\s*$')") ||
		strings.Contains(msg, "public.a:FULL has") {
		t.Fatalf("invalid entry: %q", msg)
	}
	cfg["replica.identity.autoset.values"] = ""
	if msg := errorsOn(cfg, "replica.identity.autoset.values"); !strings.Contains(msg, "Must not be empty") {
		t.Fatalf("empty: %q", msg)
	}
	cfg["replica.identity.autoset.values"] = "public.(a:FULL"
	if msg := errorsOn(cfg, "replica.identity.autoset.values"); !strings.Contains(msg, "invalid regular expression") {
		t.Fatalf("bad regex: %q", msg)
	}
	for _, c := range []struct {
		key, value, msg string
	}{
		{"event.processing.failure.handling.mode", "explode", "String must be one of: fail, warn, skip, ignore"},
		{"lsn.flush.mode", "sometimes", "must be one of connector, manual, connector_and_driver"},
		{"xmin.fetch.interval.ms", "-1", "must be a non-negative integer"},
	} {
		cfg := validConfig()
		cfg[c.key] = c.value
		if msg := errorsOn(cfg, c.key); !strings.Contains(msg, c.msg) {
			t.Errorf("%s=%s: %q, want %q", c.key, c.value, msg, c.msg)
		}
	}

	parse := func(kv ...string) streamSettings {
		t.Helper()
		cfg := validConfig()
		for i := 0; i < len(kv); i += 2 {
			cfg[kv[i]] = kv[i+1]
		}
		c, err := parseConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c.ext
	}
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{nil, flushConnector},
		{[]string{"flush.lsn.source", "false"}, flushManual},
		{[]string{"flush.lsn.source", "true"}, flushConnector},
		{[]string{"lsn.flush.mode", "CONNECTOR_AND_DRIVER", "flush.lsn.source", "false"}, flushConnectorAndDriver},
	} {
		if got := parse(c.kv...).flushMode; got != c.want {
			t.Errorf("%v: lsn flush mode %s, want %s", c.kv, got, c.want)
		}
	}
	if m := parse("event.processing.failure.handling.mode", "SKIP").failureMode; m != failureIgnore {
		t.Errorf("skip: mode %s, want ignore", m)
	}
	s := parse("slot.stream.params", " origin = none;;binary=true;oops ", "replica.identity.autoset.values", "public.x:INDEX X_Idx")
	if got := fmt.Sprint(s.streamParams, s.badParams); got != "[[origin none] [binary true]] [oops]" {
		t.Errorf("stream params %s", got)
	}
	if r := s.replicaAutoset; len(r) != 1 || r[0].clause() != "USING INDEX x_idx" || !r[0].table.MatchString("PUBLIC.X") || r[0].table.MatchString("public.xy") {
		t.Errorf("replica rules %+v", r)
	}
}
