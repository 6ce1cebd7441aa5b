package mysql

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// historyRecords reads the records of a schema history topic: at least n,
// and whatever else arrives within half a second after them.
func historyRecords(t *testing.T, brokers []string, topic string, n int) []historyRecord {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []historyRecord
	read := func(d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var rec historyRecord
			if err := json.Unmarshal(r.Value, &rec); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, rec)
		})
	}
	for deadline := time.Now().Add(10 * time.Second); len(recs) < n && time.Now().Before(deadline); {
		read(time.Second)
	}
	read(500 * time.Millisecond)
	return recs
}

// historyDDLs is the "ddl" of each of historyRecords.
func historyDDLs(t *testing.T, brokers []string, topic string, n int) []string {
	t.Helper()
	var ddls []string
	for _, r := range historyRecords(t, brokers, topic, n) {
		ddls = append(ddls, r.DDL)
	}
	return ddls
}

// TestSchemaHistoryStoreOnlyCaptured: three tasks on the same server, with
// database.include.list=inventory and table.exclude.list=inventory.skip,
// see the same three ALTERs while streaming (a captured table, an excluded
// table of the captured database, a table of another database). As
// Debezium's HistorizedRelationalDatabaseConnectorConfig documents the
// keys (both default false): by default every DDL is stored;
// schema.history.internal.store.only.captured.databases.ddl=true keeps the
// two of database inventory; ….store.only.captured.tables.ddl=true keeps
// only the captured table's. The third task also has
// include.schema.changes=false: no record on the <topic.prefix> topic,
// while its history is still written.
func TestSchemaHistoryStoreOnlyCaptured(t *testing.T) {
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory;\nCREATE DATABASE other;\nCREATE TABLE other.x (id int PRIMARY KEY);\n"); err != nil {
		t.Fatal(err)
	}
	if err := m.Exec(ctx, "inventory", "CREATE TABLE t (id int PRIMARY KEY);\nCREATE TABLE skip (id int PRIMARY KEY);\nINSERT INTO t VALUES (1);\n"); err != nil {
		t.Fatal(err)
	}
	// The snapshot records every table's structure by default (grouped by
	// database, tables sorted by id), skips database other with
	// store.only.captured.databases.ddl, and records only the captured
	// table, without the database statements, with
	// store.only.captured.tables.ddl, as Debezium's snapshot (mariadiff
	// seeds 1, 2, 30, 31).
	snapAll := []string{"SET character_set_server", "DROP TABLE IF EXISTS `inventory`.`skip`", "DROP TABLE IF EXISTS `inventory`.`t`",
		"DROP TABLE IF EXISTS `other`.`x`", "DROP DATABASE IF EXISTS `inventory`", "CREATE DATABASE `inventory`", "USE `inventory`",
		"CREATE TABLE `skip`", "CREATE TABLE `t`", "DROP DATABASE IF EXISTS `other`", "CREATE DATABASE `other`", "USE `other`", "CREATE TABLE `x`"}
	snapDBs := []string{"SET character_set_server", "DROP TABLE IF EXISTS `inventory`.`skip`", "DROP TABLE IF EXISTS `inventory`.`t`",
		"DROP DATABASE IF EXISTS `inventory`", "CREATE DATABASE `inventory`", "USE `inventory`", "CREATE TABLE `skip`", "CREATE TABLE `t`"}
	snapTables := []string{"SET character_set_server", "DROP TABLE IF EXISTS `inventory`.`t`", "CREATE TABLE `t`"}
	variants := []struct {
		name, dbs, tables, schemaChanges string
		snap                             []string // the snapshot's DDLs stored
		want                             []string // streamed DDLs stored, in order
	}{
		// CREATE EVENT (about no table) and CREATE INDEX (no structure
		// change) are stored by default (mariadiff seed 131 and others)
		// and not with store.only.captured.tables.ddl (seeds 142, 185);
		// with ….databases.ddl as a statement of the captured database
		// (not compared with Debezium)
		{"default", "", "", "true", snapAll, []string{"ALTER TABLE t ", "ALTER TABLE skip ", "ALTER TABLE other.x ", "CREATE DEFINER=`root`@`localhost` EVENT", "CREATE INDEX ix"}},
		{"databases", "true", "", "true", snapDBs, []string{"ALTER TABLE t ", "ALTER TABLE skip ", "CREATE DEFINER=`root`@`localhost` EVENT", "CREATE INDEX ix"}},
		{"tables", "", "true", "false", snapTables, []string{"ALTER TABLE t "}},
	}
	tasks := make([]*Task, len(variants))
	all := make([][]*connect.SourceRecord, len(variants))
	for i, v := range variants {
		cfg := baseConfig(m)
		cfg[KeyServerID] = itoa(1000 + i)
		cfg[KeyTableExcludeList] = "inventory.skip"
		cfg[KeyHistoryTopic] = "history." + v.name
		cfg[KeyHistoryBootstrap] = strings.Join(kf.ListenAddrs(), ",")
		cfg[KeyIncludeSchemaChanges] = v.schemaChanges
		if v.dbs != "" {
			cfg[KeyStoreOnlyCapturedDBs] = v.dbs
		}
		if v.tables != "" {
			cfg[KeyStoreOnlyCapturedTables] = v.tables
		}
		tasks[i] = startTask(t, cfg, nil)
		all[i] = pollUntil(t, tasks[i], func(rs []*connect.SourceRecord) bool { return countData(rs) >= 1 })
	}
	if err := m.Exec(ctx, "inventory", "ALTER TABLE t ADD COLUMN a int;\nALTER TABLE skip ADD COLUMN a int;\n"+
		"ALTER TABLE other.x ADD COLUMN a int;\nCREATE EVENT ev ON SCHEDULE AT '2030-01-01 00:00:00' DO SELECT 1;\nCREATE INDEX ix ON t (a);\nINSERT INTO t VALUES (2, 2);\n"); err != nil {
		t.Fatal(err)
	}
	for i, v := range variants {
		all[i] = append(all[i], pollUntil(t, tasks[i], func(rs []*connect.SourceRecord) bool { return countData(rs) >= 1 })...)
		tasks[i].Stop()
		schemaChanges := len(all[i]) - countData(all[i])
		if v.schemaChanges == "false" && schemaChanges != 0 {
			t.Errorf("%s: include.schema.changes=false, yet %d schema change events", v.name, schemaChanges)
		}
		if v.schemaChanges == "true" && schemaChanges < 9 { // snapshot's 6 + ALTER TABLE t + CREATE EVENT + CREATE INDEX
			t.Errorf("%s: %d schema change events, want at least 9", v.name, schemaChanges)
		}
		snap := len(v.snap)
		ddls := historyDDLs(t, kf.ListenAddrs(), "history."+v.name, snap+len(v.want))
		if len(ddls) != snap+len(v.want) {
			t.Errorf("%s: history %q, want the snapshot's %q then %q", v.name, ddls, v.snap, v.want)
			continue
		}
		for j, w := range v.snap {
			if !strings.HasPrefix(ddls[j], w) {
				t.Errorf("%s: snapshot DDL %d is %q, want %q…", v.name, j, ddls[j], w)
			}
		}
		for j, w := range v.want {
			if !strings.HasPrefix(ddls[snap+j], w) {
				t.Errorf("%s: streamed DDL %d is %q, want %q…", v.name, j, ddls[snap+j], w)
			}
		}
	}
}

