package flinklite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// shuffleJob is the downstream of a shuffle partition with 3 producers:
// rows are JSON clickEvents; per-user 100 ms tumbling counts with
// allowedLateness 0 (Flink's default), results collected as
// "user@start=count".
type shuffleJob struct {
	env     *Env
	in      *Input[Message]
	results []string
	offset  int64
}

func newShuffleJob(producers int) *shuffleJob {
	j := &shuffleJob{env: NewEnv(WithClock(NewManualClock(t0)))}
	j.in = NewInput[Message](j.env, 1)
	evs := FlatMap(ShuffleWatermarks(j.in.Stream(), producers), func(m Message, out func(clickEvent)) {
		var c clickEvent
		if json.Unmarshal(m.Value, &c) == nil {
			out(c)
		}
	})
	evs = AssignTimestamps(evs, func(c clickEvent) time.Time { return time.UnixMilli(c.At) })
	counts := Aggregate(Window(KeyBy(evs, func(c clickEvent) string { return c.User }), TumblingEventTimeWindows(100*time.Millisecond, 0)), Count[clickEvent]())
	Sink(counts, func(c Change[WindowResult[string, int64]]) {
		j.results = append(j.results, fmt.Sprintf("%s@%d=%d", c.Value.Key, c.Value.Window.Start, c.Value.Value))
	})
	return j
}

func (j *shuffleJob) row(t *testing.T, user string, at int64) {
	t.Helper()
	v, _ := json.Marshal(clickEvent{User: user, At: at})
	j.offset++
	if err := j.in.Emit(0, Message{Offset: j.offset, Value: v}); err != nil {
		t.Fatal(err)
	}
}

// watermark emits the watermark record ToKafkaShuffle writes (header
// WatermarkHeader, value shuffleWatermark).
func (j *shuffleJob) watermark(producer int32, wm int64, idle bool) error {
	v, _ := json.Marshal(shuffleWatermark{Producer: producer, Watermark: wm, Idle: idle})
	j.offset++
	return j.in.Emit(0, Message{Offset: j.offset, Value: v, Headers: []kgo.RecordHeader{{Key: WatermarkHeader}}})
}

func (j *shuffleJob) mustWatermark(t *testing.T, producer int32, wm int64, idle bool) {
	t.Helper()
	if err := j.watermark(producer, wm, idle); err != nil {
		t.Fatal(err)
	}
}

func (j *shuffleJob) expect(t *testing.T, want ...string) {
	t.Helper()
	if strings.Join(j.results, " ") != strings.Join(want, " ") {
		t.Fatalf("results %v, want %v", j.results, want)
	}
}

// Watermarks forwarded through a shuffle partition (Flink's
// StatusWatermarkValve over the producers' channels): the partition's
// watermark is the minimum of the producers' latest watermarks, so a
// producer that lags (here producer 2, whose row at 50 ms arrives after
// the others reached 1000 ms) holds it back and its row is counted, with
// allowedLateness 0; the rows' own event times move nothing. An idle
// producer is left out of the minimum, all idle gives their maximum; the
// per-producer watermarks survive a checkpoint and restore. Expected
// results are the counts of the rows emitted here.
func TestShuffleWatermarksMinimumOverProducers(t *testing.T) {
	j := newShuffleJob(3)
	j.row(t, "a", 60)
	j.mustWatermark(t, 0, 1000, false)
	j.mustWatermark(t, 1, 1000, false)
	j.row(t, "b", 5000) // a row's event time is no watermark
	j.expect(t)
	j.row(t, "a", 50) // producer 2 lags: not late
	j.mustWatermark(t, 2, 999, false)
	j.expect(t, "a@0=2")
	if m := j.env.Metrics(); m.NumLateRecordsDropped != 0 || m.NumRecordsIn != 3 {
		t.Fatalf("metrics %+v, want no late row and 3 records in (watermark records are not counted)", m)
	}

	// Producer 2 goes idle: producers 0 and 1 alone move the watermark.
	j.row(t, "c", 1500)
	j.mustWatermark(t, 2, 999, true)
	j.mustWatermark(t, 0, 2000, false)
	j.expect(t, "a@0=2")
	j.mustWatermark(t, 1, 2000, false)
	j.expect(t, "a@0=2", "c@1500=1")

	// The per-producer state is checkpointed: restored, producer 2 is
	// still idle, so 0 and 1 alone fire the window of the row at 2500.
	dir := t.TempDir()
	if _, err := j.env.CheckpointTo(dir); err != nil {
		t.Fatal(err)
	}
	r := newShuffleJob(3)
	if _, err := r.env.RestoreFrom(dir); err != nil {
		t.Fatal(err)
	}
	r.row(t, "d", 2500)
	r.mustWatermark(t, 0, 3000, false)
	r.mustWatermark(t, 1, 3000, false)
	r.expect(t, "d@2500=1")

	// Active again, producer 2 holds the watermark at its own.
	r.mustWatermark(t, 2, 3100, false)
	r.row(t, "e", 3150)
	r.mustWatermark(t, 0, 4000, false)
	r.mustWatermark(t, 1, 4000, false)
	r.expect(t, "d@2500=1")
	// Producers 0 and 1 idle: producer 2 alone holds it; once it is idle
	// too, the maximum (4000) fires the window at 3100.
	r.mustWatermark(t, 0, 4000, true)
	r.mustWatermark(t, 1, 4000, true)
	r.expect(t, "d@2500=1")
	r.mustWatermark(t, 2, 3100, true)
	r.expect(t, "d@2500=1", "e@3100=1")

	if err := r.watermark(3, 0, false); err == nil || !strings.Contains(err.Error(), "producer 3") {
		t.Fatalf("a watermark of producer 3 of 3: %v, want an error naming it", err)
	}
}

