package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

const (
	goldenFile   = "../../testdata/debezium/pg_inventory_snapshot_stream.jsonl"
	inventorySQL = "../../reference/debezium/scenarios/inventory.sql"
	changesSQL   = "../../reference/debezium/scenarios/changes.sql"
)

// maskVolatile removes what differs between runs: times, LSNs, txIds.
func maskVolatile(rec map[string]any) map[string]any {
	v, _ := rec["value"].(map[string]any)
	if v == nil {
		return rec
	}
	p := v["payload"].(map[string]any)
	for _, k := range []string{"ts_ms", "ts_us", "ts_ns"} {
		p[k] = "*"
	}
	s := p["source"].(map[string]any)
	for _, k := range []string{"ts_ms", "ts_us", "ts_ns", "txId", "lsn", "sequence"} {
		if s[k] != nil {
			s[k] = "*"
		}
	}
	return rec
}

func goldenJSON(g golden) map[string]any {
	m := map[string]any{"topic": g.Topic, "key": nil, "value": nil}
	if g.Key != nil {
		m["key"] = map[string]any{"schema": g.Key.Schema, "payload": g.Key.Payload}
	}
	if g.Value != nil {
		m["value"] = map[string]any{"schema": g.Value.Schema, "payload": g.Value.Payload}
	}
	return roundTrip(m).(map[string]any)
}

func compareGolden(t *testing.T, got []*connect.SourceRecord, want []golden) {
	t.Helper()
	for i := range want {
		g := maskVolatile(recordJSON(got[i]))
		w := maskVolatile(goldenJSON(want[i]))
		if !reflect.DeepEqual(g, w) {
			t.Errorf("record %d differs from Debezium: %s", i, strings.Join(diff("", g, w), "; "))
		}
	}
}

func diff(path string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		var out []string
		for k := range am {
			out = append(out, diff(path+"."+k, am[k], bm[k])...)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing, want %v", path, k, bm[k]))
			}
		}
		return out
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		var out []string
		for i := range as {
			out = append(out, diff(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		ab, _ := json.Marshal(a)
		bb, _ := json.Marshal(b)
		return []string{fmt.Sprintf("%s: got %s want %s", path, ab, bb)}
	}
	return nil
}

func sourceOf(r *connect.SourceRecord) *connect.Struct {
	return r.Value.(*connect.Struct).Get("source").(*connect.Struct)
}

func num(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case json.Number:
		n, _ := x.Int64()
		return n
	case float64:
		return int64(x)
	}
	panic(fmt.Sprintf("%T", v))
}

