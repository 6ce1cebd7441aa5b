package metrics

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var (
	srcSchema = connect.StructSchema().Name("io.debezium.connector.postgresql.Source").
			Field("ts_ms", connect.Prim(connect.Int64, false)).
			Field("txId", connect.Prim(connect.Int64, true)).Build()
	envSchema = connect.StructSchema().Name("t.Envelope").
			Field("source", srcSchema).
			Field("op", connect.Prim(connect.String, false)).Build()
)

// change builds a Debezium envelope as the PostgreSQL connector emits it
// (op, source.ts_ms = commit time, source.txId).
func change(op string, tsMs, txID int64) *connect.SourceRecord {
	src := connect.NewStruct(srcSchema).Put("ts_ms", tsMs).Put("txId", txID)
	return &connect.SourceRecord{Topic: "t", Value: connect.NewStruct(envSchema).Put("source", src).Put("op", op)}
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

type fakeSource struct{ m connect.SourceTaskMetrics }

func (f *fakeSource) Metrics() connect.SourceTaskMetrics { return f.m }

// Counting follows Debezium's definitions: reads count as events seen but
// set no MilliSecondsBehindSource; a transaction counts once however many
// events it has; tombstones and non-envelope records are not events.
func TestSourceTaskCountsEvents(t *testing.T) {
	c := &clock{time.UnixMilli(1_000_000)}
	r := New(WithClock(c.now))
	st := r.SourceTask("inv", 0)
	if ts := st.Event(change("r", 999_000, 0)); ts != 0 {
		t.Fatalf("read returned source ts %d, want 0 (no latency for snapshot reads)", ts)
	}
	for _, e := range []struct {
		op string
		tx int64
	}{{"c", 7}, {"c", 7}, {"u", 8}, {"d", 9}, {"d", 9}} {
		if ts := st.Event(change(e.op, 999_750, e.tx)); ts != 999_750 {
			t.Fatalf("source ts %d", ts)
		}
	}
	st.Event(&connect.SourceRecord{Topic: "t"}) // tombstone
	st.Sent()
	st.Sent()
	st.Acked(999_750, nil)
	c.advance(2 * time.Second)
	st.Acked(999_750, nil) // 2.25 s after commit
	st.Sent()
	st.Acked(0, errors.New("produce failed"))
	s := st.Snapshot()
	want := map[string]int64{"c": 2, "u": 1, "d": 2, "r": 1, "t": 0}
	for op, n := range want {
		if s.ByOp[op] != n {
			t.Errorf("op %s: %d, want %d", op, s.ByOp[op], n)
		}
	}
	if s.EventsSeen != 6 || s.CommittedTransactions != 3 || s.BehindSourceMs != 250 || s.Written != 2 || s.InFlight != 0 {
		t.Fatalf("snapshot %+v", s)
	}
	// 0.25 s and 2.25 s: buckets (0.1, 0.25] and (1, 2.5].
	if s.LatencyCounts[5] != 1 || s.LatencyCounts[8] != 1 || math.Abs(s.LatencySum-2.5) > 1e-9 {
		t.Fatalf("latency counts %v sum %v", s.LatencyCounts, s.LatencySum)
	}
	if got := testutil.ToFloat64(testutilCollector(r, "connectd_streaming_committed_transactions_total")); got != 3 {
		t.Fatalf("exported committed transactions %v", got)
	}
}

// Quantile interpolates inside buckets as Prometheus' histogram_quantile:
// 10 observations in (0.1, 0.25]: the median is at 0.1 + 0.15*5/10.
func TestQuantile(t *testing.T) {
	counts := make([]uint64, len(LatencyBuckets)+1)
	if !math.IsNaN(Quantile(0.5, counts)) {
		t.Fatal("empty histogram: want NaN")
	}
	counts[5] = 10
	if got := Quantile(0.5, counts); math.Abs(got-0.175) > 1e-12 {
		t.Fatalf("p50 %v, want 0.175", got)
	}
	counts[len(counts)-1] = 100 // most above the last bound
	if got := Quantile(0.99, counts); got != 300 {
		t.Fatalf("p99 in +Inf bucket %v, want the largest bound 300", got)
	}
}

// The colour: red when a task FAILED; amber above the lag threshold, and
// amber when lag grew in the samples of the last 5 minutes though under
// the threshold; green when it stops growing.
func TestSummaryColour(t *testing.T) {
	c := &clock{time.UnixMilli(5_000_000)}
	th := DefaultThresholds
	th.LagBytes = 1 << 20
	r := New(WithClock(c.now), WithSampleInterval(30*time.Second), WithThresholds(th))
	src := &fakeSource{connect.SourceTaskMetrics{Connected: true, QueueTotalCapacity: 10, QueueRemainingCapacity: 10, ReplicationLagBytes: 100, RetainedBytes: 200}}
	r.SourceTask("inv", 0).Attach(src)
	state := "RUNNING"
	r.SetStatus(func() []ConnectorState {
		return []ConnectorState{{Name: "inv", Type: "source", State: "RUNNING", Tasks: []TaskState{{ID: 0, State: state, Trace: "boom\nat x"}}}}
	})
	colour := func() ConnectorSummary { return r.Summary().Connectors[0] }
	r.Sample()
	if s := colour(); s.Colour != Green || s.LagBytes != 100 || s.RetainedBytes != 200 {
		t.Fatalf("idle: %+v", s)
	}
	// 4.5 minutes of growth: not yet amber.
	for i := 0; i < 9; i++ {
		c.advance(30 * time.Second)
		src.m.ReplicationLagBytes += 1000
		r.Sample()
	}
	if s := colour(); s.Colour != Green {
		t.Fatalf("growing for 4.5 min: %s (%s)", s.Colour, s.Reason)
	}
	c.advance(30 * time.Second)
	src.m.ReplicationLagBytes += 1000
	r.Sample()
	if s := colour(); s.Colour != Amber || !strings.Contains(s.Reason, "growing") {
		t.Fatalf("growing for 5 min: %s (%s)", s.Colour, s.Reason)
	}
	c.advance(30 * time.Second)
	src.m.ReplicationLagBytes -= 5000
	r.Sample()
	if s := colour(); s.Colour != Green {
		t.Fatalf("after a drop: %s (%s)", s.Colour, s.Reason)
	}
	src.m.ReplicationLagBytes = 2 << 20
	if s := colour(); s.Colour != Amber || !strings.Contains(s.Reason, "replication lag") {
		t.Fatalf("above threshold: %s (%s)", s.Colour, s.Reason)
	}
	state = "FAILED"
	s := r.Summary()
	if s.Connectors[0].Colour != Red || len(s.Connectors[0].History) != 12 {
		t.Fatalf("failed task: %+v", s.Connectors[0])
	}
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"inv", "0:FAILED", "red", "2097152", "inv: red: task 0 FAILED", "inv: trace: boom"} {
		if !strings.Contains(buf.String(), want) {
			t.Fatalf("status text lacks %q:\n%s", want, buf.String())
		}
	}
}

