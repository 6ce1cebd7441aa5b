package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
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
