package integration

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"
)

// Schema history through the binary: the connector's history topic lives
// on the worker's (embedded) broker, found through connect.WorkerInfo. The
// worker is SIGKILLed mid-stream; while it is down, rows are written
// around ADD COLUMN and DROP COLUMN, so the stored offset lies before both
// DDLs and information_schema already shows the last structure. After the
// restart every event must decode with the columns current when it was
// written, and the DDLs arrive as schema change events on dbserver1.
func TestMariaDBSchemaHistoryAcrossSIGKILL(t *testing.T) {
	ctx := context.Background()
	m := startMariaDB(t)
	mariaExec(t, m, `CREATE TABLE t (id int PRIMARY KEY, a int NOT NULL); INSERT INTO t VALUES (0, 0)`)
	d := newDaemon(t)
	d.start()
	code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": mariaConnector(m, map[string]string{
		"table.include.list":                  "inventory.t",
		"schema.history.internal.kafka.topic": "schema-changes.inventory",
	})})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("inv", "RUNNING")
	conn, err := m.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Execute(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	want := map[int]string{0: "a,id"} // id -> the columns its event must carry
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.t$`)
	c.until(1, 60*time.Second) // the snapshot (row 0) is done: the rest is streamed
	for i := 1; i <= 200; i++ {
		exec(`INSERT INTO t VALUES (?, ?)`, i, i)
		want[i] = "a,id"
	}
	c.until(100, 60*time.Second)
	// A kill before a streaming offset is stored would take the (empty)
	// snapshot again instead.
	waitStreamingOffset(t, d, "inv")
	d.kill()
	for i := 201; i <= 300; i++ {
		exec(`INSERT INTO t VALUES (?, ?)`, i, i)
		want[i] = "a,id"
	}
	exec(`ALTER TABLE t ADD COLUMN b varchar(10) NOT NULL DEFAULT 'x'`)
	for i := 301; i <= 400; i++ {
		exec(`INSERT INTO t VALUES (?, ?, 'y')`, i, i)
		want[i] = "a,b,id"
	}
	exec(`ALTER TABLE t DROP COLUMN a`)
	for i := 401; i <= 500; i++ {
		exec(`INSERT INTO t VALUES (?, 'z')`, i)
		want[i] = "b,id"
	}
	d.start()
	evs := c.until(501, 60*time.Second)
	evs = c.drain(time.Second)
	seen := map[int]bool{}
	for _, e := range evs {
		id := int(e.Key["id"].(float64))
		if e.Op != "c" && (id != 0 || e.Op != "r") {
			t.Fatalf("id %d: op %s", id, e.Op)
		}
		var cols []string
		for k := range e.After {
			cols = append(cols, k)
		}
		sort.Strings(cols)
		if got := strings.Join(cols, ","); got != want[id] {
			t.Fatalf("id %d decoded with columns %s, want %s", id, got, want[id])
		}
		if want[id] != "b,id" && e.After["a"].(float64) != float64(id) {
			t.Fatalf("id %d: a=%v", id, e.After["a"])
		}
		seen[id] = true
	}
	if len(seen) != 501 {
		t.Fatalf("%d of 501 rows arrived", len(seen))
	}

	sc := newConsumer(t, d.kafka, `^dbserver1$`)
	var ddls []string
	for _, e := range sc.drain(2 * time.Second) {
		var v struct {
			Payload struct {
				DDL string `json:"ddl"`
			} `json:"payload"`
		}
		json.Unmarshal(e.Raw, &v)
		ddls = append(ddls, v.Payload.DDL)
	}
	all := strings.Join(ddls, "\n")
	if !strings.Contains(all, "CREATE TABLE `t`") || !strings.Contains(all, "ADD COLUMN b") || !strings.Contains(all, "DROP COLUMN a") {
		t.Fatalf("schema change events: %q", ddls)
	}
	hist := newConsumer(t, d.kafka, `^schema-changes\.inventory$`)
	if n := len(hist.drain(2 * time.Second)); n < 8 {
		t.Fatalf("%d records in the schema history topic", n)
	}
	t.Logf("%d events, %d schema change events", len(evs), len(ddls))
	d.stop()
}
