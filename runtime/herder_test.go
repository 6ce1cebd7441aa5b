package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kgo"
)

// counterSource is an in-process source connector that emits n records
// numbered from its last committed offset, like Kafka Connect's
// VerifiableSourceConnector. It records what the worker committed.
type counterSource struct{ shared *counterShared }

type counterShared struct {
	mu        sync.Mutex
	committed []int64
	startErr  error
	// pollErr, when set, is returned once by a Poll after the first batch.
	pollErr error
	starts  int
	// lastCfg is the config the last task Start received.
	lastCfg map[string]string
}

func (c counterSource) Version() string { return "test" }
func (c counterSource) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "topic", Type: connect.TypeString, Importance: connect.High}).
		Define(connect.ConfigKey{Name: "count", Type: connect.TypeInt, Default: connect.Str("10"), Importance: connect.High})
}
func (c counterSource) Validate(map[string]string) []connect.ConfigError { return nil }
func (c counterSource) TaskConfigs(cfg map[string]string, _ int) ([]map[string]string, error) {
	return []map[string]string{cfg}, nil
}
func (c counterSource) NewTask() connect.SourceTask { return &counterTask{shared: c.shared} }

type counterTask struct {
	shared *counterShared
	next   int64
	end    int64
	topic  string
}

var counterPartition = map[string]any{"source": "counter"}

func (t *counterTask) Start(ctx context.Context, tc connect.SourceTaskContext, cfg map[string]string) error {
	t.shared.mu.Lock()
	err := t.shared.startErr
	t.shared.starts++
	t.shared.lastCfg = cfg
	t.shared.mu.Unlock()
	if err != nil {
		return err
	}
	off, err := tc.OffsetReader().Offset(ctx, counterPartition)
	if err != nil {
		return err
	}
	if off != nil {
		t.next = off["seq"].(int64) + 1
	}
	n, _ := strconv.Atoi(cfg["count"])
	t.end = t.next + int64(n)
	t.topic = cfg["topic"]
	return nil
}

func (t *counterTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	t.shared.mu.Lock()
	perr := t.shared.pollErr
	if perr != nil && t.next%100 == 0 && t.next > 0 {
		t.shared.pollErr = nil
	} else {
		perr = nil
	}
	t.shared.mu.Unlock()
	if perr != nil {
		return nil, perr
	}
	if t.next >= t.end {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
			return nil, nil
		}
	}
	var out []*connect.SourceRecord
	for ; t.next < t.end && len(out) < 100; t.next++ {
		out = append(out, &connect.SourceRecord{
			SourcePartition: counterPartition,
			SourceOffset:    map[string]any{"seq": t.next},
			Topic:           t.topic,
			KeySchema:       connect.Prim(connect.Int64, false),
			Key:             t.next,
			ValueSchema:     connect.Prim(connect.String, false),
			Value:           fmt.Sprintf("record-%d", t.next),
		})
	}
	return out, nil
}

func (t *counterTask) Commit(_ context.Context, _, offset map[string]any) error {
	t.shared.mu.Lock()
	defer t.shared.mu.Unlock()
	t.shared.committed = append(t.shared.committed, offset["seq"].(int64))
	return nil
}

func (t *counterTask) Stop() error { return nil }

