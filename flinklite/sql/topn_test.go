package sql

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/connectd/connectd/flinklite"
)

// topNRef is the Top-N of the current table computed directly: per status,
// the rows with amount NULL or > 10 ordered by amount (NULL the smallest,
// desc reverses), ties by the record key's bytes, the first n.
func topNRef(rows map[int]map[string]any, n int, desc, rnOut bool) table {
	parts := map[string][]int{}
	for id, r := range rows {
		if a, _ := r["amount"].(int64); r["amount"] != nil && a <= 10 {
			continue
		}
		s := r["status"].(string)
		parts[s] = append(parts[s], id)
	}
	out := table{}
	for s, ids := range parts {
		sort.Slice(ids, func(i, j int) bool {
			a, b := rows[ids[i]]["amount"], rows[ids[j]]["amount"]
			c := 0
			switch {
			case a == nil && b == nil:
			case a == nil:
				c = -1
			case b == nil:
				c = 1
			case a.(int64) < b.(int64):
				c = -1
			case a.(int64) > b.(int64):
				c = 1
			}
			if desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
			return fmt.Sprintf(`{"id":%d}`, ids[i]) < fmt.Sprintf(`{"id":%d}`, ids[j])
		})
		for i, id := range ids {
			if i == n {
				break
			}
			amount := "null"
			if a := rows[id]["amount"]; a != nil {
				amount = fmt.Sprint(a)
			}
			if rnOut {
				out[fmt.Sprintf(`{"status":%q,"rn":%d}`, s, i+1)] = fmt.Sprintf(`{"id":%d,"amount":%s,"rn":%d}`, id, amount, i+1)
			} else {
				out[fmt.Sprintf(`{"id":%d}`, id)] = fmt.Sprintf(`{"id":%d,"amount":%s}`, id, amount)
			}
		}
	}
	return out
}

// Random inserts, updates (of the sort key, the partition key, both) and
// deletes, in batches: after every batch the Top-N's compacted output
// equals the Top-N of the table, with and without rn, ascending and
// descending, N 1 to 3; with Pebble the state is checkpointed and
// restored into a new backend and pipeline in the middle.
func TestTopNEqualsTheTable(t *testing.T) {
	for _, backend := range []string{"hashmap", "rocksdb"} {
		for _, n := range []int{1, 2, 3} {
			for _, desc := range []bool{false, true} {
				for _, rnOut := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/n=%d/desc=%v/rn=%v", backend, n, desc, rnOut), func(t *testing.T) {
						testTopN(t, backend, n, desc, rnOut)
					})
				}
			}
		}
	}
}

func testTopN(t *testing.T, backend string, n int, desc, rnOut bool) {
	dir, sel, cond := "ASC", "id, amount", fmt.Sprintf("rn <= %d", n)
	if desc {
		dir = "DESC"
	}
	if rnOut {
		sel += ", rn"
	}
	switch n {
	case 1:
		cond = "rn = 1"
	case 2:
		cond = "3 > rn"
	}
	q := mustCompile(t, fmt.Sprintf(`CREATE TABLE top AS SELECT %s FROM (
		SELECT id, status, amount, ROW_NUMBER() OVER (PARTITION BY status ORDER BY amount %s) AS rn
		FROM orders WHERE amount IS NULL OR amount > 10) AS x WHERE %s`, sel, dir, cond))
	newBackend := func() flinklite.StateBackend {
		if backend == "hashmap" {
			return flinklite.NewMemoryStateBackend()
		}
		pb, err := flinklite.NewPebbleStateBackend(filepath.Join(t.TempDir(), "state"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pb.Close() })
		return pb
	}
	be := newBackend()
	p := q.newPipeline(&pipelineState{be: be, now: func() int64 { return 0 }}, "")
	r := rand.New(rand.NewSource(int64(n)*10 + int64(len(backend))))
	rows := map[int]map[string]any{}
	out := table{}
	push := func(id int, row map[string]any, retract bool) {
		t.Helper()
		if err := p.Push("pg.public.orders", fmt.Sprintf(`{"id":%d}`, id), row, retract); err != nil {
			t.Fatal(err)
		}
	}
	for batch := 0; batch < 150; batch++ {
		for k := 0; k < 1+r.Intn(4); k++ {
			id := 1 + r.Intn(14)
			nr := map[string]any{"id": int64(id), "status": []string{"new", "paid", "shipped"}[r.Intn(3)], "amount": int64(r.Intn(20))}
			if r.Intn(5) == 0 {
				nr["amount"] = nil
			}
			old, ok := rows[id]
			if ok {
				push(id, old, true)
				delete(rows, id)
			}
			if !ok || r.Intn(4) > 0 {
				if ok && r.Intn(2) == 0 {
					nr["status"] = old["status"] // only the sort key changes
				}
				push(id, nr, false)
				rows[id] = nr
			}
		}
		out.drain(t, p)
		if want := topNRef(rows, n, desc, rnOut); out.String() != want.String() {
			t.Fatalf("batch %d: got\n%s\nwant\n%s", batch, out, want)
		}
		if batch == 75 && backend == "rocksdb" {
			snap, err := be.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			be = newBackend()
			p = q.newPipeline(&pipelineState{be: be, now: func() int64 { return 0 }}, "")
			if err := be.Restore(snap); err != nil {
				t.Fatal(err)
			}
			p.restored()
		}
	}
}

