package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/testenv"
)

// notificationsGolden locks the notification records (key and value as
// Kafka Connect's JsonConverter writes them, schemas enabled) of an initial
// snapshot and of an incremental snapshot. Regenerate with
// CONNECTD_UPDATE_GOLDEN=1.
const notificationsGolden = "testdata/notifications.json"

// notificationSources says where each part of the golden records comes
// from; it is written into the golden file.
var notificationSources = map[string]string{
	"topic":                "notification.sink.topic.name (Debezium 'Notifications' page: SinkNotificationChannel sends notifications to the configured topic)",
	"key":                  "io.debezium.connector.common.NotificationKey {id} (Debezium SchemaFactory.notificationKeySchema; SinkNotificationChannel keys the record by the notification id)",
	"value.schema":         "io.debezium.connector.common.Notification v1: id, type, aggregate_type (strings), additional_data (optional map string->string), timestamp (int64) (Debezium SchemaFactory.notificationValueSchema)",
	"id":                   "Debezium 'Notifications' page, 'Debezium notification format': a unique identifier; for incremental snapshot notifications the id of the execute-snapshot signal. Initial snapshot ids are random UUIDs, replaced by <uuid> here",
	"aggregate_type":       "Debezium 'Notifications' page: 'Initial Snapshot' / 'Incremental Snapshot'",
	"type":                 "Debezium 'Notifications' page: initial snapshot STARTED, IN_PROGRESS, TABLE_SCAN_COMPLETED, COMPLETED, ABORTED, SKIPPED; incremental snapshot STARTED, PAUSED, RESUMED, ABORTED, IN_PROGRESS, TABLE_SCAN_COMPLETED, COMPLETED",
	"additional_data":      "Debezium 'Notifications' page examples: connector_name always; IN_PROGRESS data_collections and current_collection_in_progress (incremental: also maximum_key, last_processed_key); TABLE_SCAN_COMPLETED data_collections, scanned_collection, total_rows_scanned, status (SUCCEEDED, EMPTY, ...)",
	"timestamp":            "Debezium 'Notifications' page: time the notification was created, ms since the epoch; replaced by 0 here",
	"additional_data.list": "data_collections joins the table ids with ',' (Debezium IncrementalSnapshotNotificationService.LIST_DELIMITER)",
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// notificationJSON renders a sink notification record through the JSON
// converter, checks its id and timestamp, and replaces them (when initial)
// with fixed values.
func notificationJSON(t *testing.T, r *connect.SourceRecord, start time.Time, fixedID bool) map[string]any {
	t.Helper()
	conv := converters.NewJSONConverter()
	dec := func(s *connect.Schema, v any) map[string]any {
		b, err := conv.FromConnect(r.Topic, s, v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	key, val := dec(r.KeySchema, r.Key), dec(r.ValueSchema, r.Value)
	p := val["payload"].(map[string]any)
	ts, _ := p["timestamp"].(json.Number).Int64()
	if ts < start.UnixMilli() || ts > time.Now().UnixMilli() {
		t.Errorf("notification timestamp %d outside the test's run", ts)
	}
	p["timestamp"] = 0
	if id := p["id"].(string); key["payload"].(map[string]any)["id"] != id {
		t.Errorf("key id %v != value id %s", key["payload"], id)
	}
	if fixedID {
		if !uuidRE.MatchString(p["id"].(string)) {
			t.Errorf("notification id %q is not a random UUID", p["id"])
		}
		p["id"] = "<uuid>"
		key["payload"].(map[string]any)["id"] = "<uuid>"
	}
	return map[string]any{"topic": r.Topic, "key": key, "value": val}
}

// notificationType returns a notification record's aggregate type and type
// ("" for other records).
func notificationType(r *connect.SourceRecord) (agg, typ string, data map[string]any) {
	if !isNotification(r) {
		return "", "", nil
	}
	v := r.Value.(*connect.Struct)
	return v.Get("aggregate_type").(string), v.Get("type").(string), v.Get("additional_data").(map[string]any)
}

// TestNotifications runs an initial snapshot of two tables (one thread)
// and an incremental snapshot with notification.enabled.channels=sink,log
// and compares the notification records, in their place among the change
// events, with the golden file; a restart from the completed snapshot's
// offset sends SKIPPED; the log channel writes each notification.
func TestNotifications(t *testing.T) {
	const db = "notif"
	pg, cfg := signalDB(t, db, 7, 3)
	exec(t, pg, db, `CREATE TABLE u (id int PRIMARY KEY); INSERT INTO u VALUES (1)`)
	cfg["snapshot.mode"] = "initial"
	cfg["table.include.list"] = `public\.(t|u)`
	cfg[KeyNotificationChannels] = "sink,log"
	cfg[KeyNotificationSinkTopic] = "__notifications"
	start := time.Now()
	off := &memOffsets{}
	task, lb := startTaskLog(t, cfg, off, nil)

	// The initial snapshot: 7 rows of t, 1 of u, 6 notifications.
	var got []map[string]any
	var order []string
	recs := pollN(t, task, 14)
	for _, r := range recs {
		if _, typ, data := notificationType(r); typ != "" {
			order = append(order, typ+"("+str(data["current_collection_in_progress"])+str(data["scanned_collection"])+")")
			got = append(got, notificationJSON(t, r, start, true))
			continue
		}
		order = append(order, ids([]*connect.SourceRecord{r}))
	}
	want := "STARTED() IN_PROGRESS(public.t) r:1 r:2 r:3 r:4 r:5 r:6 r:7 TABLE_SCAN_COMPLETED(public.t) IN_PROGRESS(public.u) r:1 TABLE_SCAN_COMPLETED(public.u) COMPLETED()"
	if s := strings.Join(order, " "); s != want {
		t.Fatalf("initial snapshot records:\n%s\nwant\n%s", s, want)
	}
	if m := sourceOf(recs[11]).Get("snapshot"); m != "last" || recs[11].SourceOffset["snapshot_completed"] != true {
		t.Fatalf("the last snapshot record (before the trailing notifications) has marker %v offset %v", m, recs[11].SourceOffset)
	}
	if !uniqueIDs(recs) {
		t.Error("initial snapshot notification ids repeat")
	}
	initial := got

	// An incremental snapshot of t (3 rows a chunk): the signal id is the
	// notifications' id.
	sendSignal(t, pg, db, "sig-1", "execute-snapshot", `{"data-collections": ["public.t"]}`)
	got, order = nil, nil
	deadline := time.Now().Add(30 * time.Second)
	for len(order) == 0 || order[len(order)-1] != "COMPLETED" {
		if time.Now().After(deadline) {
			t.Fatalf("no COMPLETED notification: %v", order)
		}
		b, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b {
			if r.Topic == signalTopic || r.Value == nil {
				continue
			}
			if _, typ, data := notificationType(r); typ != "" {
				order = append(order, typ+str(data["last_processed_key"]))
				got = append(got, notificationJSON(t, r, start, false))
				continue
			}
			order = append(order, ids([]*connect.SourceRecord{r}))
		}
	}
	want = "STARTED IN_PROGRESS3 r:1 r:2 r:3 IN_PROGRESS6 r:4 r:5 r:6 IN_PROGRESS7 r:7 TABLE_SCAN_COMPLETED COMPLETED"
	if s := strings.Join(order, " "); s != want {
		t.Fatalf("incremental snapshot records:\n%s\nwant\n%s", s, want)
	}
	incremental := got

	golden := map[string]any{"_sources": notificationSources, "initial_snapshot": initial, "incremental_snapshot": incremental}
	b, _ := json.MarshalIndent(golden, "", "  ")
	if os.Getenv("CONNECTD_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(notificationsGolden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantB, err := os.ReadFile(notificationsGolden)
	if err != nil {
		t.Fatal(err)
	}
	if string(wantB) != string(b)+"\n" {
		t.Errorf("notification records differ from %s:\n%s", notificationsGolden, b)
	}
	for _, s := range []string{`msg="[Notification Service] Initial Snapshot STARTED"`, `msg="[Notification Service] Initial Snapshot COMPLETED"`,
		`msg="[Notification Service] Incremental Snapshot COMPLETED" id=sig-1`, `additional_data="connector_name=dbserver1, current_collection_in_progress=public.t, data_collections=public.t,public.u"`} {
		if !strings.Contains(lb.String(), s) {
			t.Errorf("log channel: no %s in\n%s", s, lb.String())
		}
	}
	task.Stop()

	// A restart from the completed snapshot's offset: no snapshot, SKIPPED.
	setOffset(off, recs[11].SourceOffset)
	task = startTask(t, cfg, off)
	if agg, typ, _ := notificationType(pollN(t, task, 1)[0]); agg != aggInitialSnapshot || typ != notifSkipped {
		t.Fatalf("restart: first record %s %s, want Initial Snapshot SKIPPED", agg, typ)
	}
}

// TestChunkedSnapshotNotifications: with chunked parallel reads each
// table's IN_PROGRESS comes before its first record and its
// TABLE_SCAN_COMPLETED (with the table's row count) after its last.
func TestChunkedSnapshotNotifications(t *testing.T) {
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), "cnotif"); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, "cnotif", `CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY);
		INSERT INTO a SELECT g FROM generate_series(1, 300) g; INSERT INTO b SELECT g FROM generate_series(1, 200) g`)
	cfg := baseConfig(pg, "cnotif")
	cfg[KeySnapshotMaxThreads] = "2"
	cfg[KeySnapshotMaxThreadsMultiplier] = "3"
	cfg[KeySnapshotFetchSize] = "10"
	cfg[KeyNotificationChannels] = "sink"
	cfg[KeyNotificationSinkTopic] = "notes"
	task := startTask(t, cfg, &memOffsets{})
	recs := pollN(t, task, 500+1+2+2+1)
	started, inProgress, done := map[string]bool{}, map[string]bool{}, map[string]bool{}
	rows := map[string]int{}
	for i, r := range recs {
		_, typ, data := notificationType(r)
		switch typ {
		case notifStarted:
			if i != 0 {
				t.Errorf("STARTED at %d", i)
			}
		case notifInProgress:
			inProgress[str(data["current_collection_in_progress"])] = true
		case notifTableScanCompleted:
			tb := str(data["scanned_collection"])
			done[tb] = true
			if want := map[string]string{"public.a": "300", "public.b": "200"}[tb]; data["total_rows_scanned"] != want || data["status"] != "SUCCEEDED" {
				t.Errorf("%s: TABLE_SCAN_COMPLETED %v", tb, data)
			}
			if rows[tb] != map[string]int{"public.a": 300, "public.b": 200}[tb] {
				t.Errorf("%s: TABLE_SCAN_COMPLETED after %d of its records", tb, rows[tb])
			}
		case notifCompleted:
			if i != len(recs)-1 {
				t.Errorf("COMPLETED at %d of %d", i, len(recs))
			}
		case "":
			tb := strings.TrimPrefix(r.Topic, "dbserver1.")
			if !inProgress[tb] || done[tb] {
				t.Fatalf("record %d of %s outside its IN_PROGRESS..TABLE_SCAN_COMPLETED", i, tb)
			}
			started[tb] = true
			rows[tb]++
		}
	}
	if len(done) != 2 || len(started) != 2 {
		t.Fatalf("tables completed %v", done)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func uniqueIDs(rs []*connect.SourceRecord) bool {
	seen := map[string]bool{}
	for _, r := range rs {
		if isNotification(r) {
			id := r.Value.(*connect.Struct).Get("id").(string)
			if seen[id] {
				return false
			}
			seen[id] = true
		}
	}
	return true
}

// TestNotificationConfigValidation: the sink channel needs a topic (as
// Debezium's SinkNotificationChannel validation), jmx is refused.
func TestNotificationConfigValidation(t *testing.T) {
	cfg := validConfig()
	cfg[KeyNotificationChannels] = "log, sink"
	// Debezium's message, plus the key to set: the REST 400 lists only the
	// messages, and before this it named notification.enabled.channels alone.
	if msg := errorsOn(cfg, KeyNotificationSinkTopic); !strings.Contains(msg, "Notification topic name must be provided") || !strings.Contains(msg, "set "+KeyNotificationSinkTopic) {
		t.Errorf("sink without a topic: %q", msg)
	}
	cfg[KeyNotificationSinkTopic] = "n"
	if errs := validate(cfg); len(errs) != 0 {
		t.Errorf("sink with a topic: %v", errs)
	}
	cfg[KeyNotificationChannels] = "jmx"
	if msg := errorsOn(cfg, KeyNotificationChannels); !strings.Contains(msg, "connectd has no JMX") {
		t.Errorf("jmx: %q", msg)
	}
	cfg[KeyNotificationChannels] = "sink,carrier-pigeon"
	if msg := errorsOn(cfg, KeyNotificationChannels); !strings.Contains(msg, "unknown notification channel") {
		t.Errorf("unknown channel: %q", msg)
	}
}
