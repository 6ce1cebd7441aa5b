package sql

import (
	"errors"
	"math/big"
	"sort"
	"strings"
	"testing"

	"github.com/connectd/connectd/flinklite/job"
)

func dec(s string) job.Decimal {
	d, ok := job.ParseDecimal(s)
	if !ok {
		panic(s)
	}
	return d
}

// table is the compacted output of a pipeline.
type table map[string]string

func (t table) apply(outs []Output) {
	for _, o := range outs {
		if o.Value == nil {
			delete(t, string(o.Key))
		} else {
			t[string(o.Key)] = string(o.Value)
		}
	}
}

func (t table) drain(tb *testing.T, p *Pipeline) {
	tb.Helper()
	outs, err := p.Drain()
	if err != nil {
		tb.Fatal(err)
	}
	t.apply(outs)
}

func (t table) String() string {
	var s []string
	for k, v := range t {
		s = append(s, k+" => "+v)
	}
	sort.Strings(s)
	return strings.Join(s, "\n")
}

func mustCompile(t *testing.T, q string) *Query {
	t.Helper()
	c, err := Compile(q, TableMap(map[string]string{"orders": "pg.public.orders", "customers": "pg.public.customers"}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func check(t *testing.T, got table, want string) {
	t.Helper()
	if got.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGroupByRetractions(t *testing.T) {
	q := mustCompile(t, "CREATE TABLE totals AS SELECT status, COUNT(*) AS n, COUNT(amount) AS na, SUM(amount) AS total, MIN(amount) AS lo, MAX(amount) AS hi, AVG(amount) AS mean FROM orders GROUP BY status HAVING COUNT(*) < 3")
	p := q.NewPipeline()
	out := table{}
	push := func(key string, row map[string]any, retract bool) {
		t.Helper()
		if err := p.Push("pg.public.orders", key, row, retract); err != nil {
			t.Fatal(err)
		}
		out.drain(t, p)
	}
	r1 := map[string]any{"id": int64(1), "status": "new", "amount": dec("10.50")}
	r2 := map[string]any{"id": int64(2), "status": "new", "amount": dec("2.25")}
	r3 := map[string]any{"id": int64(3), "status": "new", "amount": nil}
	push(`{"id":1}`, r1, false)
	push(`{"id":2}`, r2, false)
	check(t, out, `{"status":"new"} => {"status":"new","n":2,"na":2,"total":12.75,"lo":2.25,"hi":10.50,"mean":6.375000}`)
	push(`{"id":3}`, r3, false) // HAVING COUNT(*) < 3 fails: deleted
	check(t, out, ``)
	push(`{"id":1}`, r1, true) // retract the max: falls back to 2.25
	check(t, out, `{"status":"new"} => {"status":"new","n":2,"na":1,"total":2.25,"lo":2.25,"hi":2.25,"mean":2.250000}`)
	push(`{"id":2}`, r2, true) // only NULL amounts: SUM, MIN, MAX, AVG are NULL
	check(t, out, `{"status":"new"} => {"status":"new","n":1,"na":0,"total":null,"lo":null,"hi":null,"mean":null}`)
	push(`{"id":3}`, r3, true) // the group loses its last row
	check(t, out, ``)
}

func TestCountDistinct(t *testing.T) {
	q := mustCompile(t, "CREATE TABLE d AS SELECT COUNT(DISTINCT amount) AS n, COUNT(amount) AS c FROM orders")
	p := q.NewPipeline()
	out := table{}
	push := func(key string, amount any, retract bool) {
		t.Helper()
		if err := p.Push("pg.public.orders", key, map[string]any{"amount": amount}, retract); err != nil {
			t.Fatal(err)
		}
		out.drain(t, p)
	}
	push("1", dec("1.50"), false)
	push("2", dec("1.5"), false) // the same value
	push("3", int64(2), false)
	push("4", nil, false)
	check(t, out, `{} => {"n":2,"c":3}`)
	push("1", dec("1.50"), true)
	check(t, out, `{} => {"n":2,"c":2}`)
	push("2", dec("1.5"), true)
	check(t, out, `{} => {"n":1,"c":1}`)
}

func TestUnionAll(t *testing.T) {
	q := mustCompile(t, "CREATE TABLE u AS SELECT status AS s, COUNT(*) AS n FROM orders GROUP BY status UNION ALL SELECT region, COUNT(*) FROM customers GROUP BY region")
	if len(q.Topics()) != 2 || strings.Join(q.Columns, ",") != "s,n" {
		t.Fatalf("topics %v columns %v", q.Topics(), q.Columns)
	}
	p := q.NewPipeline()
	out := table{}
	for _, c := range []struct {
		topic, key string
		row        map[string]any
		retract    bool
	}{
		{"pg.public.orders", "1", map[string]any{"status": "new"}, false},
		{"pg.public.customers", "1", map[string]any{"region": "new"}, false},
		{"pg.public.customers", "2", map[string]any{"region": "new"}, false},
		{"pg.public.orders", "1", map[string]any{"status": "new"}, true},
	} {
		if err := p.Push(c.topic, c.key, c.row, c.retract); err != nil {
			t.Fatal(err)
		}
	}
	out.drain(t, p)
	check(t, out, `{"union":1,"key":{"region":"new"}} => {"s":"new","n":2}`)
	if !strings.Contains(q.Plan(), "UnionAll") {
		t.Fatal(q.Plan())
	}
}

func TestGlobalAggregateHasOneRow(t *testing.T) {
	q := mustCompile(t, "INSERT INTO c SELECT COUNT(*) AS n, SUM(amount) AS s FROM orders")
	p := q.NewPipeline()
	out := table{}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	out.drain(t, p)
	check(t, out, `{} => {"n":0,"s":null}`)
	r := map[string]any{"amount": int64(9223372036854775807)}
	for i := 0; i < 2; i++ {
		if err := p.Push("pg.public.orders", `{"id":1}`, r, false); err != nil {
			t.Fatal(err)
		}
	}
	out.drain(t, p)
	check(t, out, `{} => {"n":2,"s":18446744073709551614}`) // int64 overflow: exact
}

func TestLeftJoinRetractions(t *testing.T) {
	q := mustCompile(t, "CREATE TABLE j AS SELECT o.id AS oid, c.region AS region, o.amount * 2 + c.score AS x FROM orders o LEFT JOIN customers c ON o.customer_id = c.id")
	p := q.NewPipeline()
	out := table{}
	push := func(topic, key string, row map[string]any, retract bool) {
		t.Helper()
		if err := p.Push(topic, key, row, retract); err != nil {
			t.Fatal(err)
		}
		out.drain(t, p)
	}
	o1 := map[string]any{"id": int64(1), "customer_id": int64(7), "amount": dec("1.5")}
	c7 := map[string]any{"id": int64(7), "region": "north", "score": int64(3)}
	push("pg.public.orders", `{"id":1}`, o1, false)
	check(t, out, `{"o":{"id":1},"c":null} => {"oid":1,"region":null,"x":null}`)
	push("pg.public.customers", `{"id":7}`, c7, false)
	check(t, out, `{"o":{"id":1},"c":{"id":7}} => {"oid":1,"region":"north","x":6.0}`)
	push("pg.public.customers", `{"id":7}`, c7, true)
	check(t, out, `{"o":{"id":1},"c":null} => {"oid":1,"region":null,"x":null}`)
	o1b := map[string]any{"id": int64(1), "customer_id": nil, "amount": dec("1.5")}
	push("pg.public.orders", `{"id":1}`, o1, true)
	push("pg.public.orders", `{"id":1}`, o1b, false)
	push("pg.public.customers", `{"id":7}`, c7, false)
	check(t, out, `{"o":{"id":1},"c":null} => {"oid":1,"region":null,"x":null}`)
}

func TestExpressions(t *testing.T) {
	q := mustCompile(t, "CREATE TABLE e AS SELECT CASE WHEN amount > 10 THEN 'big' WHEN amount IS NULL THEN 'none' ELSE 'small' END AS size, "+
		"COALESCE(amount, 0) AS a, CAST(amount AS DECIMAL(10,1)) AS r, NOT (status = 'x') AS nx, status IN ('a', 'b') AS ab, "+
		"amount BETWEEN 1 AND 5 AS btw, 7 / 2 AS q, -amount AS neg, ROUND(amount, 1) AS rd, CASE status WHEN 'a' THEN 1 END AS s1, amount IS NOT NULL AND status = 'a' AS bo FROM orders WHERE status <> 'skip' OR status IS NULL")
	p := q.NewPipeline()
	out := table{}
	for i, r := range []map[string]any{
		{"amount": dec("2.25"), "status": "a"},
		{"amount": nil, "status": nil},
		{"amount": dec("12.35"), "status": "skip"},
		{"amount": dec("-12.35"), "status": "b"},
	} {
		if err := p.Push("pg.public.orders", string(rune('0'+i)), r, false); err != nil {
			t.Fatal(err)
		}
	}
	out.drain(t, p)
	check(t, out, strings.Join([]string{
		`0 => {"size":"small","a":2.25,"r":2.3,"nx":true,"ab":true,"btw":true,"q":3,"neg":-2.25,"rd":2.3,"s1":1,"bo":true}`,
		`1 => {"size":"none","a":0,"r":null,"nx":null,"ab":null,"btw":null,"q":3,"neg":null,"rd":null,"s1":null,"bo":false}`,
		`3 => {"size":"small","a":-12.35,"r":-12.4,"nx":true,"ab":true,"btw":false,"q":3,"neg":12.35,"rd":-12.4,"s1":null,"bo":false}`,
	}, "\n"))
}

func TestMissingColumnFailsTheJob(t *testing.T) {
	q := mustCompile(t, "CREATE TABLE e AS SELECT amont FROM orders")
	p := q.NewPipeline()
	err := p.Push("pg.public.orders", "1", map[string]any{"amount": int64(1)}, false)
	if err == nil || !strings.Contains(err.Error(), "has no column amont") {
		t.Fatalf("got %v", err)
	}
}

func TestUnsupportedHasLineAndColumn(t *testing.T) {
	for _, c := range []struct {
		sql        string
		line, col  int
		msgContain string
	}{
		{"SELECT a FROM orders\nORDER BY a", 2, 10, "ORDER BY"},
		{"SELECT a FROM orders o\n  FULL JOIN customers c ON o.x = c.y", 2, 3, `syntax error near "FULL JOIN`},
		{"SELECT a FROM orders FULL JOIN customers c ON orders.x = c.y", 1, 1, "FULL JOIN"},
		{"SELECT SUM(DISTINCT a) FROM orders", 1, 8, "DISTINCT"},
		{"SELECT a FROM orders o JOIN customers c ON o.x < c.y", 1, 44, "join condition"},
		{"SELECT a FROM orders o JOIN customers c ON o.x = c.y", 1, 8, "must be qualified"},
		{"SELECT o.a, COUNT(*) FROM orders o GROUP BY o.b", 1, 8, "GROUP BY"},
		{"SELECT a FROM orders UNION SELECT a FROM customers", 1, 35, "only UNION ALL"},
		{"SELECT a FROM orders UNION ALL SELECT a, b FROM customers", 1, 39, "2 columns"},
		{"SELECT ROW_NUMBER() OVER (ORDER BY a) FROM orders", 1, 8, "window function"},
		{"SELECT a FROM orders WHERE a LIKE 'x%'", 1, 28, "LIKE"},
		{"SELECT a FROM (SELECT a FROM orders) t", 1, 23, "subquery"},
		{"SELECT a FROM orders WHERE SUM(a) > 1", 1, 28, "not allowed"},
		{"SELECT a FROM\n orders WHERE", 2, 14, "syntax error at the end"},
		{"SELECT FROM t", 1, 8, `syntax error near "FROM t"`},
		{"SELECT * FROM orders", 1, 1, "*"},
		{"SELECT CONCAT(a, b) FROM orders", 1, 8, "CONCAT"},
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

func TestExplain(t *testing.T) {
	q := mustCompile(t, "EXPLAIN INSERT INTO totals SELECT c.region, COUNT(*) AS n FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.amount > 0 GROUP BY c.region HAVING COUNT(*) > 1")
	if !q.Explain {
		t.Fatal("not an EXPLAIN")
	}
	want := "UpsertKafkaSink(topic=totals, key=[region], columns=[region, n])\n" +
		"  GroupAggregate(groupBy=[`c`.`region`], aggs=[COUNT(1)], having=[COUNT(1)>1], select=[`c`.`region`, COUNT(1)])\n" +
		"    Filter(condition=[`o`.`amount`>0])\n" +
		"      InnerJoin(on=[`o`.`customer_id` = `c`.`id`], state=rows of each side by join key)\n" +
		"        ChangelogScan(table=orders, alias=o, topic=pg.public.orders, format=debezium-json)\n" +
		"        ChangelogScan(table=customers, alias=c, topic=pg.public.customers, format=debezium-json)\n"
	if got := q.Plan(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestBigDecimalKeyIdentity(t *testing.T) {
	a := appendKey(nil, int64(5))
	b := appendKey(nil, job.Decimal{Unscaled: big.NewInt(500), Scale: 2})
	if string(a) != string(b) {
		t.Fatalf("5 and 5.00 have keys %q and %q", a, b)
	}
}

func TestSplit(t *testing.T) {
	ss, err := Split("-- a comment; still\nCREATE TABLE a AS SELECT x FROM t WHERE s = 'a;b';\n\n  EXPLAIN SELECT y FROM u;")
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[0].Text != "-- a comment; still\nCREATE TABLE a AS SELECT x FROM t WHERE s = 'a;b'" || ss[0].Line != 1 || ss[0].Column != 1 ||
		ss[1].Text != "EXPLAIN SELECT y FROM u" || ss[1].Line != 4 || ss[1].Column != 3 {
		t.Fatalf("%+v", ss)
	}
	if _, err := Split("SELECT 1;\nSELECT FROM"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("got %v", err)
	}
}
