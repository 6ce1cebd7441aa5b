package mysql

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// workerCtx is a task context whose worker gives its brokers
// (connect.WorkerInfoProvider), as the runtime's does.
type workerCtx struct {
	taskCtx
	brokers []string
}

func (c workerCtx) WorkerInfo() connect.WorkerInfo {
	return connect.WorkerInfo{BootstrapServers: c.brokers}
}

func afterFields(t *testing.T, r *connect.SourceRecord) string {
	t.Helper()
	a, _ := r.Value.(*connect.Struct).Get("after").(*connect.Struct)
	if a == nil {
		t.Fatalf("record without after: %v", r.Value)
	}
	var names []string
	for _, f := range a.Schema.Fields {
		names = append(names, f.Name+"="+strings.Trim(jsonString(a.Get(f.Name)), `"`))
	}
	return strings.Join(names, ",")
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

// pollData polls until n change events (not schema change events) arrive
// and returns them.
func pollData(t *testing.T, task *Task, n int) []*connect.SourceRecord {
	t.Helper()
	var data []*connect.SourceRecord
	pollUntil(t, task, func(rs []*connect.SourceRecord) bool {
		data = data[:0]
		for _, r := range rs {
			if r.Topic != "dbserver1" {
				data = append(data, r)
			}
		}
		return len(data) >= n
	})
	return data
}

// ADD COLUMN and DROP COLUMN while streaming; then a restart from an offset
// before both DDLs (as after a SIGKILL before the offset passed them): the
// schema history topic gives the structures of that position, so every
// event decodes with the columns that were current when it was written.
func TestSchemaHistoryRestartBeforeDDL(t *testing.T) {
	m, kf, cfg := inventoryWithHistory(t, "CREATE TABLE t (id int PRIMARY KEY, a int NOT NULL);\nINSERT INTO t VALUES (1, 10);\n")
	ctx := context.Background()

	task := startTask(t, cfg, nil)
	snap := pollData(t, task, 1)
	if got := afterFields(t, snap[0]); got != "id=1,a=10" {
		t.Fatalf("snapshot: %s", got)
	}
	changes := "INSERT INTO t VALUES (2, 20);\n" +
		"ALTER TABLE t ADD COLUMN b varchar(10) NOT NULL DEFAULT 'x' AFTER id;\n" +
		"INSERT INTO t VALUES (3, 'y', 30);\n" +
		"ALTER TABLE t DROP COLUMN a;\n" +
		"INSERT INTO t VALUES (4, 'z');\n"
	if err := m.Exec(ctx, "inventory", changes); err != nil {
		t.Fatal(err)
	}
	want := []string{"id=2,a=20", "id=3,b=y,a=30", "id=4,b=z"}
	got := pollData(t, task, 3)
	for i, r := range got {
		if f := afterFields(t, r); f != want[i] {
			t.Errorf("streamed record %d: %s, want %s", i, f, want[i])
		}
	}
	task.Stop()

	// The history topic holds Debezium's records: the snapshot's CREATE,
	// then both ALTERs with their positions.
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.ConsumeTopics(cfg[KeyHistoryTopic]),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var ddls []string
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for len(ddls) < 8 && pctx.Err() == nil {
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
			var rec map[string]json.RawMessage
			if err := json.Unmarshal(r.Value, &rec); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"source", "position", "ts_ms", "databaseName", "ddl", "tableChanges"} {
				if _, ok := rec[k]; !ok {
					t.Fatalf("history record without %s: %s", k, r.Value)
				}
			}
			var ddl string
			json.Unmarshal(rec["ddl"], &ddl)
			ddls = append(ddls, ddl)
		})
	}
	// SET character_set_server, DROP TABLE, DROP/CREATE DATABASE, USE,
	// CREATE TABLE (the snapshot's), then the two ALTERs.
	if len(ddls) != 8 || !strings.HasPrefix(ddls[5], "CREATE TABLE `t`") || !strings.Contains(ddls[6], "ADD COLUMN b") || !strings.Contains(ddls[7], "DROP COLUMN a") {
		t.Fatalf("history DDLs: %q", ddls)
	}

	// Restart from the snapshot's offset (before both DDLs); the brokers
	// now come from the worker.
	delete(cfg, KeyHistoryBootstrap)
	again := newTask(flavorMariaDB)
	if err := again.Start(ctx, workerCtx{taskCtx{&memOffsets{snap[0].SourceOffset}}, kf.ListenAddrs()}, cfg); err != nil {
		t.Fatal(err)
	}
	defer again.Stop()
	replay := pollData(t, again, 3)
	for i, r := range replay {
		if f := afterFields(t, r); f != want[i] {
			t.Errorf("after restart, record %d: %s, want %s", i, f, want[i])
		}
	}
}