// A snapshot's table lines in the status text: done tables their rows,
// running ones rows of the planner's estimate, or no estimate for a table
// never analyzed (pg_class.reltuples -1) instead of a bare "?", and an
// estimate already passed (stale statistics) not as "N of about M", N > M.
func TestStatusTextSnapshotTables(t *testing.T) {
	s := Summary{Connectors: []ConnectorSummary{{Name: "inv", Snapshot: &SnapshotSummary{Running: true, DurationMs: 1500, Tables: []TableSummary{
		{Table: "public.a", RowsScanned: 10, EstimatedRows: 10, Done: true},
		{Table: "public.b", RowsScanned: 5, EstimatedRows: 1000},
		{Table: "public.c", RowsScanned: 7, EstimatedRows: -1},
		{Table: "public.d", RowsScanned: 1001, EstimatedRows: 1000},
		{Table: "public.e", RowsScanned: 3, EstimatedRows: 0},
	}}}}}
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"inv: snapshot running (1.5 s)", "  public.a: 10 rows, done\n", "  public.b: 5 of about 1000 rows\n",
		"  public.c: 7 rows so far (no row estimate: the table was never analyzed)\n",
		"  public.d: 1001 rows so far (more than the estimate of 1000 rows: the table's statistics are stale, ANALYZE refreshes them)\n",
		"  public.e: 3 rows so far (more than the estimate of 0 rows: the table's statistics are stale, ANALYZE refreshes them)\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Fatalf("status text lacks %q:\n%s", want, buf.String())
		}
	}
}

