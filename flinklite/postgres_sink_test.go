package flinklite

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

type windowSum struct {
	Key   string
	Start int64
	Sum   int64
}

// The upsert sink against a real PostgreSQL 15: rows buffered between
// checkpoints are written in one transaction by the checkpoint's flush;
// writing the same results again (a replay after a restore) leaves the
// table as it was (idempotent INSERT … ON CONFLICT DO UPDATE, as Flink's
// JDBC upsert sink), a later firing updates its row and a delete removes
// it.
func TestPostgresUpsertSinkIsIdempotent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "sums"); err != nil {
		t.Fatal(err)
	}
	env := NewEnv()
	in := NewInput[windowSum](env, 1)
	ToPostgresUpsert(in.Stream(), PostgresUpsertConfig{URL: pg.DSN("sums"), Table: "public.window_sums"}, func(c Change[windowSum]) (UpsertRow, error) {
		start := time.UnixMilli(c.Value.Start).UTC()
		return UpsertRow{
			Key: []UpsertColumn{
				{Name: "window_start", Value: start, Type: "timestamptz"},
				{Name: "window_end", Value: start.Add(time.Minute), Type: "timestamptz"},
				{Name: "customer", Value: c.Value.Key, Type: "text"},
			},
			Values: []UpsertColumn{{Name: "total", Value: float64(c.Value.Sum), Type: "numeric"}},
			Delete: c.Value.Sum < 0,
		}, nil
	})
	sink := env.syncSinks[0]
	defer sink.close()
	emit := emitAndFlush(ctx, t, in, sink)
	conn, err := pg.Connect(ctx, "sums")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	table := func() string {
		rows, err := conn.Query(ctx, `SELECT customer, extract(epoch FROM window_start)::bigint, extract(epoch FROM window_end)::bigint, total FROM window_sums ORDER BY 1, 2`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var c string
			var s, e int64
			var total float64
			if err := rows.Scan(&c, &s, &e, &total); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s@%d-%d=%v", c, s, e, total))
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	checkUpsertSequence(ctx, t, emit, sink, table, "a@0-60=12 a@60-120=3 b@0-60=7", "a@0-60=12 a@60-120=4")
}

// The instances of a scaled-out job (one per input partition) create the
// upsert table at their first checkpoint, at once: CREATE TABLE IF NOT
// EXISTS is not concurrency-safe in PostgreSQL (a loser fails with 23505
// on pg_type_typname_nsp_index, 42710 or 42P07; this test saw 42710
// before the sink ignored it), so a sink that lost the race
// carries on with the winner's table. 8 sinks × 10 tables, started
// together; every flush must succeed and every row land.
func TestPostgresUpsertSinksCreateTheTableConcurrently(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "race"); err != nil {
		t.Fatal(err)
	}
	const sinks, tables = 8, 10
	for tb := 0; tb < tables; tb++ {
		start := make(chan struct{})
		errs := make(chan error, sinks)
		for i := 0; i < sinks; i++ {
			env := NewEnv()
			in := NewInput[windowSum](env, 1)
			ToPostgresUpsert(in.Stream(), PostgresUpsertConfig{URL: pg.DSN("race"), Table: fmt.Sprintf("public.t%d", tb)}, func(c Change[windowSum]) (UpsertRow, error) {
				return UpsertRow{Key: []UpsertColumn{{Name: "k", Value: c.Value.Key, Type: "text"}},
					Values: []UpsertColumn{{Name: "total", Value: float64(c.Value.Sum), Type: "numeric"}}}, nil
			})
			if err := in.Emit(0, windowSum{Key: fmt.Sprint(i), Sum: int64(i)}); err != nil {
				t.Fatal(err)
			}
			sink := env.syncSinks[0]
			defer sink.close()
			go func() {
				<-start
				errs <- sink.flush(ctx)
			}()
		}
		close(start)
		for i := 0; i < sinks; i++ {
			if err := <-errs; err != nil {
				t.Fatalf("table t%d: %v", tb, err)
			}
		}
	}
	conn, err := pg.Connect(ctx, "race")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for tb := 0; tb < tables; tb++ {
		var n int
		if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM t%d", tb)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != sinks {
			t.Fatalf("t%d has %d rows, want %d", tb, n, sinks)
		}
	}
}

// emitAndFlush returns a function that emits rows into in and then
// flushes sink, as a checkpoint does.
func emitAndFlush(ctx context.Context, t *testing.T, in *Input[windowSum], sink syncSink) func(...windowSum) {
	return func(rows ...windowSum) {
		t.Helper()
		for _, r := range rows {
			if err := in.Emit(0, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := sink.flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// checkUpsertSequence is the upsert sinks' common scenario: the first
// results (a@0 fired twice: the last wins) give table() == first, writing
// them again (a replay after a restore) changes nothing, a delete of b@0
// and a later firing of a@60 give afterUpdate, and a flush with nothing
// buffered succeeds.
func checkUpsertSequence(ctx context.Context, t *testing.T, emit func(...windowSum), sink syncSink, table func() string, first, afterUpdate string) {
	t.Helper()
	results := []windowSum{{"a", 0, 10}, {"b", 0, 7}, {"a", 60_000, 3}, {"a", 0, 12}}
	emit(results...)
	if got := table(); got != first {
		t.Fatalf("after the first flush: %s, want %s", got, first)
	}
	emit(results...)
	if got := table(); got != first {
		t.Fatalf("after the replay: %s, want %s", got, first)
	}
	emit(windowSum{"b", 0, -1}, windowSum{"a", 60_000, 4})
	if got := table(); got != afterUpdate {
		t.Fatalf("after a delete and an update: %s, want %s", got, afterUpdate)
	}
	if err := sink.flush(ctx); err != nil { // nothing buffered: no statement
		t.Fatal(err)
	}
}