func countData(rs []*connect.SourceRecord) int {
	n := 0
	for _, r := range rs {
		if r.Topic != "dbserver1" {
			n++
		}
	}
	return n
}

// TestUnparseableDDL: MariaDB's automatic SYSTEM_TIME partitioning
// (PARTITION BY SYSTEM_TIME INTERVAL … AUTO, 10.9+) is DDL the TiDB parser
// rejects even after normalizeMariaDB. With schema.history.internal.skip.unparseable.ddl=false
// (Debezium's default) the task fails with an error naming the statement
// and the key that skips it; with true it is skipped (Debezium logs a
// warning) and streaming goes on.
func TestUnparseableDDL(t *testing.T) {
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory;\n"); err != nil {
		t.Fatal(err)
	}
	if err := m.Exec(ctx, "inventory", "CREATE TABLE t (id int PRIMARY KEY);\n"); err != nil {
		t.Fatal(err)
	}
	const ddl = "CREATE TABLE v (id int PRIMARY KEY) WITH SYSTEM VERSIONING PARTITION BY SYSTEM_TIME INTERVAL 1 WEEK AUTO"
	tasks := map[string]*Task{}
	for i, skip := range []string{"false", "true"} {
		cfg := baseConfig(m)
		cfg[KeyServerID] = itoa(2000 + i)
		cfg[KeySkipUnparseableDDL] = skip
		cfg[KeyIncludeSchemaChanges] = "false"
		tasks[skip] = startTask(t, cfg, nil)
	}
	// Let both finish the (empty) snapshot and start reading the binlog.
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (1);\n"); err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		pollN(t, task, 1)
	}
	if err := m.Exec(ctx, "inventory", ddl+";\nINSERT INTO t VALUES (2);\n"); err != nil {
		t.Fatal(err)
	}
	if got := afterFields(t, pollN(t, tasks["true"], 1)[0]); got != "id=2" {
		t.Errorf("skip.unparseable.ddl=true: streamed %s, want id=2", got)
	}
	var err error
	for deadline := time.Now().Add(30 * time.Second); err == nil && time.Now().Before(deadline); {
		var rs []*connect.SourceRecord
		rs, err = tasks["false"].Poll(ctx)
		if len(rs) > 0 {
			t.Fatalf("skip.unparseable.ddl=false: the task went on past the DDL: %v", rs[0].Value)
		}
	}
	if err == nil || !strings.Contains(err.Error(), ddl) || !strings.Contains(err.Error(), KeySkipUnparseableDDL+"=true") {
		t.Fatalf("skip.unparseable.ddl=false: error %v, want one naming %q and %s", err, ddl, KeySkipUnparseableDDL)
	}
}
