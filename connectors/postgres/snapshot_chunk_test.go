package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// TestChunkCount checks chunkCount against Debezium 3.6's
// RelationalSnapshotChangeEventSource.calculateChunkCount:
// min(threads x multiplier, rows / max(1, rows / (threads x multiplier))).
func TestChunkCount(t *testing.T) {
	for _, c := range []struct {
		rows               int64
		threads, mult, out int
	}{
		{0, 4, 1, 1}, {1, 4, 1, 1}, {3, 4, 1, 3}, {4, 4, 1, 4}, {1000, 3, 2, 6}, {7, 2, 4, 7}, {1_000_000, 4, 8, 32},
	} {
		if got := chunkCount(c.rows, c.threads, c.mult); got != c.out {
			t.Errorf("chunkCount(%d, %d, %d) = %d, want %d", c.rows, c.threads, c.mult, got, c.out)
		}
	}
}

// TestChunkedSnapshot reads a table with an int primary key, one with a
// composite (text, int) key and one without a key, with
// snapshot.max.threads=3 and snapshot.max.threads.multiplier=2 (6 chunks
// each for the keyed tables, as Debezium 3.4+), while changes are committed
// after the slot's consistent point: every row is read exactly once with
// its value at the snapshot, the first and last records of each table carry
// the first / last markers in queue order, and the stream carries exactly
// the changes the snapshot did not see (the handoff of invariant 2).
func TestChunkedSnapshot(t *testing.T) {
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), "chunk"); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, "chunk", `CREATE TABLE a (id int PRIMARY KEY, v text);
		CREATE TABLE b (k text, n int, v int, PRIMARY KEY (k, n));
		CREATE TABLE c (v int);
		INSERT INTO a SELECT g, 'a' || g FROM generate_series(1, 1000) g;
		INSERT INTO b SELECT k, g, g FROM unnest(ARRAY['x', 'y', 'z''q']) k, generate_series(1, 100) g;
		INSERT INTO c SELECT g FROM generate_series(1, 50) g;`)
	cfg := baseConfig(pg, "chunk")
	cfg[KeySnapshotMaxThreads] = "3"
	cfg[KeySnapshotMaxThreadsMultiplier] = "2"
	cfg[KeySnapshotFetchSize] = "7"
	task, lb := startTaskLog(t, cfg, &memOffsets{}, func(task *Task) {
		task.beforeSnapshot = func() {
			for _, s := range []string{`INSERT INTO a SELECT g, 'new' FROM generate_series(5001, 5003) g`,
				`UPDATE a SET v = 'upd' WHERE id = 1`, `UPDATE a SET v = 'upd' WHERE id = 1000`, `DELETE FROM a WHERE id = 500`,
				`INSERT INTO b VALUES ('x', 1001, 0)`, `INSERT INTO c VALUES (999)`} {
				if err := pg.Exec(context.Background(), "chunk", s); err != nil {
					t.Error(err)
				}
			}
		}
	})
	const nSnap = 1000 + 300 + 50
	recs := pollN(t, task, nSnap+9)
	snap, stream := recs[:nSnap], recs[nSnap:]
	perTopic := map[string][]*connect.SourceRecord{}
	for i, r := range snap {
		v := r.Value.(*connect.Struct)
		if v.Get("op") != "r" {
			t.Fatalf("record %d op %v inside the snapshot", i, v.Get("op"))
		}
		perTopic[r.Topic] = append(perTopic[r.Topic], r)
		last := i == len(snap)-1
		if o := r.SourceOffset; o["last_snapshot_record"] != last || o["snapshot_completed"] != last {
			t.Errorf("snapshot offset %d = %v", i, o)
		}
	}
	seen := map[string]bool{}
	for topic, rs := range perTopic {
		for i, r := range rs {
			after := r.Value.(*connect.Struct).Get("after").(*connect.Struct)
			id := fmt.Sprint(after.Values...)
			if seen[topic+id] {
				t.Fatalf("%s: row %s read twice", topic, id)
			}
			seen[topic+id] = true
			if topic == "dbserver1.public.a" && after.Get("v") != fmt.Sprintf("a%v", after.Get("id")) {
				t.Fatalf("a: row %v has v=%v, not its value at the snapshot", after.Get("id"), after.Get("v"))
			}
			m, want := sourceOf(r).Get("snapshot"), "true"
			switch {
			case i == 0 && topic == "dbserver1.public.a":
				want = "first"
			case i == 0:
				want = "first_in_data_collection"
			case i == len(rs)-1 && r == snap[len(snap)-1]:
				want = "last"
			case i == len(rs)-1:
				want = "last_in_data_collection"
			}
			if m != want {
				t.Errorf("%s record %d (%s) marker %v, want %s", topic, i, id, m, want)
			}
		}
	}
	for topic, n := range map[string]int{"dbserver1.public.a": 1000, "dbserver1.public.b": 300, "dbserver1.public.c": 50} {
		if len(perTopic[topic]) != n {
			t.Errorf("%s: %d snapshot records, want %d", topic, len(perTopic[topic]), n)
		}
	}
	for i := 1; i <= 1000; i++ {
		if !seen["dbserver1.public.a"+fmt.Sprintf("%da%d", i, i)] {
			t.Fatalf("a: row %d missing", i)
		}
	}
	if got, want := ids(stream), "c:5001 c:5002 c:5003 u:1 u:1000 d:500 tomb c:x c:999"; got != want {
		t.Fatalf("stream = %s, want %s", got, want)
	}
	pollQuiet(t, task, 300*time.Millisecond)
	// 6 chunks for a and b (3 threads x 2), c (no key) whole.
	if log := lb.String(); !strings.Contains(log, "tables=3 chunks=13 ") {
		t.Errorf("log lacks the chunk count (tables=3 chunks=13):\n%s", log)
	}
	if p := task.SnapshotProgress(); !p.Completed || len(p.Tables) != 3 || p.Tables[0].RowsScanned != 1000 || !p.Tables[0].Done {
		t.Errorf("progress = %+v", p)
	}
	// Never analyzed (reltuples -1): a chunked table's estimate is the
	// COUNT(1) its chunks were cut by; the unchunked c has none.
	if p := task.SnapshotProgress(); len(p.Tables) != 3 || p.Tables[0].EstimatedRows != 1000 || p.Tables[1].EstimatedRows != 300 || p.Tables[2].EstimatedRows != -1 {
		t.Errorf("estimates = %+v, want 1000, 300 (counted), -1 (never analyzed)", p.Tables)
	}
}

