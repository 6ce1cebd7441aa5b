package flinklite

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func newProcHarnessWith(t *testing.T, ttl TTLConfig, backend StateBackend) *procHarness {
	h := &procHarness{clock: NewManualClock(t0)}
	h.env = NewEnv(WithClock(h.clock))
	h.in = NewInput[click](h.env, 1)
	s := AssignTimestampsAndWatermarks(h.in.Stream(), WatermarkStrategy[click]{Timestamp: clickTime})
	out, err := Process(KeyBy(s, func(c click) string { return c.User }), KeyedProcessFunction[string, click, string](&velocity{ttl: ttl}), backend)
	if err != nil {
		t.Fatal(err)
	}
	Sink(out, func(c Change[string]) { h.out = append(h.out, c.Value) })
	return h
}

func openPebble(t *testing.T) *PebbleStateBackend {
	b, err := NewPebbleStateBackend(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// The Pebble backend behind the same keyed-state interface gives the
// results of the in-memory one (the expected values are those of
// TestKeyedProcessStateAndTimers), and its checkpoints are in the
// canonical format: a snapshot of Pebble state restores into memory state
// and the other way round (as Flink's canonical savepoints move between
// HashMapStateBackend and EmbeddedRocksDBStateBackend).
func TestPebbleStateBackendMatchesMemory(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to func() StateBackend
	}{
		{"pebble to memory", func() StateBackend { return openPebble(t) }, func() StateBackend { return NewMemoryStateBackend() }},
		{"memory to pebble", func() StateBackend { return NewMemoryStateBackend() }, func() StateBackend { return openPebble(t) }},
		{"pebble to pebble", func() StateBackend { return openPebble(t) }, func() StateBackend { return openPebble(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newProcHarnessWith(t, TTLConfig{}, tc.from())
			for _, c := range []click{{"a", 1, 7}, {"b", 2, 1}, {"a", 5, 7}, {"a", 8, 9}} {
				if err := h.in.Emit(0, c); err != nil {
					t.Fatal(err)
				}
			}
			if err := h.env.Tick(); err != nil {
				t.Fatal(err)
			}
			ops, err := h.env.snapshotOperators()
			if err != nil {
				t.Fatal(err)
			}
			h2 := newProcHarnessWith(t, TTLConfig{}, tc.to())
			if err := h2.env.restoreOperators(ops); err != nil {
				t.Fatal(err)
			}
			// Equal state gives equal checkpoint bytes, whatever the backend.
			again, err := h2.env.snapshotOperators()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ops, again) {
				t.Fatalf("snapshot after restore differs:\n%s\nwant\n%s", again["process-2"], ops["process-2"])
			}
			if err := h2.in.Emit(0, click{"c", 30, 0}); err != nil {
				t.Fatal(err)
			}
			if err := h2.env.Tick(); err != nil {
				t.Fatal(err)
			}
			if want := []string{"a:3:2:3@11", "b:1:1:1@12"}; !reflect.DeepEqual(h2.out, want) {
				t.Fatalf("got %v, want %v", h2.out, want)
			}
		})
	}
}

// State TTL over Pebble: under ever-new keys the number of entries stays
// flat (the bound of TestStateTTLBoundsStateOfIdleKeys), so the store
// does not grow without bound either.
func TestPebbleStateTTLBoundsState(t *testing.T) {
	b := openPebble(t)
	h := newProcHarnessWith(t, TTLConfig{TTL: time.Minute}, b)
	table := b.tables["count"]
	var sizes []int
	for round := 0; round < 10; round++ {
		for i := 0; i < 300; i++ {
			if err := h.in.Emit(0, click{fmt.Sprintf("u%d-%d", round, i), 0, int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		h.clock.Advance(30 * time.Second)
		if err := h.env.Tick(); err != nil {
			t.Fatal(err)
		}
		n := 0
		table.Range(func(string, any) bool { n++; return true })
		if n != table.Len() {
			t.Fatalf("Len %d, but %d entries in the store", table.Len(), n)
		}
		sizes = append(sizes, n)
	}
	for i, n := range sizes {
		if n > 600 {
			t.Fatalf("state grew: %d entries after round %d (%v)", n, i, sizes)
		}
	}
	if sizes[len(sizes)-1] != sizes[3] {
		t.Fatalf("state size not flat: %v", sizes)
	}
}

// The write-back cache is invisible: with a cache of 8 entries, 500 keys
// written, overwritten and partly deleted in a pseudo-random order (so
// that entries are evicted dirty, re-read from the store and deleted both
// cached and stored) leave the same Len, Get results and snapshot bytes as
// MemoryStateBackend given the same operations.
func TestPebbleWriteBackCacheEvicts(t *testing.T) {
	p := openPebble(t)
	p.CacheEntries = 8
	m := NewMemoryStateBackend()
	codec := jsonCodec[int64]()
	pt, mt := p.Table("n", codec), m.Table("n", codec)
	x := uint32(7)
	for i := 0; i < 20000; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		k := fmt.Sprintf("k%d", x%500)
		switch x % 5 {
		case 0:
			pt.Delete(k)
			mt.Delete(k)
		default:
			pv, pok := pt.Get(k)
			mv, mok := mt.Get(k)
			if pok != mok || pok && pv.(int64) != mv.(int64) {
				t.Fatalf("step %d: Get(%s) = %v,%v on Pebble, %v,%v in memory", i, k, pv, pok, mv, mok)
			}
			var n int64
			if pok {
				n = pv.(int64)
			}
			pt.Put(k, n+1)
			mt.Put(k, n+1)
		}
		if pt.Len() != mt.Len() {
			t.Fatalf("step %d: Len %d on Pebble, %d in memory", i, pt.Len(), mt.Len())
		}
	}
	if len(p.tables["n"].cache) > 8 {
		t.Fatalf("cache holds %d entries, bound 8", len(p.tables["n"].cache))
	}
	ps, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	ms, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if string(ps) != string(ms) {
		t.Fatalf("snapshots differ:\npebble %.200s\nmemory %.200s", ps, ms)
	}
}
