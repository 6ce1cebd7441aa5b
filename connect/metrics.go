package connect

import "time"

// SourceTaskMetrics is what a source task reports about itself for
// monitoring, read by the worker at scrape time. It carries the
// connector-side parts of Debezium's streaming and snapshot metrics
// (Connected, QueueTotalCapacity, QueueRemainingCapacity, SnapshotRunning,
// SnapshotCompleted, SnapshotDurationInSeconds, RowsScanned) and the
// replication lag in bytes; the worker counts events, transactions and
// latency itself from the records it polls.
type SourceTaskMetrics struct {
	// Connected: the task holds its connection to the source database
	// (Debezium's Connected).
	Connected bool
	// QueueTotalCapacity and QueueRemainingCapacity are the records queue
	// between the reader and Poll, in records (max.queue.size).
	QueueTotalCapacity     int
	QueueRemainingCapacity int
	// Snapshot is the latest snapshot's progress; nil when none ran.
	Snapshot *SnapshotMetrics
	// ReplicationLagBytes is how far the position the source confirmed is
	// behind the server's current write position, in bytes (PostgreSQL:
	// pg_current_wal_lsn() - confirmed_flush_lsn of the slot); -1 = unknown.
	ReplicationLagBytes int64
	// RetainedBytes is what the server keeps for this task, in bytes
	// (PostgreSQL: pg_current_wal_lsn() - restart_lsn of the slot); -1 = unknown.
	RetainedBytes int64
	// LagSampledAt is when the two byte counts were read (zero = never).
	LagSampledAt time.Time
}

// SnapshotMetrics is a snapshot's progress (Debezium's snapshot metrics).
type SnapshotMetrics struct {
	Running   bool
	Completed bool
	// Duration is the time the snapshot ran so far, or took when done.
	Duration time.Duration
	Tables   []TableSnapshotMetrics // in snapshot order
}

// TableSnapshotMetrics is one table of a snapshot: rows read so far and the
// database's estimate of the table's rows (-1 when unknown).
type TableSnapshotMetrics struct {
	Table         string // "schema.table"
	RowsScanned   int64
	EstimatedRows int64
	Done          bool
}

// SourceTaskMetricsProvider is the optional capability of a SourceTask that
// reports SourceTaskMetrics. Metrics must be safe to call from any
// goroutine, at any time after Start (also after Stop), and cheap: it is
// called on every /metrics scrape.
type SourceTaskMetricsProvider interface {
	Metrics() SourceTaskMetrics
}