// TestInventorySnapshotThenStream replays the captured Debezium 3.6.1
// scenario and compares every record (schemas and payloads) with it.
func TestInventorySnapshotThenStream(t *testing.T) {
	pg := testenv.PostgresT(t)
	ctx := context.Background()
	if err := pg.CreateDatabase(ctx, "inventory"); err != nil {
		t.Fatal(err)
	}
	execScript(t, pg, "inventory", inventorySQL)
	want := readGolden(t, goldenFile)
	if len(want) != 23 {
		t.Fatalf("golden has %d records", len(want))
	}
	off := &memOffsets{}
	task := startTask(t, baseConfig(pg, "inventory"), off)

	snap := pollN(t, task, 11)
	compareGolden(t, snap, want[:11])
	// snapshot offsets as Debezium writes them
	var slotLSN pglogrepl.LSN
	c, _ := pg.Connect(ctx, "inventory")
	defer c.Close(ctx)
	if err := c.QueryRow(ctx, `SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'debezium'`).Scan(&slotLSN); err != nil {
		t.Fatal(err)
	}
	for i, r := range snap {
		o := r.SourceOffset
		last := i == len(snap)-1
		if o["snapshot"] != "INITIAL" || o["last_snapshot_record"] != last || o["snapshot_completed"] != last ||
			num(o["lsn"]) != int64(slotLSN) || o["txId"] == nil || o["ts_usec"] == nil || len(o) != 6 {
			t.Errorf("snapshot offset %d = %v (slot at %d)", i, o, int64(slotLSN))
		}
		if got := sourceOf(r).Get("sequence"); got != fmt.Sprintf(`[null,"%d"]`, int64(slotLSN)) {
			t.Errorf("snapshot sequence %v", got)
		}
	}

	execScript(t, pg, "inventory", changesSQL)
	stream := pollN(t, task, 12)
	compareGolden(t, stream, want[11:])
	var lastCommit any
	for i, r := range stream {
		o := r.SourceOffset
		if o["lsn"] == nil || o["lsn_proc"] != o["lsn"] || o["txId"] == nil || o["ts_usec"] == nil || o["messageType"] == nil || o["snapshot"] != nil {
			t.Errorf("stream offset %d = %v", i, o)
		}
		if r.Value == nil {
			continue
		}
		src := sourceOf(r)
		lc := "null"
		if o["lsn_commit"] != nil {
			lc = fmt.Sprintf(`"%d"`, o["lsn_commit"])
		}
		if seq := fmt.Sprintf(`[%s,"%d"]`, lc, o["lsn"]); src.Get("sequence") != seq {
			t.Errorf("record %d sequence %v, want %s", i, src.Get("sequence"), seq)
		}
		if i == 0 && o["lsn_commit"] != nil {
			t.Errorf("first streamed record has lsn_commit %v; Debezium has none", o["lsn_commit"])
		}
		lastCommit = o["lsn_commit"]
	}
	_ = lastCommit

	// type parity: the same row read by snapshot and by streaming
	exec(t, pg, "inventory", `INSERT INTO inventory.all_types SELECT 101, c_smallint, c_integer, c_bigint, c_boolean, c_real, c_double,
	  c_numeric, c_text, c_varchar, c_char, c_date, c_timestamp, c_timestamptz, c_uuid, c_json, c_jsonb, c_bytea, c_notnull_int
	  FROM inventory.all_types WHERE id = 1`)
	streamed := pollN(t, task, 1)[0]
	a := recordJSON(snap[0])["value"].(map[string]any)["payload"].(map[string]any)["after"].(map[string]any)
	b := recordJSON(streamed)["value"].(map[string]any)["payload"].(map[string]any)["after"].(map[string]any)
	a["id"], b["id"] = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("snapshot and streaming values differ:\nsnapshot: %v\nstream:   %v", a, b)
	}
}

func setupShop(t *testing.T, pg *testenv.Postgres) {
	t.Helper()
	if err := pg.CreateDatabase(context.Background(), "shop"); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, "shop", `CREATE TABLE public.item (id int PRIMARY KEY, name text);
		CREATE TABLE public.log (msg text);
		INSERT INTO public.item VALUES (1, 'a');`)
}

func slotFlush(t *testing.T, pg *testenv.Postgres, db string) int64 {
	t.Helper()
	c, err := pg.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var lsn pglogrepl.LSN
	if err := c.QueryRow(context.Background(), `SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'debezium'`).Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	return int64(lsn)
}

func ids(rs []*connect.SourceRecord) string {
	var out []string
	for _, r := range rs {
		if r.Value == nil {
			out = append(out, "tomb")
			continue
		}
		v := r.Value.(*connect.Struct)
		row := v.Get("after")
		if row == nil {
			row = v.Get("before")
		}
		out = append(out, fmt.Sprintf("%s:%v", v.Get("op"), row.(*connect.Struct).Values[0]))
	}
	return strings.Join(out, " ")
}