// Deduplication: the last row per customer (rn = 1 over ORDER BY a time
// DESC), keyed by the source's key; a join's Top-N without PARTITION BY.
func TestTopNDeduplicationAndJoin(t *testing.T) {
	q := mustCompile(t, `CREATE TABLE last AS SELECT id, cid FROM (
		SELECT id, cid, ROW_NUMBER() OVER (PARTITION BY cid ORDER BY ts DESC) AS rn FROM orders) t WHERE rn = 1`)
	if got := strings.Join(q.KeyColumns, ","); got != "orders" {
		t.Fatalf("key %s, want the source's (orders)", got)
	}
	p := q.NewPipeline()
	out := table{}
	for _, c := range []struct {
		id, cid, ts int64
		retract     bool
	}{{1, 7, 100, false}, {2, 7, 200, false}, {3, 8, 50, false}, {2, 7, 200, true}} {
		if err := p.Push("pg.public.orders", fmt.Sprintf(`{"id":%d}`, c.id), map[string]any{"id": c.id, "cid": c.cid, "ts": c.ts}, c.retract); err != nil {
			t.Fatal(err)
		}
		out.drain(t, p)
	}
	check(t, out, `{"id":1} => {"id":1,"cid":7}`+"\n"+`{"id":3} => {"id":3,"cid":8}`)

	q = mustCompile(t, `CREATE TABLE top AS SELECT region, oid, r FROM (
		SELECT c.region AS region, o.id AS oid, ROW_NUMBER() OVER (ORDER BY o.amount DESC, o.id) AS r
		FROM orders o JOIN customers c ON o.cid = c.id) AS x WHERE r <= 2 AND region <> 'west'`)
	if got := strings.Join(q.KeyColumns, ","); got != "r" {
		t.Fatalf("key %s, want [r] (no partition)", got)
	}
	p = q.NewPipeline()
	out = table{}
	push := func(topic, key string, row map[string]any, retract bool) {
		t.Helper()
		if err := p.Push(topic, key, row, retract); err != nil {
			t.Fatal(err)
		}
	}
	push("pg.public.customers", `{"id":1}`, map[string]any{"id": int64(1), "region": "north"}, false)
	push("pg.public.customers", `{"id":2}`, map[string]any{"id": int64(2), "region": "west"}, false)
	for i := int64(1); i <= 4; i++ {
		push("pg.public.orders", fmt.Sprintf(`{"id":%d}`, i), map[string]any{"id": i, "cid": 1 + i%2, "amount": dec(fmt.Sprintf("%d.50", 10*i))}, false)
	}
	out.drain(t, p)
	// ranks: 4 (north), 3 (west, filtered after ranking); 2 and 1 are outside the top 2
	check(t, out, `{"r":1} => {"region":"north","oid":4,"r":1}`)
	push("pg.public.customers", `{"id":2}`, map[string]any{"id": int64(2), "region": "west"}, true)
	push("pg.public.customers", `{"id":2}`, map[string]any{"id": int64(2), "region": "south"}, false)
	out.drain(t, p)
	check(t, out, `{"r":1} => {"region":"north","oid":4,"r":1}`+"\n"+`{"r":2} => {"region":"south","oid":3,"r":2}`)
	push("pg.public.orders", `{"id":4}`, map[string]any{"id": int64(4), "cid": int64(1), "amount": dec("40.50")}, true)
	out.drain(t, p)
	check(t, out, `{"r":1} => {"region":"south","oid":3,"r":1}`+"\n"+`{"r":2} => {"region":"north","oid":2,"r":2}`)
}

