package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Flink SQL on connectd's change topics (issue 18): a real Flink job
// (Table API + SQL, flink-connector-kafka, the debezium-json format) in a
// local MiniCluster (scripts/flink.sh: no flink-dist) reads the orders and
// customers topics of a PostgreSQL connector, joins and aggregates them,
// writes the result to an upsert-kafka topic and a copy of customers
// exactly once (Kafka transactions) back to the broker, and prints the
// SELECT's result. Each of the three must equal the same SQL run in
// PostgreSQL. Run with connectd's embedded broker and with a real Kafka
// 4.3 (connectd and Flink both on it).
//
// make test runs Flink 1.20 (flink-connector-kafka 3.4.0-1.20,
// kafka-clients 3.4) on the embedded broker (about 50 s; PostgreSQL is the
// oracle); make flinktest runs Flink 1.20 and 2.2 (flink-connector-kafka
// 5.0.0-2.2, kafka-clients 4.2) each on the embedded broker and on Kafka
// 4.3: CONNECTD_FLINK_VERSIONS="1.20 2.2" CONNECTD_FLINK_BROKERS="embedded kafka".

const flinkJob = "../examples/flink/order_totals.sql"

// flinkTotalsSQL is the job's SELECT in PostgreSQL.
const flinkTotalsSQL = `SELECT c.last_name, count(*), sum(o.quantity) FROM inventory.orders o
	JOIN inventory.customers c ON o.purchaser = c.id GROUP BY c.last_name`

func TestFlinkSQLOnConnectdTopics(t *testing.T) {
	versions := strings.Fields(os.Getenv("CONNECTD_FLINK_VERSIONS"))
	if len(versions) == 0 {
		versions = []string{"1.20"}
	}
	for _, v := range versions {
		// Fetched (once) before the clock of any broker starts.
		if out, err := exec.Command("bash", "../scripts/flink.sh", v).CombinedOutput(); err != nil {
			t.Fatalf("scripts/flink.sh %s (run `make setup`): %v\n%s", v, err, out)
		}
		brokers := strings.Fields(os.Getenv("CONNECTD_FLINK_BROKERS"))
		if len(brokers) == 0 {
			brokers = []string{"embedded"}
		}
		for _, broker := range brokers {
			t.Run(v+"/"+broker, func(t *testing.T) { testFlinkSQL(t, v, broker == "kafka") })
		}
	}
}

