package mysql

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// TestSnapshotterDecisions locks what each snapshot.mode decides, as the
// bytecode of Debezium 3.6.1's io.debezium.snapshot.mode snapshotters
// (shouldSnapshotData/Schema(offsetExists, snapshotInProgress),
// shouldStream, shouldSnapshotOnSchemaError/DataError) and
// RecoverySnapshotter.shouldStreamEventsStartingFromSnapshot=false.
func TestSnapshotterDecisions(t *testing.T) {
	type st = snapshotter
	cases := []struct {
		mode                     string
		offset, inProgress       bool
		want                     st
		configData, configStream bool
	}{
		{mode: "initial", want: st{data: true, schema: true, stream: true, fromSnapshot: true}},
		{mode: "initial", offset: true, want: st{stream: true, fromSnapshot: true}},
		{mode: "initial", offset: true, inProgress: true, want: st{data: true, schema: true, stream: true, fromSnapshot: true}},
		{mode: "initial_only", want: st{data: true, schema: true, fromSnapshot: true}},
		{mode: "initial_only", offset: true, want: st{fromSnapshot: true}},
		{mode: "no_data", want: st{schema: true, stream: true, fromSnapshot: true}},
		{mode: "schema_only", offset: true, want: st{stream: true, fromSnapshot: true}},
		{mode: "always", offset: true, want: st{data: true, schema: true, stream: true, fromSnapshot: true}},
		{mode: "when_needed", want: st{data: true, schema: true, stream: true, onDataError: true, fromSnapshot: true}},
		{mode: "when_needed", offset: true, want: st{stream: true, onDataError: true, fromSnapshot: true}},
		{mode: "recovery", offset: true, want: st{schema: true, stream: true, onSchemaError: true}},
		{mode: "schema_only_recovery", offset: true, want: st{schema: true, stream: true, onSchemaError: true}},
		{mode: "configuration_based", offset: true, want: st{fromSnapshot: true}},
		{mode: "configuration_based", configData: true, configStream: true, want: st{data: true, stream: true, fromSnapshot: true}},
	}
	for _, c := range cases {
		cfg := map[string]string{KeyHostname: "h", KeyUser: "u", KeyServerID: "1", KeyTopicPrefix: "p", KeySnapshotMode: c.mode}
		if c.configData {
			cfg[KeyConfigBasedSnapshotData] = "true"
		}
		if c.configStream {
			cfg[KeyConfigBasedStartStream] = "true"
		}
		p, err := parseConfig(flavorMariaDB, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.snapshotterFor(c.offset, c.inProgress); got != c.want {
			t.Errorf("%s offset=%v inProgress=%v: got %+v want %+v", c.mode, c.offset, c.inProgress, got, c.want)
		}
	}
	p, err := parseConfig(flavorMariaDB, map[string]string{KeyHostname: "h", KeyUser: "u", KeyServerID: "1", KeyTopicPrefix: "p", KeySnapshotMode: "schema_only_recovery"})
	if err != nil || p.snapshotMode != SnapshotRecovery || p.snapshotModeAlias != "schema_only_recovery" {
		t.Errorf("schema_only_recovery: %+v %v", p, err)
	}
	errs := validate(flavorMariaDB, map[string]string{KeyHostname: "h", KeyUser: "u", KeyServerID: "1", KeyTopicPrefix: "p", KeySnapshotMode: "never"})
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "no longer supported") {
		t.Errorf("never: %v", errs)
	}
}

func startTaskErr(cfg map[string]string, off map[string]any) (*Task, error) {
	task := newTask(flavorMariaDB)
	return task, task.Start(context.Background(), taskCtx{&memOffsets{off}}, cfg)
}

func opOf(r *connect.SourceRecord) string {
	st, _ := r.Value.(*connect.Struct)
	if st == nil {
		return ""
	}
	op, _ := st.Get("op").(string)
	return op
}

func idOf(r *connect.SourceRecord) any {
	st := r.Value.(*connect.Struct)
	row, _ := st.Get("after").(*connect.Struct)
	if row == nil {
		row = st.Get("before").(*connect.Struct)
	}
	return row.Get("id")
}

// lastOffset returns the offset of the last record.
func lastOffset(rs []*connect.SourceRecord) map[string]any { return rs[len(rs)-1].SourceOffset }

