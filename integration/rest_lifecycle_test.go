package integration

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// waitConnectorState waits until name's connector has state and its tasks
// all have taskState ("" = no tasks).
func (d *daemon) waitConnectorState(name, state, taskState string) connectorStatus {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := d.status(name)
		ok := st.Connector.State == state
		if taskState == "" {
			ok = ok && len(st.Tasks) == 0
		} else {
			ok = ok && len(st.Tasks) > 0
			for _, tk := range st.Tasks {
				ok = ok && tk.State == taskState
			}
		}
		if ok {
			return st
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%s not %s/%s: %+v\n%s", name, state, taskState, st, d.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (d *daemon) mustDo(want int, method, path string, body any) []byte {
	d.t.Helper()
	code, b := d.do(method, path, body)
	if code != want {
		d.t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	return b
}

func customerIDs(evs []event) []int {
	var ids []int
	for _, e := range evs {
		if !e.Tombstone && e.After != nil {
			ids = append(ids, int(e.After["id"].(float64)))
		}
	}
	sort.Ints(ids)
	return ids
}

// PUT /connectors/{c}/pause parks the PostgreSQL task: no change event is
// produced while PAUSED (connector and task statuses), and after
// PUT /resume every change made meanwhile arrives, none lost, none twice
// (Kafka Connect's pause semantics: the task stays started and resumes
// from where it was).
func TestPauseResumePostgres(t *testing.T) {
	pg := startInventory(t)
	d := newDaemon(t)
	d.start()
	d.mustDo(201, "POST", "/connectors", map[string]any{"name": "inv", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.customers"})})
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.customers$`)
	c.until(4, 60*time.Second) // snapshot
	mustExec(t, pg, `INSERT INTO inventory.customers (first_name,last_name,email) VALUES ('a','b','before@pause')`)
	c.until(5, 60*time.Second)

	d.mustDo(202, "PUT", "/connectors/inv/pause", nil)
	d.waitConnectorState("inv", "PAUSED", "PAUSED")
	for i := 0; i < 20; i++ {
		mustExec(t, pg, fmt.Sprintf(`INSERT INTO inventory.customers (first_name,last_name,email) VALUES ('p%d','q','while%d@pause')`, i, i))
	}
	if evs := c.drain(3 * time.Second); len(evs) != 5 {
		t.Fatalf("%d events while PAUSED, want the 5 from before the pause", len(evs))
	}
	d.mustDo(202, "PUT", "/connectors/inv/resume", nil)
	d.waitConnectorState("inv", "RUNNING", "RUNNING")
	evs := c.until(25, 60*time.Second)
	evs = c.drain(2 * time.Second)
	if len(evs) != 25 {
		t.Fatalf("%d events after resume, want 25", len(evs))
	}
	ids := customerIDs(evs)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("customer %d twice: %v", ids[i], ids)
		}
	}
	var topics map[string]struct {
		Topics []string `json:"topics"`
	}
	json.Unmarshal(d.mustDo(200, "GET", "/connectors/inv/topics", nil), &topics)
	if got := topics["inv"].Topics; len(got) != 1 || got[0] != "dbserver1.inventory.customers" {
		t.Fatalf("active topics %v", got)
	}
	d.stop()
}

// KIP-875 with a real PostgreSQL: offsets can only be reset when STOPPED
// (400 otherwise); PUT /stop shuts the task down (no tasks in the status);
// GET /offsets shows the Debezium offset under {"server":"dbserver1"};
// DELETE /offsets removes it, and PUT /resume then snapshots again, since
// the connector reads its offset at task start (snapshot.mode=initial).
func TestStopResetOffsetsResnapshotsPostgres(t *testing.T) {
	pg := startInventory(t)
	d := newDaemon(t)
	d.start()
	d.mustDo(201, "POST", "/connectors", map[string]any{"name": "inv", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.customers"})})
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.customers$`)
	c.until(4, 60*time.Second)
	mustExec(t, pg, `UPDATE inventory.customers SET email='s@t.u' WHERE id=1`)
	c.until(5, 60*time.Second)
	time.Sleep(1500 * time.Millisecond) // > offset.flush.interval.ms

	if code, b := d.do("DELETE", "/connectors/inv/offsets", nil); code != 400 || !strings.Contains(string(b), "Connectors must be in the STOPPED state") {
		t.Fatalf("DELETE offsets while RUNNING: %d %s", code, b)
	}
	d.mustDo(204, "PUT", "/connectors/inv/stop", nil)
	d.waitConnectorState("inv", "STOPPED", "")
	var offs struct {
		Offsets []struct {
			Partition map[string]any `json:"partition"`
			Offset    map[string]any `json:"offset"`
		} `json:"offsets"`
	}
	json.Unmarshal(d.mustDo(200, "GET", "/connectors/inv/offsets", nil), &offs)
	// the Debezium offset, and connectd's relation history partitions
	// (connectors/postgres/relation_history.go)
	debezium := 0
	for _, o := range offs.Offsets {
		if _, ok := o.Partition["relation_history"]; ok && len(o.Partition) == 2 && o.Partition["server"] == "dbserver1" {
			continue
		}
		if len(o.Partition) != 1 || o.Partition["server"] != "dbserver1" || o.Offset["lsn"] == nil {
			t.Fatalf("offsets %+v", offs)
		}
		debezium++
	}
	if debezium != 1 {
		t.Fatalf("offsets %+v", offs)
	}
	// Nothing is produced while STOPPED.
	mustExec(t, pg, `UPDATE inventory.customers SET email='while@stopped' WHERE id=2`)
	if evs := c.drain(2 * time.Second); len(evs) != 5 {
		t.Fatalf("%d events while STOPPED, want 5", len(evs))
	}
	b := d.mustDo(200, "DELETE", "/connectors/inv/offsets", nil)
	if !strings.Contains(string(b), "have been reset successfully") {
		t.Fatalf("DELETE offsets: %s", b)
	}
	json.Unmarshal(d.mustDo(200, "GET", "/connectors/inv/offsets", nil), &offs)
	if len(offs.Offsets) != 0 {
		t.Fatalf("offsets after reset %+v", offs)
	}
	d.mustDo(202, "PUT", "/connectors/inv/resume", nil)
	d.waitConnectorState("inv", "RUNNING", "RUNNING")
	evs := c.until(9, 60*time.Second)
	snap := 0
	for _, e := range evs[5:] {
		if e.Op == "r" {
			snap++
		}
		if e.After != nil && e.After["id"] == 2.0 && e.After["email"] != "while@stopped" {
			t.Fatalf("re-snapshot read a stale row: %+v", e.After)
		}
	}
	if snap != 4 {
		t.Fatalf("%d snapshot reads after reset + resume, want 4 (a new snapshot)", snap)
	}
	d.stop()
}

// PUT /connectors/{c}/config on an existing connector answers 200 with the
// new ConnectorInfo and restarts the task with the new config: a table
// added to table.include.list is streamed from then on.
func TestPutConfigRestartsTaskPostgres(t *testing.T) {
	pg := startInventory(t)
	d := newDaemon(t)
	d.start()
	cfg := pgConnector(pg, map[string]string{"table.include.list": "inventory.customers"})
	d.mustDo(201, "PUT", "/connectors/inv/config", cfg)
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.(customers|products)$`)
	c.until(4, 60*time.Second)
	time.Sleep(1500 * time.Millisecond)
	cfg["table.include.list"] = "inventory.customers,inventory.products"
	b := d.mustDo(200, "PUT", "/connectors/inv/config", cfg)
	if !strings.Contains(string(b), `"table.include.list":"inventory.customers,inventory.products"`) {
		t.Fatalf("PUT config body %s", b)
	}
	d.waitConnectorState("inv", "RUNNING", "RUNNING")
	var tasks []struct {
		Config map[string]string `json:"config"`
	}
	json.Unmarshal(d.mustDo(200, "GET", "/connectors/inv/tasks", nil), &tasks)
	if len(tasks) != 1 || tasks[0].Config["table.include.list"] != "inventory.customers,inventory.products" {
		t.Fatalf("task configs %+v", tasks)
	}
	// The restarted task streams products (no new snapshot: the offset stays).
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; ; n++ {
		mustExec(t, pg, fmt.Sprintf(`INSERT INTO inventory.products (name, description, weight) VALUES ('new%d', 'd', 1.5)`, n))
		got := false
		for _, e := range c.drain(time.Second) {
			got = got || e.Topic == "dbserver1.inventory.products"
		}
		if got {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no products event after the config update\n%s", d.log.String())
		}
	}
	for _, e := range c.drain(time.Second) {
		if e.Topic == "dbserver1.inventory.products" && e.Op == "r" {
			t.Fatalf("products snapshotted after a config update: %+v", e)
		}
	}
	d.stop()
}

// PUT /connector-plugins/{p}/config/validate with a bad PostgreSQL config
// answers 200 with ConfigInfos naming each bad key, and POST /connectors
// with the same config answers 400 with the same messages, in order.
func TestValidateBadPostgresConfig(t *testing.T) {
	d := newDaemon(t)
	d.start()
	bad := map[string]string{
		"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
		"name":            "bad", "database.hostname": "localhost", "database.port": "99999", "database.user": "u",
		"topic.prefix": "x", "snapshot.mode": "sometimes", "plugin.name": "pgoutput",
	}
	var infos struct {
		Name       string   `json:"name"`
		ErrorCount int      `json:"error_count"`
		Groups     []string `json:"groups"`
		Configs    []struct {
			Definition *struct {
				Name string `json:"name"`
			} `json:"definition"`
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	b := d.mustDo(200, "PUT", "/connector-plugins/PostgresConnector/config/validate", bad)
	if err := json.Unmarshal(b, &infos); err != nil {
		t.Fatal(err)
	}
	errsOf := map[string][]string{}
	var msgs []string
	for _, c := range infos.Configs {
		if len(c.Value.Errors) > 0 {
			errsOf[c.Value.Name] = c.Value.Errors
			msgs = append(msgs, c.Value.Errors...)
		}
	}
	for _, k := range []string{"database.port", "database.dbname", "snapshot.mode"} {
		if len(errsOf[k]) == 0 {
			t.Errorf("no error for %s in %s", k, b)
		}
	}
	if infos.Name != "io.debezium.connector.postgresql.PostgresConnector" || infos.ErrorCount != len(msgs) || infos.Groups[0] != "Common" {
		t.Fatalf("ConfigInfos header: %+v", infos)
	}
	code, cb := d.do("POST", "/connectors", map[string]any{"name": "bad", "config": bad})
	var eb struct {
		Message string `json:"message"`
	}
	json.Unmarshal(cb, &eb)
	if code != 400 || !strings.Contains(eb.Message, fmt.Sprintf("contains the following %d error(s):\n%s\n", len(msgs), strings.Join(msgs, "\n"))) {
		t.Fatalf("POST /connectors: %d %s\nwant the validate messages %q", code, cb, msgs)
	}
	d.stop()
}

// Active topics are stored in the status topic as Kafka Connect's
// KafkaStatusBackingStore writes them: key
// "status-topic-<topic>:connector-<connector>", value
// {"topic":{"name","connector","task","discoverTimestamp"}}.
func TestActiveTopicsInStatusTopic(t *testing.T) {
	pg := startInventory(t)
	d := newDaemon(t)
	d.start()
	d.mustDo(201, "POST", "/connectors", map[string]any{"name": "inv", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.customers"})})
	newConsumer(t, d.kafka, `^dbserver1\.inventory\.customers$`).until(4, 60*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, r := range readTopic(t, d.kafka, "connect-status", 3) {
			if string(r.Key) != "status-topic-dbserver1.inventory.customers:connector-inv" {
				continue
			}
			var v struct {
				Topic map[string]any `json:"topic"`
			}
			json.Unmarshal(r.Value, &v)
			if got := jsonKeys(t, mustMarshal(v.Topic)); strings.Join(got, ",") != "connector,discoverTimestamp,name,task" ||
				v.Topic["name"] != "dbserver1.inventory.customers" || v.Topic["connector"] != "inv" || v.Topic["task"] != 0.0 {
				t.Fatalf("topic status %s", r.Value)
			}
			d.mustDo(202, "PUT", "/connectors/inv/topics/reset", nil)
			if b := d.mustDo(200, "GET", "/connectors/inv/topics", nil); string(b) != `{"inv":{"topics":[]}}` {
				t.Fatalf("topics after reset: %s", b)
			}
			d.stop()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no topic status record in connect-status")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
