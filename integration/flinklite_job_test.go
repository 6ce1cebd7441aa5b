package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
)

// jobInfo is the part of GET /jobs/{id} the test reads.
type jobInfo struct {
	State          string `json:"state"`
	Trace          string `json:"trace"`
	Watermark      int64  `json:"watermark"`
	Lag            int64  `json:"lag"`
	StateEntries   int    `json:"state_entries"`
	LastCheckpoint *struct {
		ID        int64 `json:"id"`
		SizeBytes int64 `json:"size_bytes"`
	} `json:"last_checkpoint"`
}

// The end-to-end proof, through the daemon as a user runs it:
// PostgreSQL inventory.shop_orders → the PostgreSQL connector → the embedded
// broker → a job submitted with POST /jobs (JSON spec, no Go) computing
// per-customer 5-minute tumbling sums and counts of amount, with updates
// (amount, customer, created_at moving an order to another window) and
// deletes in the source → a transactional Kafka topic and a PostgreSQL
// upsert table. The worker is SIGKILLed mid-run and restarted on the same
// data.dir. Expected values come from SQL on the source table (Flink's
// TUMBLE group window over a changelog gives the same rows): the final
// upsert table equals SELECT customer, window, sum(amount), count(*) …
// GROUP BY 1, 2, and a read_committed consumer of the result topic sees
// every (window, customer, firing) once (exactly-once sink).
func TestFlinkliteJobSurvivesSIGKILL(t *testing.T) {
	ctx := context.Background()
	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.shop_orders (id int PRIMARY KEY, customer text NOT NULL, amount bigint NOT NULL, created_at timestamptz NOT NULL)`)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewSource(9))
	var ins []string
	for i := 1; i <= 300; i++ {
		ins = append(ins, fmt.Sprintf("(%d, 'c%d', %d, '%s')", i, rng.Intn(6), 1+rng.Intn(500), base.Add(time.Duration(i)*10*time.Second).Format(time.RFC3339)))
	}
	mustExec(t, pg, "INSERT INTO inventory.shop_orders VALUES "+strings.Join(ins, ","))

	d := newDaemon(t)
	d.start()
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "shop", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.shop_orders"})}); code != 201 {
		t.Fatalf("create connector: %d %s", code, body)
	}

	// An invalid spec is refused with every field and its reason.
	code, body := d.do("POST", "/jobs", map[string]any{"id": "bad", "source": map[string]any{"topics": []string{"x"}},
		"eventTime": map[string]any{"field": "t"}, "keyBy": []string{"k"}, "window": map[string]any{"type": "tumbling", "size": "soon"},
		"aggregates": []any{map[string]any{"function": "median", "field": "a"}}, "sinks": map[string]any{}})
	if code != 400 || !contains(string(body), `"field":"window.size"`, `"field":"aggregates[0].function"`, `"field":"sinks"`) {
		t.Fatalf("invalid spec: %d %s", code, body)
	}

	spec := map[string]any{
		"id":                "customer-totals",
		"source":            map[string]any{"topics": []string{"dbserver1.inventory.shop_orders"}},
		"eventTime":         map[string]any{"field": "created_at"},
		"maxOutOfOrderness": "1s",
		"keyBy":             []string{"customer"},
		"window":            map[string]any{"type": "tumbling", "size": "5m"},
		"allowedLateness":   "24h",
		"aggregates":        []any{map[string]any{"function": "sum", "field": "amount", "as": "total"}, map[string]any{"function": "count"}},
		"sinks": map[string]any{
			"kafka": map[string]any{"topic": "customer_totals"},
			"jdbc": map[string]any{"connection.url": fmt.Sprintf("jdbc:postgresql://%s:%d/inventory", pg.Host, pg.Port),
				"connection.username": pg.User, "table": "inventory.customer_totals"},
		},
		"checkpoint": map[string]any{"interval": "300ms"},
	}
	if code, body := d.do("POST", "/jobs", spec); code != 201 {
		t.Fatalf("create job: %d %s", code, body)
	}
	if code, body := d.do("POST", "/jobs", spec); code != 409 {
		t.Fatalf("create the job twice: %d %s", code, body)
	}
	info := func() jobInfo {
		code, body := d.do("GET", "/jobs/customer-totals", nil)
		var ji jobInfo
		if code != 200 || json.Unmarshal(body, &ji) != nil {
			t.Fatalf("GET /jobs/customer-totals: %d %s", code, body)
		}
		return ji
	}
	waitJob := func(what string, ok func(jobInfo) bool) jobInfo {
		deadline := time.Now().Add(30 * time.Second)
		for {
			ji := info()
			if ok(ji) {
				return ji
			}
			if time.Now().After(deadline) {
				t.Fatalf("job never %s: %+v\n%s", what, ji, d.log.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	orders := openShopOrders(ctx, t, pg, rng)
	exec, change := orders.exec, orders.change

	// The snapshot reaches the job and a checkpoint commits part of it.
	before := waitJob("checkpointed the snapshot", func(ji jobInfo) bool {
		return ji.State == "RUNNING" && ji.LastCheckpoint != nil && ji.Watermark > base.UnixMilli() && ji.StateEntries > 0
	})
	change(100)
	time.Sleep(150 * time.Millisecond) // some of the changes are processed, some not
	d.kill()
	change(100) // while the worker is down
	d.start()
	change(100)
	// An order far in the future moves the watermark past every window.
	exec(`INSERT INTO inventory.shop_orders VALUES (1000, 'flush', 0, $1)`, base.Add(3*time.Hour))

	// Expected: the same aggregate by SQL on the source.
	want := orders.sourceTotals(`customer <> 'flush'`)
	orders.waitUpsertTable(`customer <> 'flush'`, want, 30*time.Second, func() any { return info() })
	// The restarted job restored its checkpoint: its checkpoint ids go on
	// from the committed one instead of starting again at 1.
	after := waitJob("checkpointed after the restart", func(ji jobInfo) bool {
		return ji.State == "RUNNING" && ji.LastCheckpoint != nil && ji.LastCheckpoint.ID > before.LastCheckpoint.ID && ji.LastCheckpoint.SizeBytes > 0
	})

	// read_committed: each (window, customer, firing) once, and the last
	// result of each window equals the table.
	results, updates := checkCommittedWindowResults(ctx, t, d.kafka, want, func(c string) bool { return c == "flush" })
	if updates == 0 {
		t.Fatal("no late update was emitted: the changes did not reach fired windows, so allowedLateness was not exercised")
	}

	// A savepoint, asynchronous as Flink's REST API: 202 with a trigger
	// id, then polled until COMPLETED; its file is where the status says.
	code, body = d.do("POST", "/jobs/customer-totals/savepoints", map[string]any{"cancel-job": false})
	var trig struct {
		ID string `json:"request-id"`
	}
	if code != 202 || json.Unmarshal(body, &trig) != nil || trig.ID == "" {
		t.Fatalf("savepoint: %d %s", code, body)
	}
	var sp struct {
		Status    struct{ ID string } `json:"status"`
		Operation struct {
			Location     string          `json:"location"`
			FailureCause json.RawMessage `json:"failure-cause"`
		} `json:"operation"`
	}
	spDeadline := time.Now().Add(30 * time.Second)
	for sp.Status.ID != "COMPLETED" {
		if time.Now().After(spDeadline) {
			t.Fatalf("savepoint %s never completed: %+v", trig.ID, sp)
		}
		time.Sleep(50 * time.Millisecond)
		code, body = d.do("GET", "/jobs/customer-totals/savepoints/"+trig.ID, nil)
		if code != 200 || json.Unmarshal(body, &sp) != nil {
			t.Fatalf("savepoint status: %d %s", code, body)
		}
	}
	if sp.Operation.Location == "" || sp.Operation.FailureCause != nil {
		t.Fatalf("savepoint failed: %s", body)
	}
	if _, err := os.Stat(sp.Operation.Location); err != nil {
		t.Fatalf("savepoint file: %v", err)
	}
	if code, body := d.do("GET", "/jobs", nil); code != 200 || string(body) != `["customer-totals"]` {
		t.Fatalf("GET /jobs: %d %s", code, body)
	}
	if code, body := d.do("DELETE", "/jobs/customer-totals", nil); code != 204 {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if code, _ := d.do("GET", "/jobs/customer-totals", nil); code != 404 {
		t.Fatalf("GET after DELETE: %d", code)
	}
	aborted := regexp.MustCompile(`crash\.transactions\.aborted=\d+`).FindString(d.log.String())
	t.Logf("%d windows equal SQL after a SIGKILL (restart: %s); %d results read_committed, %d late updates, none duplicated; checkpoint %d before the kill, %d at the end",
		len(want), aborted, results, updates, before.LastCheckpoint.ID, after.LastCheckpoint.ID)
}

// checkCommittedWindowResults reads the customer_totals topic of the
// per-customer window jobs read_committed from the start until it is
// quiet for 2 s, and fails the test if a (window, customer, firing) result
// occurs twice or if the last result of each window (tombstones delete)
// differs from want (sorted "customer@window_start=total/count" lines, the
// SQL GROUP BY on the source). Results of customers skip matches (the
// watermark-flushing rows) are ignored. It returns the number of distinct
// results read and how many of them updated an already fired window
// (firing > 0).
// shopOrders drives inventory.shop_orders for the flinklite job tests:
// random changes, the expected 5-minute totals by SQL on the source, and
// the wait for the job's upsert table (inventory.customer_totals) to hold
// them.
type shopOrders struct {
	ctx  context.Context
	t    *testing.T
	conn *pgx.Conn
	rng  *rand.Rand
}

// openShopOrders connects to pg's inventory database (closed with the test).
func openShopOrders(ctx context.Context, t *testing.T, pg *testenv.Postgres, rng *rand.Rand) *shopOrders {
	t.Helper()
	conn, err := pg.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return &shopOrders{ctx: ctx, t: t, conn: conn, rng: rng}
}

func (o *shopOrders) exec(sql string, args ...any) {
	if _, err := o.conn.Exec(o.ctx, sql, args...); err != nil {
		o.t.Fatal(err)
	}
}

// change makes n random changes to orders 1-300: deletes, a new customer,
// a later created_at (another window), a larger amount.
func (o *shopOrders) change(n int) {
	for i := 0; i < n; i++ {
		id := 1 + o.rng.Intn(300)
		switch o.rng.Intn(5) {
		case 0:
			o.exec(`DELETE FROM inventory.shop_orders WHERE id = $1`, id)
		case 1:
			o.exec(`UPDATE inventory.shop_orders SET customer = $2 WHERE id = $1`, id, fmt.Sprintf("c%d", o.rng.Intn(6)))
		case 2:
			o.exec(`UPDATE inventory.shop_orders SET created_at = created_at + interval '7 minutes' WHERE id = $1`, id)
		default:
			o.exec(`UPDATE inventory.shop_orders SET amount = amount + $2 WHERE id = $1`, id, 1+o.rng.Intn(100))
		}
	}
}

// totals runs sql, which selects (customer, window start, total, count),
// into "customer@start=total/count" lines.
func (o *shopOrders) totals(sql string) []string {
	rows, err := o.conn.Query(o.ctx, sql)
	if err != nil {
		o.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c, start string
		var total, count int64
		if err := rows.Scan(&c, &start, &total, &count); err != nil {
			o.t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s@%s=%d/%d", c, start, total, count))
	}
	if rows.Err() != nil {
		o.t.Fatal(rows.Err())
	}
	return out
}

// sourceTotals is the job's aggregate by SQL on the source: per customer
// (those customerFilter, an SQL condition, keeps) and 5-minute tumbling
// window of created_at, the sum of amount and the count.
func (o *shopOrders) sourceTotals(customerFilter string) []string {
	return o.totals(`SELECT customer, to_char(to_timestamp(floor(extract(epoch FROM created_at) / 300) * 300) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'),
		sum(amount)::bigint, count(*) FROM inventory.shop_orders WHERE ` + customerFilter + ` GROUP BY 1, 2 ORDER BY 1, 2`)
}

// waitUpsertTable waits until the job's upsert table holds want (its rows
// customerFilter keeps), failing the test with job() after timeout.
func (o *shopOrders) waitUpsertTable(customerFilter string, want []string, timeout time.Duration, job func() any) {
	o.t.Helper()
	got := `SELECT customer, to_char(window_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), total::bigint, count
		FROM inventory.customer_totals WHERE ` + customerFilter + ` ORDER BY 1, 2`
	var have []string
	deadline := time.Now().Add(timeout)
	for {
		var exists bool
		if err := o.conn.QueryRow(o.ctx, `SELECT to_regclass('inventory.customer_totals') IS NOT NULL`).Scan(&exists); err != nil {
			o.t.Fatal(err)
		}
		if exists {
			if have = o.totals(got); strings.Join(have, "\n") == strings.Join(want, "\n") {
				return
			}
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("upsert table never matched SQL on the source\nhave %v\nwant %v\njob %+v", have, want, job())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func checkCommittedWindowResults(ctx context.Context, t *testing.T, bootstrap string, want []string, skip func(customer string) bool) (results, updates int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("customer_totals"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[string]int{}
	last := map[string]string{}
	var dups []string
	quiet := time.Now()
	for time.Since(quiet) < 2*time.Second {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
			quiet = time.Now()
			var k struct {
				Start    int64  `json:"window_start"`
				Customer string `json:"customer"`
			}
			if err := json.Unmarshal(r.Key, &k); err != nil {
				t.Fatalf("result key %s: %v", r.Key, err)
			}
			if skip(k.Customer) {
				return
			}
			id := fmt.Sprintf("%s@%s", k.Customer, time.UnixMilli(k.Start).UTC().Format("2006-01-02 15:04"))
			if r.Value == nil {
				delete(last, id) // tombstone: the window's rows were all deleted
				return
			}
			var v struct {
				Total  int64 `json:"total"`
				Count  int64 `json:"count"`
				Firing int   `json:"firing"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("result %s: %v", r.Value, err)
			}
			fk := fmt.Sprintf("%s#%d", id, v.Firing)
			if seen[fk]++; seen[fk] == 2 {
				dups = append(dups, fk)
			}
			last[id] = fmt.Sprintf("%s=%d/%d", id, v.Total, v.Count)
		})
		cancel()
	}
	if len(dups) > 0 {
		t.Fatalf("read_committed consumer saw %d duplicated window results: %v", len(dups), dups)
	}
	var lastVals []string
	for _, v := range last {
		lastVals = append(lastVals, v)
	}
	sort.Strings(lastVals)
	if strings.Join(lastVals, "\n") != strings.Join(want, "\n") {
		t.Fatalf("last committed Kafka results differ from SQL\nhave %v\nwant %v", lastVals, want)
	}
	for fk := range seen {
		if !strings.HasSuffix(fk, "#0") {
			updates++
		}
	}
	return len(seen), updates
}
