package sql_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/postgres"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/flinklite/sql"
	"github.com/connectd/connectd/internal/testenv"
	"github.com/connectd/connectd/runtime"
)

// The oracle's queries: each is run as CREATE TABLE qN AS <select> on the
// change topics and as <select> on PostgreSQL. Every result column has a
// lowercase alias (PostgreSQL's row_to_json names).
var oracleQueries = []string{
	// GROUP BY with HAVING, every aggregate, NULLs
	`SELECT status AS status, COUNT(*) AS n, COUNT(amount) AS na, SUM(amount) AS total, MIN(amount) AS lo, MAX(amount) AS hi,
	        ROUND(AVG(amount), 2) AS mean, COUNT(DISTINCT customer_id) AS customers
	 FROM orders WHERE customer_id IS NOT NULL OR amount > 50 GROUP BY status HAVING COUNT(*) > 1`,
	// inner join with expressions
	`SELECT o.id AS oid, c.id AS cid, o.amount * 2 - 1 AS x, c.region AS region,
	        CASE WHEN o.amount > 50 THEN 'big' WHEN o.amount IS NULL THEN 'none' ELSE 'small' END AS size,
	        CAST(o.amount AS DECIMAL(12,1)) AS rounded, NOT (o.status = 'new') AS notnew
	 FROM orders o JOIN customers c ON o.customer_id = c.id
	 WHERE c.score IS NULL OR c.score >= 2`,
	// left join
	`SELECT o.id AS oid, c.region AS region, COALESCE(c.score, -1) AS score, o.amount + c.score AS mixed
	 FROM orders o LEFT JOIN customers c ON o.customer_id = c.id`,
	// a join feeding a GROUP BY (NULL group keys)
	`SELECT c.region AS region, COUNT(*) AS n, SUM(o.amount) AS total, MAX(c.score) AS top, MIN(o.status) AS first_status
	 FROM orders o JOIN customers c ON o.customer_id = c.id
	 GROUP BY c.region HAVING SUM(o.amount) IS NULL OR SUM(o.amount) > 10`,
	// a left join feeding a GROUP BY on two keys
	`SELECT c.region AS region, o.status AS status, COUNT(o.id) AS n, SUM(o.amount) AS total
	 FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.region, o.status`,
	// an aggregate without GROUP BY: always one row
	`SELECT COUNT(*) AS n, SUM(score) AS s, MIN(region) AS r FROM customers WHERE score IS NOT NULL`,
	// three tables, a self-join on a non-unique key (many to many), LEFT after INNER
	`SELECT o.id AS oid, c.region AS r1, c2.id AS c2id, c2.region AS r2
	 FROM orders o JOIN customers c ON o.customer_id = c.id LEFT JOIN customers c2 ON c2.score = c.score`,
	// RIGHT JOIN
	`SELECT c.id AS cid, o.id AS oid, o.amount AS amount FROM orders o RIGHT JOIN customers c ON o.customer_id = c.id`,
	// UNION ALL of a projection and of two aggregates over different tables
	`SELECT o.id AS k, o.amount AS v FROM orders o WHERE o.amount > 50
	 UNION ALL SELECT c.id, c.score FROM customers c
	 UNION ALL SELECT COUNT(*), SUM(amount) FROM orders GROUP BY status`,
	// Top-N: the two largest orders of each status, with their rank
	`SELECT id AS id, status AS status, amount AS amount, rn AS rn FROM (
	   SELECT id, status, amount, ROW_NUMBER() OVER (PARTITION BY status ORDER BY COALESCE(amount, -1) DESC, id) AS rn
	   FROM orders WHERE customer_id IS NOT NULL) AS x WHERE rn <= 2`,
	// deduplication: each customer's order with the highest id, over a
	// join, without the rank in the result
	`SELECT oid AS oid, region AS region FROM (
	   SELECT o.id AS oid, c.region AS region, ROW_NUMBER() OVER (PARTITION BY c.id ORDER BY o.id DESC) AS rn
	   FROM orders o JOIN customers c ON o.customer_id = c.id) AS x WHERE rn = 1`,
}

