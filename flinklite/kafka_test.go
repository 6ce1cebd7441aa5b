package flinklite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

type clickEvent struct {
	User string `json:"user"`
	At   int64  `json:"at"` // event time, ms
}

type countResult struct {
	User  string `json:"user"`
	Start int64  `json:"start"`
	Count int64  `json:"count"`
}

// buildCountJob is the job graph of the Kafka tests: per-user 100 ms
// tumbling counts of the clicks topic, exactly once into results.
func buildCountJob(ctx context.Context, t *testing.T, brokers []string) *Env {
	t.Helper()
	env := NewEnv()
	msgs, err := FromKafka(ctx, env, brokers, []string{"clicks"})
	if err != nil {
		t.Fatal(err)
	}
	evs := FlatMap(msgs, func(m Message, out func(clickEvent)) {
		var c clickEvent
		if json.Unmarshal(m.Value, &c) == nil {
			out(c)
		}
	})
	evs = AssignTimestampsAndWatermarks(evs, WatermarkStrategy[clickEvent]{
		Timestamp: func(c clickEvent) time.Time { return time.UnixMilli(c.At) },
	})
	counts := Aggregate(Window(KeyBy(evs, func(c clickEvent) string { return c.User }), TumblingEventTimeWindows(100*time.Millisecond, 0)), Count[clickEvent]())
	ToKafka(counts, "results", func(c Change[WindowResult[string, int64]]) ([]byte, []byte, error) {
		r := countResult{User: c.Value.Key, Start: c.Value.Window.Start, Count: c.Value.Value}
		v, err := json.Marshal(r)
		return []byte(fmt.Sprintf("%s@%d", r.User, r.Start)), v, err
	})
	return env
}

func produceClicks(ctx context.Context, t *testing.T, cl *kgo.Client, from, to int) {
	t.Helper()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		v, _ := json.Marshal(clickEvent{User: fmt.Sprintf("u%d", i%7), At: int64(i) * 10})
		recs = append(recs, &kgo.Record{Topic: "clicks", Partition: int32(i % 2), Value: v})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// clicksCluster starts a kfake cluster with the topics of buildCountJob
// (clicks, 2 partitions; results) and a producer with manual partitions,
// closed with the test; ctx ends after timeout.
func clicksCluster(t *testing.T, timeout time.Duration) (context.Context, []string, *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "clicks"), kfake.SeedTopics(1, "results"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	in, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	return ctx, brokers, in
}

// readAll reads topic to its end with the given isolation level.
func readAll(ctx context.Context, t *testing.T, brokers []string, topic string, iso kgo.IsolationLevel, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(iso),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	deadline := time.Now().Add(10 * time.Second)
	for len(out) < want && time.Now().Before(deadline) {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { out = append(out, r) })
		cancel()
	}
	// Anything beyond want (a duplicate) shows up within one more poll.
	pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { out = append(out, r) })
	cancel()
	return out
}

