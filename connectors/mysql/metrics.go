package mysql

import (
	"context"
	"sync"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/sourcelag"
	"github.com/go-mysql-org/go-mysql/client"
)

var _ connect.SourceTaskMetricsProvider = (*Task)(nil)

// binlogLag is the latest reading of the binlog bytes between the
// server's position and the position the worker committed
// (sourcelag.Gauge), and that committed position, written by Commit and
// read by the lag poller.
type binlogLag struct {
	sourcelag.Gauge

	mu   sync.Mutex
	file string // committed binlog file ("" = none yet)
	pos  int64
}

// Metrics implements connect.SourceTaskMetricsProvider: Connected (the
// reader runs), the records queue (max.queue.size) and, once an offset was
// committed, the binlog bytes between it and SHOW MASTER STATUS (summed
// over SHOW BINARY LOGS sizes across files; unknown when the committed
// file was purged). MySQL has no slot: RetainedBytes is unknown (-1).
func (t *Task) Metrics() connect.SourceTaskMetrics {
	return t.lag.Metrics(t.records, t.done)
}

// committed records the binlog position of a committed offset.
func (t *Task) committed(off map[string]any) {
	o, err := parseOffset(off)
	if err != nil || o.file == "" {
		return
	}
	t.lag.mu.Lock()
	t.lag.file, t.lag.pos = o.file, o.pos
	t.lag.mu.Unlock()
}

// binlogDistance is the bytes from (file, pos) to (curFile, curPos) over
// the server's binary logs (name, size) in order; -1 when file is not
// among them.
func binlogDistance(logs []binlogFile, file string, pos int64, curFile string, curPos int64) int64 {
	if file == curFile {
		return max(0, curPos-pos)
	}
	var d int64
	in := false
	for _, l := range logs {
		switch {
		case l.name == file:
			in = true
			d += max(0, l.size-pos)
		case l.name == curFile:
			if !in {
				return -1
			}
			return d + curPos
		case in:
			d += l.size
		}
	}
	return -1
}

type binlogFile struct {
	name string
	size int64
}

// startBinlogLag starts the lag poller on a connection of its own; the
// returned channel is closed once it stopped (ctx ended).
func (t *Task) startBinlogLag(ctx context.Context, p plan) <-chan struct{} {
	if !p.stream {
		return sourcelag.Stopped()
	}
	var conn *client.Conn
	read := func(ctx context.Context) {
		t.lag.mu.Lock()
		file, pos := t.lag.file, t.lag.pos
		t.lag.mu.Unlock()
		if file == "" {
			return
		}
		if conn == nil {
			conn, _ = t.connect(ctx)
		}
		if conn == nil {
			return
		}
		if d, err := readBinlogDistance(conn, file, pos); err == nil {
			t.lag.Store(d, -1)
		} else {
			t.log.Debug("reading the binlog position for the lag", "err", err)
			conn.Close()
			conn = nil
		}
	}
	release := func() {
		if conn != nil {
			conn.Close()
		}
	}
	return t.lag.Poll(ctx, read, release)
}

func readBinlogDistance(conn *client.Conn, file string, pos int64) (int64, error) {
	r, err := showBinlogStatus(conn.Execute)
	if err != nil {
		return 0, err
	}
	if len(r.Values) == 0 {
		return -1, nil
	}
	curFile, _ := r.GetString(0, 0)
	curPos, _ := r.GetUint(0, 1)
	if curFile == file {
		return binlogDistance(nil, file, pos, curFile, int64(curPos)), nil
	}
	l, err := conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return 0, err
	}
	var logs []binlogFile
	for i := range l.Values {
		name, _ := l.GetString(i, 0)
		size, _ := l.GetUint(i, 1)
		logs = append(logs, binlogFile{name, int64(size)})
	}
	return binlogDistance(logs, file, pos, curFile, int64(curPos)), nil
}
