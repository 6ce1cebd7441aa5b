package job

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/connectd/connectd/flinklite"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// lateSpec is ordersSpec with Flink's default allowedLateness (0): a row
// behind its repartition partition's watermark is dropped.
const lateSpec = `{
  "id": "totals",
  "source": {"topics": ["orders"], "format": "json", "key": ["id"]},
  "eventTime": {"field": "at"},
  "keyBy": ["customer"],
  "window": {"type": "tumbling", "size": "100ms"},
  %s
  "aggregates": [{"function": "sum", "field": "amount", "as": "total"}, {"function": "count"}],
  "sinks": {"kafka": {"topic": "totals_out"}},
  "checkpoint": {"interval": "50ms"}
}`

// partitionOrders returns n orders of source partition p, ids p*1000+i,
// event times i*step ms ascending (no disorder within the partition),
// customers c0..c7 (each on every repartition partition's share).
func partitionOrders(p, n int, step int64) []order {
	var os []order
	for i := 0; i < n; i++ {
		os = append(os, order{ID: p*1000 + i, Customer: fmt.Sprintf("c%d", i%8), Amount: float64(1 + i%13), At: int64(i) * step})
	}
	return os
}

// produceTo writes orders to one partition of "orders" (keyed {"id": n}).
func produceTo(ctx context.Context, t *testing.T, cl *kgo.Client, p int32, os ...order) {
	t.Helper()
	var recs []*kgo.Record
	for _, o := range os {
		v, _ := json.Marshal(o)
		recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Key: []byte(fmt.Sprintf(`{"id":%d}`, o.ID)), Value: v})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// bruteTotals are the expected "total/count" per "customer@window start"
// of 100 ms tumbling windows.
func bruteTotals(os []order) map[string]string {
	sums, counts := map[string]float64{}, map[string]int{}
	for _, o := range os {
		k := fmt.Sprintf("%s@%d", o.Customer, o.At/100*100)
		sums[k] += o.Amount
		counts[k]++
	}
	want := map[string]string{}
	for k := range sums {
		want[k] = fmt.Sprintf("%g/%d", sums[k], counts[k])
	}
	return want
}

// seededCluster starts a one-broker kfake cluster with topic (partitions
// partitions), closed with the test, and a context that ends after
// timeout.
func seededCluster(t *testing.T, partitions int32, topic string, timeout time.Duration) (context.Context, []string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx, c.ListenAddrs()
}

