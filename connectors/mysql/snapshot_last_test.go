package mysql

import (
	"fmt"
	"testing"

	"github.com/connectd/connectd/connect"
)

// TestSnapshotLastWithoutRows: the snapshot's last record is marked last
// whichever it is, as Debezium's BinlogSnapshotChangeEventSource
// postSnapshot marks the record its queue holds last: with no row to read
// (the captured table is empty, the table with a row is not captured;
// mariadiff seeds 85, 136: a table.include.list that matches nothing) and
// with snapshot.mode=no_data, it is the last schema change event (the
// CREATE TABLE of the last table), with source.snapshot "last" and an
// offset without "snapshot", so a restart streams; every other one is
// "true" with the snapshot's offset.
func TestSnapshotLastWithoutRows(t *testing.T) {
	_, _, cfg := inventoryWithHistory(t, "CREATE TABLE a_other (id int PRIMARY KEY);\nINSERT INTO a_other VALUES (1);\n"+
		"CREATE TABLE t (id int PRIMARY KEY);\n")
	cfg[KeyTableIncludeList] = `inventory\.t`
	cfg[KeyIncludeSchemaChanges] = "true"
	noData := map[string]string{}
	for k, v := range cfg {
		noData[k] = v
	}
	noData[KeyServerID] = "3002"
	noData[KeyHistoryTopic] = "schema-changes.no-data"
	noData[KeySnapshotMode] = "no_data"
	noData[KeyTableIncludeList] = `inventory\..*`
	// SET character_set_server, DROP TABLE a_other, t, DROP DATABASE,
	// CREATE DATABASE, USE, CREATE TABLE a_other, t
	const n = 8
	for name, c := range map[string]map[string]string{"initial": cfg, "no_data": noData} {
		task := startTask(t, c, nil)
		rs := pollN(t, task, n)
		var got []string
		for i, r := range rs {
			_, snap := r.SourceOffset["snapshot"]
			got = append(got, fmt.Sprintf("%s %s %v", r.Topic, snapshotMarker(r), snap))
			want := "dbserver1 true true"
			if i == n-1 {
				want = "dbserver1 last false"
				if ddl := r.Value.(*connect.Struct).Get("ddl").(string); len(ddl) < 14 || ddl[:14] != "CREATE TABLE `" {
					t.Errorf("%s: the last record is %q, want the CREATE TABLE of t", name, ddl)
				}
			}
			if got[i] != want {
				t.Errorf("%s: record %d: %s, want %s", name, i, got[i], want)
			}
		}
		task.Stop()
	}
}
