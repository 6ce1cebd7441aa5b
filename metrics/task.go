package metrics

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
)

// Operations are Debezium's envelope op codes, in the order the counters
// keep them: create, update, delete, read (snapshot), truncate.
var Operations = []string{"c", "u", "d", "r", "t"}

// LatencyBuckets are the upper bounds, in seconds, of the end-to-end
// latency histogram (source commit time to Kafka acknowledgement).
var LatencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// SourceTask is the monitoring state of one source task. The runtime calls
// its hooks; every method is safe for concurrent use and is a no-op on a
// nil *SourceTask, so a runtime without a Registry needs no checks.
type SourceTask struct {
	Connector string
	Task      int

	provider atomic.Pointer[providerBox]
	now      func() time.Time

	// The counters the poll loop writes (Polled, Event, Sent) and those
	// the producer's promises write (Acked) are on cache lines of their
	// own: sharing one line made every record's counting wait for the
	// other core (metrics.Event was 4% of the CPU of the 1M-row snapshot of
	// bench/postgres, issue 3). In flight = sent - acked.
	_                               cacheLinePad
	pollBatches, polled             atomic.Int64
	sent                            atomic.Int64
	ops                             [5]atomic.Int64
	events                          atomic.Int64
	txns                            atomic.Int64
	behindMs                        atomic.Int64 // -1 = no streaming event yet
	lastEventMs                     atomic.Int64
	_                               cacheLinePad
	written, acked                  atomic.Int64
	_                               cacheLinePad
	commitOK, commitFail, errs, dlq atomic.Int64

	txMu   sync.Mutex
	lastTx any

	// fields caches where Event finds its fields in the last envelope
	// and source schemas it saw.
	fields atomic.Pointer[eventFields]

	latCounts [16]atomic.Uint64 // len(LatencyBuckets)+1 (the +Inf bucket)
	latSumUs  atomic.Int64      // microseconds
}

// inFlight is sent minus acked, acked read first: a record is acked only
// after it was sent, so the difference is never negative.
func (t *SourceTask) inFlight() int64 {
	a := t.acked.Load()
	return t.sent.Load() - a
}

// cacheLinePad keeps the fields after it off the cache line of those
// before it (64-byte lines, two lines for the adjacent-line prefetcher).
type cacheLinePad [128]byte

type providerBox struct {
	p connect.SourceTaskMetricsProvider
}

func newSourceTask(connector string, task int, now func() time.Time) *SourceTask {
	t := &SourceTask{Connector: connector, Task: task, now: now}
	t.behindMs.Store(-1)
	return t
}

// Attach gives the task's own metrics (Connected, queue, snapshot,
// replication lag) when task implements connect.SourceTaskMetricsProvider;
// otherwise it clears them. Call it when the task instance changes.
func (t *SourceTask) Attach(task any) {
	if t == nil {
		return
	}
	if p, ok := task.(connect.SourceTaskMetricsProvider); ok {
		t.provider.Store(&providerBox{p})
		return
	}
	t.provider.Store(nil)
}

// Polled records one SourceTask.Poll that returned n records (Kafka
// Connect's source-record-poll-total counts records).
func (t *SourceTask) Polled(n int) {
	if t == nil {
		return
	}
	t.pollBatches.Add(1)
	t.polled.Add(int64(n))
}

// Event records one record as the connector produced it (before the SMT
// chain) and returns its source timestamp in Unix ms for Acked, or 0 when it
// carries none or is a snapshot read. A Debezium envelope counts towards
// TotalNumberOfEventsSeen and its op; a streaming one sets
// MilliSecondsBehindSource (processing time minus source.ts_ms, as
// Debezium's StreamingChangeEventSourceMetrics) and counts a committed
// transaction each time source.txId (PostgreSQL) or source.gtid (MySQL)
// changes.
func (t *SourceTask) Event(rec *connect.SourceRecord) int64 {
	if t == nil || rec == nil {
		return 0
	}
	return t.EventAt(rec, t.now())
}

