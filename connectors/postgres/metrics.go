package postgres

import (
	"context"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/sourcelag"
	"github.com/jackc/pgx/v5"
)

var _ connect.SourceTaskMetricsProvider = (*Task)(nil)

// slotLag is the latest reading of the slot's lag (sourcelag.Gauge:
// ReplicationLagBytes is pg_current_wal_lsn() - confirmed_flush_lsn,
// RetainedBytes pg_current_wal_lsn() - restart_lsn) and the configuration
// of the poller's own connection.
type slotLag struct {
	sourcelag.Gauge
	cfg *pgx.ConnConfig
}

// Metrics implements connect.SourceTaskMetricsProvider: Connected (the
// reader runs), the records queue (max.queue.size), the snapshot progress
// and the slot's lag in bytes, as read every 2 s by the lag poller.
func (t *Task) Metrics() connect.SourceTaskMetrics {
	m := t.lag.Metrics(t.records, t.done)
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
	if !p.stream || t.lag.cfg == nil {
		return sourcelag.Stopped()
	}
	var conn *pgx.Conn
	read := func(ctx context.Context) {
		if conn == nil || conn.IsClosed() {
			c, err := pgx.ConnectConfig(ctx, t.lag.cfg.Copy())
			if err == nil {
				conn = c
			}
		}
		if conn == nil {
			return
		}
		var confirmed, retained int64
		err := conn.QueryRow(ctx, `SELECT COALESCE((pg_current_wal_lsn() - confirmed_flush_lsn)::bigint, -1),
			COALESCE((pg_current_wal_lsn() - restart_lsn)::bigint, -1)
			FROM pg_replication_slots WHERE slot_name = $1`, t.cfg.slotName).Scan(&confirmed, &retained)
		if err == nil {
			t.lag.Store(confirmed, retained)
		} else if ctx.Err() == nil {
			t.log.Debug("reading the replication slot's lag", "slot", t.cfg.slotName, "err", err)
		}
	}
	release := func() {
		if conn != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			conn.Close(cctx)
			cancel()
		}
	}
	return t.lag.Poll(ctx, read, release)
}