// snapshot.mode=no_data records the structures (schema change events, and
// the history when configured) but no rows; the last schema change event's
// offset marks the snapshot complete, then streaming starts.
func TestNoDataSnapshotRecordsSchema(t *testing.T) {
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory;\n"); err != nil {
		t.Fatal(err)
	}
	if err := m.Exec(ctx, "inventory", "CREATE TABLE t (id int PRIMARY KEY);\nINSERT INTO t VALUES (1);\n"); err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(m)
	cfg[KeySnapshotMode] = "no_data"
	task := startTask(t, cfg, nil)
	// SET, DROP TABLE, DROP DATABASE, CREATE DATABASE, USE, CREATE TABLE
	sc := pollN(t, task, 6)
	for i, r := range sc {
		if r.Topic != "dbserver1" {
			t.Fatalf("record %d on %s", i, r.Topic)
		}
		_, unfinished := r.SourceOffset["snapshot"]
		if unfinished != (i < 5) {
			t.Fatalf("record %d offset %v", i, r.SourceOffset)
		}
	}
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (2);\n"); err != nil {
		t.Fatal(err)
	}
	if got := afterFields(t, pollN(t, task, 1)[0]); got != "id=2" {
		t.Fatalf("streamed %s", got)
	}
}

// TestRenameIsOneAlter: RENAME TABLE and ALTER TABLE … RENAME TO are one
// ALTER of the new id in the schema change event (source.table the new
// name) and in the history, as Debezium's (mariadiff seeds 7, 22, 142); a
// task restarted from the history after them has the tables under their
// new names only (renamedFrom drops the old ids).
func TestRenameIsOneAlter(t *testing.T) {
	m, kf, cfg := inventoryWithHistory(t, "CREATE TABLE a (id int PRIMARY KEY);\nCREATE TABLE b (id int PRIMARY KEY, v int);\nINSERT INTO a VALUES (1);\n")
	ctx := context.Background()
	task := startTask(t, cfg, nil)
	pollData(t, task, 1)
	if err := m.Exec(ctx, "inventory", "RENAME TABLE a TO a2;\nALTER TABLE b RENAME TO `b 2`;\nINSERT INTO a2 VALUES (2);\n"); err != nil {
		t.Fatal(err)
	}
	rs := pollUntil(t, task, func(rs []*connect.SourceRecord) bool { return countData(rs) >= 1 })
	var alters []string
	for _, r := range rs {
		if r.Topic != "dbserver1" {
			continue
		}
		v := r.Value.(*connect.Struct)
		for _, ch := range v.Get("tableChanges").([]any) {
			c := ch.(*connect.Struct)
			alters = append(alters, fmt.Sprintf("%s %s (source.table %v)", c.Get("type"), c.Get("id"), v.Get("source").(*connect.Struct).Get("table")))
		}
	}
	want := `[ALTER "inventory"."a2" (source.table a2) ALTER "inventory"."b 2" (source.table b 2)]`
	if fmt.Sprint(alters) != want {
		t.Errorf("schema changes %v\nwant %s", alters, want)
	}
	last := rs[len(rs)-1]
	task.Stop()
	// the history: RENAME TABLE's ALTER has previousId, ALTER … RENAME TO's
	// not, as Debezium's (mariadiff seeds 7, 142)
	var prev []string
	for _, rec := range historyRecords(t, kf.ListenAddrs(), cfg[KeyHistoryTopic], 8) {
		if strings.Contains(rec.DDL, "RENAME") {
			prev = append(prev, rec.TableChanges[0].ID+" previousId="+rec.TableChanges[0].PreviousID)
		}
	}
	if want := `["inventory"."a2" previousId="inventory"."a" "inventory"."b 2" previousId=]`; fmt.Sprint(prev) != want {
		t.Errorf("history renames %v\nwant %s", prev, want)
	}

	delete(cfg, KeyHistoryBootstrap)
	again := newTask(flavorMariaDB)
	if err := again.Start(ctx, workerCtx{taskCtx{&memOffsets{last.SourceOffset}}, kf.ListenAddrs()}, cfg); err != nil {
		t.Fatal(err)
	}
	defer again.Stop()
	var ids []string
	for id := range again.catalog {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if fmt.Sprint(ids) != "[inventory.a2 inventory.b 2]" {
		t.Errorf("catalog after the restore: %v, want inventory.a2 and inventory.b 2 only", ids)
	}
	if err := m.Exec(ctx, "inventory", "INSERT INTO `b 2` VALUES (5, 50);\n"); err != nil {
		t.Fatal(err)
	}
	if got := afterFields(t, pollData(t, again, 1)[0]); got != "id=5,v=50" {
		t.Errorf("after the restore: %s", got)
	}
}

// inventoryWithHistory is a MariaDB with database inventory made by setup,
// a kfake cluster (closed at the test's end) and a connector config whose
// schema history topic is on it.
func inventoryWithHistory(t *testing.T, setup string) (*testenv.MariaDB, *kfake.Cluster, map[string]string) {
	t.Helper()
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kf.Close)
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory;\n"); err != nil {
		t.Fatal(err)
	}
	if err := m.Exec(ctx, "inventory", setup); err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(m)
	cfg[KeyHistoryTopic] = "schema-changes.inventory"
	cfg[KeyHistoryBootstrap] = strings.Join(kf.ListenAddrs(), ",")
	return m, kf, cfg
}
