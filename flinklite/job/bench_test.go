package job

import (
	"fmt"
	"testing"

	"github.com/connectd/connectd/flinklite"
)

// BenchmarkJSONRowAggregate is the per-row work of a json-format job
// that the number representation touches: decoding a record (numbers as
// int64 and exact decimals) and folding it into sum, avg, min, max and
// count accumulators. ns/op is CPU per row (one goroutine).
func BenchmarkJSONRowAggregate(b *testing.B) {
	msgs := make([]flinklite.Message, 1024)
	for i := range msgs {
		msgs[i] = flinklite.Message{Value: fmt.Appendf(nil, `{"customer":"c%d","qty":%d,"amount":%d.%02d}`, i%7, 1000+i, i, i%100)}
	}
	f := specAggregate{aggs: []AggregateSpec{{Function: "sum", Field: "amount"}, {Function: "avg", Field: "amount"},
		{Function: "min", Field: "qty"}, {Function: "max", Field: "amount"}, {Function: "sum", Field: "qty"}, {Function: "count"}}}
	acc := f.CreateAccumulator()
	et := EventTimeSpec{KafkaTimestamp: true}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, _, err := jsonRow(msgs[i%len(msgs)], et)
		if err != nil {
			b.Fatal(err)
		}
		acc = f.Add(r, acc)
		if i%len(msgs) == len(msgs)-1 {
			acc = f.CreateAccumulator() // bounded multisets, as windows
		}
	}
}

// BenchmarkRepartitionRow is the per-row cost the repartition stage adds
// to a distributed job whose keyBy is not the input key: the row (the
// shop_orders row of the integration tests, 4 fields) encoded into its
// repartition record (key and value) and decoded by the window stage.
// The Kafka round trip itself is not included.
func BenchmarkRepartitionRow(b *testing.B) {
	s := &Spec{KeyBy: []string{"customer"}}
	enc := repartitionEncoder(s)
	env := flinklite.NewEnv()
	in := flinklite.NewInput[flinklite.Message](env, 1)
	rows := 0
	flinklite.Sink(fromRepartition(env, in.Stream(), 4), func(flinklite.Change[Row]) { rows++ })
	row := Row{Fields: map[string]any{"id": 42.0, "customer": "c3", "amount": 417.0, "created_at": "2026-01-01T00:07:00Z"}, Time: 1767225620000}
	b.ReportAllocs()
	for b.Loop() {
		k, v, err := enc(flinklite.Change[Row]{Value: row})
		if err != nil {
			b.Fatal(err)
		}
		if err := in.Emit(0, flinklite.Message{Key: k, Value: v}); err != nil {
			b.Fatal(err)
		}
	}
	if rows != b.N {
		b.Fatalf("decoded %d rows of %d", rows, b.N)
	}
}