// TestSnapshotTableOrderByRowCount checks snapshot.tables.order.by.row.count:
// the tables are read by their row estimate (ascending, descending) or by
// name (disabled), and the first marker goes to the first table read.
func TestSnapshotTableOrderByRowCount(t *testing.T) {
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), "ord"); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, "ord", `CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY); CREATE TABLE c (id int PRIMARY KEY);
		INSERT INTO a SELECT g FROM generate_series(1, 20) g;
		INSERT INTO b SELECT g FROM generate_series(1, 5) g;
		INSERT INTO c SELECT g FROM generate_series(1, 40) g;
		ANALYZE a; ANALYZE b; ANALYZE c;`)
	for i, c := range []struct{ order, want string }{
		{"ascending", "b a c"}, {"DESCENDING", "c a b"}, {"disabled", "a b c"},
	} {
		cfg := baseConfig(pg, "ord")
		cfg[KeySnapshotOrderByRowCount] = c.order
		cfg[KeySnapshotMode] = SnapshotInitialOnly
		cfg[KeySlotName] = fmt.Sprintf("ord%d", i)
		task := startTask(t, cfg, &memOffsets{})
		recs := pollN(t, task, 65)
		var order []string
		for _, r := range recs {
			tb := strings.TrimPrefix(r.Topic, "dbserver1.public.")
			if len(order) == 0 || order[len(order)-1] != tb {
				order = append(order, tb)
			}
		}
		if got := strings.Join(order, " "); got != c.want {
			t.Errorf("%s: tables read in order %s, want %s", c.order, got, c.want)
		}
		if m := sourceOf(recs[0]).Get("snapshot"); m != "first" {
			t.Errorf("%s: first record's marker %v", c.order, m)
		}
		task.Stop()
	}
}

