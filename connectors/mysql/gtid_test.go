package mysql

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *logBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// loggedCtx gives the task a logger (connect.TaskLogger) writing to a buffer.
type loggedCtx struct {
	taskCtx
	log *slog.Logger
}

func (c loggedCtx) Logger() *slog.Logger { return c.log }

func startLogged(t *testing.T, cfg map[string]string, off map[string]any) (*Task, *logBuffer) {
	t.Helper()
	buf := &logBuffer{}
	task := newTask(flavorMariaDB)
	tc := loggedCtx{taskCtx{&memOffsets{off}}, slog.New(slog.NewTextHandler(buf, nil))}
	if err := task.Start(context.Background(), tc, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { task.Stop() })
	return task, buf
}

// gtidEventPos returns the binlog file and position of the GTID event of
// MariaDB transaction gtid ("BEGIN GTID d-s-n"), from SHOW BINLOG EVENTS.
func gtidEventPos(t *testing.T, m *testenv.MariaDB, gtid string) (string, int64) {
	t.Helper()
	c, err := m.Connect(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	logs, err := c.Execute("SHOW BINARY LOGS")
	if err != nil {
		t.Fatal(err)
	}
	for i := range logs.Values {
		f, _ := logs.GetString(i, 0)
		r, err := c.Execute("SHOW BINLOG EVENTS IN '" + f + "'")
		if err != nil {
			t.Fatal(err)
		}
		for j := range r.Values {
			info, _ := r.GetString(j, 5)
			if strings.HasPrefix(info, "BEGIN GTID "+gtid) {
				pos, _ := r.GetInt(j, 1)
				return f, pos
			}
		}
	}
	t.Fatalf("no GTID event %s in the binlog", gtid)
	return "", 0
}

func srcGTID(r *connect.SourceRecord) string {
	g, _ := r.Value.(*connect.Struct).Get("source").(*connect.Struct).Get("gtid").(string)
	return g
}

// TestGTIDRestartAcrossRotation: an offset with gtids resumes by GTID
// (MariaDB @slave_connect_state), as Debezium. The stored offset is taken
// in the middle of a two-row transaction, the connector is stopped, the
// binlog rotates twice (FLUSH BINARY LOGS) with writes between, and the
// offset's file/pos are replaced by a file this server never had (as after
// a failover to a replica with other file names): only GTIDs can find the
// position. The restarted task emits exactly the rows after the offset,
// and their offsets name the rotated files and the positions of their
// transactions' GTID events (SHOW BINLOG EVENTS).
func TestGTIDRestartAcrossRotation(t *testing.T) {
	m, cfg := modesSetup(t)
	ctx := context.Background()
	task := startTask(t, cfg, nil)
	pollData(t, task, 2)
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (3, 3); BEGIN; INSERT INTO t VALUES (4, 4); INSERT INTO t VALUES (5, 5); COMMIT;"); err != nil {
		t.Fatal(err)
	}
	rs := pollData(t, task, 3)
	mid := rs[1]
	if idOf(mid) != int32(4) || mid.SourceOffset[offEvent] == nil {
		t.Fatalf("record %v offset %v: want id 4 with event/row", idOf(mid), mid.SourceOffset)
	}
	task.Stop()
	if err := m.Exec(ctx, "inventory", "FLUSH BINARY LOGS; INSERT INTO t VALUES (6, 6); FLUSH BINARY LOGS; INSERT INTO t VALUES (7, 7);"); err != nil {
		t.Fatal(err)
	}
	off := map[string]any{}
	for k, v := range mid.SourceOffset {
		off[k] = v
	}
	off[offFile], off[offPos] = "failover-bin.000042", int64(4)

	resumed, log := startLogged(t, cfg, off)
	got := pollData(t, resumed, 3)
	if !strings.Contains(log.String(), "Registering binlog reader with GTID set") {
		t.Errorf("the task did not resume by GTID; log:\n%s", log.String())
	}
	for i, r := range got {
		if id := idOf(r); id != int32(5+i) {
			t.Fatalf("resumed record %d has id %v, want %d (exactly the rows after the offset)", i, id, 5+i)
		}
		f, pos := gtidEventPos(t, m, srcGTID(r))
		if r.SourceOffset[offFile] != f || r.SourceOffset[offPos] != pos {
			t.Errorf("id %v: offset %s:%v, want %s:%d (its transaction's GTID event)", idOf(r), r.SourceOffset[offFile], r.SourceOffset[offPos], f, pos)
		}
	}
	if f := got[2].SourceOffset[offFile]; f != "mysql-bin.000003" {
		t.Errorf("row 7 offset file %v, want mysql-bin.000003 after two rotations", f)
	}
	// The offset's gtids move on with every transaction.
	if g := got[2].SourceOffset[offGTIDs]; g != fmt.Sprint(srcGTID(got[1])) {
		t.Errorf("row 7 offset gtids %v, want the GTID of row 6's transaction %s", g, srcGTID(got[1]))
	}
}

// TestGTIDSourceExcludes: with gtid.source.excludes matching MariaDB
// source 2-1 (transactions written with gtid_domain_id=2), their row
// changes are skipped (gtid.source.filter.dml.events, default true), the
// offset's gtids never hold domain 2, and a restart resumes domain 2 at the
// server's current position (Debezium's filterGtidSet), domain 0 at the
// offset.
func TestGTIDSourceExcludes(t *testing.T) {
	m, cfg := modesSetup(t)
	ctx := context.Background()
	cfg[KeyGTIDSourceExcludes] = "2-.*"
	task := startTask(t, cfg, nil)
	pollData(t, task, 2)
	if err := m.Exec(ctx, "inventory", "SET SESSION gtid_domain_id = 2; INSERT INTO t VALUES (100, 0); SET SESSION gtid_domain_id = 0; INSERT INTO t VALUES (3, 3);"); err != nil {
		t.Fatal(err)
	}
	r := pollData(t, task, 1)[0]
	if idOf(r) != int32(3) {
		t.Fatalf("first streamed row id %v, want 3 (domain 2 skipped)", idOf(r))
	}
	if g := r.SourceOffset[offGTIDs].(string); strings.Contains(g, "2-") {
		t.Errorf("offset gtids %q hold the excluded domain", g)
	}
	task.Stop()
	if err := m.Exec(ctx, "inventory", "SET SESSION gtid_domain_id = 2; INSERT INTO t VALUES (101, 0); SET SESSION gtid_domain_id = 0; INSERT INTO t VALUES (4, 4);"); err != nil {
		t.Fatal(err)
	}
	resumed, log := startLogged(t, cfg, r.SourceOffset)
	next := pollData(t, resumed, 1)[0]
	if idOf(next) != int32(4) {
		t.Errorf("after restart: id %v, want 4", idOf(next))
	}
	// domain 2 starts at the server's position (its 2nd transaction, 2-1-2)
	if l := log.String(); !strings.Contains(l, "2-1-2") {
		t.Errorf("restart GTID set lacks the server's domain 2 position; log:\n%s", l)
	}
}
