package job

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/flinklite"
	"github.com/twmb/franz-go/pkg/kgo"
)

var update = flag.Bool("update", false, "rewrite the golden files")

type click struct {
	User   string  `json:"user"`
	Amount float64 `json:"amount"`
	At     int64   `json:"at"`
	Kind   string  `json:"kind"`
}

func clickAt(i int) click {
	c := click{User: fmt.Sprintf("u%d", i%3), Amount: float64(i % 10), At: int64(i) * 2, Kind: "buy"}
	if i%7 == 0 {
		c.Kind = "test"
	}
	return c
}

const hoppingSpec = `{
  "id": "clicks",
  "source": {"topics": ["clicks"], "format": "json"},
  "eventTime": {"field": "at"},
  "filter": [{"field": "kind", "op": "=", "value": "buy"}],
  "map": [{"as": "cents", "field": "amount", "multiply": 100}],
  "keyBy": ["user"],
  "window": {"type": "hopping", "size": "200ms", "slide": "100ms"},
  "aggregates": [{"function": "sum", "field": "cents", "as": "cents"}, {"function": "max", "field": "amount"},
                 {"function": "distinctCount", "field": "amount", "as": "amounts"}, {"function": "count"}],
  "sinks": {"kafka": {"topic": "%s"}},
  "checkpoint": {"interval": "50ms"}
}`