func TestTopNUnsupported(t *testing.T) {
	for _, c := range []struct {
		sql        string
		line, col  int
		msgContain string
	}{
		{"SELECT a FROM (SELECT a, RANK() OVER (ORDER BY a) AS rn FROM orders) x WHERE rn <= 2", 1, 26, "RANK"},
		{"SELECT a FROM (SELECT a, DENSE_RANK() OVER (ORDER BY a) AS rn FROM orders) x WHERE rn <= 2", 1, 26, "DENSE_RANK"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders) x\nWHERE rn > 2", 2, 7, "unsupported condition on rn"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders) x WHERE rn <= a", 1, 84, "unsupported condition"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders) x WHERE rn <= 2 OR a > 1", 1, 84, "unsupported condition"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders) x WHERE rn = 3", 1, 84, "rank range"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders) x WHERE rn < 1", 1, 84, "keeps no row"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders) x WHERE rn <= 2 AND rn <= 3", 1, 96, "more than one"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders) x", 1, 1, "without WHERE rn <= N"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) FROM orders) x WHERE a < 2", 1, 26, "alias"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (PARTITION BY a) AS rn FROM orders) x WHERE rn <= 2", 1, 26, "without ORDER BY"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY 1) AS rn FROM orders) x WHERE rn <= 2", 1, 26, "constant"},
		{"SELECT b FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders) x WHERE rn <= 2", 1, 8, "not a column of the subquery"},
		{"SELECT y.a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders) x WHERE rn <= 2", 1, 8, "unknown table"},
		{"SELECT a, COUNT(*) FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders) x WHERE rn <= 2 GROUP BY a", 1, 1, "GROUP BY"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM orders GROUP BY a) x WHERE rn <= 2", 1, 23, "GROUP BY"},
		{"SELECT a FROM (SELECT a FROM orders) t", 1, 23, "other than Top-N"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn, ROW_NUMBER() OVER (ORDER BY a) AS rn2 FROM orders) x WHERE rn <= 2", 1, 64, "more than one window"},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a ROWS UNBOUNDED PRECEDING) AS rn FROM orders) x WHERE rn <= 2", 1, 26, "frame"},
	} {
		_, err := Compile(c.sql, nil)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: got %v, want an *Error", c.sql, err)
			continue
		}
		if e.Line != c.line || e.Column != c.col || !strings.Contains(e.Msg, c.msgContain) {
			t.Errorf("%s: got %v, want line %d column %d with %q", c.sql, e, c.line, c.col, c.msgContain)
		}
	}
}

func TestTopNExplain(t *testing.T) {
	q := mustCompile(t, `EXPLAIN INSERT INTO top SELECT id, status, rn FROM (SELECT id, status, ROW_NUMBER() OVER (PARTITION BY status ORDER BY amount DESC, id) AS rn FROM orders WHERE amount > 0) x WHERE rn <= 3 AND id > 1`)
	want := "UpsertKafkaSink(topic=top, key=[status, rn], columns=[id, status, rn])\n" +
		"  Calc(select=[`id`, `status`, `rn`], where=[`id`>1])\n" +
		"    Rank(strategy=RetractStrategy, rankType=ROW_NUMBER, rankRange=[1..3] (`rn`<=3), partitionBy=[`status`], orderBy=[`amount` DESC, `id` ASC], select=[`id`, `status`, rn], outputRankNumber=true, state=every row of each partition, sorted)\n" +
		"      Filter(condition=[`amount`>0])\n" +
		"        ChangelogScan(table=orders, alias=orders, topic=pg.public.orders, format=debezium-json)\n"
	if got := q.Plan(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// A Top-N partition expires under table.exec.state.ttl: a retraction of
// its rows is then ignored (as Flink's), without a TTL it fails the job.
func TestTopNStateTTL(t *testing.T) {
	now := int64(0)
	q := mustCompile(t, `CREATE TABLE top AS SELECT id, rn FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY status ORDER BY id) AS rn FROM orders) x WHERE rn <= 1`)
	p := q.newPipeline(&pipelineState{be: flinklite.NewMemoryStateBackend(), ttl: 1000, now: func() int64 { return now }}, "")
	out := table{}
	row := map[string]any{"id": int64(1), "status": "new"}
	if err := p.Push("pg.public.orders", `{"id":1}`, row, false); err != nil {
		t.Fatal(err)
	}
	out.drain(t, p)
	check(t, out, `{"status":"new","rn":1} => {"id":1,"rn":1}`)
	now = 1500
	p.expire(now)
	if p.stateSize() != 0 || p.expired() != 1 {
		t.Fatalf("state %d, expired %d: want the partition expired", p.stateSize(), p.expired())
	}
	if err := p.Push("pg.public.orders", `{"id":1}`, row, true); err != nil {
		t.Fatalf("the retraction of an expired partition's row: %v", err)
	}
	out.drain(t, p)
	check(t, out, `{"status":"new","rn":1} => {"id":1,"rn":1}`) // stays in the topic, as Flink's

	p = q.NewPipeline()
	if err := p.Push("pg.public.orders", `{"id":1}`, row, true); err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Fatalf("a retraction without the row and no TTL: %v, want an error", err)
	}
}