func modesSetup(t *testing.T) (*testenv.MariaDB, map[string]string) {
	m := testenv.MariaDBT(t)
	if err := m.Exec(context.Background(), "", `CREATE DATABASE inventory;
CREATE TABLE inventory.t (id INT PRIMARY KEY, v INT);
INSERT INTO inventory.t VALUES (1, 1), (2, 2);`); err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(m)
	cfg[KeyIncludeSchemaChanges] = "false"
	return m, cfg
}

// TestSnapshotModeAlways: with snapshot.mode=always a restart from a
// stored streaming offset snapshots every row again (op r), including rows
// written while the connector was down, then streams.
func TestSnapshotModeAlways(t *testing.T) {
	m, cfg := modesSetup(t)
	ctx := context.Background()
	task := startTask(t, cfg, nil)
	snap := pollData(t, task, 2)
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (3, 3);"); err != nil {
		t.Fatal(err)
	}
	off := lastOffset(append(snap, pollData(t, task, 1)...))
	task.Stop()
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (4, 4);"); err != nil {
		t.Fatal(err)
	}
	cfg[KeySnapshotMode] = "always"
	again := startTask(t, cfg, off)
	rs := pollData(t, again, 4)
	for i, r := range rs {
		if opOf(r) != "r" || idOf(r) != int32(i+1) {
			t.Errorf("record %d: op %s id %v, want a snapshot read of id %d", i, opOf(r), idOf(r), i+1)
		}
	}
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (5, 5);"); err != nil {
		t.Fatal(err)
	}
	if r := pollData(t, again, 1)[0]; opOf(r) != "c" || idOf(r) != int32(5) {
		t.Errorf("after the snapshot: op %s id %v, want c 5", opOf(r), idOf(r))
	}
}

