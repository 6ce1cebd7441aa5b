package runtime

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/metrics"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// recordingSink is an in-process sink connector (a fake at the plugin
// boundary, like Kafka Connect's VerifiableSinkConnector): its task keeps
// what Put received, fails the first Puts with a RetriableException, and
// its Flush waits until the test lets it through.
type recordingSink struct{ shared *sinkShared }

type sinkShared struct {
	mu        sync.Mutex
	values    []string
	puts      int
	failPuts  int           // Puts that fail with *connect.RetriableError
	flushGate chan struct{} // Flush returns once this is closed
	flushes   int
	maxBatch  int
	headers   [][]connect.Header // per record put, in order
}

func (recordingSink) Version() string                                  { return "test" }
func (recordingSink) Config() *connect.ConfigDef                       { return connect.NewConfigDef() }
func (recordingSink) Validate(map[string]string) []connect.ConfigError { return nil }
func (recordingSink) TaskConfigs(cfg map[string]string, _ int) ([]map[string]string, error) {
	return []map[string]string{cfg}, nil
}
func (s recordingSink) NewTask() connect.SinkTask { return &recordingSinkTask{s.shared} }

type recordingSinkTask struct{ shared *sinkShared }

func (t *recordingSinkTask) Start(context.Context, connect.SinkTaskContext, map[string]string) error {
	return nil
}

func (t *recordingSinkTask) Put(_ context.Context, recs []*connect.SinkRecord) error {
	t.shared.mu.Lock()
	defer t.shared.mu.Unlock()
	t.shared.puts++
	t.shared.maxBatch = max(t.shared.maxBatch, len(recs))
	if t.shared.puts <= t.shared.failPuts {
		return &connect.RetriableError{Err: io.ErrUnexpectedEOF}
	}
	for _, r := range recs {
		t.shared.values = append(t.shared.values, r.Value.(string))
		t.shared.headers = append(t.shared.headers, r.Headers)
	}
	return nil
}

func (t *recordingSinkTask) Flush(ctx context.Context) error {
	select {
	case <-t.shared.flushGate:
	case <-ctx.Done():
		return ctx.Err()
	}
	t.shared.mu.Lock()
	t.shared.flushes++
	t.shared.mu.Unlock()
	return nil
}

func (t *recordingSinkTask) Stop() error { return nil }

