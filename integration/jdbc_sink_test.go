package integration

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// jdbcSinkConfig is a JdbcSinkConnector config with Debezium's JDBC sink
// documentation's upsert setup: upserts and deletes by the record key,
// tables created by basic schema evolution.
func jdbcSinkConfig(url, user, password, topics string, extra map[string]string) map[string]string {
	cfg := map[string]string{
		"connector.class":        "io.debezium.connector.jdbc.JdbcSinkConnector",
		"topics":                 topics,
		"connection.url":         url,
		"connection.username":    user,
		"connection.password":    password,
		"insert.mode":            "upsert",
		"delete.enabled":         "true",
		"primary.key.mode":       "record_key",
		"schema.evolution":       "basic",
		"collection.name.format": "items",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

func openMaria(t *testing.T, m *testenv.MariaDB, db string) *sql.DB {
	mc := mysql.NewConfig()
	mc.Net, mc.Addr, mc.User, mc.Passwd, mc.DBName = "tcp", m.Addr(), m.User, m.Password, db
	h, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// rowsOf reads "id|name|qty|price|note" lines sorted by id.
func rowsOf(q func(string) (*sql.Rows, error), query string) ([]string, error) {
	rows, err := q(query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, err
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out, rows.Err()
}

const itemsRowPG = `SELECT id||'|'||name||'|'||qty||'|'||price::text||'|'||coalesce(note,'<null>') FROM %s`
const itemsRowMaria = "SELECT CONCAT(id,'|',name,'|',qty,'|',price,'|',coalesce(note,'<null>')) FROM items"

// TestJdbcSinkConvergesAfterSIGKILL is issue 7's proof: PostgreSQL →
// connectd (PostgresConnector) → embedded broker → JdbcSinkConnector into
// a second PostgreSQL database and into MariaDB, with a random workload
// of 10,000 inserts, updates (including primary key changes) and deletes
// while the worker is SIGKILLed twice. At the end both targets equal the
// source row for row: the sink commits consumer offsets only after its
// transaction (no loss) and its upserts/deletes are idempotent (replays
// after the kills change nothing).
func TestJdbcSinkConvergesAfterSIGKILL(t *testing.T) {
	maria := testenv.MariaDBT(t)
	if err := maria.CreateDatabase(context.Background(), "target"); err != nil {
		t.Fatal(err)
	}
	testJdbcSinkConverges(t, startInventory(t), maria, 1000)
}

// testJdbcSinkConverges runs TestJdbcSinkConvergesAfterSIGKILL's workload of
// 10*per100 changes (3, 4 and 3 tenths, a SIGKILL after the first two)
// from pg's inventory database into pg's databases target and flat (created
// here) and into maria's database target (which must exist).
func testJdbcSinkConverges(t *testing.T, pg *testenv.Postgres, maria *testenv.MariaDB, per100 int) {
	ctx := context.Background()
	mustExec(t, pg, `CREATE TABLE inventory.items (id int PRIMARY KEY, name text NOT NULL, qty int NOT NULL, price numeric(10,2) NOT NULL, note text)`)
	for _, db := range []string{"target", "flat"} {
		if err := pg.CreateDatabase(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	d := newDaemon(t)
	d.start()
	create := func(name string, cfg map[string]string) {
		if code, body := d.do("POST", "/connectors", map[string]any{"name": name, "config": cfg}); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	create("src", pgConnector(pg, map[string]string{"table.include.list": "inventory.items"}))
	d.waitTaskState("src", "RUNNING")
	topic := "dbserver1.inventory.items"
	create("sink-pg", jdbcSinkConfig(fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port), pg.User, "", topic, nil))
	create("sink-maria", jdbcSinkConfig(fmt.Sprintf("jdbc:mariadb://%s/target", maria.Addr()), maria.User, maria.Password, topic, nil))
	// The same topic flattened by ExtractNewRecordState (deletes become
	// tombstones by default) into a third database: the sink takes raw
	// envelopes and flattened records alike.
	create("sink-flat", jdbcSinkConfig(fmt.Sprintf("jdbc:postgresql://%s:%d/flat?sslmode=disable", pg.Host, pg.Port), pg.User, "", topic, map[string]string{
		"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
	}))
	d.waitTaskState("sink-pg", "RUNNING")
	d.waitTaskState("sink-maria", "RUNNING")
	d.waitTaskState("sink-flat", "RUNNING")

	conn, err := pg.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rng := rand.New(rand.NewSource(7))
	live := map[int]bool{}
	var ids []int
	nextID := 1
	pick := func() int { return ids[rng.Intn(len(ids))] }
	remove := func(id int) {
		delete(live, id)
		for i, x := range ids {
			if x == id {
				ids[i] = ids[len(ids)-1]
				ids = ids[:len(ids)-1]
				return
			}
		}
	}
	counts := map[string]int{}
	// op runs one random change; 20 changes per transaction.
	op := func(b *strings.Builder) {
		r := rng.Intn(100)
		switch {
		case len(ids) < 50 || r < 35:
			id := nextID
			nextID++
			live[id], ids = true, append(ids, id)
			note := "NULL"
			if rng.Intn(3) > 0 {
				note = fmt.Sprintf("'n%d'", rng.Intn(1000))
			}
			fmt.Fprintf(b, "INSERT INTO inventory.items VALUES (%d, 'item-%d', %d, %d.%02d, %s);", id, id, rng.Intn(100), rng.Intn(10000), rng.Intn(100), note)
			counts["insert"]++
		case r < 75:
			fmt.Fprintf(b, "UPDATE inventory.items SET qty = %d, name = 'upd-%d', price = price + 1 WHERE id = %d;", rng.Intn(1000), rng.Intn(1e6), pick())
			counts["update"]++
		case r < 85: // primary key change: Debezium emits delete + tombstone + create
			old := pick()
			id := nextID
			nextID++
			remove(old)
			live[id], ids = true, append(ids, id)
			fmt.Fprintf(b, "UPDATE inventory.items SET id = %d WHERE id = %d;", id, old)
			counts["pk-change"]++
		default:
			id := pick()
			remove(id)
			fmt.Fprintf(b, "DELETE FROM inventory.items WHERE id = %d;", id)
			counts["delete"]++
		}
	}
	run := func(n int) {
		for i := 0; i < n; i += 20 {
			var b strings.Builder
			b.WriteString("BEGIN;")
			for j := 0; j < 20; j++ {
				op(&b)
			}
			b.WriteString("COMMIT;")
			if _, err := conn.Exec(ctx, b.String()); err != nil {
				t.Fatal(err)
			}
		}
	}
	tconn, err := pg.Connect(ctx, "target")
	if err != nil {
		t.Fatal(err)
	}
	defer tconn.Close(ctx)
	targetPG := func() []string {
		rows, err := tconn.Query(ctx, fmt.Sprintf(itemsRowPG, "items"))
		if err != nil {
			return []string{err.Error()}
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, s)
		}
		sort.Strings(out)
		return out
	}
	fconn, err := pg.Connect(ctx, "flat")
	if err != nil {
		t.Fatal(err)
	}
	defer fconn.Close(ctx)
	targetFlat := func() []string {
		rows, err := fconn.Query(ctx, fmt.Sprintf(itemsRowPG, "items"))
		if err != nil {
			return []string{err.Error()}
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, s)
		}
		sort.Strings(out)
		return out
	}
	mdb := openMaria(t, maria, "target")
	targetMaria := func() []string {
		out, err := rowsOf(func(q string) (*sql.Rows, error) { return mdb.Query(q) }, itemsRowMaria)
		if err != nil {
			return []string{err.Error()}
		}
		return out
	}
	// killMidway waits until both sinks have written part of the changes,
	// then SIGKILLs the worker and starts it again on the same data dir.
	lastPG, lastMaria := 0, 0
	killMidway := func() {
		deadline := time.Now().Add(30 * time.Second)
		for len(targetPG()) < lastPG+50 || len(targetMaria()) < lastMaria+50 {
			if time.Now().After(deadline) {
				t.Fatalf("the sinks wrote nothing before the kill:\n%s", d.log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		lastPG, lastMaria = len(targetPG()), len(targetMaria())
		t.Logf("SIGKILL with %d rows in target PostgreSQL, %d in MariaDB, %d in the source", lastPG, lastMaria, len(live))
		d.kill()
		d.start()
	}
	start := time.Now()
	run(3 * per100)
	killMidway()
	run(4 * per100)
	killMidway()
	run(3 * per100)
	t.Logf("workload %v in %v (2 SIGKILLs)", counts, time.Since(start))

	srcRows := func() []string {
		rows, err := conn.Query(ctx, fmt.Sprintf(itemsRowPG, "inventory.items"))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, s)
		}
		sort.Strings(out)
		return out
	}
	source := srcRows()
	if len(source) != len(live) {
		t.Fatalf("source has %d rows, the workload left %d", len(source), len(live))
	}
	deadline := time.Now().Add(60 * time.Second)
	var gotPG, gotMaria, gotFlat []string
	for {
		gotPG, gotMaria, gotFlat = targetPG(), targetMaria(), targetFlat()
		want := strings.Join(source, "\n")
		if strings.Join(gotPG, "\n") == want && strings.Join(gotMaria, "\n") == want && strings.Join(gotFlat, "\n") == want {
			break
		}
		if time.Now().After(deadline) {
			diff := func(name string, got []string) {
				g := map[string]bool{}
				for _, r := range got {
					g[r] = true
				}
				s := map[string]bool{}
				n := 0
				for _, r := range source {
					s[r] = true
					if !g[r] && n < 5 {
						t.Logf("%s lacks %s", name, r)
						n++
					}
				}
				n = 0
				for _, r := range got {
					if !s[r] && n < 5 {
						t.Logf("%s has extra %s", name, r)
						n++
					}
				}
			}
			diff("target PostgreSQL", gotPG)
			jdbcSinkDiagnose(t, d, topic, gotPG, source)
			diff("MariaDB", gotMaria)
			diff("flattened PostgreSQL", gotFlat)
			_, b1 := d.do("GET", "/connectors/sink-pg/status", nil)
			_, b2 := d.do("GET", "/connectors/sink-maria/status", nil)
			t.Fatalf("targets did not converge: source %d rows, target PostgreSQL %d, MariaDB %d, flattened %d\n%s\n%s", len(source), len(gotPG), len(gotMaria), len(gotFlat), b1, b2)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("converged: %d rows in source, target PostgreSQL, MariaDB and the flattened copy, %v after the workload began", len(source), time.Since(start))
	for _, n := range []string{"sink-pg", "sink-maria", "sink-flat"} {
		if st := d.status(n); st.Tasks[0].State != "RUNNING" {
			t.Fatalf("%s: %+v", n, st)
		}
	}
}

// TestJdbcSinkDeadLetterQueue: a record the value converter cannot read
// goes, under errors.tolerance=all, to the dead letter queue with its
// original bytes and Kafka Connect's __connect.errors.* context headers
// (DeadLetterQueueReporter), and the task keeps RUNNING and writes the
// good records; under errors.tolerance=none the same record fails the
// task (Kafka Connect's "Tolerance exceeded in error handler").
func TestJdbcSinkDeadLetterQueue(t *testing.T) {
	ctx := context.Background()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	d := newDaemon(t)
	d.start()
	// The plugin is listed as a sink, and its config is validated per field
	// (Kafka Connect's ConnectorPluginsResource).
	if code, b := d.do("GET", "/connector-plugins", nil); code != 200 || !strings.Contains(string(b), `{"class":"io.debezium.connector.jdbc.JdbcSinkConnector","type":"sink","version":"3.6.1.Final"}`) {
		t.Fatalf("plugins: %d %s", code, b)
	}
	code, vb := d.do("PUT", "/connector-plugins/JdbcSinkConnector/config/validate", map[string]string{
		"connector.class": "io.debezium.connector.jdbc.JdbcSinkConnector", "name": "v", "connection.url": "jdbc:postgresql://h/db",
		"delete.enabled": "true", "insert.mode": "upsert"})
	if code != 200 || !strings.Contains(string(vb), `"error_count":3`) || !strings.Contains(string(vb), "Deletes require primary.key.mode=record_key") ||
		!strings.Contains(string(vb), "Must configure one of topics or topics.regex") {
		t.Fatalf("validate: %d %s", code, vb)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.kafka), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	keyJSON := func(id int) string {
		return fmt.Sprintf(`{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"k"},"payload":{"id":%d}}`, id)
	}
	valJSON := func(id int, name string) string {
		return fmt.Sprintf(`{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}],"optional":false,"name":"v"},"payload":{"id":%d,"name":%q}}`, id, name)
	}
	poison := []byte(`{"schema": not json`)
	recs := []*kgo.Record{
		{Topic: "orders", Key: []byte(keyJSON(1)), Value: []byte(valJSON(1, "a"))},
		{Topic: "orders", Key: []byte(keyJSON(2)), Value: poison, Headers: []kgo.RecordHeader{{Key: "origin", Value: []byte("test")}}},
		{Topic: "orders", Key: []byte(keyJSON(3)), Value: []byte(valJSON(3, "c"))},
		// Converts, but the sink cannot key it (a string key without
		// primary.key.fields): reported by the task through the
		// ErrantRecordReporter (KIP-610), stage TASK_PUT.
		{Topic: "orders", Key: []byte(`{"schema":{"type":"string","optional":false},"payload":"x"}`), Value: []byte(valJSON(9, "z"))},
	}
	for _, r := range recs {
		r.Partition = 0
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port)
	cfg := jdbcSinkConfig(url, pg.User, "", "orders", map[string]string{
		"collection.name.format":                          "orders_copy",
		"errors.tolerance":                                "all",
		"errors.log.enable":                               "true",
		"errors.deadletterqueue.topic.name":               "orders-dlq",
		"errors.deadletterqueue.context.headers.enable":   "true",
		"errors.deadletterqueue.topic.replication.factor": "1",
	})
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "sink-all", "config": cfg}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	// The DLQ record: original key, value and headers plus the context.
	dlq, err := kgo.NewClient(kgo.SeedBrokers(d.kafka), kgo.ConsumeTopics("orders-dlq"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var dead []*kgo.Record
	for len(dead) < 2 {
		f := dlq.PollFetches(pctx)
		if pctx.Err() != nil {
			t.Fatalf("no dead letter record\n%s", d.log.String())
		}
		f.EachRecord(func(r *kgo.Record) { dead = append(dead, r) })
	}
	got := dead[0]
	if string(got.Value) != string(poison) || string(got.Key) != keyJSON(2) {
		t.Fatalf("dead letter record key %s value %s", got.Key, got.Value)
	}
	h := map[string]string{}
	for _, x := range got.Headers {
		h[x.Key] = string(x.Value)
	}
	// Header names and values as DeadLetterQueueReporter.populateContextHeaders writes them.
	for k, v := range map[string]string{
		"origin":                                "test",
		"__connect.errors.topic":                "orders",
		"__connect.errors.partition":            "0",
		"__connect.errors.offset":               "1",
		"__connect.errors.connector.name":       "sink-all",
		"__connect.errors.task.id":              "0",
		"__connect.errors.stage":                "VALUE_CONVERTER",
		"__connect.errors.exception.class.name": "org.apache.kafka.connect.errors.DataException",
	} {
		if h[k] != v {
			t.Errorf("header %s = %q, want %q (all: %v)", k, h[k], v, h)
		}
	}
	if !strings.Contains(h["__connect.errors.exception.message"], "Converting byte[] to Kafka Connect data failed") {
		t.Errorf("exception message %q", h["__connect.errors.exception.message"])
	}
	h2 := map[string]string{}
	for _, x := range dead[1].Headers {
		h2[x.Key] = string(x.Value)
	}
	if string(dead[1].Key) != `{"schema":{"type":"string","optional":false},"payload":"x"}` || string(dead[1].Value) != valJSON(9, "z") {
		t.Errorf("errant record key %s value %s, want the consumed bytes", dead[1].Key, dead[1].Value)
	}
	if h2["__connect.errors.offset"] != "3" || h2["__connect.errors.stage"] != "TASK_PUT" || !strings.Contains(h2["__connect.errors.exception.message"], "primary.key.fields") {
		t.Errorf("errant record reported by the task: headers %v", h2)
	}
	// The good records are written and the task keeps running.
	tconn, err := pg.Connect(ctx, "target")
	if err != nil {
		t.Fatal(err)
	}
	defer tconn.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var rows string
		tconn.QueryRow(ctx, `SELECT string_agg(id||':'||name, ',' ORDER BY id) FROM orders_copy`).Scan(&rows)
		if rows == "1:a,3:c" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("target rows %q\n%s", rows, d.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, b := d.do("GET", "/connectors/sink-all", nil); code != 200 || !strings.Contains(string(b), `"type":"sink"`) {
		t.Errorf("connector info: %d %s", code, b)
	}
	if st := d.status("sink-all"); st.Tasks[0].State != "RUNNING" {
		t.Fatalf("errors.tolerance=all: %+v", st)
	}
	// GET /connectors/{c}/offsets for a sink: the consumer group's
	// committed offsets in KIP-875's sink format; 4 = after the four
	// records (committed only once they were written).
	for deadline := time.Now().Add(15 * time.Second); ; {
		_, b := d.do("GET", "/connectors/sink-all/offsets", nil)
		if strings.Contains(string(b), `{"partition":{"kafka_partition":0,"kafka_topic":"orders"},"offset":{"kafka_offset":4}}`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sink offsets: %s", b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Pause: a new record is not written until resume (Kafka Connect's
	// PUT /connectors/{c}/pause and /resume through the herder).
	if code, b := d.do("PUT", "/connectors/sink-all/pause", nil); code != 202 {
		t.Fatalf("pause: %d %s", code, b)
	}
	d.waitTaskState("sink-all", "PAUSED")
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Key: []byte(keyJSON(5)), Value: []byte(valJSON(5, "e"))}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	var n int
	tconn.QueryRow(ctx, `SELECT count(*) FROM orders_copy WHERE id = 5`).Scan(&n)
	if n != 0 {
		t.Fatal("a PAUSED sink task wrote a record")
	}
	if code, b := d.do("PUT", "/connectors/sink-all/resume", nil); code != 202 {
		t.Fatalf("resume: %d %s", code, b)
	}
	d.waitTaskState("sink-all", "RUNNING")
	for deadline := time.Now().Add(15 * time.Second); n != 1; time.Sleep(100 * time.Millisecond) {
		tconn.QueryRow(ctx, `SELECT count(*) FROM orders_copy WHERE id = 5`).Scan(&n)
		if time.Now().After(deadline) {
			t.Fatal("the resumed sink task did not write the record produced while paused")
		}
	}
	if !strings.Contains(d.log.String(), "Error encountered in task sink-all-0. Executing stage 'VALUE_CONVERTER'") {
		t.Errorf("errors.log.enable=true did not log the failure")
	}
	// /metrics: the five records were read once (sink-record-read-total
	// counts before conversion, the poison record included); four were
	// put (sink-record-send-total counts every record handed to a Put that
	// returned, WorkerSinkTask.recordBatch, the one the task then reported
	// included); two record errors (total-record-errors) and two dead
	// letter records (deadletterqueue-produce-requests); the consumer lag
	// of orders-0 (high watermark - position) is 0 once record 5 is polled.
	sinkSer := func(name string, labels ...string) string {
		ls := append([]string{"connector=sink-all", "task=0"}, labels...)
		sort.Strings(ls)
		return name + "{" + strings.Join(ls, ",") + "}"
	}
	lagSeries := sinkSer("connectd_sink_consumer_lag", "topic=orders", "partition=0")
	m := d.waitMetric(sinkSer("connectd_sink_record_send_total"), "4 records put", eq(4))
	if v, ok := m[lagSeries]; !ok || v != 0 {
		t.Errorf("%s = %v (present %v), want 0", lagSeries, v, ok)
	}
	for series, want := range map[string]float64{
		sinkSer("connectd_sink_record_read_total"):                      5,
		sinkSer("connectd_sink_task_errors_total"):                      2,
		sinkSer("connectd_sink_deadletterqueue_produce_requests_total"): 2,
	} {
		if v, ok := m[series]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, want)
		}
	}
	for _, c := range d.summary().Connectors {
		if c.Name == "sink-all" && (c.Polled != 5 || c.Written != 4 || c.Errors != 2 || c.DeadLetters != 2 || c.EventsBehind != 0) {
			t.Errorf("summary of sink-all: polled %d written %d errors %d dead letters %d behind %d", c.Polled, c.Written, c.Errors, c.DeadLetters, c.EventsBehind)
		}
	}

	// errors.tolerance=none: the same poison record fails the task.
	cfg2 := jdbcSinkConfig(url, pg.User, "", "orders", map[string]string{"collection.name.format": "orders_none"})
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "sink-none", "config": cfg2}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	st := d.waitTaskState("sink-none", "FAILED")
	if !strings.Contains(st.Tasks[0].Trace, "Tolerance exceeded in error handler") {
		t.Fatalf("trace %q", st.Tasks[0].Trace)
	}
	// The task failure is an error of sink-none.
	if v := d.scrape()[`connectd_sink_task_errors_total{connector=sink-none,task=0}`]; v < 1 {
		t.Errorf("sink-none errors %v, want >= 1 (the task failure)", v)
	}
	// Deleting a sink connector removes its series, as a source's.
	if code, b := d.do("DELETE", "/connectors/sink-all", nil); code != 204 {
		t.Fatalf("delete: %d %s", code, b)
	}
	for k := range d.scrape() {
		if strings.Contains(k, "connector=sink-all,") && strings.HasPrefix(k, "connectd_sink_") {
			t.Errorf("series %s still exported after the connector was deleted", k)
		}
	}
}

// jdbcSinkDiagnose logs, for the first row a target has but the source
// has not, every event of its key in the topic, and the sink groups'
// committed offsets against the topic's end.
func jdbcSinkDiagnose(t *testing.T, d *daemon, topic string, got, source []string) {
	src := map[string]bool{}
	for _, r := range source {
		src[r] = true
	}
	var id string
	for _, r := range got {
		if !src[r] {
			id = strings.SplitN(r, "|", 2)[0]
			break
		}
	}
	if id == "" {
		return
	}
	c := newConsumer(t, d.kafka, "^"+strings.ReplaceAll(topic, ".", `\.`)+"$")
	for _, e := range c.drain(5 * time.Second) {
		if fmt.Sprint(e.Key["id"]) == id {
			t.Logf("event of id %s: offset %d op %q tombstone %v", id, e.Offset, e.Op, e.Tombstone)
		}
	}
	adm := kadm.NewClient(c.cl)
	ends, _ := adm.ListEndOffsets(context.Background(), topic)
	ends.Each(func(o kadm.ListedOffset) { t.Logf("end offset %s[%d] = %d", o.Topic, o.Partition, o.Offset) })
	for _, g := range []string{"connect-sink-pg", "connect-sink-maria"} {
		offs, err := adm.FetchOffsets(context.Background(), g)
		if err != nil {
			t.Logf("group %s: %v", g, err)
			continue
		}
		offs.Each(func(o kadm.OffsetResponse) { t.Logf("group %s committed %s[%d] = %d", g, o.Topic, o.Partition, o.At) })
	}
}
