package flinklite

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// velocity counts a user's clicks and, 10 ms (event time) after the first
// one, emits "user:count:distinct-N-values:list-len" and clears its state.
type velocity struct {
	ttl   TTLConfig
	count *ValueState[int64]
	seen  *MapState[int64, bool]
	list  *ListState[int64]
}

func (f *velocity) Open(rc *RuntimeContext) error {
	f.count = NewValueState[int64](rc, "count", f.ttl)
	f.seen = NewMapState[int64, bool](rc, "seen", f.ttl)
	f.list = NewListState[int64](rc, "list", f.ttl)
	return nil
}

func (f *velocity) ProcessElement(c click, ctx *ProcessContext[string, string]) error {
	n, ok := f.count.Value()
	if !ok {
		ctx.RegisterEventTimeTimer(c.At + 10)
	}
	f.count.Update(n + 1)
	f.seen.Put(c.N, true)
	f.list.Add(c.N)
	return nil
}

func (f *velocity) OnTimer(ts int64, ctx *ProcessContext[string, string]) error {
	n, _ := f.count.Value()
	ctx.Collect(fmt.Sprintf("%s:%d:%d:%d@%d", ctx.Key(), n, len(f.seen.Entries()), len(f.list.Get()), ts))
	f.count.Clear()
	f.seen.Clear()
	f.list.Clear()
	return nil
}

type procHarness struct {
	clock *ManualClock
	env   *Env
	in    *Input[click]
	rc    *RuntimeContext
	out   []string
}

func newProcHarness(t *testing.T, ttl TTLConfig) *procHarness {
	h := &procHarness{clock: NewManualClock(t0)}
	h.env = NewEnv(WithClock(h.clock))
	h.in = NewInput[click](h.env, 1)
	s := AssignTimestampsAndWatermarks(h.in.Stream(), WatermarkStrategy[click]{Timestamp: clickTime})
	f := &velocity{ttl: ttl}
	out, err := Process(KeyBy(s, func(c click) string { return c.User }), KeyedProcessFunction[string, click, string](f), nil)
	if err != nil {
		t.Fatal(err)
	}
	Sink(out, func(c Change[string]) { h.out = append(h.out, c.Value) })
	return h
}

// Event-time timers fire when the watermark reaches them (Flink's
// TimerService.registerEventTimeTimer); state is per key.
func TestKeyedProcessStateAndTimers(t *testing.T) {
	h := newProcHarness(t, TTLConfig{})
	for _, c := range []click{{"a", 1, 7}, {"b", 2, 1}, {"a", 5, 7}, {"a", 8, 9}} {
		if err := h.in.Emit(0, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.env.Tick(); err != nil { // wm 7: no timer (11, 12) due
		t.Fatal(err)
	}
	if len(h.out) != 0 {
		t.Fatalf("early timer: %v", h.out)
	}
	// Checkpoint here and continue in a fresh graph: state and timers survive.
	snap := map[string][]byte{}
	for id, s := range h.env.states {
		b, err := s.snapshot()
		if err != nil {
			t.Fatal(err)
		}
		snap[id] = b
	}
	h2 := newProcHarness(t, TTLConfig{})
	for id, s := range h2.env.states {
		if err := s.restore(snap[id]); err != nil {
			t.Fatal(err)
		}
	}
	if err := h2.in.Emit(0, click{"c", 30, 0}); err != nil {
		t.Fatal(err)
	}
	if err := h2.env.Tick(); err != nil { // wm 29
		t.Fatal(err)
	}
	want := []string{"a:3:2:3@11", "b:1:1:1@12"}
	if !reflect.DeepEqual(h2.out, want) {
		t.Fatalf("got %v, want %v", h2.out, want)
	}
}

// State TTL (Flink's StateTtlConfig, processing time, OnCreateAndWrite,
// NeverReturnExpired): under a stream of ever-new keys that are never seen
// again, the state size stays flat instead of growing with the number of
// keys; an expired value is not returned even before cleanup.
func TestStateTTLBoundsStateOfIdleKeys(t *testing.T) {
	h := newProcHarness(t, TTLConfig{TTL: time.Minute})
	table := h.env.states["process-2"].(*processOp[any, string, string]).rc.backend.(*MemoryStateBackend).tables["count"]
	var sizes []int
	for round := 0; round < 20; round++ {
		for i := 0; i < 500; i++ {
			// Event time stays at 0: no timer fires, only TTL removes state.
			if err := h.in.Emit(0, click{fmt.Sprintf("u%d-%d", round, i), 0, int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		h.clock.Advance(30 * time.Second)
		if err := h.env.Tick(); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, table.Len())
	}
	// Keys written in round r expire 60 s later, i.e. at the tick of round
	// r+1: at most two rounds (1000 keys) are live at any time.
	for i, n := range sizes {
		if n > 1000 {
			t.Fatalf("state grew: size after round %d = %d (sizes %v)", i, n, sizes)
		}
	}
	if sizes[len(sizes)-1] != sizes[5] {
		t.Fatalf("state size not flat: %v", sizes)
	}
	if m := h.env.Metrics(); m.StateEntriesExpired < 18*500 {
		t.Fatalf("expired %d entries, want ≥ %d", m.StateEntriesExpired, 18*500)
	}

	// NeverReturnExpired: read an expired entry before cleanup ran.
	h3 := newProcHarness(t, TTLConfig{TTL: time.Minute})
	f := &velocity{ttl: TTLConfig{TTL: time.Minute}}
	rc := &RuntimeContext{env: h3.env, backend: NewMemoryStateBackend()}
	if err := f.Open(rc); err != nil {
		t.Fatal(err)
	}
	rc.key = "k"
	f.count.Update(5)
	h3.clock.Advance(59 * time.Second)
	if v, ok := f.count.Value(); !ok || v != 5 {
		t.Fatalf("value before expiry = %v %v", v, ok)
	}
	h3.clock.Advance(time.Second)
	if v, ok := f.count.Value(); ok {
		t.Fatalf("expired value returned: %v", v)
	}
}
