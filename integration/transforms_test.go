package integration

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The connector's transformation chain runs in the worker: the classic
// Debezium "unwrap" (ExtractNewRecordState, Debezium's New Record State
// Extraction page: delete.tombstone.handling.mode=rewrite adds
// "__deleted":"true") followed by Kafka Connect's RegexRouter
// (replacement "$1" of "dbserver1\.inventory\.(.*)") over a real
// PostgreSQL. A record the chain drops (Filter with a predicate) still
// moves the offset. A bad SMT option is a 400 naming the key.
func TestTransformsInWorker(t *testing.T) {
	pg := startInventory(t)
	d := newDaemon(t)
	d.start()

	bad := pgConnector(pg, map[string]string{
		"transforms": "route", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
	})
	code, body := d.do("POST", "/connectors", map[string]any{"name": "bad", "config": bad})
	if code != 400 || !strings.Contains(string(body), "transforms.route.regex") {
		t.Fatalf("missing RegexRouter regex: %d %s", code, body)
	}

	cfg := pgConnector(pg, map[string]string{
		"table.include.list":     "inventory.customers,inventory.orders",
		"transforms":             "unwrap,route,dropOrders",
		"transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
		"transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
		"transforms.unwrap.add.fields":                     "op",
		"transforms.route.type":                            "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex":                           `dbserver1\.inventory\.(.*)`,
		"transforms.route.replacement":                     "$1",
		"transforms.dropOrders.type":                       "org.apache.kafka.connect.transforms.Filter",
		"transforms.dropOrders.predicate":                  "isOrders",
		"predicates":                                       "isOrders",
		"predicates.isOrders.type":                         "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.isOrders.pattern":                      "orders",
	})
	code, body = d.do("POST", "/connectors", map[string]any{"name": "inv", "config": cfg})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	c := newConsumer(t, d.kafka, `^(customers|orders|dbserver1\..*)$`)
	c.until(4, 60*time.Second) // the 4 customers; orders are filtered out
	mustExec(t, pg, `INSERT INTO inventory.customers (first_name,last_name,email) VALUES ('A','B','ab@x.org');
		DELETE FROM inventory.customers WHERE email = 'ab@x.org';
		INSERT INTO inventory.orders (order_date,purchaser,quantity,product_id) VALUES ('2024-01-01',1,1,1)`)
	evs := c.until(6, 60*time.Second)
	evs = c.drain(2 * time.Second)
	if len(evs) != 6 {
		t.Fatalf("%d records, want 6 (4 snapshot + insert + rewritten delete; no orders, no tombstone)", len(evs))
	}
	for _, e := range evs {
		if e.Topic != "customers" {
			t.Fatalf("record on %s, want customers (RegexRouter)", e.Topic)
		}
	}
	var last struct {
		Payload map[string]any `json:"payload"`
	}
	if err := json.Unmarshal(evs[5].Raw, &last); err != nil {
		t.Fatal(err)
	}
	var inserted struct {
		Payload map[string]any `json:"payload"`
	}
	json.Unmarshal(evs[4].Raw, &inserted)
	// Under REPLICA IDENTITY DEFAULT the delete's before image holds only
	// the key, so the rewritten record carries the id and "__deleted".
	if inserted.Payload["email"] != "ab@x.org" || inserted.Payload["__op"] != "c" ||
		last.Payload["__deleted"] != "true" || last.Payload["__op"] != "d" || last.Payload["id"] != inserted.Payload["id"] {
		t.Fatalf("insert %s\nrewritten delete %s", evs[4].Raw, evs[5].Raw)
	}
	var first struct {
		Payload map[string]any `json:"payload"`
	}
	json.Unmarshal(evs[0].Raw, &first)
	if first.Payload["__op"] != "r" || first.Payload["__deleted"] != "false" || first.Payload["first_name"] == nil {
		t.Fatalf("flattened snapshot record: %s", evs[0].Raw)
	}
	d.stop()
}