func testFlinkSQL(t *testing.T, version string, realKafka bool) {
	pg := startInventory(t)
	mustExec(t, pg, `ALTER TABLE inventory.customers REPLICA IDENTITY FULL; ALTER TABLE inventory.orders REPLICA IDENTITY FULL`)
	d := newDaemon(t)
	broker := d.kafka
	if realKafka {
		broker = startKafka(t)
		d.args = append(d.args, "-o", "bootstrap.servers="+broker)
	}
	d.start()
	cfg := pgConnector(pg, map[string]string{"table.include.list": "inventory.customers,inventory.orders", "slot.name": "flink"})
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": cfg}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitSnapshotDone("inv")
	// Inserts, updates of the aggregated and of the joined columns, a
	// customer's new last name (moving orders between groups), deletes.
	mustExec(t, pg, `
INSERT INTO inventory.customers (first_name, last_name, email) VALUES ('Ada', 'Lovelace', 'ada@example.com'), ('Alan', 'Turing', 'alan@example.com');
INSERT INTO inventory.orders (order_date, purchaser, quantity, product_id) VALUES
  ('2024-01-01', 5, 3, 1), ('2024-01-02', 5, 4, 2), ('2024-01-03', 6, 1, 3), ('2024-01-04', 1, 7, 1), ('2024-01-05', 3, 2, 2);
UPDATE inventory.orders SET quantity = quantity + 10 WHERE id IN (1, 4);
UPDATE inventory.orders SET purchaser = 6 WHERE id = 5;
UPDATE inventory.customers SET last_name = 'Bailey' WHERE id = 3;
DELETE FROM inventory.orders WHERE id IN (2, 7);
UPDATE inventory.customers SET last_name = 'Hopper', first_name = 'Grace' WHERE id = 4;
INSERT INTO inventory.orders (order_date, purchaser, quantity, product_id) VALUES ('2024-01-06', 4, 9, 3);`)
	// 4+3 snapshot records; 2+5 inserts, 3 order updates, 1 customer
	// update, 2 deletes with their tombstones, 1 customer update, 1 insert.
	newConsumer(t, broker, `^dbserver1\.inventory\.(customers|orders)$`).until(7+7+3+1+2*2+1+1, 60*time.Second)

	want := pgRows(t, pg, flinkTotalsSQL)
	if len(want) < 3 {
		t.Fatalf("PostgreSQL: %d result rows, the test needs several: %q", len(want), want)
	}
	printed := runFlinkSQL(t, version, broker, flinkJob)
	if !slices.Equal(printed, want) {
		t.Errorf("Flink %s SELECT on %s:\n%s\nPostgreSQL:\n%s", version, broker, strings.Join(printed, "\n"), strings.Join(want, "\n"))
	}

	// The upsert-kafka sink: the last value per key, a tombstone deletes.
	totals := map[string]string{}
	for _, r := range readFlinkSink(t, broker, "flink.order_totals", false) {
		var k struct {
			LastName string `json:"last_name"`
		}
		if err := json.Unmarshal(r.Key, &k); err != nil {
			t.Fatalf("flink.order_totals key %q: %v", r.Key, err)
		}
		if r.Value == nil {
			delete(totals, k.LastName)
			continue
		}
		var v struct {
			LastName string `json:"last_name"`
			Orders   int64  `json:"orders"`
			Quantity int64  `json:"quantity"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("flink.order_totals value %q: %v", r.Value, err)
		}
		totals[k.LastName] = fmt.Sprintf("| %s | %d | %d |", v.LastName, v.Orders, v.Quantity)
	}
	var upserted []string
	for _, row := range totals {
		upserted = append(upserted, row)
	}
	slices.Sort(upserted)
	if !slices.Equal(upserted, want) {
		t.Errorf("Flink %s upsert-kafka sink on %s:\n%s\nPostgreSQL:\n%s", version, broker, strings.Join(upserted, "\n"), strings.Join(want, "\n"))
	}

	// The exactly-once sink, read committed: its debezium-json changelog
	// applied to a multiset equals the customers table.
	copied := map[string]int{}
	for _, r := range readFlinkSink(t, broker, "flink.customers", true) {
		var v struct {
			Before, After *flinkCustomer
			Op            string
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("flink.customers value %q: %v", r.Value, err)
		}
		row := func(c *flinkCustomer) string {
			return fmt.Sprintf("| %d | %s | %s | %s |", c.ID, c.FirstName, c.LastName, c.Email)
		}
		if v.Before != nil {
			copied[row(v.Before)]--
		}
		if v.After != nil {
			copied[row(v.After)]++
		}
	}
	var rows []string
	for r, n := range copied {
		if n < 0 || n > 1 {
			t.Errorf("flink.customers: row %s counted %d times", r, n)
		}
		if n == 1 {
			rows = append(rows, r)
		}
	}
	slices.Sort(rows)
	if wantCustomers := pgRows(t, pg, `SELECT id, first_name, last_name, email FROM inventory.customers`); !slices.Equal(rows, wantCustomers) {
		t.Errorf("Flink %s exactly-once sink on %s:\n%s\nPostgreSQL:\n%s", version, broker, strings.Join(rows, "\n"), strings.Join(wantCustomers, "\n"))
	}
	if !t.Failed() {
		t.Logf("Flink %s on %s: SELECT, upsert-kafka sink (%d rows) and exactly-once sink (%d customers) equal PostgreSQL", version, broker, len(want), len(rows))
	}
}

type flinkCustomer struct {
	ID        int    `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Email     string `json:"email"`
}

// runFlinkSQL runs a SQL file in Flink version's local MiniCluster with
// BOOTSTRAP=broker and returns the lines it printed.
func runFlinkSQL(t *testing.T, version, broker, file string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../scripts/flink.sh", "sql", version, file)
	cmd.Env = append(os.Environ(), "BOOTSTRAP="+broker)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("Flink %s job %s against %s: %v\nstdout:\n%s\nstderr:\n%s", version, file, broker, err, stdout.String(), stderr.String())
	}
	out := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

// pgRows runs query on the inventory database and returns its rows
// formatted as FlinkSql.java prints them ("| a | b |"), sorted.
func pgRows(t *testing.T, pg *testenv.Postgres, query string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pg.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rs, err := conn.Query(ctx, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rs.Close()
	var rows []string
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString("|")
		for _, v := range vals {
			fmt.Fprintf(&b, " %v |", v)
		}
		rows = append(rows, b.String())
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	slices.Sort(rows)
	return rows
}

// readFlinkSink reads topic from the start to its end offsets (as of now),
// read_committed when committed.
func readFlinkSink(t *testing.T, broker, topic string, committed bool) []*kgo.Record {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	// Read until 2 s pass without a record after the first (the sinks
	// are done writing when the job has ended).
	for {
		pctx, pcancel := ctx, context.CancelFunc(func() {})
		if len(recs) > 0 {
			pctx, pcancel = context.WithTimeout(ctx, 2*time.Second)
		}
		fs := cl.PollFetches(pctx)
		pcancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) { recs = append(recs, r); n++ })
		if n == 0 && (len(recs) > 0 || ctx.Err() != nil) {
			break
		}
	}
	if len(recs) == 0 {
		t.Fatalf("%s on %s: no records", topic, broker)
	}
	return recs
}