// EventAt is Event with the processing time given: the caller reads the
// clock once for a poll batch of records.
func (t *SourceTask) EventAt(rec *connect.SourceRecord, now time.Time) int64 {
	if t == nil || rec == nil {
		return 0
	}
	v, ok := rec.Value.(*connect.Struct)
	if !ok || v == nil || v.Schema == nil {
		return 0
	}
	fs := t.fields.Load()
	if fs == nil || fs.env != v.Schema {
		fs = &eventFields{env: v.Schema, op: fieldIndex(v.Schema, "op"), source: fieldIndex(v.Schema, "source")}
		t.fields.Store(fs)
	}
	op, _ := valueAt(v, fs.op).(string)
	if op == "" {
		return 0 // not a change event (heartbeat, schema change, transaction marker)
	}
	t.events.Add(1)
	for i, o := range Operations {
		if o == op {
			t.ops[i].Add(1)
		}
	}
	t.lastEventMs.Store(now.UnixMilli())
	if op == "r" {
		return 0
	}
	src, _ := valueAt(v, fs.source).(*connect.Struct)
	if src == nil || src.Schema == nil {
		return 0
	}
	if fs.src != src.Schema {
		fs = &eventFields{env: fs.env, op: fs.op, source: fs.source, src: src.Schema,
			tsMs: fieldIndex(src.Schema, "ts_ms"), txID: fieldIndex(src.Schema, "txId"), gtid: fieldIndex(src.Schema, "gtid")}
		t.fields.Store(fs)
	}
	ts, _ := valueAt(src, fs.tsMs).(int64)
	if ts > 0 {
		t.behindMs.Store(max(0, now.UnixMilli()-ts))
	}
	tx := valueAt(src, fs.txID)
	if tx == nil {
		tx = valueAt(src, fs.gtid)
	}
	if tx != nil {
		t.txMu.Lock()
		if tx != t.lastTx {
			t.lastTx = tx
			t.txns.Add(1)
		}
		t.txMu.Unlock()
	}
	return ts
}

// eventFields are the positions (-1: none) of the fields Event reads in
// one envelope schema and one source schema: looked up by name once, not
// for every event (bench/postgres, issue 3).
type eventFields struct {
	env              *connect.Schema
	op, source       int
	src              *connect.Schema
	tsMs, txID, gtid int
}

// fieldIndex returns the position of field name in struct schema s, or -1.
func fieldIndex(s *connect.Schema, name string) int {
	if f := s.Field(name); f != nil {
		return f.Index
	}
	return -1
}

// valueAt returns the value at position i of st, or nil for -1 or a
// position st does not have.
func valueAt(st *connect.Struct, i int) any {
	if i < 0 || i >= len(st.Values) {
		return nil
	}
	return st.Values[i]
}

// Sent records a record handed to the producer.
func (t *SourceTask) Sent() {
	if t == nil {
		return
	}
	t.sent.Add(1)
}

// Acked records the producer's answer for a Sent record. On success it
// counts source-record-write-total and, when sourceTsMs > 0, observes the
// end-to-end latency from the source commit time to now.
func (t *SourceTask) Acked(sourceTsMs int64, err error) {
	if t == nil {
		return
	}
	t.acked.Add(1)
	if err != nil {
		return
	}
	t.Written(sourceTsMs)
}

// Written records a record Kafka holds (acknowledged, or committed in a
// transaction under exactly-once source): source-record-write-total, and
// the end-to-end latency from sourceTsMs (Unix ms) when it is > 0.
func (t *SourceTask) Written(sourceTsMs int64) {
	if t == nil {
		return
	}
	t.written.Add(1)
	if sourceTsMs <= 0 {
		return
	}
	lat := time.Duration(max(0, t.now().UnixMilli()-sourceTsMs)) * time.Millisecond
	t.observeLatency(lat)
}

