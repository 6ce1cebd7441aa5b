package flinklite

import (
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"
)

// windowRun is a per-user 100 ms tumbling count with 50 ms allowed
// lateness, its window state in backend (nil: the operator's maps).
type windowRun struct {
	env *Env
	in  *Input[clickEvent]
	out []string
}

func newWindowRun(backend func() StateBackend) *windowRun {
	r := &windowRun{env: NewEnv(WithClock(NewManualClock(t0)))}
	r.in = NewInput[clickEvent](r.env, 1)
	s := AssignTimestampsAndWatermarks(r.in.Stream(), WatermarkStrategy[clickEvent]{
		Timestamp:         func(c clickEvent) time.Time { return time.UnixMilli(c.At) },
		MaxOutOfOrderness: 20 * time.Millisecond,
	})
	ws := Window(KeyBy(s, func(c clickEvent) string { return c.User }), TumblingEventTimeWindows(100*time.Millisecond, 0)).AllowedLateness(50 * time.Millisecond)
	if b := backend(); b != nil {
		ws = ws.StateBackend(b)
	}
	Sink(Aggregate(ws, Count[clickEvent]()), func(c Change[WindowResult[string, int64]]) {
		r.out = append(r.out, fmt.Sprintf("%s@%d=%d#%d", c.Value.Key, c.Value.Window.Start, c.Value.Value, c.Value.Firing))
	})
	return r
}

func (r *windowRun) feed(t *testing.T, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		at := int64(i) * 7
		if i%13 == 0 {
			at -= 130 // late: some within the allowed lateness, some beyond
		}
		if err := r.in.Emit(0, clickEvent{User: fmt.Sprintf("u%d", i%23), At: at}); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			if err := r.env.Tick(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Window state in a state backend (WindowedStream.StateBackend) gives the
// results of the operator's own maps, firings and late updates included,
// and the same checkpoint bytes; a checkpoint taken with Pebble (its
// write-back cache reduced to 4 entries, so windows are evicted to the
// store and read back) restores into the map version and the other way
// round, which then continue with the same results.
func TestWindowStateBackendMatchesMaps(t *testing.T) {
	maps := func() StateBackend { return nil }
	pebble := func() StateBackend {
		p := openPebble(t)
		p.CacheEntries = 4
		return p
	}
	memory := func() StateBackend { return NewMemoryStateBackend() }
	ref := newWindowRun(maps)
	ref.feed(t, 0, 600)
	refOps, err := ref.env.snapshotOperators()
	if err != nil {
		t.Fatal(err)
	}
	ref.feed(t, 600, 1200)
	if len(ref.out) < 100 {
		t.Fatalf("reference run fired %d results: the job proves nothing", len(ref.out))
	}
	for _, tc := range []struct {
		name     string
		from, to func() StateBackend
	}{
		{"pebble to maps", pebble, maps},
		{"maps to pebble", maps, pebble},
		{"memory to pebble", memory, pebble},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newWindowRun(tc.from)
			a.feed(t, 0, 600)
			ops, err := a.env.snapshotOperators()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ops, refOps) {
				t.Fatalf("checkpoint differs from the maps' one:\n%s\n%s", ops["window-1"], refOps["window-1"])
			}
			b := newWindowRun(tc.to)
			if err := b.env.restoreOperators(ops); err != nil {
				t.Fatal(err)
			}
			b.feed(t, 600, 1200)
			// Timers of one timestamp fire in heap order, which a restore
			// may change: compare the results as sets.
			got, want := append(append([]string(nil), a.out...), b.out...), append([]string(nil), ref.out...)
			sort.Strings(got)
			sort.Strings(want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d results, %d from the maps; first ones %.300v / %.300v", len(got), len(want), got, want)
			}
		})
	}
}

// CheckpointTo and RestoreFrom carry an Input-driven job across a restart
// (Pebble state to a new Pebble store): the results of the two runs are
// those of one uninterrupted run, and only the newest file is kept.
func TestCheckpointToRestoreFrom(t *testing.T) {
	pebble := func() StateBackend { return openPebble(t) }
	ref := newWindowRun(pebble)
	ref.feed(t, 0, 1200)
	dir := t.TempDir()
	a := newWindowRun(pebble)
	a.feed(t, 0, 300)
	if _, err := a.env.CheckpointTo(dir); err != nil {
		t.Fatal(err)
	}
	a.feed(t, 300, 600)
	info, err := a.env.CheckpointTo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := checkpointIDs(dir); !reflect.DeepEqual(ids, []int64{2}) || info.ID != 2 || info.SizeBytes == 0 {
		t.Fatalf("checkpoint files %v, info %+v: want only checkpoint 2", ids, info)
	}
	b := newWindowRun(pebble)
	if id, err := b.env.RestoreFrom(dir); err != nil || id != 2 {
		t.Fatalf("RestoreFrom = %d, %v", id, err)
	}
	b.feed(t, 600, 1200)
	got, want := append(append([]string(nil), a.out...), b.out...), append([]string(nil), ref.out...)
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%d results, %d uninterrupted", len(got), len(want))
	}
}
