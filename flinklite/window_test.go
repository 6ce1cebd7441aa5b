package flinklite

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

type click struct {
	User string
	At   int64 // event time, ms
	N    int64
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func clickTime(c click) time.Time { return time.UnixMilli(c.At) }

type harness[O any] struct {
	clock *ManualClock
	env   *Env
	in    *Input[click]
	out   []WindowResult[string, O]
	late  []click
}

// newHarness wires input → watermarks → keyBy(user) → window → agg.
func newHarness[A, O any](t *testing.T, parts int, strat WatermarkStrategy[click], a WindowAssigner, lateness time.Duration, agg AggregateFunction[click, A, O]) *harness[O] {
	t.Helper()
	h := &harness[O]{clock: NewManualClock(t0)}
	h.env = NewEnv(WithClock(h.clock))
	h.in = NewInput[click](h.env, parts)
	strat.Timestamp = clickTime
	s := AssignTimestampsAndWatermarks(h.in.Stream(), strat)
	ws := Window(KeyBy(s, func(c click) string { return c.User }), a).AllowedLateness(lateness)
	Sink(ws.SideOutputLateData(), func(c Change[click]) { h.late = append(h.late, c.Value) })
	Sink(Aggregate(ws, agg), func(c Change[WindowResult[string, O]]) { h.out = append(h.out, c.Value) })
	return h
}

func (h *harness[O]) emit(t *testing.T, part int, cs ...click) {
	t.Helper()
	for _, c := range cs {
		if err := h.in.Emit(part, c); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *harness[O]) tick(t *testing.T) {
	t.Helper()
	if err := h.env.Tick(); err != nil {
		t.Fatal(err)
	}
}

func (h *harness[O]) take() []WindowResult[string, O] {
	o := h.out
	h.out = nil
	return o
}

func tw(start, end int64) TimeWindow { return TimeWindow{start, end} }

// Watermark = max seen − maxOutOfOrderness − 1 (Flink's
// BoundedOutOfOrdernessWatermarks.onPeriodicEmit); the tumbling window
// [0,10) fires when the watermark reaches 9 (TimeWindow.maxTimestamp).
func TestTumblingFiresOnWatermark(t *testing.T) {
	h := newHarness(t, 1, WatermarkStrategy[click]{MaxOutOfOrderness: 5 * time.Millisecond},
		TumblingEventTimeWindows(10*time.Millisecond, 0), 0, Count[click]())
	h.emit(t, 0, click{"a", 1, 1}, click{"a", 7, 1}, click{"b", 3, 1}, click{"a", 14, 1})
	h.tick(t) // wm = 14-5-1 = 8 < 9: nothing fires
	if got := h.take(); len(got) != 0 {
		t.Fatalf("fired before the watermark passed 9: %v", got)
	}
	h.emit(t, 0, click{"a", 15, 1})
	h.tick(t) // wm = 9: [0,10) fires
	got := h.take()
	want := map[string]int64{"a": 2, "b": 1}
	if len(got) != 2 {
		t.Fatalf("got %v", got)
	}
	for _, r := range got {
		if r.Window != tw(0, 10) || r.Value != want[r.Key] || r.Firing != 0 {
			t.Fatalf("got %+v, want counts %v in [0,10)", r, want)
		}
	}
	// Monotonic: an out-of-order element does not move the watermark back,
	// and [10,20) does not fire yet.
	h.emit(t, 0, click{"a", 11, 1})
	h.tick(t)
	if got := h.take(); len(got) != 0 {
		t.Fatalf("unexpected firing %v", got)
	}
}

// Flink's SlidingEventTimeWindows: an element at 12 with size 10 slide 5 is
// in [5,15) and [10,20).
func TestSlidingWindows(t *testing.T) {
	h := newHarness(t, 1, WatermarkStrategy[click]{}, SlidingEventTimeWindows(10*time.Millisecond, 5*time.Millisecond), 0,
		Sum(func(c click) int64 { return c.N }))
	h.emit(t, 0, click{"a", 12, 3}, click{"a", 6, 4}, click{"a", 100, 0})
	h.tick(t)
	got := h.take()
	want := []WindowResult[string, int64]{
		{Key: "a", Window: tw(0, 10), Value: 4},
		{Key: "a", Window: tw(5, 15), Value: 7},
		{Key: "a", Window: tw(10, 20), Value: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// allowedLateness (Flink's WindowedStream.allowedLateness): an element late
// by less than the lateness updates the window and re-fires it; one later
// than that goes to the late side output.
func TestAllowedLatenessAndLateSideOutput(t *testing.T) {
	h := newHarness(t, 1, WatermarkStrategy[click]{}, TumblingEventTimeWindows(10*time.Millisecond, 0), 10*time.Millisecond, Count[click]())
	h.emit(t, 0, click{"a", 2, 1}, click{"a", 12, 1})
	h.tick(t) // wm 11: [0,10) fires with 1
	if got := h.take(); !reflect.DeepEqual(got, []WindowResult[string, int64]{{Key: "a", Window: tw(0, 10), Value: 1}}) {
		t.Fatalf("on-time firing: %+v", got)
	}
	h.emit(t, 0, click{"a", 5, 1}) // late, within lateness (cleanup at 9+10=19)
	if got := h.take(); !reflect.DeepEqual(got, []WindowResult[string, int64]{{Key: "a", Window: tw(0, 10), Value: 2, Firing: 1}}) {
		t.Fatalf("late update: %+v", got)
	}
	h.emit(t, 0, click{"a", 25, 1})
	h.tick(t) // wm 24 ≥ 19: [0,10) cleaned up; [10,20) fires
	if got := h.take(); !reflect.DeepEqual(got, []WindowResult[string, int64]{{Key: "a", Window: tw(10, 20), Value: 1}}) {
		t.Fatalf("second window: %+v", got)
	}
	h.emit(t, 0, click{"a", 8, 1}) // beyond lateness
	if got := h.take(); len(got) != 0 {
		t.Fatalf("too-late element changed a result: %+v", got)
	}
	if !reflect.DeepEqual(h.late, []click{{"a", 8, 1}}) {
		t.Fatalf("late side output %v", h.late)
	}
	if m := h.env.Metrics(); m.NumLateRecordsSideOutput != 1 || m.NumLateRecordsDropped != 0 {
		t.Fatalf("metrics %+v", m)
	}
}

// The "watermark stall": with two partitions and one of them silent, the
// watermark (min over partitions) never advances and no window fires.
// With an idleness timeout the silent partition is left out after the
// timeout (Flink's WatermarkStrategy.withIdleness) and the window fires; a
// partition that resumes takes part in the minimum again.
func TestIdlePartitionStallAndIdleness(t *testing.T) {
	events := []click{{"a", 1, 1}, {"a", 5, 1}, {"a", 30, 1}}

	stalled := newHarness(t, 2, WatermarkStrategy[click]{}, TumblingEventTimeWindows(10*time.Millisecond, 0), 0, Count[click]())
	stalled.emit(t, 0, events...)
	for i := 0; i < 10; i++ {
		stalled.clock.Advance(time.Minute)
		stalled.tick(t)
	}
	if got := stalled.take(); len(got) != 0 {
		t.Fatalf("without idleness the window fired: %v", got)
	}

	h := newHarness(t, 2, WatermarkStrategy[click]{IdleTimeout: 30 * time.Second}, TumblingEventTimeWindows(10*time.Millisecond, 0), 0, Count[click]())
	h.emit(t, 0, events...)
	h.clock.Advance(20 * time.Second)
	h.emit(t, 0, click{"a", 31, 1}) // partition 0 stays active
	h.clock.Advance(9 * time.Second)
	h.tick(t)
	if got := h.take(); len(got) != 0 {
		t.Fatalf("fired before the idleness timeout: %v", got)
	}
	h.clock.Advance(time.Second)
	h.tick(t)
	if got := h.take(); !reflect.DeepEqual(got, []WindowResult[string, int64]{{Key: "a", Window: tw(0, 10), Value: 2}}) {
		t.Fatalf("after idleness: %+v", got)
	}
	// Partition 1 wakes up behind the watermark (29 < 30): it holds the
	// minimum back, but the emitted watermark never goes backwards.
	h.emit(t, 1, click{"a", 35, 1})
	h.emit(t, 0, click{"a", 60, 1})
	h.tick(t) // wm = min(59, 34) = 34: [30,40) not yet
	if got := h.take(); len(got) != 0 {
		t.Fatalf("partition 1 did not hold the watermark: %+v", got)
	}
	h.emit(t, 1, click{"a", 45, 1})
	h.tick(t) // wm = 44: [30,40) fires with 30, 31 and 35
	if got := h.take(); !reflect.DeepEqual(got, []WindowResult[string, int64]{{Key: "a", Window: tw(30, 40), Value: 3}}) {
		t.Fatalf("after partition 1 resumed: %+v", got)
	}
}

// Session windows merge when a new element bridges two sessions (Flink's
// EventTimeSessionWindows + MergingWindowAssigner): gap 10, elements 0 and
// 25 are two sessions until 12 and 20 join them into [0,35).
func TestSessionWindowMerging(t *testing.T) {
	h := newHarness(t, 1, WatermarkStrategy[click]{}, EventTimeSessionWindows(10*time.Millisecond), 0,
		Sum(func(c click) int64 { return c.N }))
	h.emit(t, 0, click{"a", 0, 1}, click{"a", 25, 2}, click{"b", 3, 100})
	h.emit(t, 0, click{"a", 12, 4})  // [12,22): a third session
	h.emit(t, 0, click{"a", 9, 8})   // [9,19) joins [0,10) and [12,22) → [0,22)
	h.emit(t, 0, click{"a", 20, 16}) // [20,30) joins [0,22) and [25,35) → [0,35)
	h.tick(t)                        // wm 24
	got := h.take()
	if !reflect.DeepEqual(got, []WindowResult[string, int64]{{Key: "b", Window: tw(3, 13), Value: 100}}) {
		t.Fatalf("before the merged session ends: %+v", got)
	}
	h.emit(t, 0, click{"c", 40, 0})
	h.tick(t) // wm 39 ≥ 34
	got = h.take()
	if !reflect.DeepEqual(got, []WindowResult[string, int64]{{Key: "a", Window: tw(0, 35), Value: 31}}) {
		t.Fatalf("merged session: %+v", got)
	}
	if n := h.env.states["window-2"].(*windowOp[click, string, int64, int64]).stateSize(); n != 1 {
		t.Fatalf("open sessions after firing = %d, want 1 (c)", n)
	}
}

// Distinct count, avg, min, max over one window; a retraction reaching Max
// fails the job with ErrNotRetractable.
func TestBuiltinAggregates(t *testing.T) {
	w := TumblingEventTimeWindows(10*time.Millisecond, 0)
	in := []click{{"a", 1, 5}, {"a", 2, 3}, {"a", 3, 5}, {"a", 4, 7}, {"a", 50, 0}}
	dc := newHarness(t, 1, WatermarkStrategy[click]{}, w, 0, DistinctCount(func(c click) int64 { return c.N }))
	avg := newHarness(t, 1, WatermarkStrategy[click]{}, w, 0, Avg(func(c click) int64 { return c.N }))
	mn := newHarness(t, 1, WatermarkStrategy[click]{}, w, 0, Min(func(c click) int64 { return c.N }))
	mx := newHarness(t, 1, WatermarkStrategy[click]{}, w, 0, Max(func(c click) int64 { return c.N }))
	dc.emit(t, 0, in...)
	avg.emit(t, 0, in...)
	mn.emit(t, 0, in...)
	mx.emit(t, 0, in...)
	// Retract one 5: distinct stays 3 (5 still present), avg (3+5+7)/3.
	if err := dc.in.Retract(0, click{"a", 1, 5}); err != nil {
		t.Fatal(err)
	}
	if err := avg.in.Retract(0, click{"a", 1, 5}); err != nil {
		t.Fatal(err)
	}
	dc.tick(t)
	avg.tick(t)
	mn.tick(t)
	mx.tick(t)
	if got := dc.take()[0].Value; got != 3 {
		t.Fatalf("distinct count %d", got)
	}
	if got := avg.take()[0].Value; got != 5 {
		t.Fatalf("avg %v", got)
	}
	if got := mn.take()[0].Value; got != 3 {
		t.Fatalf("min %v", got)
	}
	if got := mx.take()[0].Value; got != 7 {
		t.Fatalf("max %v", got)
	}
	if err := mx.in.Retract(0, click{"a", 50, 0}); !errors.Is(err, ErrNotRetractable) {
		t.Fatalf("retract into Max: %v", err)
	}
	// A retraction for a window that holds nothing is counted, not turned
	// into a negative count.
	if err := dc.in.Retract(0, click{"a", 65, 1}); err != nil {
		t.Fatal(err)
	}
	if n := dc.env.Metrics().NumUnmatchedRetractions; n != 1 {
		t.Fatalf("unmatched retractions %d, want 1", n)
	}
}

// A window checkpointed mid-way and restored into a fresh graph fires with
// the same result as an uninterrupted run.
func TestWindowSnapshotRestore(t *testing.T) {
	mk := func() *harness[int64] {
		return newHarness(t, 1, WatermarkStrategy[click]{}, TumblingEventTimeWindows(10*time.Millisecond, 0), 0, Count[click]())
	}
	a := mk()
	a.emit(t, 0, click{"a", 1, 1}, click{"a", 2, 1})
	a.tick(t)
	snap := map[string][]byte{}
	for id, s := range a.env.states {
		b, err := s.snapshot()
		if err != nil {
			t.Fatal(err)
		}
		snap[id] = b
	}
	b := mk()
	for id, s := range b.env.states {
		if err := s.restore(snap[id]); err != nil {
			t.Fatal(err)
		}
	}
	b.emit(t, 0, click{"a", 3, 1}, click{"a", 20, 1})
	b.tick(t)
	if got := b.take(); !reflect.DeepEqual(got, []WindowResult[string, int64]{{Key: "a", Window: tw(0, 10), Value: 3}}) {
		t.Fatalf("restored window: %+v", got)
	}
}
