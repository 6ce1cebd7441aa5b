package metrics

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// ConnectorState is a connector's status as the herder knows it (the body
// of GET /connectors/{name}/status), given to the Registry by a StatusFunc.
type ConnectorState struct {
	Name  string
	Type  string // "source" or "sink"
	State string // RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED, RESTARTING
	Trace string
	Tasks []TaskState
}

// TaskState is one task's status.
type TaskState struct {
	ID       int
	State    string
	Trace    string
	WorkerID string
}

// StatusFunc returns every connector's status, sorted by name.
type StatusFunc func() []ConnectorState

// Thresholds decide the summary's amber colour.
type Thresholds struct {
	LagBytes     int64         // replication lag above this is amber
	BehindSource time.Duration // MilliSecondsBehindSource above this is amber
	LagEvents    int64         // events queued or in flight above this is amber
	GrowthWindow time.Duration // lag growing steadily for this long is amber
}

// DefaultThresholds: 100 MiB, 60 s, 1000 events (the alert rule's), 5 min.
var DefaultThresholds = Thresholds{LagBytes: 100 << 20, BehindSource: time.Minute, LagEvents: 1000, GrowthWindow: 5 * time.Minute}

// Registry is one worker's metrics.
type Registry struct {
	now        func() time.Time
	interval   time.Duration
	keep       time.Duration
	thresholds Thresholds
	prom       *prometheus.Registry

	mu      sync.Mutex
	tasks   map[taskKey]*SourceTask
	sinks   map[taskKey]*SinkTask
	hist    map[string]*history
	status  StatusFunc
	jobs    JobsFunc
	cancel  context.CancelFunc
	stopped chan struct{}
	verify  *verifyMetrics // connectd verify results (verify.go)
}

type taskKey struct {
	connector string
	task      int
}

// Option configures a Registry.
type Option func(*Registry)

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) Option { return func(r *Registry) { r.now = now } }

// WithSampleInterval sets how often the history samples each connector
// (default 5 s; the history keeps 15 minutes).
func WithSampleInterval(d time.Duration) Option { return func(r *Registry) { r.interval = d } }

// WithThresholds sets the summary's amber thresholds.
func WithThresholds(t Thresholds) Option { return func(r *Registry) { r.thresholds = t } }

// New returns a Registry. Its Prometheus registry also carries the Go and
// process collectors.
func New(opts ...Option) *Registry {
	r := &Registry{now: time.Now, interval: 5 * time.Second, keep: 15 * time.Minute, thresholds: DefaultThresholds,
		tasks: map[taskKey]*SourceTask{}, hist: map[string]*history{}}
	for _, o := range opts {
		o(r)
	}
	r.prom = prometheus.NewRegistry()
	r.verify = newVerifyMetrics()
	r.prom.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collector{r},
		r.verify.differences, r.verify.consistent, r.verify.finished)
	return r
}

// Gatherer is what /metrics serves (promhttp.HandlerFor).
func (r *Registry) Gatherer() prometheus.Gatherer { return r.prom }

// SetStatus gives the connectors' statuses (connectd_connector_status,
// connectd_task_status and the summary's state and colour).
func (r *Registry) SetStatus(f StatusFunc) {
	r.mu.Lock()
	r.status = f
	r.mu.Unlock()
}

// SourceTask returns the monitoring state of a source task, created on first
// use and kept across restarts of the task (counters are monotonic).
func (r *Registry) SourceTask(connector string, task int) *SourceTask {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := taskKey{connector, task}
	t, ok := r.tasks[k]
	if !ok {
		t = newSourceTask(connector, task, r.now)
		r.tasks[k] = t
	}
	return t
}

// RemoveConnector forgets a deleted connector's tasks and history.
func (r *Registry) RemoveConnector(connector string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.tasks {
		if k.connector == connector {
			delete(r.tasks, k)
		}
	}
	for k := range r.sinks {
		if k.connector == connector {
			delete(r.sinks, k)
		}
	}
	delete(r.hist, connector)
}

func (r *Registry) snapshots() []TaskSnapshot {
	r.mu.Lock()
	ts := make([]*SourceTask, 0, len(r.tasks))
	for _, t := range r.tasks {
		ts = append(ts, t)
	}
	r.mu.Unlock()
	out := make([]TaskSnapshot, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Snapshot())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Connector != out[j].Connector {
			return out[i].Connector < out[j].Connector
		}
		return out[i].Task < out[j].Task
	})
	return out
}

