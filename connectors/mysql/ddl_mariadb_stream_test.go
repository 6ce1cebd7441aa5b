package mysql

import (
	"context"
	"path"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// mariadbOnlyDDL is MariaDB DDL the TiDB parser rejects as written, each
// followed by rows that must decode with the columns it leaves. The
// expected values are MariaDB's own text for the values (SELECT):
// UUIDs as io.debezium.data.Uuid strings (Debezium's
// MariaDbValueConverters, DBZ-9027), INET6/INET4 as the server prints
// them; the implicit row_start/row_end of a system-versioned table are not
// in Debezium's table model, so not in the record; declared AS ROW START/END
// columns are, as Debezium's MariaDB grammar keeps them (ZonedTimestamp).
const mariadbOnlyDDL = `CREATE OR REPLACE TABLE t (id int PRIMARY KEY, u uuid, i6 inet6, i4 inet4) ENGINE=Aria PAGE_CHECKSUM=1 TRANSACTIONAL=1;
INSERT INTO t VALUES (1, '123e4567-e89b-12d3-a456-426655440000', '2001:db8::ff00:42:8329', '192.168.1.10');
INSERT INTO t VALUES (2, NULL, '::ffff:1.2.3.4', NULL);
CREATE TABLE sv (id int PRIMARY KEY, a int INVISIBLE) WITH SYSTEM VERSIONING;
INSERT INTO sv (id, a) VALUES (1, 10);
SET @@system_versioning_alter_history = KEEP;
ALTER TABLE sv WAIT 5 ADD COLUMN IF NOT EXISTS b varchar(10) NOT NULL DEFAULT 'x' AFTER id;
INSERT INTO sv (id, b, a) VALUES (2, 'y', 20);
ALTER TABLE sv DROP SYSTEM VERSIONING;
INSERT INTO sv (id, b, a) VALUES (3, 'z', 30);
CREATE TABLE per (id int, d1 date NOT NULL, d2 date NOT NULL, PERIOD FOR app(d1, d2), PRIMARY KEY (id, app WITHOUT OVERLAPS));
INSERT INTO per VALUES (1, '2020-01-01', '2020-01-03');
ALTER TABLE per ADD PERIOD IF NOT EXISTS FOR app(d1, d2), ADD COLUMN IF NOT EXISTS d1 date;
INSERT INTO per VALUES (2, '2020-01-02', '2020-01-04');
CREATE TABLE ex (id int PRIMARY KEY, s timestamp(6) GENERATED ALWAYS AS ROW START INVISIBLE, e timestamp(6) GENERATED ALWAYS AS ROW END INVISIBLE, PERIOD FOR SYSTEM_TIME(s, e)) WITH SYSTEM VERSIONING;
INSERT INTO ex (id) VALUES (1);
CREATE TABLE sv2 (id int PRIMARY KEY, g int AS (id * 2) PERSISTENT) WITH SYSTEM VERSIONING;
INSERT INTO sv2 (id) VALUES (1);
ALTER TABLE t NOWAIT ADD COLUMN IF NOT EXISTS n int INVISIBLE AFTER id;
ALTER ONLINE TABLE sv ADD COLUMN IF NOT EXISTS b int;
INSERT INTO t (id, n) VALUES (3, 7);
CREATE SEQUENCE seq START WITH 100;
SELECT NEXTVAL(seq);
RENAME TABLE IF EXISTS per TO per2;
INSERT INTO per2 VALUES (3, '2020-01-05', '2020-01-06');
`

// streamed: topic suffix and after fields (path.Match patterns) of the
// records mariadbOnlyDDL leaves, in binlog order.
var mariadbOnlyRecords = []string{
	"t id=1,u=123e4567-e89b-12d3-a456-426655440000,i6=2001:db8::ff00:42:8329,i4=192.168.1.10",
	"t id=2,u=null,i6=::ffff:1.2.3.4,i4=null",
	"sv id=1,a=10",
	"sv id=2,b=y,a=20",
	"sv id=3,b=z,a=30",
	"per id=1,d1=18262,d2=18264",
	"per id=2,d1=18263,d2=18265",
	"ex id=1,s=20*Z,e=2038-01-19T03:14:07.999999Z",
	"sv2 id=1,g=2",
	"t id=3,n=7,u=null,i6=null,i4=null",
	"per2 id=3,d1=18266,d2=18267",
}

func dataRecordsString(t *testing.T, rs []*connect.SourceRecord) []string {
	t.Helper()
	var out []string
	for _, r := range rs {
		out = append(out, r.Topic[strings.LastIndexByte(r.Topic, '.')+1:]+" "+afterFields(t, r))
	}
	return out
}

func matchRecords(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d:\n%s", what, len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if ok, _ := path.Match(want[i], got[i]); !ok {
			t.Errorf("%s: record %d: %s, want %s", what, i, got[i], want[i])
		}
	}
}