// The history keeps 15 minutes: older samples fall off the ring.
func TestHistoryKeepsFifteenMinutes(t *testing.T) {
	c := &clock{time.UnixMilli(0)}
	r := New(WithClock(c.now), WithSampleInterval(5*time.Second))
	r.SourceTask("inv", 0)
	for i := 0; i < 400; i++ {
		r.Sample()
		c.advance(5 * time.Second)
	}
	h := r.history("inv")
	if len(h) != 181 || h[len(h)-1].T-h[0].T != (15*time.Minute).Milliseconds() {
		t.Fatalf("%d samples spanning %d ms", len(h), h[len(h)-1].T-h[0].T)
	}
	if n := len(MetricNames()); n != 40 {
		t.Fatalf("%d metric names", n)
	}
}

// testutilCollector picks one metric family of r for testutil.ToFloat64.
func testutilCollector(r *Registry, name string) *gathered { return &gathered{r, name} }

// The sink hooks: consumer lag per partition is exported and counts as the
// connector's events behind (amber above 1000, the alert rule's number).
func TestSinkTaskHooks(t *testing.T) {
	r := New()
	r.SetStatus(func() []ConnectorState {
		return []ConnectorState{{Name: "jdbc", Type: "sink", State: "RUNNING", Tasks: []TaskState{{ID: 0, State: "RUNNING"}}}}
	})
	st := r.SinkTask("jdbc", 0)
	st.Read(10)
	st.Sent(8)
	st.DeadLetter(2)
	st.ConsumerLag("orders", 0, 700)
	st.ConsumerLag("orders", 1, 400)
	if got := testutil.ToFloat64(testutilCollector(r, "connectd_sink_deadletterqueue_produce_requests_total")); got != 2 {
		t.Fatalf("DLQ %v", got)
	}
	n, err := testutil.GatherAndCount(r.Gatherer(), "connectd_sink_consumer_lag")
	if err != nil || n != 2 {
		t.Fatalf("consumer lag series %d %v", n, err)
	}
	c := r.Summary().Connectors[0]
	if c.EventsBehind != 1100 || c.Written != 8 || c.DeadLetters != 2 || c.Polled != 10 || c.Colour != Amber {
		t.Fatalf("sink summary %+v", c)
	}
	// The history (the dashboard's chart) samples a sink-only connector too.
	r.Sample()
	if h := r.Summary().Connectors[0].History; len(h) != 1 || h[0].EventsBehind != 1100 || h[0].Written != 8 || h[0].DeadLetters != 2 {
		t.Fatalf("sink history %+v", h)
	}
	// A revoked partition's lag leaves with it.
	st.ForgetPartitions(map[string][]int32{"orders": {1}})
	if n, err := testutil.GatherAndCount(r.Gatherer(), "connectd_sink_consumer_lag"); err != nil || n != 1 {
		t.Fatalf("consumer lag series after revocation %d %v", n, err)
	}
	if c := r.Summary().Connectors[0]; c.EventsBehind != 700 || c.Colour != Green {
		t.Fatalf("sink summary after revocation %+v", c)
	}
}

func TestTraceSummary(t *testing.T) {
	for in, want := range map[string]string{
		"boom": "boom",
		"connect failed:\n\thost: tls error\n\thost: password authentication failed":                  "connect failed: / host: tls error / host: password authentication failed",
		"org.apache.kafka.connect.errors.ConnectException: x\n\tat a.b(C.java:1)\n\tat d.e(F.java:2)": "org.apache.kafka.connect.errors.ConnectException: x",
	} {
		if got := traceSummary(in); got != want {
			t.Errorf("traceSummary(%q) = %q, want %q", in, got, want)
		}
	}
}
