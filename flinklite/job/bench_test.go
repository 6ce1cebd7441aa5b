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
