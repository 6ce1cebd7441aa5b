package postgres

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/testenv"
)

// TestHeartbeatGolden: "heartbeat.interval.ms" and "heartbeat.action.query"
// against the capture testdata/debezium/pg_heartbeat.jsonl (heartbeats every
// second from the end of the snapshot; their number and timing are not
// deterministic, so each heartbeat is compared with Debezium's heartbeat:
// topic __debezium-heartbeat.<topic.prefix>, key ServerNameKey {serverName},
// value Heartbeat {ts_ms} byte for byte; once the action query's transaction
// was received, the offset is that of its COMMIT, as Debezium's).
func TestHeartbeatGolden(t *testing.T) {
	pg := testenv.PostgresT(t)
	ctx := context.Background()
	const db = "scen"
	if err := pg.CreateDatabase(ctx, db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropScenarioDB(t, pg, db) })
	setup, err := os.ReadFile(scenarioDir + "pg/heartbeat/setup.sql")
	if err != nil {
		t.Fatal(err)
	}
	exec(t, pg, db, string(setup))
	cfg := map[string]string{}
	readProperties(t, scenarioDir+"pg_scenario.properties.in", cfg)
	readProperties(t, scenarioDir+"pg/heartbeat/connector.properties", cfg)
	for k, v := range baseConfig(pg, db) {
		cfg[k] = v
	}
	cfg["slot.name"], cfg["publication.name"] = "scen_heartbeat", "scen_heartbeat"
	cfg["heartbeat.interval.ms"] = "300"
	task := startTask(t, cfg, &memOffsets{})
	want := readLines(t, "../../testdata/debezium/pg_heartbeat.jsonl")
	wantOff := readLines(t, "../../testdata/debezium/pg_heartbeat.jsonl.record-offsets.jsonl")
	compareRecords(t, pollN(t, task, 1), want[:1], wantOff[:1])

	conv := converters.NewJSONConverter()
	wantBeat := newClasses().line(want[1])
	var beats []*connect.SourceRecord
	deadline := time.Now().Add(15 * time.Second)
	for len(beats) < 4 && time.Now().Before(deadline) {
		b, err := task.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		beats = append(beats, b...)
	}
	if len(beats) < 4 {
		t.Fatalf("%d heartbeats in 15 s with heartbeat.interval.ms=300", len(beats))
	}
	for i, r := range beats {
		if got := newClasses().line(rawRecordLine(t, conv, r)); got != wantBeat {
			t.Fatalf("heartbeat %d differs from Debezium:\n%s", i, firstDiff(got, wantBeat))
		}
	}
	// The last heartbeat follows received action-query transactions: like
	// Debezium's, its offset is a COMMIT's (lsn = lsn_proc = lsn_commit).
	o := beats[len(beats)-1].SourceOffset
	if o[offMessageType] != "COMMIT" || o[offLSN] != o[offLSNProc] || o[offLSN] != o[offLSNCommit] || o[offTxID] == nil {
		t.Fatalf("heartbeat offset %v, want a COMMIT offset like %s", o, wantOff[len(wantOff)-1])
	}
}

// TestHeartbeatKeepsRetainedWALBounded: the captured database is idle while
// another database of the same server writes tens of MB of WAL. With
// heartbeats (no action query) the task's heartbeat offsets carry the
// server's WAL position from keepalives; committing them, as the worker
// does, advances confirmed_flush_lsn and restart_lsn, so the slot does not
// retain the other database's WAL.
func TestHeartbeatKeepsRetainedWALBounded(t *testing.T) {
	pg := testenv.PostgresT(t)
	ctx := context.Background()
	for _, db := range []string{"hbidle", "hbbusy"} {
		if err := pg.CreateDatabase(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { dropScenarioDB(t, pg, "hbidle"); exec(t, pg, "postgres", `DROP DATABASE hbbusy WITH (FORCE)`) })
	exec(t, pg, "hbidle", `CREATE TABLE quiet (id integer PRIMARY KEY)`)
	exec(t, pg, "hbbusy", `CREATE TABLE churn (id integer, pad text)`)
	cfg := baseConfig(pg, "hbidle")
	cfg["slot.name"], cfg["publication.name"] = "hbidle", "hbidle"
	cfg["snapshot.mode"] = "no_data"
	cfg["heartbeat.interval.ms"] = "200"
	task := startTask(t, cfg, &memOffsets{})

	c, err := pg.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	slot := func() (retained, confirmed, current int64) {
		t.Helper()
		err := c.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - restart_lsn)::int8, (confirmed_flush_lsn - '0/0')::int8, (pg_current_wal_lsn() - '0/0')::int8
FROM pg_replication_slots WHERE slot_name = 'hbidle'`).Scan(&retained, &confirmed, &current)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	_, start, _ := slot()
	// ~40 MB of WAL in the other database.
	for i := 0; i < 4; i++ {
		exec(t, pg, "hbbusy", `INSERT INTO churn SELECT g, repeat('x', 200) FROM generate_series(1, 40000) g`)
	}
	_, _, written := slot()
	if written-start < 30<<20 {
		t.Fatalf("only %d bytes of WAL written", written-start)
	}
	exec(t, pg, "hbbusy", `CHECKPOINT`) // logs running xacts: lets restart_lsn move

	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := task.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b {
			if !strings.HasPrefix(r.Topic, "__debezium-heartbeat.") {
				t.Fatalf("unexpected record on %s", r.Topic)
			}
		}
		if len(b) > 0 { // the worker commits the last offset of each batch
			if err := task.Commit(ctx, task.partition, b[len(b)-1].SourceOffset); err != nil {
				t.Fatal(err)
			}
		}
		retained, confirmed, _ := slot()
		if confirmed >= written && retained < 16<<20 {
			t.Logf("confirmed_flush_lsn advanced %d bytes; retained WAL %d bytes", confirmed-start, retained)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("retained WAL %d bytes, confirmed_flush_lsn %d (written up to %d)", retained, confirmed, written)
		}
		if len(b) > 0 {
			exec(t, pg, "hbbusy", `CHECKPOINT`)
		}
	}
}
