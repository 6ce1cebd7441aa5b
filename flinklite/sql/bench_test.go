package sql

import (
	"fmt"
	"math/big"
	"strconv"
	"testing"

	"github.com/connectd/connectd/flinklite/job"
)

// BenchmarkGroupBy: an unbounded GROUP BY (100k source keys in 10k
// groups, COUNT, SUM and MAX of a decimal) in memory, from decoded rows.
// Each op is one Debezium update of a random-ish key, which is two
// changes (the retraction of the old row and the insertion of the new);
// changes/s counts both. The target is ≥ 580k changes/s per core.
func BenchmarkGroupBy(b *testing.B) {
	q, err := Compile("CREATE TABLE t AS SELECT customer, COUNT(*) AS n, SUM(amount) AS total, MAX(amount) AS hi FROM orders GROUP BY customer", nil)
	if err != nil {
		b.Fatal(err)
	}
	p := q.NewPipeline()
	const keys = 100_000
	var versions [2][]map[string]any
	ks := make([]string, keys)
	for v := range versions {
		versions[v] = make([]map[string]any, keys)
		for i := range versions[v] {
			versions[v][i] = map[string]any{"id": int64(i), "customer": "c" + strconv.Itoa(i%10_000), "amount": job.Decimal{Unscaled: bigInt(int64(i%997 + v*13)), Scale: 2}}
		}
	}
	for i := range ks {
		ks[i] = fmt.Sprintf(`{"id":%d}`, i)
		if err := p.Push("orders", ks[i], versions[0][i], false); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := p.Drain(); err != nil {
		b.Fatal(err)
	}
	cur := make([]int, keys)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := (i * 7919) % keys
		old := versions[cur[k]][k]
		cur[k] ^= 1
		if err := p.Push("orders", ks[k], old, true); err != nil {
			b.Fatal(err)
		}
		if err := p.Push("orders", ks[k], versions[cur[k]][k], false); err != nil {
			b.Fatal(err)
		}
		if i%500 == 499 {
			if _, err := p.Drain(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(2*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}

func bigInt(x int64) *big.Int { return big.NewInt(x) }