func seeds(t *testing.T) []int64 {
	if s := os.Getenv("SQLTEST_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return []int64{n}
	}
	n := 1
	if s := os.Getenv("SQLTEST_SEEDS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 1)
	}
	return out
}

// generatedQueries is the number of random queries per seed
// (SQLTEST_QUERIES, default 6).
func generatedQueries(t *testing.T) int { return envInt(t, "SQLTEST_QUERIES", 6) }

// generatedTopN is the number of random Top-N queries per seed
// (SQLTEST_TOPN, default 2).
func generatedTopN(t *testing.T) int { return envInt(t, "SQLTEST_TOPN", 2) }

func envInt(t *testing.T, name string, def int) int {
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return def
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestOracle: real PostgreSQL 15 → connectd's PostgreSQL connector →
// embedded Kafka broker → one SQL job per oracle query → upsert topics.
// A seeded generator makes random inserts, updates and deletes on
// customers and orders (join keys, group keys, primary keys, NULLs); at
// each quiescent point every output topic read compacted equals the same
// SELECT on PostgreSQL, as sorted row sets with numbers compared exactly.
// Every job is killed (Job.Kill: no final checkpoint, its transaction
// left open, as a SIGKILL of the process; the test's in-process worker
// cannot be killed itself) at a random point of each round's changes and
// after the first check, and stopped cleanly after the second; each time
// it is started again from its last committed checkpoint, so results are
// read read_committed. Odd seeds keep the state in Pebble, even ones in
// memory; checkpoints every 200 ms.
// Besides the fixed queries, each seed runs SQLTEST_QUERIES (default 6)
// random ones of the supported grammar (genQuery) and SQLTEST_TOPN
// (default 2) random Top-N ones (genTopN). SQLTEST_SEEDS=N runs
// seeds 1..N, SQLTEST_SEED=S one seed.
func TestOracle(t *testing.T) {
	ss := seeds(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(60+60*len(ss))*time.Second)
	defer cancel()
	pg := testenv.PostgresT(t)
	plugins := connect.NewPlugins()
	plugins.RegisterSource(postgres.ClassName, postgres.New, "PostgresConnector")
	plugins.RegisterPlugin(connect.PluginDesc{Class: converters.JSONConverterClass, Type: connect.PluginConverter}, "JsonConverter")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w, err := runtime.StartWorker(ctx, runtime.WorkerConfig{
		"data.dir": t.TempDir(), "embedded.kafka.listener": freeAddr(t),
		"listeners": "http://" + freeAddr(t), "offset.flush.interval.ms": "100",
	}, plugins, log)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, seed := range ss {
		start := time.Now()
		o := &oracle{t: t, ctx: ctx, pg: pg, w: w, seed: seed, rng: rand.New(rand.NewSource(seed)), db: fmt.Sprintf("sq%d", seed)}
		rows := o.run()
		topN := 0
		for i := len(o.sels) - generatedTopN(t); i < len(o.sels); i++ {
			if o.nonEmpty[i] {
				topN++
			}
		}
		t.Logf("seed %d: %d fixed and %d generated queries, %d changes, %d checks, %d kills, %d result rows compared: equal (%d of them by key, as verify --against JOB); %d of %d generated Top-N had rows (%s)", seed, len(oracleQueries), len(o.sels)-len(oracleQueries), o.changes, o.checks, o.kills, rows, o.keyedN, topN, generatedTopN(t), time.Since(start).Round(time.Millisecond))
	}
}

type oracle struct {
	t       *testing.T
	ctx     context.Context
	pg      *testenv.Postgres
	w       *runtime.Worker
	seed    int64
	rng     *rand.Rand
	db      string
	conn    *pgx.Conn
	log     []string // every statement, for the reproduction
	sels    []string // the queries: oracleQueries, then generated ones
	changes int
	checks  int
	kills   int
	keyedN  int // result rows compared by key (keyed)
	// nonEmpty are the queries whose result had a row at some check
	nonEmpty map[int]bool

	customers map[int]bool
	orders    map[int]bool
}

func (o *oracle) exec(q string) {
	o.t.Helper()
	o.log = append(o.log, q+";")
	if _, err := o.conn.Exec(o.ctx, q); err != nil {
		o.t.Fatalf("seed %d: %s: %v", o.seed, q, err)
	}
}

func (o *oracle) topic(table string) string { return o.db + ".public." + table }

func (o *oracle) run() int {
	t := o.t
	if err := o.pg.CreateDatabase(o.ctx, o.db); err != nil {
		t.Fatal(err)
	}
	conn, err := o.pg.Connect(o.ctx, o.db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(o.ctx)
	o.conn = conn
	o.customers, o.orders = map[int]bool{}, map[int]bool{}
	o.exec(`CREATE TABLE customers (id int PRIMARY KEY, region text, score int)`)
	o.exec(`CREATE TABLE orders (id int PRIMARY KEY, customer_id int, amount numeric(10,2), status text NOT NULL)`)
	o.exec(`CREATE TABLE sentinel (id int PRIMARY KEY, n int NOT NULL)`)
	o.exec(`INSERT INTO sentinel VALUES (1, 0)`)
	for i := 0; i < 30; i++ { // the snapshot's rows
		o.randomChange()
	}
	// The topics exist before the connector runs: one whose table is empty
	// at the snapshot would otherwise appear only with its first change.
	cl0, err := kgo.NewClient(kgo.SeedBrokers(o.w.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range []string{"customers", "orders", "sentinel"} {
		if _, err := kadm.NewClient(cl0).CreateTopic(o.ctx, 1, -1, nil, o.topic(tb)); err != nil {
			t.Fatal(err)
		}
	}
	cl0.Close()
	name := o.db
	if _, err := o.w.Herder.CreateConnector(o.ctx, name, map[string]string{
		"connector.class":   "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname": o.pg.Host, "database.port": fmt.Sprint(o.pg.Port), "database.user": o.pg.User,
		"database.password": "", "database.dbname": o.db, "topic.prefix": o.db, "plugin.name": "pgoutput",
		"table.include.list": "public.customers,public.orders,public.sentinel", "slot.name": "sql_" + o.db,
	}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// free the replication slot (the test server has 20) for the next seeds
		_ = o.w.Herder.DeleteConnector(context.Background(), name)
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if _, err := o.conn.Exec(context.Background(), "SELECT pg_drop_replication_slot('sql_"+o.db+"')"); err == nil {
				return
			}
		}
		t.Logf("seed %d: replication slot sql_%s not dropped", o.seed, o.db)
	}()
	cl, err := kgo.NewClient(kgo.SeedBrokers(o.w.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, tb := range []string{"customers", "orders", "sentinel"} {
		deadline := time.Now().Add(60 * time.Second)
		for {
			td, err := adm.ListTopics(o.ctx, o.topic(tb))
			if err == nil && td.Has(o.topic(tb)) && td[o.topic(tb)].Err == nil {
				break
			}
			if o.ctx.Err() != nil || time.Now().After(deadline) {
				t.Fatalf("seed %d: topic %s never appeared", o.seed, o.topic(tb))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	tables := sql.TableMap(map[string]string{"customers": o.topic("customers"), "orders": o.topic("orders")})
	var jobs []*sql.Job
	var queries []*sql.Query
	o.sels = append([]string(nil), oracleQueries...)
	qr := rand.New(rand.NewSource(o.seed * 7777))
	for i := 0; i < generatedQueries(t); i++ {
		o.sels = append(o.sels, genQuery(qr))
	}
	tr := rand.New(rand.NewSource(o.seed*7777 + 1)) // genQuery's queries stay those of each seed
	for i := 0; i < generatedTopN(t); i++ {
		o.sels = append(o.sels, genTopN(tr))
	}
	// Odd seeds keep the operators' state in Pebble, even ones in memory;
	// both checkpoint every 200 ms.
	backend := "rocksdb"
	if o.seed%2 == 0 {
		backend = "hashmap"
	}
	dir := t.TempDir()
	cfgOf := func(i int) sql.RunConfig {
		return sql.RunConfig{Brokers: o.w.Brokers, JobID: fmt.Sprintf("sql-%s_q%d", o.db, i), Dir: filepath.Join(dir, fmt.Sprint(i)),
			Config: map[string]string{"execution.checkpointing.interval": "200 ms", "state.backend.type": backend}}
	}
	for i, sel := range o.sels {
		q, err := sql.Compile(fmt.Sprintf("CREATE TABLE %s_q%d AS %s", o.db, i, sel), tables)
		if err != nil {
			t.Fatalf("seed %d query %d: %v\n%s", o.seed, i, err, sel)
		}
		j, err := sql.Start(o.ctx, q, cfgOf(i))
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
		queries = append(queries, q)
	}
	defer func() {
		for _, j := range jobs {
			j.Stop()
		}
	}()
	// kill stops every job as a SIGKILL would (no final checkpoint, its
	// open transaction left to be aborted) and starts it again from its
	// last committed checkpoint.
	restart := func(stop func(j *sql.Job) error) {
		errs := make([]error, len(jobs))
		var wg sync.WaitGroup
		for i, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if errs[i] = stop(j); errs[i] == nil {
					jobs[i], errs[i] = sql.Start(o.ctx, queries[i], cfgOf(i))
				}
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("seed %d query %d: restart: %v", o.seed, i, err)
			}
		}
	}
	kill := func() {
		restart(func(j *sql.Job) error { j.Kill(); return nil })
		o.kills++
	}
	compared := 0
	for round := 1; round <= 3; round++ {
		n := 40 + o.rng.Intn(40)
		killAt := o.rng.Intn(n) // a kill in the middle of the changes
		for i := 0; i < n; i++ {
			if i == killAt {
				kill()
			}
			if o.rng.Intn(6) == 0 { // a few changes in one transaction
				o.exec("BEGIN")
				for k := 0; k < 2+o.rng.Intn(4); k++ {
					o.randomChange()
				}
				o.exec("COMMIT")
				continue
			}
			o.randomChange()
		}
		o.exec(fmt.Sprintf("UPDATE sentinel SET n = %d WHERE id = 1", round))
		compared += o.check(round, cl, jobs, queries)
		switch round {
		case 1:
			// A kill at the quiescent point.
			kill()
		case 2:
			// A clean stop (final checkpoint) and a start: the job restores it.
			restart((*sql.Job).Stop)
		}
	}
	return compared
}

// randomChange inserts, updates or deletes a customer or an order.
func (o *oracle) randomChange() {
	r := o.rng
	o.changes++
	region := func() string {
		return []string{"'north'", "'south'", "'east'", "NULL"}[r.Intn(4)]
	}
	score := func() string {
		if r.Intn(5) == 0 {
			return "NULL"
		}
		return strconv.Itoa(r.Intn(6))
	}
	amount := func() string {
		if r.Intn(6) == 0 {
			return "NULL"
		}
		return fmt.Sprintf("%d.%02d", r.Intn(100), r.Intn(100))
	}
	custRef := func() string {
		if r.Intn(8) == 0 {
			return "NULL"
		}
		return strconv.Itoa(1 + r.Intn(14)) // sometimes a customer that does not exist
	}
	status := func() string { return []string{"'new'", "'paid'", "'shipped'"}[r.Intn(3)] }
	pick := func(m map[int]bool) (int, bool) {
		if len(m) == 0 {
			return 0, false
		}
		ids := make([]int, 0, len(m))
		for id := range m {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		return ids[r.Intn(len(ids))], true
	}
	free := func(m map[int]bool, max int) int {
		for {
			if id := 1 + r.Intn(max); !m[id] {
				return id
			}
		}
	}
	if r.Intn(3) == 0 { // customers
		id, ok := pick(o.customers)
		switch k := r.Intn(10); {
		case !ok || k < 3 && len(o.customers) < 12:
			id = free(o.customers, 14)
			o.exec(fmt.Sprintf("INSERT INTO customers VALUES (%d, %s, %s)", id, region(), score()))
			o.customers[id] = true
		case k < 5:
			o.exec(fmt.Sprintf("UPDATE customers SET region = %s WHERE id = %d", region(), id))
		case k < 7:
			o.exec(fmt.Sprintf("UPDATE customers SET score = %s WHERE id = %d", score(), id))
		case k < 8 && len(o.customers) < 14: // a primary key change: the orders' join key
			nid := free(o.customers, 14)
			o.exec(fmt.Sprintf("UPDATE customers SET id = %d WHERE id = %d", nid, id))
			delete(o.customers, id)
			o.customers[nid] = true
		default:
			o.exec(fmt.Sprintf("DELETE FROM customers WHERE id = %d", id))
			delete(o.customers, id)
		}
		return
	}
	id, ok := pick(o.orders)
	switch k := r.Intn(10); {
	case !ok || k < 4 && len(o.orders) < 40:
		id = free(o.orders, 45)
		o.exec(fmt.Sprintf("INSERT INTO orders VALUES (%d, %s, %s, %s)", id, custRef(), amount(), status()))
		o.orders[id] = true
	case k < 6:
		o.exec(fmt.Sprintf("UPDATE orders SET customer_id = %s WHERE id = %d", custRef(), id))
	case k < 7:
		o.exec(fmt.Sprintf("UPDATE orders SET status = %s, amount = %s WHERE id = %d", status(), amount(), id))
	case k < 8:
		o.exec(fmt.Sprintf("UPDATE orders SET amount = %s WHERE id = %d", amount(), id))
	default:
		o.exec(fmt.Sprintf("DELETE FROM orders WHERE id = %d", id))
		delete(o.orders, id)
	}
}

// check waits for the quiescent point (the sentinel's round in its topic,
// every job past the last record of its sources), then compares each
// output topic read compacted with the query on PostgreSQL.
func (o *oracle) check(round int, cl *kgo.Client, jobs []*sql.Job, queries []*sql.Query) int {
	t := o.t
	o.checks++
	last := o.lastOffsets(round)
	for i, j := range jobs {
		deadline := time.Now().Add(60 * time.Second)
		for {
			if err := j.Err(); err != nil {
				t.Fatalf("seed %d query %d: the job failed: %v", o.seed, i, err)
			}
			done := true
			for _, tp := range queries[i].Topics() {
				for p, off := range last[tp] {
					if j.Processed(tp, p) < off+1 {
						done = false
					}
				}
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("seed %d query %d: the job did not reach the source topics' ends %v within 60 s", o.seed, i, last)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	total := 0
	for i, q := range queries {
		got := o.compacted(q.Sink)
		want := o.postgres(o.sels[i])
		total += len(want)
		if len(want) > 0 {
			if o.nonEmpty == nil {
				o.nonEmpty = map[int]bool{}
			}
			o.nonEmpty[i] = true
		}
		if diff := diffRows(got, want); diff != "" {
			path := filepath.Join(os.TempDir(), fmt.Sprintf("sqltest-seed%d.sql", o.seed))
			_ = os.WriteFile(path, []byte(strings.Join(o.log, "\n")+"\n-- then:\n"+o.sels[i]+";\n"), 0o644)
			t.Fatalf("seed %d, check %d, query %d differs from PostgreSQL:\n%s\n\nquery:\n%s\n\nplan:\n%s\nreproduction: the statements in %s (schema, workload, then the query) on PostgreSQL; rerun with SQLTEST_SEED=%d go test ./flinklite/sql -run TestOracle -v",
				o.seed, round, i, diff, o.sels[i], q.Plan(), path, o.seed)
		}
		o.keyed(round, i, q)
	}
	return total
}

// keyed is connectd verify --against JOB's comparison (runtime/verify_job.go)
// of query i: the job's SELECT rewritten for PostgreSQL (Query.SourceQuery)
// and run by the connector's connect.SourceQuerier gives each result row
// with its key, which must be the key the job wrote the same row under.
// UNION ALL and Top-N queries cannot be rewritten (an error naming it).
func (o *oracle) keyed(round, i int, q *sql.Query) {
	t := o.t
	sq, err := q.SourceQuery(func(topic string) (sql.SourceTable, error) {
		name := strings.TrimPrefix(topic, o.db+".public.")
		return sql.SourceTable{Schema: "public", Table: name, Key: []string{"id"}}, nil
	})
	if up := strings.ToUpper(o.sels[i]); strings.Contains(up, "UNION ALL") || strings.Contains(up, "ROW_NUMBER()") {
		// UNION ALL and Top-N (a derived table) are not rewritten yet:
		// verify --against names them instead of comparing.
		if !errors.Is(err, sql.ErrSourceQuery) {
			t.Fatalf("seed %d query %d: a UNION ALL or Top-N rewritten for the source: %v", o.seed, i, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("seed %d query %d: SourceQuery: %v\n%s", o.seed, i, err, o.sels[i])
	}
	ctx, cancel := context.WithTimeout(o.ctx, 60*time.Second)
	defer cancel()
	topic, err := sql.ReadUpsertTopic(ctx, o.w.Brokers, q.Sink)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k, v := range topic {
		got[canonicalAny(t, []byte(k))] = canonical(t, v)
	}
	cfg := map[string]string{"database.hostname": o.pg.Host, "database.port": fmt.Sprint(o.pg.Port), "database.user": o.pg.User,
		"database.password": "", "database.dbname": o.db, "topic.prefix": o.db, "plugin.name": "pgoutput"}
	querier := postgres.New().NewTask().(connect.SourceQuerier)
	want := map[string]string{}
	if _, err := querier.QuerySource(ctx, cfg, sq.Text, func(vals []any) error {
		kb, err := json.Marshal(sq.Key(vals))
		if err != nil {
			return err
		}
		row := map[string]any{}
		for c, name := range sq.Columns {
			row[name] = vals[sq.KeyValues+c]
		}
		vb, err := json.Marshal(row)
		if err != nil {
			return err
		}
		k := canonicalAny(t, kb)
		if _, dup := want[k]; dup {
			return fmt.Errorf("key %s twice", kb)
		}
		want[k] = canonical(t, vb)
		return nil
	}); err != nil {
		t.Fatalf("seed %d check %d query %d: the rewritten query on PostgreSQL: %v\n%s", o.seed, round, i, err, sq.Text)
	}
	o.keyedN += len(want)
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Fatalf("seed %d check %d query %d: key %s: PostgreSQL %s, the topic %s (present %v)\nrewritten: %s", o.seed, round, i, k, w, g, ok, sq.Text)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Fatalf("seed %d check %d query %d: key %s only in the topic (%s)\nrewritten: %s", o.seed, round, i, k, g, sq.Text)
		}
	}
}

// canonicalAny is canonical for any JSON value (a key: an object, or null
// inside one), numbers as exact rationals.
func canonicalAny(t *testing.T, b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("key %s: %v", b, err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case json.Number:
			r, ok := new(big.Rat).SetString(x.String())
			if !ok {
				t.Fatalf("number %s", x)
			}
			return "n:" + r.RatString()
		}
		return v
	}
	out, _ := json.Marshal(walk(v))
	return string(out)
}

// lastOffsets reads the source topics (read_committed) until the sentinel
// has round, and returns the offset of each partition's last record.
func (o *oracle) lastOffsets(round int) map[string]map[int32]int64 {
	t := o.t
	topics := []string{o.topic("customers"), o.topic("orders"), o.topic("sentinel")}
	rd, err := kgo.NewClient(kgo.SeedBrokers(o.w.Brokers...), kgo.ConsumeTopics(topics...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	last := map[string]map[int32]int64{}
	seen := false
	deadline := time.Now().Add(60 * time.Second)
	quiet := 0
	for !seen || quiet < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("seed %d: the sentinel's round %d never reached Kafka", o.seed, round)
		}
		pctx, cancel := context.WithTimeout(o.ctx, 300*time.Millisecond)
		fs := rd.PollFetches(pctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if last[r.Topic] == nil {
				last[r.Topic] = map[int32]int64{}
			}
			last[r.Topic][r.Partition] = r.Offset
			if r.Topic == o.topic("sentinel") && r.Value != nil {
				var ev struct {
					Payload struct {
						After *struct{ N int } `json:"after"`
					} `json:"payload"`
				}
				if json.Unmarshal(r.Value, &ev) == nil && ev.Payload.After != nil && ev.Payload.After.N == round {
					seen = true
				}
			}
		})
		if n == 0 && seen {
			quiet++
		} else {
			quiet = 0
		}
	}
	return last
}

// compacted is topic's committed records read to the last stable offset
// (sql.ReadUpsertTopic: aborted transactions of killed runs do not count),
// the last value of each key, tombstones removed: the rows, canonical.
func (o *oracle) compacted(topic string) []string {
	t := o.t
	ctx, cancel := context.WithTimeout(o.ctx, 60*time.Second)
	defer cancel()
	vals, err := sql.ReadUpsertTopic(ctx, o.w.Brokers, topic)
	if err != nil {
		t.Fatalf("seed %d: reading %s: %v", o.seed, topic, err)
	}
	var rows []string
	for _, v := range vals {
		rows = append(rows, canonical(t, v))
	}
	sort.Strings(rows)
	return rows
}

func (o *oracle) postgres(sel string) []string {
	t := o.t
	rs, err := o.conn.Query(o.ctx, "SELECT row_to_json(q)::text FROM ("+sel+") q")
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	defer rs.Close()
	var rows []string
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, canonical(t, []byte(s)))
	}
	if rs.Err() != nil {
		t.Fatal(rs.Err())
	}
	sort.Strings(rows)
	return rows
}

// canonical is a JSON object row with sorted keys and numbers as exact
// rationals (12.50 and 12.5 are one number).
func canonical(t *testing.T, b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("row %s: %v", b, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "%q:", k)
		switch v := m[k].(type) {
		case json.Number:
			r, ok := new(big.Rat).SetString(v.String())
			if !ok {
				t.Fatalf("number %s", v)
			}
			sb.WriteString(r.RatString())
		default:
			j, _ := json.Marshal(v)
			sb.Write(j)
		}
	}
	sb.WriteByte('}')
	return sb.String()
}

// diffRows lists the rows missing from got and the extra ones (multisets).
func diffRows(got, want []string) string {
	count := map[string]int{}
	for _, w := range want {
		count[w]++
	}
	for _, g := range got {
		count[g]--
	}
	var missing, extra []string
	for r, n := range count {
		for ; n > 0; n-- {
			missing = append(missing, r)
		}
		for ; n < 0; n++ {
			extra = append(extra, r)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return fmt.Sprintf("%d rows from PostgreSQL, %d in the topic\nmissing from the topic:\n  %s\nextra in the topic:\n  %s",
		len(want), len(got), strings.Join(missing, "\n  "), strings.Join(extra, "\n  "))
}