// TestGuardrailCollectionsMax checks guardrail.collections.max with both
// limit actions: fail refuses to start, warn logs and runs.
func TestGuardrailCollectionsMax(t *testing.T) {
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), "guard"); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, "guard", `CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY); CREATE TABLE c (id int PRIMARY KEY);
		INSERT INTO a VALUES (1)`)
	cfg := baseConfig(pg, "guard")
	cfg[KeyGuardrailCollectionsMax] = "2"
	cfg[KeyGuardrailLimitAction] = "fail"
	task := NewTask()
	err := task.Start(context.Background(), taskCtx{&memOffsets{}}, cfg)
	task.Stop()
	if err == nil || !strings.Contains(err.Error(), "captures 3 tables, more than guardrail.collections.max=2") {
		t.Fatalf("Start with 3 tables over a limit of 2 (fail): %v", err)
	}
	cfg[KeyTableIncludeList] = `public\.(a|b)`
	startTask(t, cfg, &memOffsets{}).Stop() // within the limit
	delete(cfg, KeyTableIncludeList)
	cfg[KeyGuardrailLimitAction] = "warn"
	task, lb := startTaskLog(t, cfg, &memOffsets{}, nil)
	if got := ids(pollN(t, task, 1)); got != "r:1" {
		t.Fatalf("warn: snapshot %s", got)
	}
	if !strings.Contains(lb.String(), "guardrail: the connector captures 3 tables, more than guardrail.collections.max=2") {
		t.Errorf("warn: no guardrail warning in the log:\n%s", lb.String())
	}
}

// offsetBounds is the boundary formulation chunkBounds replaced, kept here
// as its reference: one "ORDER BY <pk> OFFSET i x rows / n LIMIT 1" query
// per boundary, consecutive equal boundaries merged.
func offsetBounds(t *testing.T, conn *pgx.Conn, name string, pk []string, rows int64, n int) []string {
	t.Helper()
	cols := make([]string, len(pk))
	lits := make([]string, len(pk))
	for i, k := range pk {
		cols[i] = pgx.Identifier{k}.Sanitize()
		lits[i] = "quote_literal(" + cols[i] + "::text) || '::' || pg_typeof(" + cols[i] + ")::text"
	}
	q := "SELECT " + strings.Join(lits, ", ") + " FROM " + name + " ORDER BY " + strings.Join(cols, ", ") + " OFFSET $1 LIMIT 1"
	var bounds []string
	for i := int64(1); i < int64(n); i++ {
		rs, err := conn.Query(context.Background(), q, i*rows/int64(n))
		if err != nil {
			t.Fatal(err)
		}
		vals, err := pgx.CollectExactlyOneRow(rs, func(r pgx.CollectableRow) ([]string, error) {
			out := make([]string, len(pk))
			ptrs := make([]any, len(pk))
			for j := range out {
				ptrs[j] = &out[j]
			}
			return out, r.Scan(ptrs...)
		})
		if err != nil {
			t.Fatalf("offset %d: %v", i*rows/int64(n), err)
		}
		b := "(" + strings.Join(vals, ", ") + ")"
		if len(bounds) == 0 || bounds[len(bounds)-1] != b {
			bounds = append(bounds, b)
		}
	}
	return bounds
}

