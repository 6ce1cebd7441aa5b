package mysql

import (
	"context"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/testenv"
)

// TestHeartbeats runs the MariaDB task with heartbeat.interval.ms=200 and a
// heartbeat.action.query on a real MariaDB:
//   - heartbeat records go to __debezium-heartbeat.<topic.prefix> with the
//     key and value of Debezium's HeartbeatImpl (schemas compared with the
//     heartbeat Debezium 3.6.1 wrote in testdata/debezium/pg_heartbeat.jsonl:
//     the same class serves every connector);
//   - the action query runs (a counter in an uncaptured table grows) and
//     the heartbeats' binlog position moves forward with it while no
//     captured table changes, as Debezium's docs describe heartbeats;
//   - a heartbeat's offset is a clean restart point: a task started from
//     it emits the next change and not the one before it.
func TestHeartbeats(t *testing.T) {
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	if err := m.Exec(ctx, "", `CREATE DATABASE inventory;
CREATE TABLE inventory.t (id INT PRIMARY KEY, v INT);
CREATE TABLE inventory.hb (id INT PRIMARY KEY, n INT);
INSERT INTO inventory.t VALUES (1, 1);`); err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(m)
	cfg[KeyTableIncludeList] = "inventory.t"
	cfg[KeyIncludeSchemaChanges] = "false"
	cfg[KeyHeartbeatIntervalMs] = "200"
	cfg[KeyHeartbeatActionQuery] = "INSERT INTO inventory.hb VALUES (1, 1) ON DUPLICATE KEY UPDATE n = n + 1"
	const topic = "__debezium-heartbeat.dbserver1"
	isBeat := func(r *connect.SourceRecord) bool { return r.Topic == topic }
	countBeats := func(n int) func([]*connect.SourceRecord) bool {
		return func(rs []*connect.SourceRecord) bool {
			c := 0
			for _, r := range rs {
				if isBeat(r) {
					c++
				}
			}
			return c >= n
		}
	}
	task := startTask(t, cfg, nil)
	got := pollUntil(t, task, countBeats(3))
	if got[0].Topic != "dbserver1.inventory.t" || snapshotMarker(got[0]) != snapLast {
		t.Fatalf("first record: %s %q, want the snapshot's only row", got[0].Topic, snapshotMarker(got[0]))
	}
	var beats []*connect.SourceRecord
	for _, r := range got[1:] {
		if !isBeat(r) {
			t.Fatalf("unexpected record on %s", r.Topic)
		}
		beats = append(beats, r)
	}

	// Key and value as Debezium's (schemas and the serverName payload).
	conv := converters.NewJSONConverter()
	var want string
	for _, l := range readLines(t, "../../testdata/debezium/pg_heartbeat.jsonl") {
		if strings.Contains(l, `"topic":"`+topic+`"`) {
			want = l
			break
		}
	}
	gotLine := recordLine(t, conv, beats[0]) // ts_ms masked
	if want == "" || gotLine != maskLine(want) {
		t.Errorf("heartbeat record:\n got: %s\nwant: %s", gotLine, want)
	}

	// The action query ran, and the position moves with its transactions
	// (they reach the binlog reader a moment after the heartbeat that ran
	// them: wait for a later heartbeat past the first one's position).
	p0 := beats[0].SourceOffset
	var p2 map[string]any
	pollUntil(t, task, func(rs []*connect.SourceRecord) bool {
		for _, r := range rs {
			if isBeat(r) && r.SourceOffset[offPos].(int64) > p0[offPos].(int64) {
				p2 = r.SourceOffset
			}
		}
		return p2 != nil
	})
	if p0[offFile] != p2[offFile] || p2[offGTIDs] == p0[offGTIDs] {
		t.Errorf("heartbeat position did not advance: %v then %v", p0, p2)
	}
	for _, k := range []string{offRow, offEvent, offSnapshot} {
		if _, ok := p2[k]; ok {
			t.Errorf("heartbeat offset %v has %q: it must be a position between transactions", p2, k)
		}
	}
	if p2[offServerID] != int64(1) {
		t.Errorf("heartbeat offset server_id = %v, want 1", p2[offServerID])
	}
	c, err := m.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Execute("SELECT n FROM hb WHERE id = 1")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := r.GetInt(0, 0); n < 3 {
		t.Errorf("heartbeat.action.query ran %d times, want >= 3", n)
	}

	// A change, then a heartbeat after it; restart from that heartbeat.
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (2, 2);"); err != nil {
		t.Fatal(err)
	}
	var last *connect.SourceRecord
	seen := false
	pollUntil(t, task, func(rs []*connect.SourceRecord) bool {
		for _, r := range rs[len(rs)-min(len(rs), 64):] {
			if !isBeat(r) {
				seen = true
			} else if seen {
				last = r
			}
		}
		return last != nil
	})
	task.Stop()
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (3, 3);"); err != nil {
		t.Fatal(err)
	}
	resumed := startTask(t, cfg, last.SourceOffset)
	var change *connect.SourceRecord
	pollUntil(t, resumed, func(rs []*connect.SourceRecord) bool {
		for _, r := range rs {
			if !isBeat(r) && change == nil {
				change = r
			}
		}
		return change != nil
	})
	after := change.Value.(*connect.Struct).Get("after").(*connect.Struct)
	if id := after.Get("id"); id != int32(3) {
		t.Errorf("first change after restarting from a heartbeat has id %v, want 3 (row 2 was emitted before)", id)
	}
}