// TestSinkTaskRetriesPutAndCommitsAfterFlush: WorkerSinkTask's contract.
// A RetriableException from put redelivers the same records (none lost,
// the task stays RUNNING); the consumer group connect-<name> has no
// committed offset while the task's flush has not returned, and has the
// end offset once it has (DESIGN.md invariant 1 for sinks).
func TestSinkTaskRetriesPutAndCommitsAfterFlush(t *testing.T) {
	kafka := freeAddr(t)
	src := &counterShared{}
	sink := &sinkShared{failPuts: 2, flushGate: make(chan struct{})}
	plugins := connect.NewPlugins()
	plugins.RegisterSource("test.CounterSource", func() connect.SourceConnector { return counterSource{src} })
	plugins.RegisterSink("test.RecordingSink", func() connect.SinkConnector { return recordingSink{sink} })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := StartWorker(ctx, WorkerConfig{"data.dir": t.TempDir(), "embedded.kafka.listener": kafka,
		"listeners": "http://127.0.0.1:0", "offset.flush.interval.ms": "100"}, plugins, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// SinkConnectorConfig.validate: a sink needs exactly one of topics
	// and topics.regex (HTTP 400 with the message on the key).
	_, err = w.Herder.CreateConnector(ctx, "bad", map[string]string{"connector.class": "test.RecordingSink"})
	var invalid *ConfigInvalidError
	if !errors.As(err, &invalid) || !strings.Contains(invalid.Error(), "Must configure one of topics or topics.regex") {
		t.Fatalf("sink without topics: %v", err)
	}
	if _, err := w.Herder.CreateConnector(ctx, "counter", map[string]string{"connector.class": "test.CounterSource", "topic": "numbers", "count": "300"}); err != nil {
		t.Fatal(err)
	}
	consumeAll(t, kafka, "numbers", 300)
	if _, err := w.Herder.CreateConnector(ctx, "rec", map[string]string{"connector.class": "test.RecordingSink", "topics": "numbers", "errors.retry.delay.max.ms": "200",
		"consumer.override.max.poll.records": "40"}); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(mustClient(t, kafka))
	committed := func() int64 {
		offs, err := adm.FetchOffsets(ctx, "connect-rec")
		if err != nil {
			t.Fatal(err)
		}
		o, ok := offs.Lookup("numbers", 0)
		if !ok || o.Err != nil {
			return -1
		}
		return o.At
	}
	putCount := func() int {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return len(sink.values)
	}
	// The first Put that succeeds (40 records, after two retriable
	// failures) is followed by a flush that blocks: nothing is committed.
	waitFor(t, func() bool { return putCount() >= 40 })
	time.Sleep(500 * time.Millisecond) // several commit intervals
	if c := committed(); c > 0 {
		t.Fatalf("offset %d committed before the task's flush returned", c)
	}
	close(sink.flushGate)
	deadline := time.Now().Add(30 * time.Second)
	for putCount() < 300 {
		if time.Now().After(deadline) {
			st, _ := w.Herder.ConnectorStatus("rec")
			t.Fatalf("%d of 300 records put; status %+v", putCount(), st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sink.mu.Lock()
	for i, v := range sink.values[:300] {
		if v != "record-"+itoa(i) {
			t.Fatalf("value %d = %q", i, v)
		}
	}
	puts, maxBatch := sink.puts, sink.maxBatch
	sink.mu.Unlock()
	if maxBatch > 40 || maxBatch == 0 {
		t.Fatalf("a Put got %d records, consumer.override.max.poll.records=40", maxBatch)
	}
	if puts < 3 {
		t.Fatalf("%d puts: the two retriable failures were not redelivered", puts)
	}
	waitFor(t, func() bool { return committed() == 300 })
	st, _ := w.Herder.ConnectorStatus("rec")
	if st.Type != "sink" || st.Tasks[0].State != StateRunning {
		t.Fatalf("status %+v", st)
	}
	// KIP-891: a sink's statuses carry its plugin's version too.
	if st.Connector.Version != "test" || st.Tasks[0].Version != "test" {
		t.Fatalf("sink status versions %q / %q, want test", st.Connector.Version, st.Tasks[0].Version)
	}
	// The sink's metrics: each record read once and put once, although two
	// Puts failed (sink-record-send-total counts a batch when Put returned,
	// WorkerSinkTask.deliverMessages); consumer lag 0 once all are polled.
	found := false
	for _, c := range w.Herder.Metrics().Summary().Connectors {
		if c.Name != "rec" {
			continue
		}
		found = true
		if c.Polled != 300 || c.Written != 300 || c.EventsBehind != 0 || c.Errors != 0 {
			t.Fatalf("sink metrics: read %d, sent %d, lag %d, errors %d; want 300, 300, 0, 0", c.Polled, c.Written, c.EventsBehind, c.Errors)
		}
	}
	if !found {
		t.Fatal("no summary for the sink connector rec")
	}
}

func mustClient(t *testing.T, broker string) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func itoa(i int) string { return strconv.Itoa(i) }

// recordLag: per partition, the fetch's high watermark minus the position
// after the last polled record (the consumer's records-lag); a partition
// without records in a poll keeps its lag, a revoked one loses it.
func TestSinkConsumerLagFromFetch(t *testing.T) {
	reg := metrics.New()
	w := &workerSinkTask{metrics: reg.SinkTask("s", 0)}
	lag := func() map[string]float64 {
		fams, err := reg.Gatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, f := range fams {
			if f.GetName() != "connectd_sink_consumer_lag" {
				continue
			}
			for _, m := range f.Metric {
				l := map[string]string{}
				for _, lp := range m.Label {
					l[lp.GetName()] = lp.GetValue()
				}
				out[l["topic"]+"-"+l["partition"]] = m.Gauge.GetValue()
			}
		}
		return out
	}
	recs := func(offs ...int64) []*kgo.Record {
		var rs []*kgo.Record
		for _, o := range offs {
			rs = append(rs, &kgo.Record{Offset: o})
		}
		return rs
	}
	w.recordLag(kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: "a", Partitions: []kgo.FetchPartition{
		{Partition: 0, HighWatermark: 10, Records: recs(3, 4)},
		{Partition: 1, HighWatermark: 7, Records: recs(6)},
	}}}}})
	if got := lag(); len(got) != 2 || got["a-0"] != 5 || got["a-1"] != 0 {
		t.Fatalf("lag %v, want a-0 = 10-5 = 5, a-1 = 7-7 = 0", got)
	}
	w.recordLag(kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: "a", Partitions: []kgo.FetchPartition{
		{Partition: 0, HighWatermark: 12, Records: recs(5, 6, 7, 8, 9, 10, 11)},
		{Partition: 1, HighWatermark: 9},
	}}}}})
	if got := lag(); got["a-0"] != 0 || got["a-1"] != 0 {
		t.Fatalf("lag %v, want a-0 = 0, a-1 unchanged 0", got)
	}
	w.forget(map[string][]int32{"a": {0}})
	if got := lag(); len(got) != 1 || got["a-1"] != 0 {
		t.Fatalf("lag after revoking a-0: %v", got)
	}
}
