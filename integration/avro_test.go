package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// avroRecord is one line of testdata/avro_consume.py: a record decoded by
// Python confluent-kafka's AvroDeserializer with its SchemaRegistryClient.
type avroRecord struct {
	Topic         string         `json:"topic"`
	Offset        int64          `json:"offset"`
	KeySchemaID   int            `json:"key_schema_id"`
	ValueSchemaID *int           `json:"value_schema_id"`
	Key           map[string]any `json:"key"`
	Value         map[string]any `json:"value"`
}

// pyAvroConsume runs the Python consumer until it has read n records of
// topics from d's embedded broker, decoding them through d's registry.
func pyAvroConsume(t *testing.T, d *daemon, n int, topics ...string) []avroRecord {
	t.Helper()
	args := append([]string{"testdata/avro_consume.py", d.kafka, "http://" + d.schemaRegistry, fmt.Sprint(n), "60"}, topics...)
	cmd := exec.Command("python3", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("avro_consume.py: %v\n%s\n%s", err, stderr.String(), out)
	}
	var recs []avroRecord
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r avroRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		recs = append(recs, r)
	}
	return recs
}

// registryGet returns status and body of GET path on d's registry.
func registryGet(t *testing.T, d *daemon, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + d.schemaRegistry + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func registryDo(t *testing.T, d *daemon, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+d.schemaRegistry+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAvroEndToEnd runs connectd with key and value AvroConverter against
// a real PostgreSQL and its own embedded registry; Python confluent-kafka
// (AvroDeserializer + SchemaRegistryClient) decodes the topic. ALTER TABLE
// ADD COLUMN registers a second, BACKWARD-compatible version; a change the
// registry rejects fails the task with the registry's message.
func TestAvroEndToEnd(t *testing.T) {
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), "inventory"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, pg, readFile(t, inventorySQL))
	d := newDaemon(t)
	d.start()
	if code, body := registryGet(t, d, "/subjects"); code != 200 || body != "[]" {
		t.Fatalf("registry not up: %d %s", code, body)
	}
	url := "http://" + d.schemaRegistry
	cfg := pgConnector(pg, map[string]string{
		"table.include.list":                  "inventory.customers",
		"key.converter":                       "io.confluent.connect.avro.AvroConverter",
		"key.converter.schema.registry.url":   url,
		"value.converter":                     "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url": url,
	})
	if code, b := d.do("POST", "/connectors", map[string]any{"name": "avro", "config": cfg}); code != 201 {
		t.Fatalf("create: %d %s", code, b)
	}
	d.waitTaskState("avro", "RUNNING")
	const topic = "dbserver1.inventory.customers"

	// Snapshot: 4 rows.
	recs := pyAvroConsume(t, d, 4, topic)
	for _, r := range recs {
		if r.Value["op"] != "r" || r.KeySchemaID == 0 || r.ValueSchemaID == nil {
			t.Fatalf("snapshot record %+v", r)
		}
	}
	first := recs[0]
	after := first.Value["after"].(map[string]any)
	if after["first_name"] != "Sally" || after["email"] != "sally.thomas@acme.com" || first.Key["id"] != float64(1) {
		t.Fatalf("decoded %+v", first)
	}
	src := first.Value["source"].(map[string]any)
	if src["connector"] != "postgresql" || src["table"] != "customers" {
		t.Fatalf("source %+v", src)
	}
	v1 := *first.ValueSchemaID

	// A streamed insert, then a new nullable column: version 2.
	mustExec(t, pg, `INSERT INTO inventory.customers (first_name,last_name,email) VALUES ('Ada','Lovelace','ada@example.com')`)
	mustExec(t, pg, `ALTER TABLE inventory.customers ADD COLUMN phone varchar(32)`)
	mustExec(t, pg, `INSERT INTO inventory.customers (first_name,last_name,email,phone) VALUES ('Alan','Turing','alan@example.com','+44 1234')`)
	recs = pyAvroConsume(t, d, 6, topic)
	ins, evolved := recs[4], recs[5]
	if ins.Value["op"] != "c" || *ins.ValueSchemaID != v1 || ins.Value["after"].(map[string]any)["first_name"] != "Ada" {
		t.Fatalf("insert before ALTER: %+v", ins)
	}
	ea := evolved.Value["after"].(map[string]any)
	if evolved.Value["op"] != "c" || *evolved.ValueSchemaID == v1 || ea["phone"] != "+44 1234" || ea["first_name"] != "Alan" {
		t.Fatalf("insert after ALTER: %+v", evolved)
	}
	if code, body := registryGet(t, d, "/subjects/"+topic+"-value/versions"); code != 200 || body != "[1,2]" {
		t.Fatalf("value versions: %d %s", code, body)
	}
	if code, body := registryGet(t, d, "/subjects/"+topic+"-key/versions"); code != 200 || body != "[1]" {
		t.Fatalf("key versions: %d %s", code, body)
	}
	if code, body := registryGet(t, d, "/config/"+topic+"-value?defaultToGlobal=true"); code != 200 || body != `{"compatibilityLevel":"BACKWARD"}` {
		t.Fatalf("config: %d %s", code, body)
	}
	// Version 2 reads version 1 data: the registry's BACKWARD check.
	_, v1text := registryGet(t, d, "/subjects/"+topic+"-value/versions/1/schema")
	if !strings.Contains(v1text, `"connect.name":"dbserver1.inventory.customers.Envelope"`) {
		t.Fatalf("v1 schema %s", v1text)
	}
	_, v2text := registryGet(t, d, "/subjects/"+topic+"-value/versions/2/schema")
	if !strings.Contains(v2text, `{"name":"phone","type":["null","string"],"default":null}`) {
		t.Fatalf("v2 schema %s", v2text)
	}

	// FORWARD: dropping a required column is refused; the task fails with
	// the registry's message instead of writing records nobody can read.
	if code, body := registryDo(t, d, "PUT", "/config/"+topic+"-value", `{"compatibility":"FORWARD"}`); code != 200 {
		t.Fatalf("put config: %d %s", code, body)
	}
	mustExec(t, pg, `ALTER TABLE inventory.customers DROP COLUMN last_name`)
	mustExec(t, pg, `INSERT INTO inventory.customers (first_name,email) VALUES ('Grace','grace@example.com')`)
	st := d.waitTaskState("avro", "FAILED")
	if !strings.Contains(st.Tasks[0].Trace, "Schema being registered is incompatible with an earlier schema") {
		t.Fatalf("trace %q", st.Tasks[0].Trace)
	}
	time.Sleep(100 * time.Millisecond)
}