func newManualProducer(t *testing.T, brokers []string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// A lagging source partition (issue 9's defect): source partitions 0-2
// are processed up to event time ~2 s while partition 3 has nothing yet;
// then partition 3's rows, at 0-1 s, arrive, after a hand-over of half
// of the partitions from worker A to worker B, and A stops before they
// are all flushed. With allowedLateness 0, watermarks computed from the
// rows of each repartition partition would have passed their windows and
// dropped them; forwarded through the repartition topic, the watermark of
// every repartition partition is the minimum over the 4 source
// partitions, so partition 3, which has written none, holds it at
// MinWatermark (checked before its rows are produced) and its rows are
// counted. Expected values are the tumbling sums of all orders computed
// here (brute force); a dropped row would make its window differ.
func TestDistributedJobLaggingSourcePartition(t *testing.T) {
	ctx, brokers := seededCluster(t, 4, "orders", 90*time.Second)
	in := newManualProducer(t, brokers)
	defer in.Close()

	var all []order
	for p := 0; p < 3; p++ {
		os := partitionOrders(p, 300, 7) // 0 .. 2093 ms
		produceTo(ctx, t, in, int32(p), os...)
		all = append(all, os...)
	}
	lagging := partitionOrders(3, 200, 5) // 0 .. 995 ms, produced later
	all = append(all, lagging...)
	want := bruteTotals(all)

	a := newTestDistributed(ctx, t, brokers, "worker-a")
	aClosed := false
	defer func() {
		if !aClosed {
			a.Close()
		}
	}()
	spec, err := ParseSpec([]byte(fmt.Sprintf(lateSpec, "")))
	if err != nil {
		t.Fatal(err)
	}
	if spec.AllowedLateness.D != 0 {
		t.Fatalf("allowedLateness %v, want the default 0", spec.AllowedLateness.D)
	}
	if err := a.Create(spec); err != nil {
		t.Fatal(err)
	}
	info := func(m *Manager) Info {
		i, err := m.Get("totals")
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	// 900 source records in the repartition stage, then 900 rows in the
	// window stage (watermark records are not counted).
	waitUntil(t, "A to read partitions 0-2 through both stages", 30*time.Second, func() bool {
		i := info(a)
		return len(i.Distributed.Partitions) == 8 && i.Metrics.NumRecordsIn == 1800 && i.LastCheckpoint != nil
	})
	if wm := info(a).Watermark; wm != flinklite.MinWatermark {
		t.Fatalf("window stage watermark %d after partitions 0-2 reached 2 s, want MinWatermark: source partition 3 wrote no watermark yet", wm)
	}

	b := newTestDistributed(ctx, t, brokers, "worker-b")
	defer b.Close()
	waitUntil(t, "B to take half of the partitions", 30*time.Second, func() bool {
		return len(info(b).Distributed.Partitions) == 4 && len(info(a).Distributed.Partitions) == 4
	})
	produceTo(ctx, t, in, 3, lagging...)
	time.Sleep(200 * time.Millisecond)
	a.Close()
	aClosed = true
	waitUntil(t, "B to take A's partitions", 30*time.Second, func() bool { return len(info(b).Distributed.Partitions) == 8 })
	for p := int32(0); p < 4; p++ {
		var flush []order
		for k := 0; k < 10; k++ {
			flush = append(flush, order{ID: 9000 + int(p)*100 + k, Customer: fmt.Sprintf("flush%d", k), At: 3_600_000})
		}
		produceTo(ctx, t, in, p, flush...)
	}

	last := checkCommittedTotals(ctx, t, brokers, "totals_out", want)
	if len(last) != len(want) {
		t.Errorf("%d windows in the results, want %d", len(last), len(want))
	}
	ib := info(b)
	if ib.Metrics.NumLateRecordsDropped != 0 {
		t.Errorf("B dropped %d late rows, want 0", ib.Metrics.NumLateRecordsDropped)
	}
	t.Logf("%d windows equal brute force, %d of them with rows of the lagging partition; B: watermark %d, %d late rows dropped",
		len(want), len(bruteTotals(lagging)), ib.Watermark, ib.Metrics.NumLateRecordsDropped)
}

// Idleness downstream of the repartition: source partition 3 never gets
// a row. Its repartition instance marks itself idle after the spec's
// idleness (300 ms) and forwards the idle status, so it no longer holds
// back the window stage, whose windows fire on partitions 0-2's
// watermarks (the results equal the brute-force sums of their orders).
// Without idleness the same job stalls at MinWatermark, as
// TestDistributedJobLaggingSourcePartition checks before the lagging rows.
func TestDistributedJobIdleSourcePartition(t *testing.T) {
	ctx, brokers := seededCluster(t, 4, "orders", 60*time.Second)
	in := newManualProducer(t, brokers)
	defer in.Close()

	var all []order
	for p := 0; p < 3; p++ {
		os := partitionOrders(p, 200, 7)
		all = append(all, os...)
		// The last order, an hour on, moves partition p's watermark past
		// every window.
		os = append(os, order{ID: p*1000 + 999, Customer: fmt.Sprintf("flush%d", p), At: 3_600_000})
		produceTo(ctx, t, in, int32(p), os...)
	}
	m := newTestDistributed(ctx, t, brokers, "worker-a")
	defer m.Close()
	spec, err := ParseSpec([]byte(fmt.Sprintf(lateSpec, `"idleness": "300ms",`)))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Create(spec); err != nil {
		t.Fatal(err)
	}
	want := bruteTotals(all)
	checkCommittedTotals(ctx, t, brokers, "totals_out", want)
	i, err := m.Get("totals")
	if err != nil {
		t.Fatal(err)
	}
	if i.Watermark < 3_000_000 {
		t.Errorf("window stage watermark %d, want past the flush orders' hour", i.Watermark)
	}
}