func (t *SourceTask) observeLatency(d time.Duration) {
	s := d.Seconds()
	i := len(LatencyBuckets)
	for j, b := range LatencyBuckets {
		if s <= b {
			i = j
			break
		}
	}
	t.latCounts[i].Add(1)
	t.latSumUs.Add(d.Microseconds())
}

// OffsetCommit records one offset flush (Kafka Connect's
// offset-commit-completion-total / offset-commit-skip-total analogues).
func (t *SourceTask) OffsetCommit(err error) {
	if t == nil {
		return
	}
	if err != nil {
		t.commitFail.Add(1)
		return
	}
	t.commitOK.Add(1)
}

// Error records one task failure or record error (Kafka Connect's
// total-record-errors).
func (t *SourceTask) Error() {
	if t == nil {
		return
	}
	t.errs.Add(1)
}

// DeadLetter records n records written to the dead letter queue (Kafka
// Connect's deadletterqueue-produce-requests); the hook for the runtime's
// errors.tolerance=all path.
func (t *SourceTask) DeadLetter(n int) {
	if t == nil {
		return
	}
	t.dlq.Add(int64(n))
}

// TaskSnapshot is a SourceTask's counters at one moment.
type TaskSnapshot struct {
	Connector string
	Task      int

	PollBatches, Polled, Written, InFlight int64
	OffsetCommits, OffsetCommitFailures    int64
	Errors, DeadLetters                    int64
	EventsSeen                             int64
	ByOp                                   map[string]int64
	CommittedTransactions                  int64
	BehindSourceMs                         int64 // -1 = no streaming event yet
	LastEventMs                            int64 // Unix ms, 0 = none

	LatencyCounts []uint64 // per bucket (not cumulative), last is +Inf
	LatencySum    float64  // seconds

	Source *connect.SourceTaskMetrics // nil when the task reports none
}

// Snapshot reads the counters (and the connector's own metrics).
func (t *SourceTask) Snapshot() TaskSnapshot {
	s := TaskSnapshot{
		Connector: t.Connector, Task: t.Task,
		PollBatches: t.pollBatches.Load(), Polled: t.polled.Load(), Written: t.written.Load(), InFlight: t.inFlight(),
		OffsetCommits: t.commitOK.Load(), OffsetCommitFailures: t.commitFail.Load(),
		Errors: t.errs.Load(), DeadLetters: t.dlq.Load(),
		EventsSeen: t.events.Load(), ByOp: map[string]int64{},
		CommittedTransactions: t.txns.Load(), BehindSourceMs: t.behindMs.Load(), LastEventMs: t.lastEventMs.Load(),
		LatencySum: float64(t.latSumUs.Load()) / 1e6,
	}
	for i, o := range Operations {
		s.ByOp[o] = t.ops[i].Load()
	}
	s.LatencyCounts = make([]uint64, len(LatencyBuckets)+1)
	for i := range s.LatencyCounts {
		s.LatencyCounts[i] = t.latCounts[i].Load()
	}
	if b := t.provider.Load(); b != nil {
		m := b.p.Metrics()
		s.Source = &m
	}
	return s
}

// Quantile estimates the q-quantile (0..1) of latency counts per bucket, in
// seconds, by linear interpolation inside the bucket as Prometheus'
// histogram_quantile does; NaN when counts are all zero. A quantile in the
// +Inf bucket returns the largest finite bound.
func Quantile(q float64, counts []uint64) float64 {
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return math.NaN()
	}
	rank := q * float64(total)
	var cum float64
	for i, c := range counts {
		prev := cum
		cum += float64(c)
		if cum >= rank && c > 0 {
			if i >= len(LatencyBuckets) {
				return LatencyBuckets[len(LatencyBuckets)-1]
			}
			lo := 0.0
			if i > 0 {
				lo = LatencyBuckets[i-1]
			}
			return lo + (LatencyBuckets[i]-lo)*(rank-prev)/float64(c)
		}
	}
	return LatencyBuckets[len(LatencyBuckets)-1]
}
