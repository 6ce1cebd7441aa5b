package postgres

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/jackc/pgx/v5"
)

var _ connect.SourceTaskMetricsProvider = (*Task)(nil)

// defaultSlotLagInterval is how often the task reads its slot's lag.
const defaultSlotLagInterval = 2 * time.Second

// slotLag is the latest reading of the slot's lag, written by the lag
// poller and read by Metrics from any goroutine.
type slotLag struct {
	ready     atomic.Bool  // Start set records/done (Metrics may read them)
	confirmed atomic.Int64 // pg_current_wal_lsn() - confirmed_flush_lsn, bytes; -1 unknown
	retained  atomic.Int64 // pg_current_wal_lsn() - restart_lsn, bytes; -1 unknown
	at        atomic.Int64 // Unix ns of the reading, 0 none
	cfg       *pgx.ConnConfig
	interval  time.Duration // 0 = defaultSlotLagInterval
}

// Metrics implements connect.SourceTaskMetricsProvider: Connected (the
// reader runs), the records queue (max.queue.size), the snapshot progress
// and the slot's lag in bytes, as read every 2 s by the lag poller.
func (t *Task) Metrics() connect.SourceTaskMetrics {
	m := connect.SourceTaskMetrics{ReplicationLagBytes: -1, RetainedBytes: -1}
	if t.lag.ready.Load() {
		m.QueueTotalCapacity = cap(t.records)
		m.QueueRemainingCapacity = cap(t.records) - len(t.records)
		select {
		case <-t.done:
		default:
			m.Connected = true
		}
		if at := t.lag.at.Load(); at != 0 {
			m.ReplicationLagBytes, m.RetainedBytes = t.lag.confirmed.Load(), t.lag.retained.Load()
			m.LagSampledAt = time.Unix(0, at)
		}
	}
	sp := t.SnapshotProgress()
	if sp.Running || sp.Completed || len(sp.Tables) > 0 {
		sm := &connect.SnapshotMetrics{Running: sp.Running, Completed: sp.Completed, Duration: t.progress.duration()}
		for _, tb := range sp.Tables {
			sm.Tables = append(sm.Tables, connect.TableSnapshotMetrics{Table: tb.Table, RowsScanned: tb.RowsScanned, EstimatedRows: tb.EstimatedRows, Done: tb.Done})
		}
		m.Snapshot = sm
	}
	return m
}

// startSlotLag starts the lag poller when the plan streams from the slot:
// every interval it reads, on a connection of its own (the reader owns the
// others), how far the slot's confirmed_flush_lsn and restart_lsn are
// behind pg_current_wal_lsn(). A failed read is retried at the next tick
// and keeps the previous reading. The returned channel is closed when the
// poller has stopped (ctx ended).
func (t *Task) startSlotLag(ctx context.Context, p plan) <-chan struct{} {
	done := make(chan struct{})
	if !p.stream || t.lag.cfg == nil {
		close(done)
		return done
	}
	iv := t.lag.interval
	if iv <= 0 {
		iv = defaultSlotLagInterval
	}
	go func() {
		defer close(done)
		var conn *pgx.Conn
		defer func() {
			if conn != nil {
				cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				conn.Close(cctx)
				cancel()
			}
		}()
		tick := time.NewTicker(iv)
		defer tick.Stop()
		for {
			if conn == nil || conn.IsClosed() {
				c, err := pgx.ConnectConfig(ctx, t.lag.cfg.Copy())
				if err == nil {
					conn = c
				}
			}
			if conn != nil {
				var confirmed, retained int64
				err := conn.QueryRow(ctx, `SELECT COALESCE((pg_current_wal_lsn() - confirmed_flush_lsn)::bigint, -1),
					COALESCE((pg_current_wal_lsn() - restart_lsn)::bigint, -1)
					FROM pg_replication_slots WHERE slot_name = $1`, t.cfg.slotName).Scan(&confirmed, &retained)
				if err == nil {
					t.lag.confirmed.Store(confirmed)
					t.lag.retained.Store(retained)
					t.lag.at.Store(time.Now().UnixNano())
				} else if ctx.Err() == nil {
					t.log.Debug("reading the replication slot's lag", "slot", t.cfg.slotName, "err", err)
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
