package sql

import (
	"path/filepath"
	"testing"

	"github.com/connectd/connectd/flinklite"
)

// table.exec.state.ttl with Flink's semantics: a group or join row not
// written for the TTL is dropped without output (the result row stays); a
// retraction for a dropped group is ignored; a later change starts from
// nothing; state written within the TTL stays. Both backends.
func TestStateTTL(t *testing.T) {
	for _, backend := range []string{"hashmap", "rocksdb"} {
		t.Run(backend, func(t *testing.T) {
			var be flinklite.StateBackend = flinklite.NewMemoryStateBackend()
			if backend == "rocksdb" {
				pb, err := flinklite.NewPebbleStateBackend(filepath.Join(t.TempDir(), "state"))
				if err != nil {
					t.Fatal(err)
				}
				defer pb.Close()
				be = pb
			}
			now := int64(0)
			st := &pipelineState{be: be, ttl: 1000, now: func() int64 { return now }}
			q := mustCompile(t, "CREATE TABLE n AS SELECT status, COUNT(*) AS n FROM orders GROUP BY status")
			p := q.newPipeline(st, "")
			out := table{}
			push := func(key, status string, retract bool) {
				t.Helper()
				if err := p.Push("pg.public.orders", key, map[string]any{"status": status}, retract); err != nil {
					t.Fatal(err)
				}
				out.drain(t, p)
			}
			push(`{"id":1}`, "new", false)
			push(`{"id":2}`, "paid", false)
			now = 500
			push(`{"id":3}`, "new", false) // writes "new" at 500
			now = 1200
			p.expire(now) // "paid" (written at 0) expires, "new" stays
			if p.expired() != 1 || p.stateSize() != 1 {
				t.Fatalf("after expiry at 1200: %d expired, %d entries; want 1 and 1", p.expired(), p.stateSize())
			}
			check(t, out, `{"status":"new"} => {"status":"new","n":2}`+"\n"+`{"status":"paid"} => {"status":"paid","n":1}`)
			push(`{"id":2}`, "paid", true) // the expired group's retraction is ignored
			check(t, out, `{"status":"new"} => {"status":"new","n":2}`+"\n"+`{"status":"paid"} => {"status":"paid","n":1}`)
			push(`{"id":4}`, "paid", false) // starts from nothing
			check(t, out, `{"status":"new"} => {"status":"new","n":2}`+"\n"+`{"status":"paid"} => {"status":"paid","n":1}`)
			push(`{"id":1}`, "new", true)
			check(t, out, `{"status":"new"} => {"status":"new","n":1}`+"\n"+`{"status":"paid"} => {"status":"paid","n":1}`)
			// an expired entry is not read even before the cleanup ran
			now = 2300
			push(`{"id":5}`, "new", false)
			check(t, out, `{"status":"new"} => {"status":"new","n":1}`+"\n"+`{"status":"paid"} => {"status":"paid","n":1}`)

			// a snapshot restores the write times: "paid" (1200) expires at 2200,
			// "new" (2300) at 3300
			snap, err := be.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			be2 := flinklite.NewMemoryStateBackend()
			p2 := q.newPipeline(&pipelineState{be: be2, ttl: 1000, now: func() int64 { return now }}, "")
			if err := be2.Restore(snap); err != nil {
				t.Fatal(err)
			}
			p2.restored()
			p2.expire(2300)
			if p2.stateSize() != 1 {
				t.Fatalf("restored: %d entries at 2300, want 1", p2.stateSize())
			}
			p2.expire(3300)
			if p2.stateSize() != 0 {
				t.Fatalf("restored: %d entries at 3300, want 0", p2.stateSize())
			}
		})
	}
}

// A join side's rows expire: an order after its customer's row expired
// finds no match (a LEFT JOIN extends it with NULLs).
func TestJoinStateTTL(t *testing.T) {
	now := int64(0)
	st := &pipelineState{be: flinklite.NewMemoryStateBackend(), ttl: 1000, now: func() int64 { return now }}
	q := mustCompile(t, "CREATE TABLE j AS SELECT o.id AS oid, c.region AS region FROM orders o LEFT JOIN customers c ON o.cid = c.id")
	p := q.newPipeline(st, "")
	out := table{}
	if err := p.Push("pg.public.customers", `{"id":7}`, map[string]any{"id": int64(7), "region": "north"}, false); err != nil {
		t.Fatal(err)
	}
	if err := p.Push("pg.public.orders", `{"id":1}`, map[string]any{"id": int64(1), "cid": int64(7)}, false); err != nil {
		t.Fatal(err)
	}
	out.drain(t, p)
	now = 1500
	p.expire(now)
	if err := p.Push("pg.public.orders", `{"id":2}`, map[string]any{"id": int64(2), "cid": int64(7)}, false); err != nil {
		t.Fatal(err)
	}
	out.drain(t, p)
	check(t, out, `{"o":{"id":1},"c":{"id":7}} => {"oid":1,"region":"north"}`+"\n"+`{"o":{"id":2},"c":null} => {"oid":2,"region":null}`)
}