// The outbox pattern over a real PostgreSQL (Debezium's Outbox Event
// Router page): rows inserted into an outbox table (uuid id, aggregatetype,
// aggregateid, type, jsonb payload) become events on
// outbox.event.<aggregatetype>, keyed by aggregateid, with the "id" header
// and, per table.fields.additional.placement=type:header:eventType, an
// eventType header; table.expand.json.payload=true turns the jsonb string
// into a struct. Updates (table.op.invalid.behavior=warn) and deletes of
// outbox rows emit nothing.
func TestOutboxEventRouterInWorker(t *testing.T) {
	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.outboxevent (id uuid PRIMARY KEY, aggregatetype varchar(255) NOT NULL,
		aggregateid varchar(255) NOT NULL, type varchar(255) NOT NULL, payload jsonb)`)
	d := newDaemon(t)
	d.start()
	cfg := pgConnector(pg, map[string]string{
		"table.include.list":     "inventory.outboxevent",
		"tombstones.on.delete":   "false",
		"transforms":             "outbox",
		"transforms.outbox.type": "io.debezium.transforms.outbox.EventRouter",
		"transforms.outbox.table.fields.additional.placement": "type:header:eventType",
		"transforms.outbox.table.expand.json.payload":         "true",
	})
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "outbox", "config": cfg}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("outbox", "RUNNING")
	d.waitSnapshotDone("outbox") // the inserts must be streamed (op c), not snapshotted
	mustExec(t, pg, `INSERT INTO inventory.outboxevent VALUES
		('406c07f3-26f0-4eea-a50c-109940064b8f', 'Order', '1', 'OrderCreated', '{"id": 1, "lineItems": [{"item": "Debezium in Action", "quantity": 2}], "customerId": 123}');
		UPDATE inventory.outboxevent SET type = 'Changed';
		DELETE FROM inventory.outboxevent;
		INSERT INTO inventory.outboxevent VALUES ('4d47e190-0402-4048-bc2c-89dd54343cdc', 'Customer', '123', 'CustomerCreated', '{"name": "Sally"}')`)

	cl, err := kgo.NewClient(kgo.SeedBrokers(d.kafka), kgo.ConsumeRegex(), kgo.ConsumeTopics(`^(outbox\..*|dbserver1\..*)$`),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(500*time.Millisecond),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for len(recs) < 2 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
	}
	// Nothing else arrives: the update and the delete are dropped.
	late, cancelLate := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelLate()
	for ctx.Err() == nil && late.Err() == nil {
		cl.PollFetches(late).EachRecord(func(r *kgo.Record) { recs = append(recs, r) })
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2 (the two inserts)", len(recs))
	}
	want := []struct{ topic, key, id, typ, value string }{
		{"outbox.event.Order", `"1"`, "406c07f3-26f0-4eea-a50c-109940064b8f", "OrderCreated",
			`{"id":1,"lineItems":[{"item":"Debezium in Action","quantity":2}],"customerId":123}`},
		{"outbox.event.Customer", `"123"`, "4d47e190-0402-4048-bc2c-89dd54343cdc", "CustomerCreated", `{"name":"Sally"}`},
	}
	// Two topics: Kafka orders records per partition only, so the order in
	// which the consumer sees them is not the commit order; pair by topic.
	sort.Slice(recs, func(i, j int) bool { return recs[i].Topic > recs[j].Topic }) // Order before Customer
	for i, r := range recs {
		w := want[i]
		var k, v struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(r.Key, &k); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatal(err)
		}
		hs := map[string]string{}
		for _, h := range r.Headers {
			hs[h.Key] = string(h.Value)
		}
		if r.Topic != w.topic || string(k.Payload) != w.key || hs["id"] != w.id || hs["eventType"] != w.typ || string(v.Payload) != w.value {
			t.Fatalf("record %d: topic %s key %s headers %v value %s\nwant %+v", i, r.Topic, r.Key, hs, r.Value, w)
		}
		// The value schema is the one inferred from the JSON document.
		if w.topic == "outbox.event.Order" && !strings.Contains(string(r.Value), `"name":"payload"`) {
			t.Fatalf("expanded payload has no inferred struct schema: %s", r.Value)
		}
	}
	d.stop()
}