// A compiled spec runs as its Go equivalent would: JSON records filtered,
// mapped, keyed, in hopping windows (Flink's sliding windows: each click
// is in size/slide = 2 windows), aggregated, written exactly once. The
// job takes a savepoint half way and stops; a second job started from the
// savepoint (a new job id, so a new transactional.id and no checkpoint of
// its own) reads on from the savepoint's offsets (it reads only the second
// half) with the windows' state (the windows open across the savepoint
// hold clicks of both halves). Expected values are computed here by brute
// force over the clicks, as the window definitions of Flink's
// SlidingEventTimeWindows.
func TestCompiledSpecWithSavepoint(t *testing.T) {
	ctx, brokers := seededCluster(t, 2, "clicks", 30*time.Second)
	in, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	produce := func(cs ...click) {
		var recs []*kgo.Record
		for i, c := range cs {
			v, _ := json.Marshal(c)
			recs = append(recs, &kgo.Record{Topic: "clicks", Partition: int32(i % 2), Value: v})
		}
		if err := in.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var first, second []click
	for i := 0; i < 1000; i++ {
		if i < 500 {
			first = append(first, clickAt(i))
		} else {
			second = append(second, clickAt(i))
		}
	}
	spec := func(topic string) *Spec {
		s, err := ParseSpec([]byte(fmt.Sprintf(hoppingSpec, topic)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// Job 1: the first half, a savepoint, a clean stop.
	produce(first...)
	env1 := flinklite.NewEnv()
	if err := Compile(ctx, env1, spec("results1"), brokers); err != nil {
		t.Fatal(err)
	}
	ctx1, stop1 := context.WithCancel(ctx)
	done1 := make(chan error, 1)
	go func() {
		done1 <- env1.Run(ctx1, flinklite.RunConfig{JobID: "clicks-1", Brokers: brokers, CheckpointDir: t.TempDir(), CheckpointInterval: 50 * time.Millisecond})
	}()
	for env1.Status().Metrics.NumRecordsIn < int64(len(first)) {
		if ctx.Err() != nil {
			t.Fatalf("job 1 read %d records", env1.Status().Metrics.NumRecordsIn)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sp, err := env1.TriggerSavepoint(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stop1()
	if err := <-done1; err != nil {
		t.Fatalf("job 1: %v", err)
	}

	// Job 2: from the savepoint, the second half and a far-future click per
	// partition that closes every window.
	produce(second...)
	produce(click{User: "flush", At: 1 << 40, Kind: "buy"}, click{User: "flush", At: 1 << 40, Kind: "buy"})
	// Job 2 keeps its windows in Pebble ("stateBackend": "pebble"): the
	// savepoint of the in-memory job 1 restores into it (one format).
	env2 := flinklite.NewEnv()
	spec2 := spec("results2")
	spec2.StateBackend = "pebble"
	state2, err := flinklite.NewPebbleStateBackend(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer state2.Close()
	if err := CompileWithState(ctx, env2, spec2, brokers, state2); err != nil {
		t.Fatal(err)
	}
	ctx2, stop2 := context.WithCancel(ctx)
	done2 := make(chan error, 1)
	go func() {
		done2 <- env2.Run(ctx2, flinklite.RunConfig{JobID: "clicks-2", Brokers: brokers, CheckpointDir: t.TempDir(), CheckpointInterval: 50 * time.Millisecond, Savepoint: sp})
	}()

	// Expected, by brute force.
	type agg struct {
		cents, max, count float64
		amounts           map[float64]bool
	}
	want := map[string]*agg{}
	for i := 0; i < 1000; i++ {
		c := clickAt(i)
		if c.Kind != "buy" {
			continue
		}
		for start := c.At / 100 * 100; start > c.At-200; start -= 100 {
			k := fmt.Sprintf(`{"window_start":%d,"window_end":%d,"user":%q}`, start, start+200, c.User)
			a := want[k]
			if a == nil {
				a = &agg{amounts: map[float64]bool{}}
				want[k] = a
			}
			a.cents += c.Amount * 100
			a.max = max(a.max, c.Amount)
			a.count++
			a.amounts[c.Amount] = true
		}
	}
	read := func(topic string, n int) map[string]string {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		// Until n results, then until a poll finds nothing more.
		out := map[string]string{}
		for deadline, more := time.Now().Add(15*time.Second), true; (len(out) < n || more) && time.Now().Before(deadline); {
			pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
			more = false
			cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
				more = true
				if !strings.Contains(string(r.Key), `"flush"`) {
					if _, dup := out[string(r.Key)]; dup {
						t.Errorf("%s: window result twice", r.Key)
					}
					out[string(r.Key)] = string(r.Value)
				}
			})
			pcancel()
		}
		return out
	}
	r1 := read("results1", 1)
	r2 := read("results2", len(want)-len(r1))
	stop2()
	if err := <-done2; err != nil {
		t.Fatalf("job 2: %v", err)
	}
	if n := env2.Metrics().NumRecordsIn; n != int64(len(second)+2) {
		t.Fatalf("job 2 read %d records, want the %d after the savepoint", n, len(second)+2)
	}
	if len(r1)+len(r2) != len(want) {
		t.Fatalf("%d + %d window results, want %d", len(r1), len(r2), len(want))
	}
	spanning := 0
	for _, results := range []map[string]string{r1, r2} {
		for k, v := range results {
			a := want[k]
			if a == nil {
				t.Fatalf("unexpected window %s", k)
			}
			var got struct {
				Cents   float64 `json:"cents"`
				Amount  float64 `json:"max_amount"`
				Amounts float64 `json:"amounts"`
				Count   float64 `json:"count"`
				Firing  int     `json:"firing"`
			}
			if err := json.Unmarshal([]byte(v), &got); err != nil {
				t.Fatal(err)
			}
			if got.Cents != a.cents || got.Amount != a.max || got.Count != a.count || got.Amounts != float64(len(a.amounts)) || got.Firing != 0 {
				t.Errorf("%s: %s, want cents %v max %v distinct %d count %v", k, v, a.cents, a.max, len(a.amounts), a.count)
			}
		}
	}
	for k := range r2 {
		var w struct{ Window_start int64 }
		json.Unmarshal([]byte(k), &w)
		if w.Window_start < 1000 && w.Window_start+200 > 1000 { // clicks 0..499 are at 0..998 ms
			spanning++
		}
	}
	if spanning == 0 {
		t.Fatal("no window spans the savepoint: the restore of window state is not exercised")
	}

	// The result records' bytes are a wire format: locked by a golden file.
	var keys []string
	for k := range r2 {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var golden bytes.Buffer
	for _, k := range keys[:6] {
		fmt.Fprintf(&golden, "%s\t%s\n", k, r2[k])
	}
	path := filepath.Join("testdata", "results.golden")
	if *update {
		if err := os.WriteFile(path, golden.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantGolden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(golden.Bytes(), wantGolden) {
		t.Fatalf("result records changed (go test ./flinklite/job -run Savepoint -update)\ngot:\n%s\nwant:\n%s", golden.Bytes(), wantGolden)
	}
	t.Logf("%d windows before the savepoint, %d after (%d spanning it)", len(r1), len(r2), spanning)
}
