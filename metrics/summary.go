package metrics

import (
	"sort"
	"strings"
	"time"
)

// Status colours of the summary.
const (
	Green = "green" // running, lag under the thresholds
	Amber = "amber" // lag above a threshold, or growing steadily for the growth window
	Red   = "red"   // the connector or a task FAILED
)

// Summary is the dashboard's and `connectd status`'s view of the worker
// (GET /ui/api/summary). Byte and event counts are the same numbers
// /metrics exports at the same moment. States cover every connector of the
// cluster; counts cover the tasks that run on this worker.
type Summary struct {
	GeneratedAt int64              `json:"generated_at"` // Unix ms
	Thresholds  SummaryThresholds  `json:"thresholds"`
	Connectors  []ConnectorSummary `json:"connectors"`
}

// SummaryThresholds are the amber thresholds in force.
type SummaryThresholds struct {
	LagBytes       int64 `json:"lag_bytes"`
	BehindSourceMs int64 `json:"behind_source_ms"`
	LagEvents      int64 `json:"lag_events"`
	GrowthWindowMs int64 `json:"growth_window_ms"`
}

// ConnectorSummary is one connector, summed over its tasks on this worker.
type ConnectorSummary struct {
	Name   string        `json:"name"`
	Type   string        `json:"type"`
	State  string        `json:"state"`
	Trace  string        `json:"trace,omitempty"`
	Colour string        `json:"colour"`
	Reason string        `json:"reason,omitempty"` // why amber or red
	Tasks  []TaskSummary `json:"tasks"`

	EventsSeen            int64            `json:"events_seen"`
	ByOp                  map[string]int64 `json:"events_by_op"`
	CommittedTransactions int64            `json:"committed_transactions"`
	Polled                int64            `json:"records_polled"`
	Written               int64            `json:"records_written"`
	EventsBehind          int64            `json:"events_behind"`  // queued + in flight
	LagBytes              int64            `json:"lag_bytes"`      // -1 = unknown
	RetainedBytes         int64            `json:"retained_bytes"` // -1 = unknown
	BehindSourceMs        int64            `json:"behind_source_ms"`
	QueueCapacity         int64            `json:"queue_capacity"`
	QueueRemaining        int64            `json:"queue_remaining"`
	ThroughputPerSec      float64          `json:"throughput_per_sec"` // written, over the last minute
	LatencyP50Ms          float64          `json:"latency_p50_ms"`     // over the last 5 minutes, -1 = no data
	LatencyP99Ms          float64          `json:"latency_p99_ms"`
	Errors                int64            `json:"errors"`
	DeadLetters           int64            `json:"dead_letters"`
	ErrorsPerMin          float64          `json:"errors_per_min"`
	DeadLettersPerMin     float64          `json:"dead_letters_per_min"`
	OffsetCommits         int64            `json:"offset_commits"`
	OffsetCommitFailures  int64            `json:"offset_commit_failures"`
	Snapshot              *SnapshotSummary `json:"snapshot,omitempty"`
	History               []Sample         `json:"history"` // last 15 minutes, oldest first
}

// TaskSummary is one task's status.
type TaskSummary struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id,omitempty"`
	Trace    string `json:"trace,omitempty"`
}

// SnapshotSummary is the snapshot progress of a connector's tasks.
type SnapshotSummary struct {
	Running    bool           `json:"running"`
	Completed  bool           `json:"completed"`
	DurationMs int64          `json:"duration_ms"`
	Tables     []TableSummary `json:"tables"`
}

// TableSummary is one table's snapshot progress: rows done / estimated.
type TableSummary struct {
	Table         string `json:"table"`
	RowsScanned   int64  `json:"rows_scanned"`
	EstimatedRows int64  `json:"estimated_rows"` // -1 = unknown
	Done          bool   `json:"done"`
}

// Summary builds the summary from the live counters and the history.
func (r *Registry) Summary() Summary {
	now := r.now()
	th := r.thresholds
	out := Summary{GeneratedAt: now.UnixMilli(), Thresholds: SummaryThresholds{LagBytes: th.LagBytes, BehindSourceMs: th.BehindSource.Milliseconds(),
		LagEvents: th.LagEvents, GrowthWindowMs: th.GrowthWindow.Milliseconds()}, Connectors: []ConnectorSummary{}}
	snaps := r.snapshots()
	by := map[string][]TaskSnapshot{}
	for _, s := range snaps {
		by[s.Connector] = append(by[s.Connector], s)
	}
	sinks := map[string][]sinkSnapshot{}
	for _, s := range r.sinkSnapshots() {
		sinks[s.connector] = append(sinks[s.connector], s)
	}
	r.mu.Lock()
	haveStatus := r.status != nil
	r.mu.Unlock()
	if haveStatus {
		// Connectors the herder knows; a deleted connector's counters stay
		// out of the summary.
		for _, cs := range r.statuses() {
			out.Connectors = append(out.Connectors, r.connectorSummary(now, cs, by[cs.Name], sinks[cs.Name]))
		}
	} else {
		for c, ts := range by {
			out.Connectors = append(out.Connectors, r.connectorSummary(now, ConnectorState{Name: c, Type: "source"}, ts, nil))
		}
	}
	sort.Slice(out.Connectors, func(i, j int) bool { return out.Connectors[i].Name < out.Connectors[j].Name })
	return out
}