// TestBinlogPurgedPastOffset: the stored offset's binlog file is purged
// (FLUSH BINARY LOGS, then PURGE BINARY LOGS TO the new file). With
// snapshot.mode=initial the task refuses to start with
// ErrBinlogUnavailable saying what to do (Debezium: "… no longer available
// on the server. Reconfigure the connector to use a snapshot mode when
// needed."); with when_needed it takes a new snapshot (Debezium: "The last
// recorded offset is no longer available but we are in when_needed
// snapshot mode. Attempting to snapshot data to fill the gap.") and then
// streams.
func TestBinlogPurgedPastOffset(t *testing.T) {
	m, cfg := modesSetup(t)
	ctx := context.Background()
	task := startTask(t, cfg, nil)
	off := lastOffset(pollData(t, task, 2))
	task.Stop()
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (3, 3); FLUSH BINARY LOGS; INSERT INTO t VALUES (4, 4);"); err != nil {
		t.Fatal(err)
	}
	c, err := m.Connect(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Execute("SHOW MASTER STATUS")
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	cur, _ := r.GetString(0, 0)
	if cur == off[offFile] {
		t.Fatalf("FLUSH BINARY LOGS did not rotate: still %s", cur)
	}
	// MariaDB keeps a file until InnoDB has checkpointed its transactions
	// (binlog checkpoint): retry the purge for a few seconds.
	purged := false
	for i := 0; i < 50 && !purged; i++ {
		if err := m.Exec(ctx, "", "PURGE BINARY LOGS TO '"+cur+"';"); err != nil {
			t.Fatal(err)
		}
		c, err = m.Connect(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		r, err = c.Execute("SHOW BINARY LOGS")
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		purged = true
		for i := range r.Values {
			if f, _ := r.GetString(i, 0); f == off[offFile] {
				purged = false
			}
		}
		if !purged {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !purged {
		t.Fatalf("PURGE BINARY LOGS TO '%s' left %s", cur, off[offFile])
	}

	failed, err := startTaskErr(cfg, off)
	if err == nil {
		failed.Stop()
		t.Fatal("initial mode started from a purged binlog position")
	}
	if !errors.Is(err, ErrBinlogUnavailable) || !strings.Contains(err.Error(), "snapshot.mode=when_needed") ||
		!strings.Contains(err.Error(), off[offFile].(string)) {
		t.Errorf("error %q: want ErrBinlogUnavailable naming the file and snapshot.mode=when_needed", err)
	}

	cfg[KeySnapshotMode] = "when_needed"
	again := startTask(t, cfg, off)
	rs := pollData(t, again, 4)
	for i, r := range rs {
		if opOf(r) != "r" || idOf(r) != int32(i+1) {
			t.Errorf("record %d: op %s id %v, want a snapshot read of id %d", i, opOf(r), idOf(r), i+1)
		}
	}
	if f := lastOffset(rs)[offFile]; f != cur {
		t.Errorf("new snapshot's offset file %v, want %s", f, cur)
	}
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (5, 5);"); err != nil {
		t.Fatal(err)
	}
	if r := pollData(t, again, 1)[0]; opOf(r) != "c" || idOf(r) != int32(5) {
		t.Errorf("after the snapshot: op %s id %v, want c 5", opOf(r), idOf(r))
	}
}

// TestSnapshotModeRecovery: the schema history topic is lost (a new empty
// topic). snapshot.mode=recovery records the current structures in it at
// the stored offset (Debezium's RecoverySnapshotter: schema snapshot,
// streaming not from the snapshot) and streams from the stored offset: the
// row written while the connector was down arrives as a create, no row is
// read again. Without a stored offset recovery refuses to start.
func TestSnapshotModeRecovery(t *testing.T) {
	m, cfg := modesSetup(t)
	ctx := context.Background()
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	cfg[KeyHistoryBootstrap] = strings.Join(kf.ListenAddrs(), ",")
	cfg[KeyHistoryTopic] = "history-1"
	task := startTask(t, cfg, nil)
	off := lastOffset(pollData(t, task, 2))
	task.Stop()
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (3, 3);"); err != nil {
		t.Fatal(err)
	}

	cfg[KeyHistoryTopic] = "history-lost"
	cfg[KeySnapshotMode] = "recovery"
	if bad, err := startTaskErr(cfg, nil); err == nil || !strings.Contains(err.Error(), "Could not find existing redo log information") {
		if err == nil {
			bad.Stop()
		}
		t.Errorf("recovery without an offset: %v", err)
	}
	rec := startTask(t, cfg, off)
	rs := pollData(t, rec, 1)
	if opOf(rs[0]) != "c" || idOf(rs[0]) != int32(3) {
		t.Errorf("after recovery: op %s id %v, want c 3 (streamed from the stored offset)", opOf(rs[0]), idOf(rs[0]))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.ConsumeTopics("history-lost"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var create string
	for create == "" {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if strings.Contains(string(r.Value), "CREATE TABLE `t`") {
				create = string(r.Value)
			}
		})
	}
	for _, want := range []string{`"file":"` + off[offFile].(string) + `"`, `"pos":` + itoa(int(off[offPos].(int64))) + `,`} {
		if !strings.Contains(create, want) {
			t.Errorf("rebuilt history record %s: want the stored offset's position (%s)", create, want)
		}
	}
}

// TestSnapshotModeConfigurationBased: snapshot.data=false,
// snapshot.schema=true, start.stream=true records the structures only
// (no reads) and streams; snapshot.data=true without start.stream reads the
// rows and stops, as Debezium's ConfigurationBasedSnapshotter returns the
// keys as they are.
func TestSnapshotModeConfigurationBased(t *testing.T) {
	m, cfg := modesSetup(t)
	ctx := context.Background()
	cfg[KeySnapshotMode] = "configuration_based"
	cfg[KeyConfigBasedSnapshotSchema] = "true"
	cfg[KeyConfigBasedStartStream] = "true"
	task := startTask(t, cfg, nil)
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (3, 3);"); err != nil {
		t.Fatal(err)
	}
	if r := pollData(t, task, 1)[0]; opOf(r) != "c" || idOf(r) != int32(3) {
		t.Errorf("op %s id %v, want c 3 (no data snapshot)", opOf(r), idOf(r))
	}
	task.Stop()

	cfg[KeyConfigBasedSnapshotData] = "true"
	cfg[KeyConfigBasedStartStream] = "false"
	only := startTask(t, cfg, nil)
	rs := pollData(t, only, 3)
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (4, 4);"); err != nil {
		t.Fatal(err)
	}
	// start.stream=false: the reader ends after the snapshot.
	select {
	case <-only.done:
	case <-time.After(10 * time.Second):
		t.Fatal("reader still running after the snapshot with start.stream=false")
	}
	more, _ := only.Poll(ctx)
	for _, r := range append(rs, more...) {
		if opOf(r) != "r" {
			t.Errorf("op %s id %v: want only snapshot reads (start.stream=false)", opOf(r), idOf(r))
		}
	}
}