// The producer side: ToKafkaShuffle's partitioner puts a watermark record
// on the partition it names (every partition gets each watermark) and a
// row by Kafka's murmur2 of its key, as the default partitioner would.
func TestShufflePartitioner(t *testing.T) {
	p := shufflePartitioner{kgo.StickyKeyPartitioner(nil)}.ForTopic("t")
	def := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for part := int32(0); part < 4; part++ {
		r := &kgo.Record{Partition: part, Headers: []kgo.RecordHeader{{Key: WatermarkHeader}}}
		if !p.RequiresConsistency(r) || p.Partition(r, 4) != int(part) {
			t.Fatalf("watermark record for partition %d went to %d", part, p.Partition(r, 4))
		}
	}
	for i := 0; i < 50; i++ {
		r := &kgo.Record{Key: []byte(fmt.Sprintf(`["c%d"]`, i))}
		if got, want := p.Partition(r, 4), def.Partition(r, 4); got != want {
			t.Fatalf("row %s on partition %d, the default partitioner puts it on %d", r.Key, got, want)
		}
	}
}

// A checkpoint of a stage that generated its watermarks from its rows
// (AssignTimestampsAndWatermarks, the window stage before watermarks were
// forwarded) restores into ShuffleWatermarks: same operator id, the
// current watermark kept (a window behind it stays fired), each producer
// unknown until it writes.
func TestShuffleWatermarksRestoresGeneratedWatermarks(t *testing.T) {
	old := NewEnv(WithClock(NewManualClock(t0)))
	in := NewInput[clickEvent](old, 1)
	evs := AssignTimestampsAndWatermarks(in.Stream(), WatermarkStrategy[clickEvent]{Timestamp: func(c clickEvent) time.Time { return time.UnixMilli(c.At) }})
	Aggregate(Window(KeyBy(evs, func(c clickEvent) string { return c.User }), TumblingEventTimeWindows(100*time.Millisecond, 0)), Count[clickEvent]())
	if err := in.Emit(0, clickEvent{User: "a", At: 1000}); err != nil {
		t.Fatal(err)
	}
	if err := old.Tick(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := old.CheckpointTo(dir); err != nil {
		t.Fatal(err)
	}
	j := newShuffleJob(2)
	if _, err := j.env.RestoreFrom(dir); err != nil {
		t.Fatalf("restoring the generated watermarks' checkpoint: %v", err)
	}
	j.row(t, "a", 1050)
	j.mustWatermark(t, 0, 1200, false)
	j.expect(t) // producer 1 unknown: held back
	j.mustWatermark(t, 1, 1200, false)
	j.expect(t, "a@1000=2")
}

// The producer side of the shuffle, without Kafka (Env.produce
// captured): ToKafkaShuffle writes each row keyed by Encode, and the
// stream's watermark (max event time − 1 ms, Flink's
// BoundedOutOfOrderness with 0) and status as a record with the header
// WatermarkHeader and value {"producer","watermark","idle"} on every
// partition: at a tick when it changed and 200 ms passed since the last
// write, at a checkpoint (flush) when it changed, idle after the
// strategy's idleness and active again at the next row.
func TestToKafkaShuffleWritesWatermarksToEveryPartition(t *testing.T) {
	clock := NewManualClock(t0)
	env := NewEnv(WithClock(clock))
	in := NewInput[clickEvent](env, 1)
	evs := AssignTimestampsAndWatermarks(in.Stream(), WatermarkStrategy[clickEvent]{
		Timestamp: func(c clickEvent) time.Time { return time.UnixMilli(c.At) }, IdleTimeout: 300 * time.Millisecond,
	})
	ToKafkaShuffle(evs, ShuffleConfig[clickEvent]{Topic: "t", Partitions: 3, Producer: 2, Encode: func(c Change[clickEvent]) ([]byte, []byte, error) {
		return []byte(c.Value.User), []byte(fmt.Sprint(c.Value.At)), nil
	}})
	var got []string
	env.produce = func(r *kgo.Record) {
		if isWatermarkRecord(r.Headers) {
			got = append(got, fmt.Sprintf("%s/%d %s", r.Topic, r.Partition, r.Value))
		} else {
			got = append(got, fmt.Sprintf("%s %s=%s", r.Topic, r.Key, r.Value))
		}
	}
	step := func(what string, f func(), want ...string) {
		t.Helper()
		got = nil
		f()
		if err := env.Err(); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: wrote\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	emit := func(c clickEvent) func() { return func() { _ = in.Emit(0, c) } }
	tick := func(d time.Duration) func() {
		return func() {
			clock.Advance(d)
			_ = env.Tick()
		}
	}
	step("a row", emit(clickEvent{"a", 1000}), "t a=1000")
	step("the first watermark", tick(0),
		`t/0 {"producer":2,"watermark":999}`, `t/1 {"producer":2,"watermark":999}`, `t/2 {"producer":2,"watermark":999}`)
	step("a row", emit(clickEvent{"b", 2000}), "t b=2000")
	step("a changed watermark within 200 ms", tick(100*time.Millisecond))
	step("a checkpoint", func() { _ = env.syncSinks[0].flush(context.Background()) },
		`t/0 {"producer":2,"watermark":1999}`, `t/1 {"producer":2,"watermark":1999}`, `t/2 {"producer":2,"watermark":1999}`)
	step("a checkpoint with nothing new", func() { _ = env.syncSinks[0].flush(context.Background()) })
	step("300 ms without a row: idle", tick(300*time.Millisecond),
		`t/0 {"producer":2,"watermark":1999,"idle":true}`, `t/1 {"producer":2,"watermark":1999,"idle":true}`, `t/2 {"producer":2,"watermark":1999,"idle":true}`)
	step("a row: active again", func() { emit(clickEvent{"c", 1500})(); tick(200 * time.Millisecond)() }, "t c=1500",
		`t/0 {"producer":2,"watermark":1999}`, `t/1 {"producer":2,"watermark":1999}`, `t/2 {"producer":2,"watermark":1999}`)
}

// The shuffle operators' checkpoint entries are persisted (a restore reads
// them back): locked by testdata/shuffle_checkpoint.golden.json
// (regenerate with go test ./flinklite -run ShuffleCheckpointGolden
// -update). The state is the one of the steps below: producer 1 idle at
// 999, producer 0 at 2000; the sink's stream at 1999, last written 999.
func TestShuffleCheckpointGolden(t *testing.T) {
	j := newShuffleJob(2)
	j.mustWatermark(t, 1, 999, true)
	j.mustWatermark(t, 0, 2000, false)
	env := NewEnv(WithClock(NewManualClock(t0)))
	in := NewInput[clickEvent](env, 1)
	evs := AssignTimestampsAndWatermarks(in.Stream(), WatermarkStrategy[clickEvent]{Timestamp: func(c clickEvent) time.Time { return time.UnixMilli(c.At) }})
	ToKafkaShuffle(evs, ShuffleConfig[clickEvent]{Topic: "t", Partitions: 2, Producer: 1, Encode: func(Change[clickEvent]) ([]byte, []byte, error) { return nil, nil, nil }})
	env.produce = func(*kgo.Record) {}
	for _, at := range []int64{1000, 2000} {
		if err := in.Emit(0, clickEvent{"a", at}); err != nil {
			t.Fatal(err)
		}
		if err := env.Tick(); err != nil {
			t.Fatal(err)
		}
	}
	down, err := j.env.snapshotOperators()
	if err != nil {
		t.Fatal(err)
	}
	up, err := env.snapshotOperators()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(map[string]any{"downstream": down, "upstream": up}, "", "  ")
	got = append(got, '\n')
	golden := filepath.Join("testdata", "shuffle_checkpoint.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("shuffle checkpoint format changed:\n%s\nwant:\n%s", got, want)
	}
}
