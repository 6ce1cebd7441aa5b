package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type order struct {
	ID       int     `json:"id"`
	Customer string  `json:"customer"`
	Amount   float64 `json:"amount"`
	At       int64   `json:"at"`
}

func orderAt(i int) order {
	return order{ID: i, Customer: fmt.Sprintf("c%d", i%8), Amount: float64(1 + i%13), At: int64(i) * 5}
}

const ordersSpec = `{
  "id": "totals",
  "source": {"topics": ["orders"], "format": "json", "key": ["id"]},
  "eventTime": {"field": "at"},
  "keyBy": [%s],
  "window": {"type": "tumbling", "size": "100ms"},
  "allowedLateness": "24h",
  "aggregates": [{"function": "sum", "field": "amount", "as": "total"}, {"function": "count"}],
  "sinks": {"kafka": {"topic": "%s"}},
  "checkpoint": {"interval": "50ms"}
}`

// produceOrders writes orders keyed by {"id": n} with the default
// (murmur2) partitioner, as a Debezium topic is keyed by the primary key:
// a customer's orders are on every partition.
func produceOrders(ctx context.Context, t *testing.T, cl *kgo.Client, os ...order) {
	t.Helper()
	var recs []*kgo.Record
	for _, o := range os {
		v, _ := json.Marshal(o)
		recs = append(recs, &kgo.Record{Topic: "orders", Key: []byte(fmt.Sprintf(`{"id":%d}`, o.ID)), Value: v})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// flushOrders moves the watermark past every window: 40 orders an hour
// after the others, whose ids murmur2 spreads over the 4 source
// partitions (the window stage's watermark is the minimum of the source
// partitions' watermarks, forwarded through the repartition topic; the
// test fails if one got none, as the windows would not fire).
// allowedLateness (24 h) keeps every window, so a row that a source
// partition emits behind its own watermark would update its window as a
// late firing instead of being dropped.
func flushOrders(from int) []order {
	var os []order
	for k := 0; k < 40; k++ {
		os = append(os, order{ID: from + k, Customer: fmt.Sprintf("flush%d", k), At: 3_600_000})
	}
	return os
}

func newTestDistributed(ctx context.Context, t *testing.T, brokers []string, worker string) *Manager {
	t.Helper()
	m, err := NewDistributedManager(ctx, t.TempDir(), brokers, nil, slog.New(slog.NewTextHandler(io.Discard, nil)),
		DistributedConfig{Topic: "jobs", WorkerID: worker, SessionTimeout: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkCommittedTotals is committedTotals that fails the test when a
// result was seen twice or a window's last result differs from want, and
// returns the last results.
func checkCommittedTotals(ctx context.Context, t *testing.T, brokers []string, topic string, want map[string]string) map[string]string {
	t.Helper()
	last, dups := committedTotals(ctx, t, brokers, topic, want)
	if len(dups) > 0 {
		t.Fatalf("read_committed saw %d results twice: %v", len(dups), dups)
	}
	for k, v := range want {
		if last[k] != v {
			t.Errorf("%s: %s, want %s", k, last[k], v)
		}
	}
	return last
}

// committedTotals reads topic read_committed until it saw a result for
// every window of want and was quiet for a second, and returns the last
// "total/count" of each "customer@window_start" and the (window,
// customer, firing) results seen more than once.
func committedTotals(ctx context.Context, t *testing.T, brokers []string, topic string, want map[string]string) (map[string]string, []string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	last := map[string]string{}
	seen := map[string]int{}
	var dups []string
	quiet := time.Now()
	for {
		done := true
		for k, v := range want {
			if last[k] != v {
				done = false
				break
			}
		}
		if done && time.Since(quiet) > time.Second {
			return last, dups
		}
		if ctx.Err() != nil {
			var diff []string
			for k, v := range want {
				if last[k] != v && len(diff) < 10 {
					diff = append(diff, fmt.Sprintf("%s: %q, want %s", k, last[k], v))
				}
			}
			t.Fatalf("results never matched: %d of %d windows; e.g. %v", len(last), len(want), diff)
		}
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
			quiet = time.Now()
			var v struct {
				Start    int64   `json:"window_start"`
				Customer string  `json:"customer"`
				ID       float64 `json:"id"`
				Total    float64 `json:"total"`
				Count    int64   `json:"count"`
				Firing   int     `json:"firing"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("result %s: %v", r.Value, err)
			}
			who := v.Customer
			if who == "" {
				who = fmt.Sprint(v.ID)
			}
			k := fmt.Sprintf("%s@%d", who, v.Start)
			if strings.HasPrefix(k, "flush") {
				return
			}
			fk := fmt.Sprintf("%s#%d", k, v.Firing)
			if seen[fk]++; seen[fk] == 2 {
				dups = append(dups, fk)
			}
			last[k] = fmt.Sprintf("%g/%d", v.Total, v.Count)
		})
		cancel()
	}
}

// Distributed jobs (issue 9): a spec POSTed to one worker runs on every
// worker of the cluster, its input partitions spread across them. The
// source is keyed (and partitioned) by order id, the job by customer, so
// the job repartitions by customer through "<job>.repartition". Worker A
// runs the job alone, then B starts (it reads the spec from the spec
// topic) and takes half of both stages' partitions with their state (A's
// final checkpoints); then A stops and B takes the rest. Windows are open
// across both hand-overs. Expected values are computed here from the
// orders (the same tumbling sums by brute force): the last committed
// result of each (customer, window) must equal them, and a read_committed
// consumer sees each (window, customer, firing) once.
func TestDistributedJobRepartitions(t *testing.T) {
	ctx, brokers := seededCluster(t, 4, "orders", 90*time.Second)
	in, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var orders []order
	for i := 0; i < 3000; i++ {
		orders = append(orders, orderAt(i))
	}
	want := map[string]string{}
	sums := map[string]float64{}
	counts := map[string]int{}
	for _, o := range orders {
		k := fmt.Sprintf("%s@%d", o.Customer, o.At/100*100)
		sums[k] += o.Amount
		counts[k]++
	}
	for k := range sums {
		want[k] = fmt.Sprintf("%g/%d", sums[k], counts[k])
	}

	produceOrders(ctx, t, in, orders[:1000]...)
	a := newTestDistributed(ctx, t, brokers, "worker-a")
	aClosed := false
	defer func() {
		if !aClosed {
			a.Close()
		}
	}()
	spec, err := ParseSpec([]byte(fmt.Sprintf(ordersSpec, `"customer"`, "totals_out")))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Create(spec); err != nil {
		t.Fatal(err)
	}
	if err := a.Create(spec); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	info := func(m *Manager) Info {
		i, err := m.Get("totals")
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	waitUntil(t, "A to run the 4+4 partitions", 20*time.Second, func() bool { return len(info(a).Distributed.Partitions) == 8 })
	waitUntil(t, "A to checkpoint", 20*time.Second, func() bool { return info(a).LastCheckpoint != nil })

	b := newTestDistributed(ctx, t, brokers, "worker-b")
	defer b.Close()
	if ids := b.List(); len(ids) != 1 || ids[0] != "totals" {
		t.Fatalf("B's jobs: %v, want the spec A wrote", ids)
	}
	waitUntil(t, "B to take half of the partitions", 30*time.Second, func() bool {
		return len(info(b).Distributed.Partitions) == 4 && len(info(a).Distributed.Partitions) == 4
	})
	ib := info(b)
	if ib.Distributed.RepartitionTopic == "" || ib.Distributed.Worker != "worker-b" {
		t.Fatalf("B's distributed info: %+v", ib.Distributed)
	}
	stages := map[string]int{}
	for _, p := range ib.Distributed.Partitions {
		stages[p.Stage]++
		if p.Stage == stageWindow && p.Topic != ib.Distributed.RepartitionTopic {
			t.Fatalf("window stage reads %s, want the repartition topic %s", p.Topic, ib.Distributed.RepartitionTopic)
		}
	}
	if stages[stageRepartition] != 2 || stages[stageWindow] != 2 {
		t.Fatalf("B runs %v, want 2 partitions of each stage", stages)
	}
	workers := map[string]bool{}
	for _, w := range ib.Distributed.Workers {
		workers[w.Worker] = true
	}
	if !workers["worker-a"] || !workers["worker-b"] {
		t.Fatalf("GET on B lists the workers %v, want worker-a and worker-b", ib.Distributed.Workers)
	}

	produceOrders(ctx, t, in, orders[1000:2000]...)
	time.Sleep(300 * time.Millisecond)
	a.Close()
	aClosed = true
	waitUntil(t, "B to take A's partitions", 30*time.Second, func() bool { return len(info(b).Distributed.Partitions) == 8 })
	produceOrders(ctx, t, in, orders[2000:]...)
	produceOrders(ctx, t, in, flushOrders(len(orders))...)

	last := checkCommittedTotals(ctx, t, brokers, "totals_out", want)
	if len(last) != len(want) {
		t.Errorf("%d windows in the results, want %d", len(last), len(want))
	}
	ib = info(b)
	t.Logf("%d windows equal brute force; B: %d partitions, %d records in, %d late side-outputs, watermark %d",
		len(want), len(ib.Distributed.Partitions), ib.Metrics.NumRecordsIn, ib.Metrics.NumLateRecordsSideOutput, ib.Watermark)

	if err := b.Delete(ctx, "totals"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get("totals"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GET after DELETE: %v", err)
	}
}

// Without a repartition (keyBy is source.key), the job reads the input
// partitions directly; a record whose key has other fields fails the job
// with a trace naming source.key, as its state per partition would be
// wrong. The pebble state backend and savepoints are refused: a
// distributed job's state is one Kafka record per partition.
func TestDistributedJobKeyedByInputKey(t *testing.T) {
	ctx, brokers := seededCluster(t, 2, "orders", 60*time.Second)
	in, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var orders []order
	want := map[string]string{}
	for i := 0; i < 200; i++ {
		o := orderAt(i)
		o.ID = i % 5 // 5 keys, several orders each
		orders = append(orders, o)
	}
	sums, counts := map[string]float64{}, map[string]int{}
	for _, o := range orders {
		k := fmt.Sprintf("%d@%d", o.ID, o.At/100*100)
		sums[k] += o.Amount
		counts[k]++
	}
	for k := range sums {
		want[k] = fmt.Sprintf("%g/%d", sums[k], counts[k])
	}
	produceOrders(ctx, t, in, orders...)
	var flush []*kgo.Record
	for p := int32(0); p < 2; p++ { // one per partition: each instance's watermark passes every window
		flush = append(flush, &kgo.Record{Topic: "orders", Partition: p, Key: []byte(`{"id":-1}`), Value: []byte(`{"id":-1,"customer":"flush","at":1099511627776}`)})
	}
	manual, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer manual.Close()
	if err := manual.ProduceSync(ctx, flush...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	m := newTestDistributed(ctx, t, brokers, "worker-a")
	defer m.Close()
	spec, err := ParseSpec([]byte(fmt.Sprintf(ordersSpec, `"id"`, "by_id")))
	if err != nil {
		t.Fatal(err)
	}
	pebble := *spec
	pebble.StateBackend = "pebble"
	var si *SpecInvalidError
	if err := m.Create(&pebble); !errors.As(err, &si) || si.Errors[0].Field != "stateBackend" {
		t.Fatalf("a pebble job on a distributed worker: %v, want a stateBackend error", err)
	}
	if err := m.Create(spec); err != nil {
		t.Fatal(err)
	}
	if _, err := m.TriggerSavepoint("totals", SavepointRequest{}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("savepoint of a distributed job: %v, want ErrUnsupported", err)
	}
	checkCommittedTotals(ctx, t, brokers, "by_id", want)
	i, err := m.Get("totals")
	if err != nil {
		t.Fatal(err)
	}
	if i.Distributed.RepartitionTopic != "" {
		t.Fatalf("keyBy is source.key, yet the job repartitions through %s", i.Distributed.RepartitionTopic)
	}
	for _, p := range i.Distributed.Partitions {
		if p.Stage != stageWindow || p.Topic != "orders" {
			t.Fatalf("partition %+v, want the window stage on the source topic", p)
		}
	}

	// A record keyed otherwise fails the job.
	if err := manual.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Key: []byte(`{"customer":"c1"}`), Value: []byte(`{"id":7,"customer":"c1","at":1099511627776}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the job to fail on the foreign key", 20*time.Second, func() bool {
		i, _ := m.Get("totals")
		return i.Restarts > 0 && strings.Contains(i.Trace, "source.key")
	})
}

// The repartition is skipped only when every row of a keyBy value is on
// one input partition: keyBy is exactly source.key (in any order), and no
// map overwrites one of its fields. Record keys are checked by field
// names, of a plain JSON object or of a JSON converter envelope's payload
// (Debezium's key with schemas.enable=true).
func TestNeedsRepartitionAndKeyFields(t *testing.T) {
	for _, c := range []struct {
		key, keyBy []string
		mapAs      string
		want       bool
	}{
		{nil, []string{"id"}, "", true},
		{[]string{"id"}, []string{"id"}, "", false},
		{[]string{"a", "b"}, []string{"b", "a"}, "", false},
		{[]string{"id"}, []string{"customer"}, "", true},
		{[]string{"a", "b"}, []string{"a"}, "", true},
		{[]string{"id"}, []string{"id"}, "id", true},
		{[]string{"id"}, []string{"id"}, "other", false},
	} {
		s := &Spec{Source: SourceSpec{Key: c.key}, KeyBy: c.keyBy}
		if c.mapAs != "" {
			s.Map = []Projection{{As: c.mapAs, Value: 1.0}}
		}
		if got := needsRepartition(s); got != c.want {
			t.Errorf("key %v keyBy %v map %q: repartition %v, want %v", c.key, c.keyBy, c.mapAs, got, c.want)
		}
	}
	for key, want := range map[string]string{
		`{"id":1}`: "[id]",
		`{"schema":{"type":"struct","fields":[{"field":"id","type":"int32"}]},"payload":{"id":1}}`: "[id]",
		`{"b":1,"a":"x"}`: "[a b]",
		`"id"`:            "error",
		`not json`:        "error",
	} {
		got, err := keyFieldNames([]byte(key))
		g := fmt.Sprint(got)
		if err != nil {
			g = "error"
		}
		if g != want {
			t.Errorf("keyFieldNames(%s) = %s, want %s", key, g, want)
		}
	}
}
