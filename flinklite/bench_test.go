package flinklite

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"
)

type benchEvent struct {
	Key int32
	At  int64 // ms
}

// BenchmarkTumblingCount10kKeys is the shape of Nexmark q12 (per-key
// tumbling count) used as the reference rate: a 60 s tumbling event-time
// count over 10k keys, in memory, watermarks every 1000 events, 10k
// events per second of event time. The job runs on one goroutine, so
// events/s is the per-core rate; Flink's published q12 rate is ~75k
// events/s per core (the target is ≥ 5×, 375k).
func BenchmarkTumblingCount10kKeys(b *testing.B) {
	env := NewEnv(WithClock(NewManualClock(t0)))
	in := NewInput[benchEvent](env, 1)
	s := AssignTimestampsAndWatermarks(in.Stream(), WatermarkStrategy[benchEvent]{
		Timestamp:         func(e benchEvent) time.Time { return time.UnixMilli(e.At) },
		MaxOutOfOrderness: time.Second,
	})
	var results, sum int64
	counts := Aggregate(Window(KeyBy(s, func(e benchEvent) int32 { return e.Key }), TumblingEventTimeWindows(time.Minute, 0)), Count[benchEvent]())
	Sink(counts, func(c Change[WindowResult[int32, int64]]) { results++; sum += c.Value.Value })
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	x := uint32(1)
	for i := 0; i < b.N; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		if err := in.Emit(0, benchEvent{Key: int32(x % 10000), At: int64(i) / 10}); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			if err := env.Tick(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := env.Finish(); err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	b.StopTimer()
	if sum != int64(b.N) {
		b.Fatalf("counted %d of %d events", sum, b.N)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "events/s")
	b.ReportMetric(float64(results), "results")
}

// BenchmarkTumblingCount10kKeysJSON is the same job fed with JSON-encoded
// Kafka-style messages decoded by the job (encoding/json), closer to what
// a Kafka job pays per event (no network).
func BenchmarkTumblingCount10kKeysJSON(b *testing.B) {
	env := NewEnv(WithClock(NewManualClock(t0)))
	in := NewInput[Message](env, 1)
	evs := FlatMap(in.Stream(), func(m Message, out func(clickEvent)) {
		var c clickEvent
		if json.Unmarshal(m.Value, &c) == nil {
			out(c)
		}
	})
	s := AssignTimestampsAndWatermarks(evs, WatermarkStrategy[clickEvent]{
		Timestamp:         func(e clickEvent) time.Time { return time.UnixMilli(e.At) },
		MaxOutOfOrderness: time.Second,
	})
	var sum int64
	counts := Aggregate(Window(KeyBy(s, func(e clickEvent) string { return e.User }), TumblingEventTimeWindows(time.Minute, 0)), Count[clickEvent]())
	Sink(counts, func(c Change[WindowResult[string, int64]]) { sum += c.Value.Value })
	msgs := make([]Message, 1<<16)
	x := uint32(1)
	for i := range msgs {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		v, _ := json.Marshal(clickEvent{User: fmt.Sprintf("user-%d", x%10000)})
		msgs[i] = Message{Value: v}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		m := msgs[i&(1<<16-1)]
		// Rewrite the event time in place: "at" is the last field.
		m.Value = append(append(m.Value[:0:0], m.Value[:len(m.Value)-2]...), []byte(strconv.FormatInt(int64(i)/10, 10)+"}")...)
		if err := in.Emit(0, m); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			if err := env.Tick(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := env.Finish(); err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	b.StopTimer()
	if sum != int64(b.N) {
		b.Fatalf("counted %d of %d events", sum, b.N)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "events/s")
}

// keyedCount counts events per key in a ValueState and emits nothing: the
// cost of a keyed-state read and write per event.
type keyedCount struct{ n *ValueState[int64] }

func (f *keyedCount) Open(rc *RuntimeContext) error {
	f.n = NewValueState[int64](rc, "n", TTLConfig{})
	return nil
}

func (f *keyedCount) ProcessElement(_ benchEvent, _ *ProcessContext[int32, int64]) error {
	v, _ := f.n.Value()
	f.n.Update(v + 1)
	return nil
}

func (f *keyedCount) OnTimer(int64, *ProcessContext[int32, int64]) error { return nil }

// benchmarkKeyedState runs a per-key count in keyed state over 10k keys
// with backend, and reports events/s (one goroutine: per core).
func benchmarkKeyedState(b *testing.B, backend StateBackend) {
	env := NewEnv(WithClock(NewManualClock(t0)))
	in := NewInput[benchEvent](env, 1)
	s := AssignTimestampsAndWatermarks(in.Stream(), WatermarkStrategy[benchEvent]{
		Timestamp: func(e benchEvent) time.Time { return time.UnixMilli(e.At) },
	})
	if _, err := Process(KeyBy(s, func(e benchEvent) int32 { return e.Key }), KeyedProcessFunction[int32, benchEvent, int64](&keyedCount{}), backend); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := in.Emit(0, benchEvent{Key: int32(i % 10000), At: int64(i) / 10}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkKeyedStateMemory and BenchmarkKeyedStatePebble compare the two
// state backends on the same job (Flink's HashMapStateBackend versus
// EmbeddedRocksDBStateBackend: with its write-back cache holding the
// 10k keys, the LSM backend pays map lookups, not a store read and a JSON
// decode and encode per access).
func BenchmarkKeyedStateMemory(b *testing.B) { benchmarkKeyedState(b, NewMemoryStateBackend()) }

func BenchmarkKeyedStatePebble(b *testing.B) {
	p, err := NewPebbleStateBackend(b.TempDir() + "/state")
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	benchmarkKeyedState(b, p)
}
