package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

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
	mustExec(t, pg, `UPDATE inventory.customers SET email = 'new@example.com' WHERE id = 1002;
		INSERT INTO inventory.customers (first_name, last_name, email) VALUES ('Zoë', 'Ng', 'zoe@example.com');
		DELETE FROM inventory.orders WHERE id = (SELECT min(id) FROM inventory.orders);
		UPDATE inventory.products SET weight = weight + 1`)

	verifyCLI := func(t *testing.T, wantCode int) runtime.VerifyResult {
		t.Helper()
		var res runtime.VerifyResult
		out, errOut, code := runCLI(t, "verify", "inv", "--url", d.rest, "--json", "--rounds", "2", "--settle", "3s")
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
	// customer 1003, produced again with another email.
	recs := readTopic(t, d.kafka, "dbserver1.inventory.customers", 6)
	var last *kgo.Record
	for _, r := range recs {
		if strings.Contains(string(r.Key), `"id":1003`) {
			last = r
		}
	}
	if last == nil {
		t.Fatalf("no record of customer 1003 in %d records", len(recs))
	}
	forged := strings.Replace(string(last.Value), `"ed@walker.com"`, `"ed@forged.example"`, 1)
	if forged == string(last.Value) {
		t.Fatalf("the record of 1003 has no email ed@walker.com: %s", last.Value)
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
	extra := strings.Replace(string(last.Value), `"id":1003`, `"id":9999`, -1)
	extraKey := strings.Replace(string(last.Key), `"id":1003`, `"id":9999`, 1)
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
			sawDiff = strings.Contains(string(ex.Key), "1003") && len(ex.Columns) == 1 && ex.Columns[0] == "email" &&
				strings.Contains(string(ex.Topic), "ed@forged.example") && strings.Contains(string(ex.Source), "ed@walker.com")
		case "extra":
			sawExtra = strings.Contains(string(ex.Key), "9999")
		}
	}
	if !sawDiff || !sawExtra {
		t.Fatalf("examples do not name the forged email of 1003 and the extra 9999: %+v", customers.Examples)
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
