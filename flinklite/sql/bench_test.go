package sql

import (
	"fmt"
	"math/big"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/connectd/connectd/flinklite"
	"github.com/connectd/connectd/flinklite/job"
)

// BenchmarkGroupBy: an unbounded GROUP BY (100k source keys in 10k
// groups, COUNT, SUM and MAX of a decimal) in memory, from decoded rows.
// Each op is one Debezium update of a random-ish key, which is two
// changes (the retraction of the old row and the insertion of the new);
// changes/s counts both. The target is ≥ 580k changes/s per core.
func BenchmarkGroupBy(b *testing.B) { benchBackends(b, benchGroupBy) }

// benchBackends runs f with the state in memory (the figure), in
// Pebble, and in Pebble with a checkpoint (a full snapshot of the state,
// as Env.Run takes) every 100k ops, about every second at these rates.
func benchBackends(b *testing.B, f func(b *testing.B, newPipeline func(*Query) *Pipeline, checkpoint func())) {
	with := func(be flinklite.StateBackend) func(*Query) *Pipeline {
		return func(q *Query) *Pipeline {
			return q.newPipeline(&pipelineState{be: be, now: func() int64 { return 0 }}, "")
		}
	}
	b.Run("memory", func(b *testing.B) { f(b, with(flinklite.NewMemoryStateBackend()), nil) })
	pebble := func(b *testing.B) *flinklite.PebbleStateBackend {
		pb, err := flinklite.NewPebbleStateBackend(filepath.Join(b.TempDir(), "state"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { pb.Close() })
		return pb
	}
	b.Run("pebble", func(b *testing.B) { f(b, with(pebble(b)), nil) })
	b.Run("pebble+checkpoints", func(b *testing.B) {
		pb := pebble(b)
		f(b, with(pb), func() {
			if _, err := pb.Snapshot(); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func benchGroupBy(b *testing.B, newPipeline func(*Query) *Pipeline, checkpoint func()) {
	q, err := Compile("CREATE TABLE t AS SELECT customer, COUNT(*) AS n, SUM(amount) AS total, MAX(amount) AS hi FROM orders GROUP BY customer", nil)
	if err != nil {
		b.Fatal(err)
	}
	p := newPipeline(q)
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
		if checkpoint != nil && i%100_000 == 99_999 {
			if _, err := p.Drain(); err != nil {
				b.Fatal(err)
			}
			checkpoint()
		}
	}
	b.StopTimer()
	b.ReportMetric(2*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}

func bigInt(x int64) *big.Int { return big.NewInt(x) }

// BenchmarkJoinGroupBy: a two-table changelog join feeding a GROUP BY
// (100k orders, 10k customers in 100 regions) in memory: each op is an
// update of an order (two changes through the join and the aggregate),
// and one op in 100 an update of a customer's region (two changes that
// move its ~10 orders between groups). The target is ≥ 170k
// changes/s per core.
func BenchmarkJoinGroupBy(b *testing.B) { benchBackends(b, benchJoinGroupBy) }

func benchJoinGroupBy(b *testing.B, newPipeline func(*Query) *Pipeline, checkpoint func()) {
	q, err := Compile("CREATE TABLE t AS SELECT c.region, COUNT(*) AS n, SUM(o.amount) AS total FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region", nil)
	if err != nil {
		b.Fatal(err)
	}
	p := newPipeline(q)
	const orders, customers = 100_000, 10_000
	var ov [2][]map[string]any
	var cv [2][]map[string]any
	oks, cks := make([]string, orders), make([]string, customers)
	for v := 0; v < 2; v++ {
		ov[v] = make([]map[string]any, orders)
		for i := range ov[v] {
			ov[v][i] = map[string]any{"id": int64(i), "customer_id": int64(i % customers), "amount": job.Decimal{Unscaled: bigInt(int64(i%997 + v)), Scale: 2}}
		}
		cv[v] = make([]map[string]any, customers)
		for i := range cv[v] {
			cv[v][i] = map[string]any{"id": int64(i), "region": "r" + strconv.Itoa((i+v*7)%100)}
		}
	}
	for i := range cks {
		cks[i] = fmt.Sprintf(`{"id":%d}`, i)
		if err := p.Push("customers", cks[i], cv[0][i], false); err != nil {
			b.Fatal(err)
		}
	}
	for i := range oks {
		oks[i] = fmt.Sprintf(`{"id":%d}`, i)
		if err := p.Push("orders", oks[i], ov[0][i], false); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := p.Drain(); err != nil {
		b.Fatal(err)
	}
	ocur, ccur := make([]int, orders), make([]int, customers)
	changes := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		topic, keys, vs, cur, n := "orders", oks, ov, ocur, orders
		if i%100 == 99 {
			topic, keys, vs, cur, n = "customers", cks, cv, ccur, customers
		}
		k := (i * 7919) % n
		old := vs[cur[k]][k]
		cur[k] ^= 1
		if err := p.Push(topic, keys[k], old, true); err != nil {
			b.Fatal(err)
		}
		if err := p.Push(topic, keys[k], vs[cur[k]][k], false); err != nil {
			b.Fatal(err)
		}
		changes += 2
		if i%500 == 499 {
			if _, err := p.Drain(); err != nil {
				b.Fatal(err)
			}
		}
		if checkpoint != nil && i%100_000 == 99_999 {
			if _, err := p.Drain(); err != nil {
				b.Fatal(err)
			}
			checkpoint()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(changes)/b.Elapsed().Seconds(), "changes/s")
}

// BenchmarkTopN: a Top-N (the 3 largest orders of each customer, with
// their rank: 100k orders in 10k partitions of 10) from decoded rows. Each
// op is a Debezium update of an order's amount (two changes: the
// retraction of the old row and the insertion of the new), which moves
// the row in its partition's order; changes/s counts both.
func BenchmarkTopN(b *testing.B) { benchBackends(b, benchTopN) }

func benchTopN(b *testing.B, newPipeline func(*Query) *Pipeline, checkpoint func()) {
	q, err := Compile(`CREATE TABLE t AS SELECT id, customer, amount, rn FROM (
		SELECT id, customer, amount, ROW_NUMBER() OVER (PARTITION BY customer ORDER BY amount DESC, id) AS rn FROM orders) x
		WHERE rn <= 3`, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := newPipeline(q)
	const keys = 100_000
	var versions [2][]map[string]any
	ks := make([]string, keys)
	for v := range versions {
		versions[v] = make([]map[string]any, keys)
		for i := range versions[v] {
			versions[v][i] = map[string]any{"id": int64(i), "customer": "c" + strconv.Itoa(i%10_000), "amount": job.Decimal{Unscaled: bigInt(int64((i*31 + v*4999) % 9973)), Scale: 2}}
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
	outs := 0
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
			o, err := p.Drain()
			if err != nil {
				b.Fatal(err)
			}
			outs += len(o)
		}
		if checkpoint != nil && i%100_000 == 99_999 {
			if _, err := p.Drain(); err != nil {
				b.Fatal(err)
			}
			checkpoint()
		}
	}
	b.StopTimer()
	if b.N >= 1000 && outs == 0 {
		b.Fatal("no result changes")
	}
	b.ReportMetric(2*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}