func (r *Registry) connectorSummary(now time.Time, cs ConnectorState, tasks []TaskSnapshot, sinks []sinkSnapshot) ConnectorSummary {
	c := ConnectorSummary{Name: cs.Name, Type: cs.Type, State: cs.State, Trace: cs.Trace, Tasks: []TaskSummary{}, ByOp: map[string]int64{},
		LagBytes: -1, RetainedBytes: -1, BehindSourceMs: -1, LatencyP50Ms: -1, LatencyP99Ms: -1}
	for _, o := range Operations {
		c.ByOp[o] = 0
	}
	for _, t := range cs.Tasks {
		c.Tasks = append(c.Tasks, TaskSummary{ID: t.ID, State: t.State, WorkerID: t.WorkerID, Trace: t.Trace})
	}
	// A sink's consumer lag counts as events behind and its records put as
	// written (aggregate); its records read from Kafka as polled.
	cur := aggregate(now, tasks, sinks)
	c.LagBytes, c.BehindSourceMs, c.EventsBehind = cur.LagBytes, cur.BehindSourceMs, cur.EventsBehind
	c.Written, c.Errors, c.DeadLetters = cur.Written, cur.Errors, cur.DeadLetters
	for _, sk := range sinks {
		c.Polled += sk.read
	}
	for _, t := range tasks {
		c.EventsSeen += t.EventsSeen
		for o, n := range t.ByOp {
			c.ByOp[o] += n
		}
		c.CommittedTransactions += t.CommittedTransactions
		c.Polled += t.Polled
		c.OffsetCommits += t.OffsetCommits
		c.OffsetCommitFailures += t.OffsetCommitFailures
		m := t.Source
		if m == nil {
			continue
		}
		c.QueueCapacity += int64(m.QueueTotalCapacity)
		c.QueueRemaining += int64(m.QueueRemainingCapacity)
		if m.RetainedBytes >= 0 {
			c.RetainedBytes = max(c.RetainedBytes, 0) + m.RetainedBytes
		}
		if sn := m.Snapshot; sn != nil {
			if c.Snapshot == nil {
				c.Snapshot = &SnapshotSummary{Completed: true, Tables: []TableSummary{}}
			}
			c.Snapshot.Running = c.Snapshot.Running || sn.Running
			c.Snapshot.Completed = c.Snapshot.Completed && sn.Completed
			c.Snapshot.DurationMs = max(c.Snapshot.DurationMs, sn.Duration.Milliseconds())
			for _, tb := range sn.Tables {
				c.Snapshot.Tables = append(c.Snapshot.Tables, TableSummary{Table: tb.Table, RowsScanned: tb.RowsScanned, EstimatedRows: tb.EstimatedRows, Done: tb.Done})
			}
		}
	}
	hist := r.history(cs.Name)
	c.History = hist
	if c.History == nil {
		c.History = []Sample{}
	}
	// Rates: the live point against the newest sample at least a minute
	// old, else the oldest.
	base := func(age time.Duration) *Sample {
		var b *Sample
		for i := range hist {
			if hist[i].T <= cur.T-age.Milliseconds() || b == nil {
				b = &hist[i]
			}
		}
		return b
	}
	if b := base(time.Minute); b != nil && cur.T > b.T {
		secs := float64(cur.T-b.T) / 1000
		c.ThroughputPerSec = float64(cur.Written-b.Written) / secs
		c.ErrorsPerMin = float64(cur.Errors-b.Errors) / secs * 60
		c.DeadLettersPerMin = float64(cur.DeadLetters-b.DeadLetters) / secs * 60
	}
	// Latency: the histogram's growth over the last five minutes; while the
	// history is younger than that, everything since the task started.
	lat := cur.latency
	if b := base(5 * time.Minute); b != nil && b.T <= cur.T-(5*time.Minute).Milliseconds() && len(b.latency) == len(lat) {
		d := make([]uint64, len(lat))
		for i := range lat {
			d[i] = lat[i] - min(lat[i], b.latency[i])
		}
		lat = d
	}
	c.LatencyP50Ms = nanToNeg(Quantile(0.5, lat) * 1000)
	c.LatencyP99Ms = nanToNeg(Quantile(0.99, lat) * 1000)
	c.Colour, c.Reason = r.colour(cs, c, hist)
	return c
}

func (r *Registry) colour(cs ConnectorState, c ConnectorSummary, hist []Sample) (string, string) {
	th := r.thresholds
	if strings.EqualFold(cs.State, "FAILED") {
		return Red, "connector FAILED"
	}
	for _, t := range cs.Tasks {
		if strings.EqualFold(t.State, "FAILED") {
			return Red, "task " + itoa(t.ID) + " FAILED"
		}
	}
	switch {
	case th.LagBytes > 0 && c.LagBytes > th.LagBytes:
		return Amber, "replication lag " + itoa64(c.LagBytes) + " bytes > " + itoa64(th.LagBytes)
	case th.BehindSource > 0 && c.BehindSourceMs > th.BehindSource.Milliseconds():
		return Amber, "behind source " + itoa64(c.BehindSourceMs) + " ms > " + itoa64(th.BehindSource.Milliseconds())
	case th.LagEvents > 0 && c.EventsBehind > th.LagEvents:
		return Amber, "events behind " + itoa64(c.EventsBehind) + " > " + itoa64(th.LagEvents)
	case th.GrowthWindow > 0 && growing(hist, th.GrowthWindow, r.interval):
		return Amber, "replication lag growing for " + th.GrowthWindow.String()
	}
	return Green, ""
}
