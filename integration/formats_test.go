package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// readTopic returns every record of topic (all partitions) within timeout.
func readTopic(t *testing.T, broker, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// readAll reads topic from the start until a poll brings nothing new.
func readAll(t *testing.T, broker, topic string) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		n := len(out)
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
		if len(out) == n {
			return out
		}
	}
}

// relationHistoryKey matches the offsets-topic key of a relation history
// partition of connector inv.
var relationHistoryKey = regexp.MustCompile(`^\["inv",\{"server":"dbserver1","relation_history":"(state|[0-9]+)"\}\]$|^\["inv",\{"relation_history":"(state|[0-9]+)","server":"dbserver1"\}\]$`)

// waitOffset reads connect-offsets until a record contains want, and
// returns every record read.
func waitOffset(t *testing.T, broker, want string) []*kgo.Record {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		recs := readAll(t, broker, "connect-offsets")
		for _, r := range recs {
			if bytes.Contains(r.Value, []byte(want)) {
				return recs
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no offset record with %s in connect-offsets (%d records)", want, len(recs))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// The internal topics hold Kafka Connect's formats, so that a connector can
// move between Kafka Connect and connectd:
//   - connect-offsets: key ["<connector>",{"server":"<topic.prefix>"}]
//     (OffsetStorageWriter, JsonConverter schemas.enable=false) and the
//     Debezium PostgreSQL offset fields as captured from Debezium 3.6.1 in
//     testdata/debezium/pg_inventory_snapshot_stream.jsonl.offsets.jsonl;
//   - connect-configs: connector-<name> {"properties":{...}}, task-<name>-0,
//     commit-<name> {"tasks":1}, target-state-<name> (KafkaConfigBackingStore);
//   - connect-status: status-connector-<name>, status-task-<name>-0 with
//     state/trace/worker_id/generation (KafkaStatusBackingStore).
//
// REST bodies follow Kafka Connect's ConnectorInfo / ConnectorStateInfo
// field names and order (connect-runtime rest/entities).
func TestKafkaConnectFormats(t *testing.T) {
	pg := startInventory(t)
	d := newDaemon(t)
	d.start()
	code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.customers"})})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	// As a Kafka Connect 4.3 worker answers a creation: "tasks": [] until the tasks exist.
	wantInfo := `{"name":"inv","config":{`
	if !strings.HasPrefix(string(body), wantInfo) || !strings.Contains(string(body), `"tasks":[],"type":"source"}`) {
		t.Fatalf("POST /connectors body: %s", body)
	}
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.customers$`)
	c.until(4, 60*time.Second)
	// One flush stores only the newest offset per partition, so wait for the
	// snapshot's completed offset before streaming a change.
	waitOffset(t, d.kafka, `"snapshot_completed":true`)
	mustExec(t, pg, `UPDATE inventory.customers SET email='x@y.z' WHERE id=1`)
	c.until(5, 60*time.Second)
	offs := waitOffset(t, d.kafka, `"messageType":"UPDATE"`)
	history := 0
	for _, r := range offs {
		if relationHistoryKey.Match(r.Key) {
			// connectd's own partitions of the connector (the catalog facts
			// its stream schemas were built from, so that a replay is the
			// same record: connectors/postgres/relation_history.go), in the
			// same format; Debezium ignores them
			history++
			continue
		}
		if string(r.Key) != `["inv",{"server":"dbserver1"}]` {
			t.Fatalf("offset key %s", r.Key)
		}
	}
	if history == 0 {
		t.Fatal("no relation history partition after a streamed change")
	}
	snapKeys := []string{"last_snapshot_record", "lsn", "snapshot", "snapshot_completed", "ts_usec", "txId"}
	completed := false
	for _, r := range offs {
		if !bytes.Contains(r.Value, []byte(`"snapshot":`)) {
			continue
		}
		if got := jsonKeys(t, r.Value); !reflect.DeepEqual(got, snapKeys) {
			t.Fatalf("snapshot offset keys %v, want %v (%s)", got, snapKeys, r.Value)
		}
		completed = completed || bytes.Contains(r.Value, []byte(`"last_snapshot_record":true`)) && bytes.Contains(r.Value, []byte(`"snapshot":"INITIAL"`))
	}
	if !completed {
		t.Fatal("no offset marks the snapshot completed")
	}
	last := offs[len(offs)-1].Value
	streamKeys := []string{"lsn", "lsn_proc", "messageType", "ts_usec", "txId"} // lsn_commit absent for the first streamed transaction, as Debezium
	if got := jsonKeys(t, last); !reflect.DeepEqual(got, streamKeys) {
		t.Fatalf("stream offset keys %v, want %v (%s)", got, streamKeys, last)
	}
	if !bytes.Contains(last, []byte(`"messageType":"UPDATE"`)) {
		t.Fatalf("stream offset %s", last)
	}

	cfgs := readTopic(t, d.kafka, "connect-configs", 4)
	var keys []string
	for _, r := range cfgs {
		keys = append(keys, string(r.Key))
	}
	wantKeys := []string{"connector-inv", "target-state-inv", "task-inv-0", "commit-inv"}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Fatalf("config records %v, want %v", keys, wantKeys)
	}
	if !bytes.HasPrefix(cfgs[0].Value, []byte(`{"properties":{`)) || string(cfgs[3].Value) != `{"tasks":1}` {
		t.Fatalf("config values %s / %s", cfgs[0].Value, cfgs[3].Value)
	}

	status := readTopic(t, d.kafka, "connect-status", 2)
	seen := map[string]bool{}
	for _, r := range status {
		if strings.HasPrefix(string(r.Key), "status-topic-") {
			continue // KIP-558 active topic records: see TestActiveTopicsInStatusTopic
		}
		seen[string(r.Key)] = true
		// Kafka Connect 4.3's KafkaStatusBackingStore writes state, trace,
		// worker_id, generation and (since 4.1, KIP-891) version: read off
		// connect-runtime-4.3.0.jar with javap.
		if got := jsonKeys(t, r.Value); !reflect.DeepEqual(got, []string{"generation", "state", "trace", "version", "worker_id"}) {
			t.Fatalf("status value keys %v (%s)", got, r.Value)
		}
	}
	if !seen["status-connector-inv"] || !seen["status-task-inv-0"] {
		t.Fatalf("status keys %v", seen)
	}

	// GET /connectors/inv/status: ConnectorStateInfo; Kafka Connect 4.x adds
	// the plugin's version to each state (KIP-891; seen in the real Kafka
	// Connect 4.3 capture, integration/testdata/connect-compat).
	_, body = d.do("GET", "/connectors/inv/status", nil)
	wantStatus := `{"name":"inv","connector":{"state":"RUNNING","worker_id":"` + strings.TrimPrefix(d.rest, "http://") + `","version":"3.6.1.Final"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"` + strings.TrimPrefix(d.rest, "http://") + `","version":"3.6.1.Final"}],"type":"source"}`
	if strings.TrimSpace(string(body)) != wantStatus {
		t.Fatalf("status body\n got %s\nwant %s", body, wantStatus)
	}
	_, body = d.do("GET", "/", nil)
	if got := jsonKeys(t, body); !reflect.DeepEqual(got, []string{"commit", "kafka_cluster_id", "version"}) {
		t.Fatalf("GET / %s", body)
	}

	// connectd topics tail prints key and value as JSON lines.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binPath, "topics", "tail", "dbserver1.inventory.customers", "--from-beginning", "--max-records", "5",
		"-o", "embedded.kafka.listener="+d.kafka).Output()
	if err != nil {
		t.Fatalf("topics tail: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 5 {
		t.Fatalf("topics tail printed %d lines:\n%s", len(lines), out)
	}
	var rec struct {
		Key   struct{ Payload map[string]any } `json:"key"`
		Value struct {
			Payload struct {
				Op    string         `json:"op"`
				After map[string]any `json:"after"`
			} `json:"payload"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(lines[4]), &rec); err != nil {
		t.Fatalf("%s: %v", lines[4], err)
	}
	if rec.Value.Payload.Op != "u" || rec.Value.Payload.After["email"] != "x@y.z" || rec.Key.Payload["id"] != 1.0 {
		t.Fatalf("last tailed record %s", lines[4])
	}
	d.stop()
}
