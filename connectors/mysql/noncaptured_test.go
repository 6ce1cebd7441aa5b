package mysql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// TestNonCapturedTableStructures: as Debezium
// (schema.history.internal.store.only.captured.tables.ddl=false, its
// default), the snapshot reads and the schema history keeps the structure
// of every table, captured or not (mariadiff seeds 1, 2, 15, 42). So, with
// table.exclude.list=inventory.skip,inventory.gone:
//   - an ALTER of the excluded table skip is a schema change event with its
//     tableChanges (source.table skip), and its rows give no record;
//   - CREATE TABLE t2 LIKE skip while streaming gives t2 the altered
//     structure (seed 15 failed the task: "LIKE … is not known");
//   - after a restart from the history, CREATE TABLE t3 LIKE skip works
//     too, and gone renamed into the captured set, written and dropped
//     before the task reads the binlog, decodes with the structure the
//     history has (seed 42 read it from information_schema and failed:
//     "has no columns (dropped?)").
//
// With store.only.captured.tables.ddl=true only the captured tables are
// tracked, as Debezium's: the ALTER of skip is no schema change event, and
// the LIKE fails the task naming the statement and its binlog position,
// never a wrong event.
func TestNonCapturedTableStructures(t *testing.T) {
	m, kf, cfg := inventoryWithHistory(t, "CREATE TABLE t (id int PRIMARY KEY);\n"+
		"CREATE TABLE skip (id int PRIMARY KEY, v varchar(10));\nCREATE TABLE gone (id int PRIMARY KEY, x int);\nINSERT INTO t VALUES (1);\n")
	ctx := context.Background()
	cfg[KeyTableExcludeList] = `inventory\.skip,inventory\.gone`
	cfg[KeyIncludeSchemaChanges] = "true"
	task := startTask(t, cfg, nil)
	pollData(t, task, 1)

	only := map[string]string{}
	for k, v := range cfg {
		only[k] = v
	}
	only[KeyServerID] = "3001"
	only[KeyHistoryTopic] = "schema-changes.only-captured"
	only[KeyStoreOnlyCapturedTables] = "true"
	onlyTask := startTask(t, only, nil)
	pollData(t, onlyTask, 1)

	if err := m.Exec(ctx, "inventory", "ALTER TABLE skip ADD COLUMN w int;\nINSERT INTO skip VALUES (9, 'z', 9);\n"+
		"CREATE TABLE t2 LIKE skip;\nINSERT INTO t2 VALUES (1, 'a', 2);\n"); err != nil {
		t.Fatal(err)
	}
	rs := pollUntil(t, task, func(rs []*connect.SourceRecord) bool { return countData(rs) >= 1 })
	var changes []string
	var data []string
	for _, r := range rs {
		if r.Topic != "dbserver1" {
			data = append(data, r.Topic+" "+afterFields(t, r))
			continue
		}
		v := r.Value.(*connect.Struct)
		for _, ch := range v.Get("tableChanges").([]any) {
			c := ch.(*connect.Struct)
			changes = append(changes, fmt.Sprintf("%s %s (source.table %v)", c.Get("type"), c.Get("id"), v.Get("source").(*connect.Struct).Get("table")))
		}
	}
	if want := `[ALTER "inventory"."skip" (source.table skip) CREATE "inventory"."t2" (source.table t2)]`; fmt.Sprint(changes) != want {
		t.Errorf("schema changes %v\nwant %s", changes, want)
	}
	if want := "[dbserver1.inventory.t2 id=1,v=a,w=2]"; fmt.Sprint(data) != want {
		t.Errorf("streamed %v, want %s", data, want)
	}
	last := rs[len(rs)-1]
	task.Stop()

	var err error
	for deadline := time.Now().Add(30 * time.Second); err == nil && time.Now().Before(deadline); {
		var rs []*connect.SourceRecord
		rs, err = onlyTask.Poll(ctx)
		for _, r := range rs {
			if r.Topic != "dbserver1" {
				t.Fatalf("store.only.captured.tables.ddl=true: the task went on past the LIKE: %s %v", r.Topic, r.Value)
			}
			if ddl, _ := r.Value.(*connect.Struct).Get("ddl").(string); strings.Contains(ddl, "skip") {
				// as Debezium: a DDL leaving no captured table is no
				// schema change event (mariadiff seeds 32, 54)
				t.Errorf("store.only.captured.tables.ddl=true: schema change event for %q", ddl)
			}
		}
	}
	if err == nil || !strings.Contains(err.Error(), "CREATE TABLE t2 LIKE skip") || !strings.Contains(err.Error(), "is not known at binlog ") {
		t.Errorf("store.only.captured.tables.ddl=true: error %v, want one naming the LIKE and its binlog position", err)
	}
	onlyTask.Stop()

	// While the task is stopped: written and dropped before it reads them.
	if err := m.Exec(ctx, "inventory", "CREATE TABLE t3 LIKE skip;\nINSERT INTO t3 VALUES (3, 'c', 4);\n"+
		"RENAME TABLE gone TO back;\nINSERT INTO back VALUES (5, 6);\nDROP TABLE back;\n"); err != nil {
		t.Fatal(err)
	}
	delete(cfg, KeyHistoryBootstrap)
	again := newTask(flavorMariaDB)
	if err := again.Start(ctx, workerCtx{taskCtx{&memOffsets{last.SourceOffset}}, kf.ListenAddrs()}, cfg); err != nil {
		t.Fatal(err)
	}
	defer again.Stop()
	data = data[:0]
	for _, r := range pollData(t, again, 2) {
		data = append(data, r.Topic+" "+afterFields(t, r))
	}
	if want := "[dbserver1.inventory.t3 id=3,v=c,w=4 dbserver1.inventory.back id=5,x=6]"; fmt.Sprint(data) != want {
		t.Errorf("after the restart: %v, want %s", data, want)
	}
}
