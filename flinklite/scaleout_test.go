package flinklite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// countPartitionJob is the per-partition graph of the scale-out test: per
// user 100 ms tumbling counts of the partition's clicks, exactly once into
// topic.
func countPartitionJob(topic string) PartitionJob {
	return func(env *Env, msgs *Stream[Message]) error {
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
		ToKafka(counts, topic, func(c Change[WindowResult[string, int64]]) ([]byte, []byte, error) {
			r := countResult{User: c.Value.Key, Start: c.Value.Window.Start, Count: c.Value.Value}
			v, err := json.Marshal(r)
			return []byte(fmt.Sprintf("%s@%d", r.User, r.Start)), v, err
		})
		return nil
	}
}

// assignLog records the partitions a worker restored and from which
// checkpoint.
type assignLog struct {
	mu  sync.Mutex
	got map[int32]int64
}

func (a *assignLog) record(_ string, p int32, id int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got[p] = id
}

func (a *assignLog) snapshot() map[int32]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[int32]int64{}
	for p, id := range a.got {
		out[p] = id
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Scale-out (issue 9: "input partitions spread across workers by a
// consumer group, each worker restoring the state of the partitions it
// gets"): worker A runs the job alone on a 4-partition topic; worker B
// joins and the cooperative rebalance hands it two partitions with their
// state (A's final checkpoints, read from the state topic); A is then
// killed mid-transaction (its partitions abandoned with results in open
// transactions, its group member silenced so that its session times out)
// and B takes A's partitions, restoring their last committed checkpoints. Windows are open across both hand-overs, so a
// lost state would show as a wrong count and a replay past the restored
// offset as a duplicate: a read_committed consumer must see every
// (user, window) count once with the count computed from the input
// (Flink's exactly-once end to end with a rescaled job).
func TestScaleOutTwoWorkersKillOne(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "clicks4"), kfake.SeedTopics(1, "results4"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	in, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	// User u<k> lives on partition k%4 (the topic is keyed by user, the
	// job's key): 8 users, a click every 10 ms of event time.
	produce := func(from, to int) {
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			v, _ := json.Marshal(clickEvent{User: fmt.Sprintf("u%d", i%8), At: int64(i) * 10})
			recs = append(recs, &kgo.Record{Topic: "clicks4", Partition: int32(i % 8 % 4), Value: v})
		}
		if err := in.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	job := countPartitionJob("results4")
	cfgFor := func(log *assignLog, crash <-chan struct{}) ScaleOutConfig {
		return ScaleOutConfig{JobID: "scaled", Brokers: brokers, Topics: []string{"clicks4"},
			CheckpointInterval: 100 * time.Millisecond, SessionTimeout: 6 * time.Second,
			OnAssigned: log.record, crash: crash}
	}
	// A is killed when one of its partitions is about to commit a
	// checkpoint whose transaction holds results: they must be aborted.
	var armed atomic.Bool
	var crashOnce sync.Once
	crashA := make(chan struct{})
	cfgA := func(log *assignLog) ScaleOutConfig {
		cfg := cfgFor(log, crashA)
		// The killed worker's group requests fail from then on: its
		// session expires (SessionTimeout) as a dead process's would.
		cfg.crashed = func(member string) {
			killed := func(req kmsg.Request) (kmsg.Response, error, bool) {
				var m string
				switch r := req.(type) {
				case *kmsg.HeartbeatRequest:
					m = r.MemberID
				case *kmsg.JoinGroupRequest:
					m = r.MemberID
				case *kmsg.SyncGroupRequest:
					m = r.MemberID
				case *kmsg.LeaveGroupRequest:
					m = r.MemberID
					for _, lm := range r.Members {
						if lm.MemberID == member {
							m = member
						}
					}
				}
				if m != member {
					return nil, nil, false
				}
				c.KeepControl()
				return nil, errors.New("worker killed"), true
			}
			for _, k := range []int16{11, 12, 13, 14} { // JoinGroup, Heartbeat, LeaveGroup, SyncGroup
				c.ControlKey(k, killed)
			}
		}
		cfg.beforeCommit = func(env *Env, _ int64) {
			if armed.Load() && env.txnRecords > 0 {
				env.abandoned.Store(true)
				crashOnce.Do(func() { close(crashA) })
			}
		}
		return cfg
	}

	produce(0, 2005) // ends mid-window (20000..20100 has 5 clicks)
	logA := &assignLog{got: map[int32]int64{}}
	doneA := make(chan error, 1)
	go func() { doneA <- RunScaledOut(ctx, cfgA(logA), job) }()
	waitFor(t, "worker A to run 4 partitions", func() bool { return len(logA.snapshot()) == 4 })
	for p, id := range logA.snapshot() {
		if id != 0 {
			t.Fatalf("worker A restored partition %d from checkpoint %d, want a fresh start", p, id)
		}
	}
	time.Sleep(500 * time.Millisecond) // a few checkpoints of A

	logB := &assignLog{got: map[int32]int64{}}
	ctxB, stopB := context.WithCancel(ctx)
	doneB := make(chan error, 1)
	go func() { doneB <- RunScaledOut(ctxB, cfgFor(logB, nil), job) }()
	waitFor(t, "worker B to get 2 partitions", func() bool { return len(logB.snapshot()) == 2 })
	handed := logB.snapshot()
	for p, id := range handed {
		if id == 0 {
			t.Fatalf("worker B started partition %d without A's checkpoint", p)
		}
	}

	armed.Store(true)
	produce(2005, 4005)
	if err := <-doneA; err != errAbandoned {
		t.Fatalf("worker A: %v", err)
	}
	waitFor(t, "worker B to take A's partitions", func() bool { return len(logB.snapshot()) == 4 })
	for p, id := range logB.snapshot() {
		if _, ok := handed[p]; !ok && id == 0 {
			t.Fatalf("worker B took partition %d of the killed A without its checkpoint", p)
		}
	}

	produce(4005, 6000)
	var flush []*kgo.Record
	for p := int32(0); p < 4; p++ {
		v, _ := json.Marshal(clickEvent{User: "flush", At: 1 << 40})
		flush = append(flush, &kgo.Record{Topic: "clicks4", Partition: p, Value: v})
	}
	if err := in.ProduceSync(ctx, flush...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// Expected: the same aggregate computed directly from the input.
	want := map[string]int64{}
	for i := 0; i < 6000; i++ {
		want[fmt.Sprintf("u%d@%d", i%8, int64(i)*10/100*100)]++
	}
	got := readAll(ctx, t, brokers, "results4", kgo.ReadCommitted(), len(want))
	stopB()
	if err := <-doneB; err != nil {
		t.Fatalf("worker B: %v", err)
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
	raw := readAll(ctx, t, brokers, "results4", kgo.ReadUncommitted(), len(want)+1)
	if len(raw) <= len(want) {
		t.Fatalf("read_uncommitted saw %d results: the kill aborted nothing, the test proves nothing", len(raw))
	}
	t.Logf("B restored %v on joining and %v after the kill; %d results committed once, %d aborted by the kill",
		handed, logB.snapshot(), len(got), len(raw)-len(got))
}
