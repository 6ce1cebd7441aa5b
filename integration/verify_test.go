package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/connectd/connectd/runtime"
)

// connectd verify (issue 21) against a real PostgreSQL and the embedded
// broker: a pipeline that lost nothing is CONSISTENT (after streamed
// inserts, updates and deletes), and then each kind of damage downstream is
// found and named: a topic record changed by hand (the column that
// differs), records deleted from a topic (the missing keys), and a row the
// topic holds that the source does not (extra).
func TestVerify(t *testing.T) {
	pg := startInventory(t)
	d := newDaemon(t)
	d.start()
	if code, b := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": pgConnector(pg, nil)}); code != 201 {
		t.Fatalf("create: %d %s", code, b)
	}
	d.waitSnapshotDone("inv")
	mustExec(t, pg, `UPDATE inventory.customers SET email = 'new@example.com' WHERE id = 2;
		INSERT INTO inventory.customers (first_name, last_name, email) VALUES ('Zoë', 'Ng', 'zoe@example.com');
		DELETE FROM inventory.orders WHERE id = (SELECT min(id) FROM inventory.orders);
		UPDATE inventory.products SET weight = weight + 1`)

	verifyCLI := func(t *testing.T, wantCode int) runtime.VerifyResult {
		t.Helper()
		var res runtime.VerifyResult
		out, errOut, code := runCLIFor(t, 3*time.Minute, "verify", "inv", "--url", d.rest, "--json", "--rounds", "2", "--settle", "3s")
		if code != wantCode {
			t.Fatalf("connectd verify: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, wantCode, out, errOut)
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("verify --json output: %v\n%s", err, out)
		}
		return res
	}
	table := func(t *testing.T, res runtime.VerifyResult, topic string) *runtime.VerifyTableResult {
		t.Helper()
		for _, tr := range res.Tables {
			if tr.Topic == topic {
				return tr
			}
		}
		t.Fatalf("no result for %s: %+v", topic, res.Tables)
		return nil
	}

	// The streamed changes may still be on their way: verify's rounds wait
	// for them, so the first run is consistent.
	res := verifyCLI(t, 0)
	if res.State != runtime.VerifyConsistent {
		t.Fatalf("state %s", res.State)
	}
	customers := table(t, res, "dbserver1.inventory.customers")
	if customers.SourceRows != 5 || customers.TopicKeys != 5 || customers.Table != "inventory.customers" {
		t.Fatalf("customers: %+v", customers)
	}
	orders := table(t, res, "dbserver1.inventory.orders")
	if orders.SourceRows != orders.TopicKeys || orders.SourceRows == 0 {
		t.Fatalf("orders: %+v", orders)
	}
	if res.SourcePosition["lsn"] == nil {
		t.Fatalf("no source position: %+v", res.SourcePosition)
	}
	if m := d.scrape(); m[`connectd_verify_consistent{connector=inv}`] != 1 || m[`connectd_verify_differences{connector=inv}`] != 0 {
		t.Fatalf("verify metrics after a consistent run: consistent %v differences %v", m[`connectd_verify_consistent{connector=inv}`], m[`connectd_verify_differences{connector=inv}`])
	}

	// Damage downstream, three ways.
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// 1. A record whose email was changed by hand: the latest record of
	// customer 3, produced again with another email.
	recs := readTopic(t, d.kafka, "dbserver1.inventory.customers", 6)
	var last *kgo.Record
	for _, r := range recs {
		if strings.Contains(string(r.Key), `"id":3`) {
			last = r
		}
	}
	if last == nil {
		t.Fatalf("no record of customer 3 in %d records", len(recs))
	}
	forged := strings.Replace(string(last.Value), `"ed@walker.com"`, `"ed@forged.example"`, 1)
	if forged == string(last.Value) {
		t.Fatalf("the record of 3 has no email ed@walker.com: %s", last.Value)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: last.Topic, Partition: last.Partition, Key: last.Key, Value: []byte(forged)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// 2. Every record of the products topic deleted (DeleteRecords up to
	// its end): each product is missing downstream.
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, "dbserver1.inventory.products")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("dbserver1.inventory.products", 0)
	off := kadm.Offsets{}
	off.Add(kadm.Offset{Topic: "dbserver1.inventory.products", Partition: 0, At: end.Offset})
	if resp, err := adm.DeleteRecords(ctx, off); err != nil || resp.Error() != nil {
		t.Fatalf("DeleteRecords: %v %v", err, resp.Error())
	}
	// 3. A row the source does not have: a create of customer 9999.
	extra := strings.Replace(string(last.Value), `"id":3`, `"id":9999`, -1)
	extraKey := strings.Replace(string(last.Key), `"id":3`, `"id":9999`, 1)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: last.Topic, Partition: last.Partition, Key: []byte(extraKey), Value: []byte(extra)}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	res = verifyCLI(t, 1)
	if res.State != runtime.VerifyDifferent {
		t.Fatalf("state %s", res.State)
	}
	customers = table(t, res, "dbserver1.inventory.customers")
	if customers.Different != 1 || customers.Extra != 1 || customers.Missing != 0 {
		t.Fatalf("customers after the damage: %+v", customers)
	}
	var sawDiff, sawExtra bool
	for _, ex := range customers.Examples {
		switch ex.Kind {
		case "different":
			sawDiff = strings.Contains(compactJSON(ex.Key), `"id":3`) && len(ex.Columns) == 1 && ex.Columns[0] == "email" &&
				strings.Contains(string(ex.Topic), "ed@forged.example") && strings.Contains(string(ex.Source), "ed@walker.com")
		case "extra":
			sawExtra = strings.Contains(compactJSON(ex.Key), `"id":9999`)
		}
	}
	if !sawDiff || !sawExtra {
		t.Fatalf("examples do not name the forged email of 3 and the extra 9999: %+v", customers.Examples)
	}
	products := table(t, res, "dbserver1.inventory.products")
	if products.Missing != products.SourceRows || products.SourceRows == 0 || products.TopicKeys != 0 {
		t.Fatalf("products after deleting its records: %+v", products)
	}
	if orders := table(t, res, "dbserver1.inventory.orders"); orders.Missing+orders.Extra+orders.Different != 0 {
		t.Fatalf("orders were not damaged: %+v", orders)
	}
	want := float64(2 + products.SourceRows)
	if m := d.scrape(); m[`connectd_verify_consistent{connector=inv}`] != 0 || m[`connectd_verify_differences{connector=inv}`] != want {
		t.Fatalf("verify metrics: consistent %v differences %v, want 0 and %v", m[`connectd_verify_consistent{connector=inv}`], m[`connectd_verify_differences{connector=inv}`], want)
	}

	// --table narrows the comparison; an unknown connector is an error (2).
	out, errOut, code := runCLI(t, "verify", "inv", "--url", d.rest, "--json", "--rounds", "1", "--table", "inventory.orders")
	if code != 0 || !strings.Contains(out, "dbserver1.inventory.orders") || strings.Contains(out, "dbserver1.inventory.customers") {
		t.Fatalf("verify --table inventory.orders: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, "verify", "nope", "--url", d.rest); code != 2 || !strings.Contains(errOut, "404") {
		t.Fatalf("verify of an unknown connector: exit %d, %s", code, errOut)
	}
}