// TestChunkBounds checks that chunkBounds' single row_number() pass returns
// exactly the boundaries of the per-boundary OFFSET queries it replaced, on
// a composite (text, int) key whose int column is named rn (the name of the
// row number inside the query) and whose text values need quoting, with an
// uneven row count (1003 rows, 8 chunks: positions 125, 250, 376, ...), with
// fewer rows than threads x multiplier (chunkCount caps the chunks at the
// rows: every row but the first is a boundary) and with more chunks than
// rows passed directly (repeated positions, merged), and that each
// boundary literal is a key of the table that ranges built on it split the
// rows as the positions say.
func TestChunkBounds(t *testing.T) {
	pg := testenv.PostgresT(t)
	ctx := context.Background()
	if err := pg.CreateDatabase(ctx, "bounds"); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, "bounds", `CREATE TABLE "T x" (k text, rn int, v int, PRIMARY KEY (k, rn));
		INSERT INTO "T x" SELECT k, g, g FROM unnest(ARRAY['a', 'b''c', 'd e']) k, generate_series(1, 334) g;
		INSERT INTO "T x" VALUES ('z', 1, 0);
		CREATE TABLE small (id bigint PRIMARY KEY);
		INSERT INTO small VALUES (10), (20), (30), (40), (50);`)
	conn, err := pg.Connect(ctx, "bounds")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	big := pgx.Identifier{"public", "T x"}.Sanitize()
	small := pgx.Identifier{"public", "small"}.Sanitize()
	for _, c := range []struct {
		name  string
		pk    []string
		rows  int64
		n     int
		first string // boundary 1, from the rows inserted above
	}{
		// 1003 rows, 8 chunks: position 1003/8 = 125 (0-based) is ('a', 126).
		{big, []string{"k", "rn"}, 1003, chunkCount(1003, 4, 2), "('a'::text, '126'::integer)"},
		{big, []string{"k", "rn"}, 1003, 3, "('b''c'::text, '1'::integer)"}, // position 334
		// 5 rows, 4 threads x 2: chunkCount gives 5 chunks, one row each.
		{small, []string{"id"}, 5, chunkCount(5, 4, 2), "('20'::bigint)"},
		// 5 rows, 8 chunks: positions 0,1,1,2,3,3,4 merge into 5 boundaries.
		{small, []string{"id"}, 5, 8, "('10'::bigint)"},
	} {
		want := offsetBounds(t, conn, c.name, c.pk, c.rows, c.n)
		got, err := chunkBounds(ctx, conn, c.name, c.pk, c.rows, c.n)
		if err != nil {
			t.Fatalf("%s n=%d: %v", c.name, c.n, err)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s n=%d: chunkBounds = %v\nOFFSET queries = %v", c.name, c.n, got, want)
		}
		if len(got) == 0 || got[0] != c.first {
			t.Errorf("%s n=%d: first boundary %v, want %s", c.name, c.n, got, c.first)
		}
		// The chunks' ranges hold the rows between the positions.
		key := "(" + strings.Join(func() []string {
			q := make([]string, len(c.pk))
			for i, k := range c.pk {
				q[i] = pgx.Identifier{k}.Sanitize()
			}
			return q
		}(), ", ") + ")"
		var total int64
		for i := 0; i <= len(got); i++ {
			var cond []string
			if i > 0 {
				cond = append(cond, key+" >= "+got[i-1])
			}
			if i < len(got) {
				cond = append(cond, key+" < "+got[i])
			}
			var cnt int64
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+c.name+" WHERE "+strings.Join(cond, " AND ")).Scan(&cnt); err != nil {
				t.Fatal(err)
			}
			total += cnt
		}
		if total != c.rows {
			t.Errorf("%s n=%d: chunks hold %d rows, want %d", c.name, c.n, total, c.rows)
		}
	}
	if n := chunkCount(1003, 4, 2); n != 8 {
		t.Fatalf("chunkCount(1003, 4, 2) = %d, want 8", n)
	}
	if got, want := len(offsetBounds(t, conn, small, []string{"id"}, 5, 5)), 4; got != want {
		t.Fatalf("5 rows, 5 chunks: %d boundaries, want %d", got, want)
	}
	// A table shrunk since it was counted: positions past its end give no
	// boundary instead of an error.
	got, err := chunkBounds(ctx, conn, small, []string{"id"}, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "('30'::bigint) ('50'::bigint)" {
		t.Errorf("10 rows counted, 5 present: chunkBounds = %v", got)
	}
}