func (r *Registry) statuses() []ConnectorState {
	r.mu.Lock()
	f := r.status
	r.mu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

// Start runs the history sampler until ctx ends or Close.
func (r *Registry) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	if r.cancel != nil {
		r.mu.Unlock()
		cancel()
		return
	}
	r.cancel, r.stopped = cancel, make(chan struct{})
	r.mu.Unlock()
	go func() {
		defer close(r.stopped)
		r.Sample()
		t := time.NewTicker(r.interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				r.Sample()
			}
		}
	}()
}

// Close stops the sampler and waits for it.
func (r *Registry) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	cancel, stopped := r.cancel, r.stopped
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-stopped
	}
}

// collector exports the snapshots at scrape time.
type collector struct{ r *Registry }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	ct = []string{"connector", "task"}

	dBehind     = desc("connectd_streaming_behind_source_seconds", "Time between the last streamed change event's source timestamp (source.ts_ms) and its processing, in seconds: Debezium's MilliSecondsBehindSource / 1000. Absent before the first streamed event.", ct...)
	dEventsSeen = desc("connectd_streaming_events_seen_total", "Change events the connector produced, snapshot reads included: Debezium's TotalNumberOfEventsSeen.", ct...)
	dEventsOp   = desc("connectd_streaming_events_total", "Change events by envelope op (c, u, d, r, t): Debezium's TotalNumberOfCreate/Update/DeleteEventsSeen and snapshot reads.", "connector", "task", "op")
	dTxns       = desc("connectd_streaming_committed_transactions_total", "Source transactions whose changes were streamed: Debezium's NumberOfCommittedTransactions.", ct...)
	dQueueCap   = desc("connectd_streaming_queue_capacity", "Capacity of the queue between the reader and the worker, in records: Debezium's QueueTotalCapacity (max.queue.size).", ct...)
	dQueueRem   = desc("connectd_streaming_queue_remaining_capacity", "Free slots in that queue, in records: Debezium's QueueRemainingCapacity.", ct...)
	dConnected  = desc("connectd_streaming_connected", "1 when the task is connected to the source database: Debezium's Connected.", ct...)
	dSnapRun    = desc("connectd_snapshot_running", "1 while a snapshot runs: Debezium's SnapshotRunning.", ct...)
	dSnapDone   = desc("connectd_snapshot_completed", "1 once the latest snapshot completed: Debezium's SnapshotCompleted.", ct...)
	dSnapDur    = desc("connectd_snapshot_duration_seconds", "How long the latest snapshot ran (so far): Debezium's SnapshotDurationInSeconds.", ct...)
	dRows       = desc("connectd_snapshot_rows_scanned_total", "Rows read by the latest snapshot, per table: Debezium's RowsScanned.", "connector", "task", "table")
	dRowsEst    = desc("connectd_snapshot_rows_estimated", "The database's estimate of the table's rows (PostgreSQL pg_class.reltuples), the denominator of snapshot progress; -1 when unknown.", "connector", "task", "table")
	dLagBytes   = desc("connectd_replication_lag_bytes", "How far the position the source confirmed for this task is behind the server's write position, in bytes (PostgreSQL pg_current_wal_lsn() - confirmed_flush_lsn of the slot).", ct...)
	dRetained   = desc("connectd_replication_slot_retained_wal_bytes", "WAL the server retains for this task's slot, in bytes (PostgreSQL pg_current_wal_lsn() - restart_lsn).", ct...)
	dPollBatch  = desc("connectd_source_task_poll_batches_total", "SourceTask.poll calls that returned (Kafka Connect's poll-batch count).", ct...)
	dPolled     = desc("connectd_source_record_poll_total", "Records polled from the task: Kafka Connect's source-record-poll-total.", ct...)
	dWritten    = desc("connectd_source_record_write_total", "Records acknowledged by Kafka: Kafka Connect's source-record-write-total.", ct...)
	dInFlight   = desc("connectd_source_record_active_count", "Records sent to Kafka and not yet acknowledged: Kafka Connect's source-record-active-count.", ct...)
	dCommitOK   = desc("connectd_offset_commit_completion_total", "Offset flushes that stored offsets: Kafka Connect's offset-commit-completion-total.", ct...)
	dCommitFail = desc("connectd_offset_commit_failure_total", "Offset flushes that failed (Kafka Connect's offset-commit-failure-percentage, as a count).", ct...)
	dErrors     = desc("connectd_task_errors_total", "Task failures and record errors: Kafka Connect's total-record-errors.", ct...)
	dDLQ        = desc("connectd_deadletterqueue_produce_requests_total", "Records written to the dead letter queue: Kafka Connect's deadletterqueue-produce-requests.", ct...)
	dLatency    = desc("connectd_end_to_end_latency_seconds", "Time from the source commit (source.ts_ms) to Kafka's acknowledgement of the change event, streaming events only.", ct...)
	dConnStatus = desc("connectd_connector_status", "1 for the connector's current state (Kafka Connect's connector-metrics status).", "connector", "state")
	dTaskStatus = desc("connectd_task_status", "1 for the task's current state (Kafka Connect's connector-task-metrics status: running, paused, failed, unassigned, restarting).", "connector", "task", "state")
)

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dBehind, dEventsSeen, dEventsOp, dTxns, dQueueCap, dQueueRem, dConnected, dSnapRun, dSnapDone, dSnapDur,
		dRows, dRowsEst, dLagBytes, dRetained, dPollBatch, dPolled, dWritten, dInFlight, dCommitOK, dCommitFail, dErrors, dDLQ, dLatency, dConnStatus, dTaskStatus,
		dSinkRead, dSinkSent, dSinkErrs, dSinkDLQ, dSinkLag} {
		ch <- d
	}
	for _, d := range jobDescs {
		ch <- d
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.collectJobs(ch)
	for _, s := range c.r.snapshots() {
		lv := []string{s.Connector, strconv.Itoa(s.Task)}
		counter := func(d *prometheus.Desc, v int64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append(lv[:2:2], extra...)...)
		}
		gauge := func(d *prometheus.Desc, v float64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(lv[:2:2], extra...)...)
		}
		if s.BehindSourceMs >= 0 {
			gauge(dBehind, float64(s.BehindSourceMs)/1000)
		}
		counter(dEventsSeen, s.EventsSeen)
		for _, op := range Operations {
			counter(dEventsOp, s.ByOp[op], op)
		}
		counter(dTxns, s.CommittedTransactions)
		counter(dPollBatch, s.PollBatches)
		counter(dPolled, s.Polled)
		counter(dWritten, s.Written)
		gauge(dInFlight, float64(s.InFlight))
		counter(dCommitOK, s.OffsetCommits)
		counter(dCommitFail, s.OffsetCommitFailures)
		counter(dErrors, s.Errors)
		counter(dDLQ, s.DeadLetters)
		buckets := map[float64]uint64{}
		var cum, total uint64
		for i, b := range LatencyBuckets {
			cum += s.LatencyCounts[i]
			buckets[b] = cum
		}
		total = cum + s.LatencyCounts[len(LatencyBuckets)]
		ch <- prometheus.MustNewConstHistogram(dLatency, total, s.LatencySum, buckets, lv...)
		if m := s.Source; m != nil {
			gauge(dConnected, b2f(m.Connected))
			if m.QueueTotalCapacity > 0 {
				gauge(dQueueCap, float64(m.QueueTotalCapacity))
				gauge(dQueueRem, float64(m.QueueRemainingCapacity))
			}
			if m.ReplicationLagBytes >= 0 {
				gauge(dLagBytes, float64(m.ReplicationLagBytes))
			}
			if m.RetainedBytes >= 0 {
				gauge(dRetained, float64(m.RetainedBytes))
			}
			if sn := m.Snapshot; sn != nil {
				gauge(dSnapRun, b2f(sn.Running))
				gauge(dSnapDone, b2f(sn.Completed))
				gauge(dSnapDur, sn.Duration.Seconds())
				for _, tb := range sn.Tables {
					counter(dRows, tb.RowsScanned, tb.Table)
					gauge(dRowsEst, float64(tb.EstimatedRows), tb.Table)
				}
			}
		}
	}
	collectSinks(c.r, ch)
	for _, cs := range c.r.statuses() {
		if cs.State != "" {
			ch <- prometheus.MustNewConstMetric(dConnStatus, prometheus.GaugeValue, 1, cs.Name, lower(cs.State))
		}
		for _, ts := range cs.Tasks {
			ch <- prometheus.MustNewConstMetric(dTaskStatus, prometheus.GaugeValue, 1, cs.Name, strconv.Itoa(ts.ID), lower(ts.State))
		}
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// nanToNeg turns NaN into -1 for JSON.
func nanToNeg(v float64) float64 {
	if math.IsNaN(v) {
		return -1
	}
	return v
}

func itoa(i int) string     { return strconv.Itoa(i) }
func itoa64(i int64) string { return strconv.FormatInt(i, 10) }

// MetricNames are the names of the metrics the registry exports (without
// the Go and process collectors'), for checking dashboards and rules.
func MetricNames() []string {
	ch := make(chan *prometheus.Desc, 64)
	go func() { collector{}.Describe(ch); close(ch) }()
	var out []string
	for d := range ch {
		s := d.String() // Desc{fqName: "name", help: …}
		if i := strings.Index(s, `fqName: "`); i >= 0 {
			rest := s[i+len(`fqName: "`):]
			out = append(out, rest[:strings.IndexByte(rest, '"')])
		}
	}
	sort.Strings(out)
	return out
}