// TestCommitConfirmsOnlyCommittedAndRestartResumes checks invariant 1 and
// the restart behaviour.
func TestCommitConfirmsOnlyCommittedAndRestartResumes(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	cfg := baseConfig(pg, "shop")
	cfg["table.include.list"] = `public\.item`
	off := &memOffsets{}
	task := startTask(t, cfg, off)
	snap := pollN(t, task, 1)
	if got := sourceOf(snap[0]).Get("snapshot"); got != "last" {
		t.Fatalf("single snapshot record marker %v, want last", got)
	}
	start := slotFlush(t, pg, "shop")

	exec(t, pg, "shop", `INSERT INTO item VALUES (2, 'b')`)                                                  // tx A
	exec(t, pg, "shop", `BEGIN; INSERT INTO item VALUES (3, 'c'); INSERT INTO item VALUES (4, 'd'); COMMIT`) // tx B
	exec(t, pg, "shop", `INSERT INTO log VALUES ('not captured'); DELETE FROM item WHERE id = 1`)            // tx C
	recs := pollN(t, task, 5)
	if got := ids(recs); got != "c:2 c:3 c:4 d:1 tomb" {
		t.Fatalf("stream = %s", got)
	}
	// received but not committed: nothing confirmed beyond the start
	time.Sleep(600 * time.Millisecond)
	if got := slotFlush(t, pg, "shop"); got != start {
		t.Fatalf("confirmed_flush_lsn moved to %d without a commit (start %d)", got, start)
	}
	// commit the first row of tx B (mid-transaction)
	committed := recs[1].SourceOffset
	if err := task.Commit(context.Background(), task.partition, committed); err != nil {
		t.Fatal(err)
	}
	want, _ := parseOffset(committed)
	wantLSN, _ := want.confirmLSN()
	deadline := time.Now().Add(10 * time.Second)
	for slotFlush(t, pg, "shop") != wantLSN {
		if time.Now().After(deadline) {
			t.Fatalf("confirmed_flush_lsn = %d, want %d (offset %v)", slotFlush(t, pg, "shop"), wantLSN, committed)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if wantLSN > num(committed["lsn"]) {
		t.Fatalf("confirmed %d beyond the committed offset lsn %v", wantLSN, committed["lsn"])
	}
	time.Sleep(600 * time.Millisecond) // periodic status updates must not move it further
	if got := slotFlush(t, pg, "shop"); got != wantLSN {
		t.Fatalf("confirmed_flush_lsn moved to %d after periodic updates, want %d", got, wantLSN)
	}
	task.Stop()

	// restart from the committed offset: tx A is not re-emitted, the rest of
	// tx B and everything later is.
	off.mu.Lock()
	off.m = committed
	off.mu.Unlock()
	exec(t, pg, "shop", `UPDATE item SET name = 'e' WHERE id = 2`) // tx D
	task2 := startTask(t, cfg, off)
	recs2 := pollN(t, task2, 4)
	if got := ids(recs2); got != "c:4 d:1 tomb u:2" {
		t.Fatalf("after restart = %s", got)
	}
	pollQuiet(t, task2, 500*time.Millisecond)

	// restart from the end of a fully delivered transaction (tx D's offset)
	if err := task2.Commit(context.Background(), task2.partition, recs2[3].SourceOffset); err != nil {
		t.Fatal(err)
	}
	task2.Stop()
	off.mu.Lock()
	off.m = recs2[3].SourceOffset
	off.mu.Unlock()
	exec(t, pg, "shop", `INSERT INTO item VALUES (5, 'f')`)
	task3 := startTask(t, cfg, off)
	if got := ids(pollN(t, task3, 1)); got != "c:5" {
		t.Fatalf("after second restart = %s", got)
	}
	pollQuiet(t, task3, 500*time.Millisecond)
}

// TestRelationChangeRebuildsSchema alters a table while streaming.
func TestRelationChangeRebuildsSchema(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	cfg := baseConfig(pg, "shop")
	cfg["snapshot.mode"] = "no_data"
	task := startTask(t, cfg, &memOffsets{})
	exec(t, pg, "shop", `INSERT INTO item VALUES (2, 'b')`)
	exec(t, pg, "shop", `ALTER TABLE item ADD COLUMN qty numeric NOT NULL DEFAULT 1.5`)
	exec(t, pg, "shop", `INSERT INTO item VALUES (3, 'c', 2.25)`)
	exec(t, pg, "shop", `INSERT INTO log VALUES ('x')`)
	recs := pollN(t, task, 3)
	v0 := recs[0].Value.(*connect.Struct).Get("after").(*connect.Struct)
	v1 := recs[1].Value.(*connect.Struct).Get("after").(*connect.Struct)
	if len(v0.Values) != 2 || len(v1.Values) != 3 {
		t.Fatalf("columns before/after ALTER: %d, %d", len(v0.Values), len(v1.Values))
	}
	q := v1.Get("qty").(*connect.Struct)
	if q.Schema.Name != nameVarScale || q.Get("scale") != int32(2) || string(q.Get("value").([]byte)) != string([]byte{0, 225}) {
		t.Fatalf("qty = %v %v", q.Schema.Name, q.Values)
	}
	if recs[2].Key != nil || recs[2].KeySchema != nil || recs[2].Topic != "dbserver1.public.log" {
		t.Fatalf("table without PK: key %v schema %v topic %s", recs[2].Key, recs[2].KeySchema, recs[2].Topic)
	}
}

func TestInitialOnlyStopsAfterSnapshot(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	cfg := baseConfig(pg, "shop")
	cfg["snapshot.mode"] = "initial_only"
	task := startTask(t, cfg, &memOffsets{})
	if got := ids(pollN(t, task, 1)); got != "r:1" {
		t.Fatalf("snapshot = %s", got)
	}
	exec(t, pg, "shop", `INSERT INTO item VALUES (9, 'z')`)
	pollQuiet(t, task, 500*time.Millisecond)
}

func TestValidationNamesKey(t *testing.T) {
	base := map[string]string{"database.hostname": "h", "database.user": "u", "database.dbname": "d", "topic.prefix": "p", "plugin.name": "pgoutput"}
	if errs := New().Validate(base); len(errs) != 0 {
		t.Fatalf("valid config rejected: %v", errs)
	}
	cases := map[string]string{
		"plugin.name":                     "decoderbufs",
		"database.port":                   "abc",
		"snapshot.mode":                   "custom",
		"publication.autocreate.mode":     "sometimes",
		"slot.name":                       "Bad-Slot",
		"max.batch.size":                  "0",
		"table.include.list":              "(",
		"tombstones.on.delete":            "maybe",
		"decimal.handling.mode":           "exact",
		"time.precision.mode":             "millis",
		"binary.handling.mode":            "base32",
		"interval.handling.mode":          "iso",
		"hstore.handling.mode":            "xml",
		"money.fraction.digits":           "-1",
		"include.unknown.datatypes":       "maybe",
		"publish.via.partition.root":      "maybe",
		"pgoutput.streaming":              "maybe",
		"pgoutput.streaming.memory.bytes": "0",
		// keys of issue 3 (Debezium: Field::isPositiveInteger / isListOfRegex / BOOLEAN)
		"snapshot.fetch.size":                             "0",
		"snapshot.max.threads":                            "-2",
		"snapshot.include.collection.list":                "[",
		"snapshot.select.statement.overrides":             "nodot",
		"slot.drop.on.stop":                               "maybe",
		"snapshot.mode.configuration.based.snapshot.data": "maybe",
		"snapshot.mode.configuration.based.start.stream":  "sometimes",
	}
	for k, v := range cases {
		cfg := map[string]string{}
		for a, b := range base {
			cfg[a] = b
		}
		cfg[k] = v
		errs := New().Validate(cfg)
		if len(errs) != 1 || errs[0].Key != k || !strings.Contains(errs[0].Message, k) {
			t.Errorf("%s=%s: %v", k, v, errs)
		}
	}
	delete(base, "topic.prefix")
	if errs := New().Validate(base); len(errs) != 1 || errs[0].Key != "topic.prefix" {
		t.Errorf("missing topic.prefix: %v", errs)
	}
	delete(base, "plugin.name")
	base["topic.prefix"] = "p"
	if errs := New().Validate(base); len(errs) != 1 || errs[0].Key != "plugin.name" || !strings.Contains(errs[0].Message, "not supported") {
		t.Errorf("default decoderbufs: %v", errs)
	}
	if err := NewTask().Start(context.Background(), taskCtx{&memOffsets{}}, map[string]string{"topic.prefix": "x"}); err == nil || !strings.Contains(err.Error(), "database.hostname") {
		t.Errorf("Start with bad config: %v", err)
	}
}

func TestUnreachableDatabase(t *testing.T) {
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{"database.hostname": "127.0.0.1", "database.port": fmt.Sprint(port), "database.user": "u",
		"database.dbname": "d", "topic.prefix": "p", "plugin.name": "pgoutput"}
	task := NewTask()
	err = task.Start(context.Background(), taskCtx{&memOffsets{}}, cfg)
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Start = %v, want connection refused", err)
	}
	if err := task.Stop(); err != nil {
		t.Fatalf("Stop after failed Start: %v", err)
	}
}