func startTestWorker(t *testing.T, dataDir, kafka string, shared *counterShared, extra ...string) *Worker {
	t.Helper()
	plugins := connect.NewPlugins()
	plugins.RegisterSource("test.CounterSource", func() connect.SourceConnector { return counterSource{shared} })
	cfg := WorkerConfig{
		"data.dir":                 dataDir,
		"embedded.kafka.listener":  kafka,
		"listeners":                "http://127.0.0.1:0",
		"offset.flush.interval.ms": "100",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := StartWorker(ctx, cfg, plugins, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func consumeAll(t *testing.T, broker, topic string, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("got %d of %d records from %s", len(out), want, topic)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	// The embedded broker needs a fixed port; take a free one.
	l, err := (&netListenConfig{}).listen()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Records reach Kafka converted by JsonConverter; the task's Commit sees
// only offsets that were stored; a restarted worker resumes after the last
// stored offset and finds its connector again in the config topic.
func TestHerderRunsSourceAndResumesFromStoredOffset(t *testing.T) {
	dir := t.TempDir()
	kafka := freeAddr(t)
	shared := &counterShared{}
	w := startTestWorker(t, dir, kafka, shared)
	ctx := context.Background()
	if _, err := w.Herder.CreateConnector(ctx, "counter", map[string]string{"connector.class": "test.CounterSource", "topic": "numbers", "count": "250"}); err != nil {
		t.Fatal(err)
	}
	got := consumeAll(t, kafka, "numbers", 250)
	if got[0] != `{"schema":{"type":"string","optional":false},"payload":"record-0"}` {
		t.Fatalf("first value %s", got[0])
	}
	waitFor(t, func() bool {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		return len(shared.committed) > 0 && shared.committed[len(shared.committed)-1] == 249
	})
	st, err := w.Herder.ConnectorStatus("counter")
	if err != nil || st.Connector.State != StateRunning || st.Tasks[0].State != StateRunning {
		t.Fatalf("status %+v %v", st, err)
	}
	w.Close()

	w2 := startTestWorker(t, dir, kafka, shared)
	defer w2.Close()
	if names := w2.Herder.Connectors(); len(names) != 1 || names[0] != "counter" {
		t.Fatalf("connectors after restart: %v", names)
	}
	got = consumeAll(t, kafka, "numbers", 500)
	if got[250] != `{"schema":{"type":"string","optional":false},"payload":"record-250"}` || got[499] != `{"schema":{"type":"string","optional":false},"payload":"record-499"}` {
		t.Fatalf("after restart: %s .. %s", got[250], got[499])
	}
}

// The producer path writes keys and values into pooled buffers and reuses a
// buffer only after Kafka acknowledged its record (source_task.go,
// recordBuffers): every one of 20000 records, of growing lengths, reads back
// as exactly the bytes JsonConverter writes for it (a buffer reused too
// early would show another record's bytes).
func TestSourceRecordBuffersReusedOnlyAfterAck(t *testing.T) {
	kafka := freeAddr(t)
	w := startTestWorker(t, t.TempDir(), kafka, &counterShared{})
	defer w.Close()
	const n = 20000
	if _, err := w.Herder.CreateConnector(context.Background(), "counter", map[string]string{"connector.class": "test.CounterSource", "topic": "numbers", "count": fmt.Sprint(n)}); err != nil {
		t.Fatal(err)
	}
	got := consumeAll(t, kafka, "numbers", n)
	for i, v := range got {
		if want := fmt.Sprintf(`{"schema":{"type":"string","optional":false},"payload":"record-%d"}`, i); v != want {
			t.Fatalf("record %d: %s, want %s", i, v, want)
		}
	}
}

// A task whose Start fails is FAILED with the cause in its trace, the
// worker keeps going, and a restart after the cause is fixed recovers.
func TestHerderFailedTaskAndRestart(t *testing.T) {
	shared := &counterShared{startErr: errors.New("connection refused")}
	w := startTestWorker(t, t.TempDir(), freeAddr(t), shared)
	defer w.Close()
	ctx := context.Background()
	if _, err := w.Herder.CreateConnector(ctx, "c1", map[string]string{"connector.class": "test.CounterSource", "topic": "t1", "count": "10"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		st, _ := w.Herder.ConnectorStatus("c1")
		return len(st.Tasks) == 1 && st.Tasks[0].State == StateFailed && st.Tasks[0].Trace == "connection refused"
	})
	shared.mu.Lock()
	shared.startErr = nil
	shared.mu.Unlock()
	if err := w.Herder.RestartConnector(ctx, "c1", true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		st, _ := w.Herder.ConnectorStatus("c1")
		return len(st.Tasks) == 1 && st.Tasks[0].State == StateRunning
	})
	consumeAll(t, w.Brokers[0], "t1", 10)
}

func TestHerderRejectsInvalidConfig(t *testing.T) {
	w := startTestWorker(t, t.TempDir(), freeAddr(t), &counterShared{})
	defer w.Close()
	_, err := w.Herder.CreateConnector(context.Background(), "bad", map[string]string{"connector.class": "test.CounterSource", "count": "many"})
	var ci *ConfigInvalidError
	if !errors.As(err, &ci) {
		t.Fatalf("want ConfigInvalidError, got %v", err)
	}
	msg := ci.Error()
	for _, want := range []string{`Missing required configuration "topic"`, "Invalid value many for configuration count"} {
		if !contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if len(w.Herder.Connectors()) != 0 {
		t.Fatal("an invalid connector was stored")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func contains(s, sub string) bool { return len(s) >= len(sub) && (s == sub || indexOf(s, sub) >= 0) }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