// TestMariaDBOnlyDDLWhileStreaming streams mariadbOnlyDDL with the default
// schema.history.internal.skip.unparseable.ddl=false: every statement is
// applied to the table model (none fails the task) and the rows after it
// decode with its columns. Then two restarts: from the snapshot's offset
// (the history gives the structures before all the DDL, which is read
// again from the binlog) and from the last record's offset (the structures
// come from the history topic alone, hidden columns and UUID types
// included) followed by new rows. Finally a fresh connector snapshots the
// same tables (information_schema) and streams one more row of the
// system-versioned table.
func TestMariaDBOnlyDDLWhileStreaming(t *testing.T) {
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory;\n"); err != nil {
		t.Fatal(err)
	}
	if err := m.Exec(ctx, "inventory", "CREATE TABLE t (id int PRIMARY KEY);\nINSERT INTO t VALUES (0);\n"); err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(m)
	cfg[KeyHistoryTopic] = "schema-changes.inventory"
	cfg[KeyHistoryBootstrap] = strings.Join(kf.ListenAddrs(), ",")
	task := startTask(t, cfg, nil)
	snap := pollData(t, task, 1)
	if got := afterFields(t, snap[0]); got != "id=0" {
		t.Fatalf("snapshot: %s", got)
	}
	if err := m.Exec(ctx, "inventory", mariadbOnlyDDL); err != nil {
		t.Fatal(err)
	}
	streamed := pollData(t, task, len(mariadbOnlyRecords))
	matchRecords(t, "streaming", dataRecordsString(t, streamed), mariadbOnlyRecords)
	if f := streamed[0].ValueSchema.Field("after").Schema.Field("u").Schema; f.Name != "io.debezium.data.Uuid" || f.Type != connect.String {
		t.Errorf("uuid column schema %s %s, want io.debezium.data.Uuid STRING", f.Name, f.Type)
	}
	task.Stop()

	// Restart before every DDL: the history recovers t as the snapshot saw
	// it, the DDL is applied again.
	again := startTask(t, cfg, snap[0].SourceOffset)
	matchRecords(t, "restart from the snapshot offset", dataRecordsString(t, pollData(t, again, len(mariadbOnlyRecords))), mariadbOnlyRecords)
	again.Stop()

	// Restart after every DDL: the structures come from the history topic.
	last := streamed[len(streamed)-1].SourceOffset
	after := startTask(t, cfg, last)
	if err := m.Exec(ctx, "inventory", "INSERT INTO sv2 (id) VALUES (2);\nINSERT INTO t (id, u) VALUES (4, 'ffffffff-0000-0000-0000-000000000001');\nINSERT INTO ex (id) VALUES (2);\n"); err != nil {
		t.Fatal(err)
	}
	matchRecords(t, "restart from the last offset", dataRecordsString(t, pollData(t, after, 3)), []string{
		"sv2 id=2,g=4", "t id=4,n=null,u=ffffffff-0000-0000-0000-000000000001,i6=null,i4=null", "ex id=2,s=20*Z,e=2038-01-19T03:14:07.999999Z"})
	after.Stop()

	// A new connector snapshots the tables (system-versioned ones too, not
	// the sequence), then streams a row of a system-versioned table.
	fresh := baseConfig(m)
	fresh[KeyServerID] = "184055"
	fresh[KeyIncludeSchemaChanges] = "false"
	task = startTask(t, fresh, nil)
	got := dataRecordsString(t, pollData(t, task, 14))
	matchRecords(t, "snapshot", got, []string{
		"ex id=1,s=20*Z,e=2038-01-19T03:14:07.999999Z", "ex id=2,s=20*Z,e=2038-01-19T03:14:07.999999Z",
		"per2 id=1,d1=18262,d2=18264", "per2 id=2,d1=18263,d2=18265", "per2 id=3,d1=18266,d2=18267",
		"sv id=1,b=x,a=10", "sv id=2,b=y,a=20", "sv id=3,b=z,a=30",
		"sv2 id=1,g=2", "sv2 id=2,g=4",
		"t id=1,n=null,u=123e4567-e89b-12d3-a456-426655440000,i6=2001:db8::ff00:42:8329,i4=192.168.1.10",
		"t id=2,n=null,u=null,i6=::ffff:1.2.3.4,i4=null",
		"t id=3,n=7,u=null,i6=null,i4=null",
		"t id=4,n=null,u=ffffffff-0000-0000-0000-000000000001,i6=null,i4=null",
	})
	if err := m.Exec(ctx, "inventory", "INSERT INTO sv2 (id) VALUES (3);\n"); err != nil {
		t.Fatal(err)
	}
	matchRecords(t, "streaming after the snapshot", dataRecordsString(t, pollData(t, task, 1)), []string{"sv2 id=3,g=6"})
}