// Exactly-once across a crash (Flink's KafkaSink EXACTLY_ONCE with
// checkpoints): the first run is abandoned between writing a checkpoint
// and committing its transaction (no clean stop, producer not closed), the
// second run restores the last committed checkpoint from the directory and
// its offsets; a read_committed consumer sees every window result exactly
// once with the right count, while read_uncommitted shows the aborted
// duplicates of the crashed run.
func TestKafkaExactlyOnceAcrossCrash(t *testing.T) {
	ctx, brokers, in := clicksCluster(t, 25*time.Second)
	dir := t.TempDir()
	cfg := RunConfig{JobID: "counts", Brokers: brokers, CheckpointDir: dir, CheckpointInterval: 50 * time.Millisecond}

	// Run 1: commit checkpoint 1, then crash with results in the open
	// transaction and checkpoint n's file already written.
	produceClicks(ctx, t, in, 0, 1000)
	env1 := buildCountJob(ctx, t, brokers)
	committed1 := make(chan struct{})
	crashedAt := make(chan int64, 1)
	env1.beforeCommit = func(id int64) {
		if id == 1 {
			close(committed1)
			return
		}
		if env1.txnRecords > 0 {
			env1.abandoned.Store(true)
			crashedAt <- id
		}
	}
	done1 := make(chan error, 1)
	go func() { done1 <- env1.Run(ctx, cfg) }()
	select {
	case <-committed1:
	case err := <-done1:
		t.Fatalf("run 1 ended early: %v", err)
	}
	produceClicks(ctx, t, in, 1000, 2000)
	if err := <-done1; err != errAbandoned {
		t.Fatalf("run 1: %v", err)
	}
	crashID := <-crashedAt
	defer env1.producer.Close()
	if ids, _ := checkpointIDs(dir); len(ids) == 0 || ids[len(ids)-1] != crashID {
		t.Fatalf("checkpoint files after the crash %v, want the uncommitted %d last", ids, crashID)
	}

	// Run 2: restores checkpoint crashID−1, replays, then stops cleanly
	// once a far-future click on each partition closed every window.
	produceClicks(ctx, t, in, 2000, 3000)
	env2 := buildCountJob(ctx, t, brokers)
	ctx2, stop2 := context.WithCancel(ctx)
	done2 := make(chan error, 1)
	go func() { done2 <- env2.Run(ctx2, cfg) }()
	flush := []*kgo.Record{}
	for p := int32(0); p < 2; p++ {
		v, _ := json.Marshal(clickEvent{User: "flush", At: 1 << 40})
		flush = append(flush, &kgo.Record{Topic: "clicks", Partition: p, Value: v})
	}
	if err := in.ProduceSync(ctx, flush...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// Expected: 3000 clicks, user i%7 at i*10 ms → 300 windows of 100 ms.
	want := map[string]int64{}
	for i := 0; i < 3000; i++ {
		want[fmt.Sprintf("u%d@%d", i%7, int64(i)*10/100*100)]++
	}
	got := readAll(ctx, t, brokers, "results", kgo.ReadCommitted(), len(want))
	stop2()
	if err := <-done2; err != nil {
		t.Fatalf("run 2: %v", err)
	}
	seen := map[string]int{}
	for _, r := range got {
		var cr countResult
		if err := json.Unmarshal(r.Value, &cr); err != nil {
			t.Fatal(err)
		}
		k := string(r.Key)
		seen[k]++
		if cr.Count != want[k] {
			t.Errorf("%s: count %d, want %d", k, cr.Count, want[k])
		}
	}
	for k := range want {
		if seen[k] != 1 {
			t.Errorf("%s seen %d times by read_committed, want once", k, seen[k])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("read_committed saw %d results, want %d", len(got), len(want))
	}
	raw := readAll(ctx, t, brokers, "results", kgo.ReadUncommitted(), len(want)+1)
	if len(raw) <= len(want) {
		t.Fatalf("read_uncommitted saw %d results: the crash aborted nothing, the test proves nothing", len(raw))
	}
	t.Logf("crash before committing checkpoint %d; %d results committed once, %d aborted", crashID, len(got), len(raw)-len(got))
}

// Without a Kafka sink the newest checkpoint file is the committed one: a
// clean stop checkpoints state and offsets, and the next run continues
// from them (no record read twice, windows open across the restart still
// count the events of both runs).
func TestKafkaCheckpointRestoreWithoutSink(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "clicks"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	in, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dir := t.TempDir()
	cfg := RunConfig{JobID: "nosink", Brokers: brokers, CheckpointDir: dir, CheckpointInterval: time.Hour}
	results := map[string]int64{}
	var read atomic.Int64
	build := func() *Env {
		env := NewEnv()
		msgs, err := FromKafka(ctx, env, brokers, []string{"clicks"})
		if err != nil {
			t.Fatal(err)
		}
		evs := FlatMap(msgs, func(m Message, out func(clickEvent)) {
			read.Add(1)
			var c clickEvent
			if json.Unmarshal(m.Value, &c) == nil {
				out(c)
			}
		})
		evs = AssignTimestampsAndWatermarks(evs, WatermarkStrategy[clickEvent]{Timestamp: func(c clickEvent) time.Time { return time.UnixMilli(c.At) }})
		counts := Aggregate(Window(KeyBy(evs, func(c clickEvent) string { return c.User }), TumblingEventTimeWindows(100*time.Millisecond, 0)), Count[clickEvent]())
		Sink(counts, func(c Change[WindowResult[string, int64]]) {
			results[fmt.Sprintf("%s@%d", c.Value.Key, c.Value.Window.Start)] += c.Value.Value
		})
		return env
	}
	run := func(until func() bool) {
		env := build()
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- env.Run(rctx, cfg) }()
		for !until() {
			time.Sleep(10 * time.Millisecond)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// 995 clicks: the window [9900,10000) is still open at the stop.
	produceClicks(ctx, t, in, 0, 995)
	run(func() bool { return read.Load() == 995 })
	if ids, _ := checkpointIDs(dir); len(ids) != 1 {
		t.Fatalf("checkpoints after a clean stop: %v", ids)
	}
	produceClicks(ctx, t, in, 995, 2000)
	v, _ := json.Marshal(clickEvent{User: "flush", At: 1 << 40})
	if err := in.ProduceSync(ctx, &kgo.Record{Topic: "clicks", Partition: 0, Value: v}, &kgo.Record{Topic: "clicks", Partition: 1, Value: v}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	run(func() bool { return read.Load() == 2002 })
	want := map[string]int64{}
	for i := 0; i < 2000; i++ {
		want[fmt.Sprintf("u%d@%d", i%7, int64(i)*10/100*100)]++
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	for k, n := range want {
		if results[k] != n {
			t.Errorf("%s = %d, want %d", k, results[k], n)
		}
	}
}

// RunConfig.LogSync is called around each checkpoint's commit: after the
// marker is produced (and beforeCommit has run) and before the
// transaction commits, then once more after it; a failing LogSync fails
// the run and names the checkpoint.
func TestKafkaCheckpointCallsLogSyncAroundCommit(t *testing.T) {
	ctx, brokers, in := clicksCluster(t, 20*time.Second)
	produceClicks(ctx, t, in, 0, 200)

	var mu sync.Mutex
	var events []string
	record := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	fail := atomic.Bool{}
	cfg := RunConfig{JobID: "synced", Brokers: brokers, CheckpointDir: t.TempDir(), CheckpointInterval: 20 * time.Millisecond,
		LogSync: func() error {
			record("sync")
			if fail.Load() {
				return fmt.Errorf("EIO")
			}
			return nil
		}}
	env := buildCountJob(ctx, t, brokers)
	env.beforeCommit = func(id int64) { record(fmt.Sprintf("commit %d", id)) }
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- env.Run(rctx, cfg) }()
	for {
		mu.Lock()
		n := len(events)
		mu.Unlock()
		if n >= 9 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	fail.Store(true)
	var err2 error
	select {
	case err2 = <-done:
	case <-time.After(10 * time.Second):
		stop()
		t.Fatal("a failing LogSync did not end the run")
	}
	stop()
	if err2 == nil || !strings.Contains(err2.Error(), "EIO") || !strings.Contains(err2.Error(), "checkpoint") {
		t.Fatalf("run ended with %v, want the sync error naming the checkpoint", err2)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 0; i+2 < len(events) && i < 9; i += 3 {
		if !strings.HasPrefix(events[i], "commit ") || events[i+1] != "sync" || events[i+2] != "sync" {
			t.Fatalf("events %q: each checkpoint must be marker, sync, commit, sync", events)
		}
	}
}
