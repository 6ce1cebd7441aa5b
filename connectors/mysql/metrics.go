package mysql

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/go-mysql-org/go-mysql/client"
)

var _ connect.SourceTaskMetricsProvider = (*Task)(nil)

// defaultBinlogLagInterval is how often the task reads the server's binlog
// position for the lag in bytes.
const defaultBinlogLagInterval = 2 * time.Second

// binlogLag is the distance between the server's binlog position and the
// position the worker committed, written by the lag poller and Commit,
// read by Metrics from any goroutine.
type binlogLag struct {
	ready    atomic.Bool  // Start set records/done
	bytes    atomic.Int64 // distance in bytes; -1 unknown
	at       atomic.Int64 // Unix ns of the reading, 0 none
	interval time.Duration

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
	m := connect.SourceTaskMetrics{ReplicationLagBytes: -1, RetainedBytes: -1}
	if !t.lag.ready.Load() {
		return m
	}
	m.QueueTotalCapacity = cap(t.records)
	m.QueueRemainingCapacity = cap(t.records) - len(t.records)
	select {
	case <-t.done:
	default:
		m.Connected = true
	}
	if at := t.lag.at.Load(); at != 0 {
		m.ReplicationLagBytes = t.lag.bytes.Load()
		m.LagSampledAt = time.Unix(0, at)
	}
	return m
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
	done := make(chan struct{})
	if !p.stream {
		close(done)
		return done
	}
	iv := t.lag.interval
	if iv <= 0 {
		iv = defaultBinlogLagInterval
	}
	go func() {
		defer close(done)
		var conn *client.Conn
		defer func() {
			if conn != nil {
				conn.Close()
			}
		}()
		tick := time.NewTicker(iv)
		defer tick.Stop()
		for {
			t.lag.mu.Lock()
			file, pos := t.lag.file, t.lag.pos
			t.lag.mu.Unlock()
			if file != "" && conn == nil {
				conn, _ = t.connect(ctx)
			}
			if file != "" && conn != nil {
				if d, err := readBinlogDistance(conn, file, pos); err == nil {
					t.lag.bytes.Store(d)
					t.lag.at.Store(time.Now().UnixNano())
				} else {
					t.log.Debug("reading the binlog position for the lag", "err", err)
					conn.Close()
					conn = nil
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return done
}

func readBinlogDistance(conn *client.Conn, file string, pos int64) (int64, error) {
	r, err := conn.Execute("SHOW MASTER STATUS")
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