// connectd verify of a MariaDB pipeline while a writer keeps updating rows:
// the rounds let the changes in flight arrive, so no key is reported
// different (a key updated in every round is "changing", not a difference);
// once the writer stops the result is CONSISTENT; then a tombstone written
// by hand for one key is found as that key missing.
func TestVerifyMariaDBWhileWriting(t *testing.T) {
	const rows = 2000
	ctx := context.Background()
	m := startMariaDB(t)
	mariaExec(t, m, `CREATE TABLE items (id int PRIMARY KEY, v int NOT NULL, note varchar(40) CHARACTER SET utf8mb4, price decimal(12,3), at datetime(3));
		INSERT INTO items SELECT seq, 0, CONCAT('naïve ', seq), seq / 7, '2026-01-02 03:04:05.678' FROM seq_1_to_2000;`)
	d := newDaemon(t)
	d.start()
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "items", "config": mariaConnector(m, map[string]string{"table.include.list": "inventory.items"})}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.items$`)
	c.until(rows, 60*time.Second)
	conn, err := m.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stop := startRandomUpdates(t, rows, func(id int) error {
		time.Sleep(2 * time.Millisecond) // a steady load (at most 500 updates a second), not a flood
		_, err := conn.Execute(`UPDATE items SET v = v + 1 WHERE id = ?`, id)
		return err
	})
	run := func(wantCode int) runtime.VerifyResult {
		t.Helper()
		out, errOut, code := runCLIFor(t, 3*time.Minute, "verify", "items", "--url", d.rest, "--json", "--rounds", "4", "--settle", "2s")
		var res runtime.VerifyResult
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != wantCode {
			t.Fatalf("connectd verify: exit %d, want %d (%v)\nstdout:\n%s\nstderr:\n%s", code, wantCode, err, out, errOut)
		}
		if len(res.Tables) != 1 || res.Tables[0].Topic != "dbserver1.inventory.items" || res.Tables[0].Table != "inventory.items" {
			t.Fatalf("tables: %+v", res.Tables)
		}
		return res
	}
	res := run(0)
	if tr := res.Tables[0]; tr.SourceRows != rows || tr.Missing+tr.Extra+tr.Different != 0 {
		t.Fatalf("while writing: %+v", tr)
	}
	writes := stop()
	t.Logf("verified while %d updates ran; changing keys: %d", writes, res.Tables[0].Changing)
	res = run(0)
	if tr := res.Tables[0]; res.State != runtime.VerifyConsistent || tr.SourceRows != rows || tr.TopicKeys != rows || tr.Changing != 0 {
		t.Fatalf("after the writer stopped: %s %+v", res.State, tr)
	}

	// A tombstone for key 77 (as a delete would leave): 77 is missing.
	recs := readTopic(t, d.kafka, "dbserver1.inventory.items", 1)
	key := strings.Replace(string(recs[0].Key), `"id":1}`, `"id":77}`, 1)
	if key == string(recs[0].Key) {
		t.Fatalf("first key is not id 1: %s", recs[0].Key)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: recs[0].Topic, Partition: recs[0].Partition, Key: []byte(key)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	res = run(1)
	tr := res.Tables[0]
	if tr.Missing != 1 || tr.Extra+tr.Different != 0 || len(tr.Examples) != 1 || !strings.Contains(compactJSON(tr.Examples[0].Key), `"id":77`) || tr.Examples[0].Kind != "missing" {
		t.Fatalf("after a tombstone for 77: %+v", tr)
	}
}

// compactJSON is b without insignificant spaces (verify --json indents).
func compactJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return string(b)
	}
	return out.String()
}

// connectd verify --against SINK_CONNECTOR (issue 21): a PostgreSQL source
// copied by JDBC sinks into PostgreSQL, MariaDB and (through
// ExtractNewRecordState) a second PostgreSQL database is CONSISTENT with
// each; then rows corrupted by hand in the targets are found and named: a
// changed column (in MariaDB a change of case only, which its default
// collation calls equal), a deleted row (missing) and a row the source does
// not have (extra). The scratch tables are gone afterwards.
func TestVerifyAgainstJdbcSink(t *testing.T) {
	ctx := context.Background()
	maria := testenv.MariaDBT(t)
	if err := maria.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.items (id int PRIMARY KEY, name text NOT NULL, qty int NOT NULL, price numeric(10,2) NOT NULL,
		seen timestamptz, note text)`)
	for _, db := range []string{"target", "flat"} {
		if err := pg.CreateDatabase(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, pg, `INSERT INTO inventory.items SELECT i, 'item ' || i, i * 3, i * 1.25, timestamptz '2026-01-02 03:04:05.678901+00' + i * interval '1 hour',
		CASE WHEN i % 3 = 0 THEN NULL ELSE 'it''s a \back\slash ' || i END FROM generate_series(1, 40) i`)
	d := newDaemon(t)
	d.start()
	create := func(name string, cfg map[string]string) {
		if code, body := d.do("POST", "/connectors", map[string]any{"name": name, "config": cfg}); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
	}
	create("src", pgConnector(pg, map[string]string{"table.include.list": "inventory.items"}))
	topic := "dbserver1.inventory.items"
	create("sink-pg", jdbcSinkConfig(fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port), pg.User, "", topic, nil))
	create("sink-maria", jdbcSinkConfig(fmt.Sprintf("jdbc:mariadb://%s/target", maria.Addr()), maria.User, maria.Password, topic, nil))
	create("sink-flat", jdbcSinkConfig(fmt.Sprintf("jdbc:postgresql://%s:%d/flat?sslmode=disable", pg.Host, pg.Port), pg.User, "", topic, map[string]string{
		"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
	}))
	d.waitSnapshotDone("src")
	mustExec(t, pg, `UPDATE inventory.items SET name = 'Renamed Item', qty = qty + 1 WHERE id IN (2, 4, 6);
		DELETE FROM inventory.items WHERE id IN (10, 11);
		INSERT INTO inventory.items VALUES (41, 'Zoë''s', 1, 9.99, NULL, 'new')`)

	verify := func(sink string, wantCode int) runtime.VerifyResult {
		t.Helper()
		var res runtime.VerifyResult
		out, errOut, code := runCLIFor(t, 3*time.Minute, "verify", "src", "--against", sink, "--url", d.rest, "--json", "--rounds", "5", "--settle", "20s")
		if code != wantCode {
			t.Fatalf("connectd verify --against %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", sink, code, wantCode, out, errOut)
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("verify --json output: %v\n%s", err, out)
		}
		if len(res.Tables) != 1 || res.Tables[0].SinkTable != "items" {
			t.Fatalf("against %s: tables %+v", sink, res.Tables)
		}
		return res
	}
	for _, sink := range []string{"sink-pg", "sink-maria", "sink-flat"} {
		res := verify(sink, 0)
		if tr := res.Tables[0]; tr.SourceRows != 39 || tr.SinkRows != 39 || res.State != runtime.VerifyConsistent {
			t.Fatalf("against %s: %s %+v", sink, res.State, tr)
		}
	}

	// Damage in the targets.
	if err := pg.Exec(ctx, "target", `UPDATE items SET name = 'corrupted' WHERE id = 3; DELETE FROM items WHERE id = 5;
		INSERT INTO items (id, name, qty, price) VALUES (999, 'ghost', 0, 0)`); err != nil {
		t.Fatal(err)
	}
	if err := maria.Exec(ctx, "target", "UPDATE items SET name = 'ITEM 7' WHERE id = 7"); err != nil {
		t.Fatal(err)
	}
	res := verify("sink-pg", 1)
	tr := res.Tables[0]
	if tr.Missing != 1 || tr.Extra != 1 || tr.Different != 1 || tr.SinkRows != 39 {
		t.Fatalf("against sink-pg after damage: %+v", tr)
	}
	kinds := map[string]runtime.VerifyExample{}
	for _, ex := range tr.Examples {
		kinds[ex.Kind] = ex
	}
	if ex := kinds["different"]; compact(ex.Key) != `{"id":"3"}` || strings.Join(ex.Columns, ",") != "name" ||
		!strings.Contains(compact(ex.Sink), `"name":"corrupted"`) || !strings.Contains(compact(ex.Source), `"name":"item 3"`) {
		t.Fatalf("different example: %+v", ex)
	}
	if ex := kinds["missing"]; compact(ex.Key) != `{"id":"5"}` || ex.Sink != nil {
		t.Fatalf("missing example: key %s sink %s", ex.Key, ex.Sink)
	}
	if ex := kinds["extra"]; compact(ex.Key) != `{"id":"999"}` || ex.Source != nil {
		t.Fatalf("extra example: key %s source %s", ex.Key, ex.Source)
	}
	res = verify("sink-maria", 1)
	if tr := res.Tables[0]; tr.Different != 1 || tr.Missing != 0 || tr.Extra != 0 || len(tr.Examples) != 1 ||
		compact(tr.Examples[0].Key) != `{"id":"7"}` || strings.Join(tr.Examples[0].Columns, ",") != "name" {
		t.Fatalf("against sink-maria after damage: %+v", tr)
	}
	verify("sink-flat", 0) // undamaged
	for _, db := range []string{"target", "flat"} {
		conn, err := pg.Connect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE 'connectd_verify_%'`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s: %d scratch tables left (%v)", db, n, err)
		}
		conn.Close(ctx)
	}
	mdb := openMaria(t, maria, "target")
	var n int
	if err := mdb.QueryRow(`SELECT count(*) FROM information_schema.TABLES WHERE TABLE_NAME LIKE 'connectd_verify_%'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("MariaDB: %d scratch tables left (%v)", n, err)
	}
}

// compact is raw JSON without insignificant space.
func compact(b json.RawMessage) string {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return string(b)
	}
	return out.String()
}
