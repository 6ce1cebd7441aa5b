package flinklite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/postgres"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/flinklite"
	"github.com/connectd/connectd/internal/testenv"
	"github.com/connectd/connectd/runtime"
)

type orderRow struct {
	ID       int32  `json:"id"`
	Customer string `json:"customer"`
	Amount   int64  `json:"amount"`
	Created  int64  `json:"created"` // ms
}

type customerSum struct {
	Customer string `json:"customer"`
	Start    int64  `json:"start"`
	Sum      int64  `json:"sum"`
	Firing   int    `json:"firing"`
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

// End to end with real parts: PostgreSQL 15 → connectd's Debezium-compatible
// PostgreSQL connector → embedded Kafka broker → a flinklite job computing
// per-customer 5-minute tumbling sums of amount (allowedLateness 1 day,
// updates and deletes in the source, some moving an order to another
// customer or window) → a transactional Kafka topic. The last committed
// result of every (customer, window) equals the same aggregate computed by
// SQL on the source table at the end (a window emptied by deletes ends at
// 0, where SQL has no group).
func TestPostgresOrdersToWindowedSums(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := pg.Exec(ctx, "shop", `CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, amount bigint NOT NULL, created_at timestamptz NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	ins := "INSERT INTO orders VALUES "
	for i := 1; i <= 60; i++ {
		if i > 1 {
			ins += ","
		}
		ins += fmt.Sprintf("(%d, 'c%d', %d, '%s')", i, i%3, i*10, base.Add(time.Duration(i)*30*time.Second).Format(time.RFC3339))
	}
	if err := pg.Exec(ctx, "shop", ins); err != nil {
		t.Fatal(err)
	}

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
	if _, err := w.Herder.CreateConnector(ctx, "shop", map[string]string{
		"connector.class":   "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname": pg.Host, "database.port": fmt.Sprint(pg.Port), "database.user": pg.User,
		"database.password": "", "database.dbname": "shop", "topic.prefix": "shop", "plugin.name": "pgoutput",
		"table.include.list": "public.orders", "slot.name": "flinklite_e2e",
	}); err != nil {
		t.Fatal(err)
	}
	const topic = "shop.public.orders"
	adm, err := kgo.NewClient(kgo.SeedBrokers(w.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	for {
		td, err := kadm.NewClient(adm).ListTopics(ctx, topic)
		if err == nil && td.Has(topic) && td[topic].Err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("topic %s never appeared", topic)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The job.
	env := flinklite.NewEnv()
	msgs, err := flinklite.FromKafka(ctx, env, w.Brokers, []string{topic})
	if err != nil {
		t.Fatal(err)
	}
	orders := flinklite.DebeziumChanges(msgs, func(r *connect.Struct, _ flinklite.ChangeMeta) (orderRow, error) {
		o := orderRow{}
		o.ID, _ = r.Get("id").(int32)
		o.Customer, _ = r.Get("customer").(string)
		o.Amount, _ = r.Get("amount").(int64)
		// timestamptz is io.debezium.time.ZonedTimestamp, an ISO-8601 string.
		ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(r.Get("created_at")))
		o.Created = ts.UnixMilli()
		return o, err
	})
	orders = flinklite.AssignTimestampsAndWatermarks(orders, flinklite.WatermarkStrategy[orderRow]{
		Timestamp: func(o orderRow) time.Time { return time.UnixMilli(o.Created) },
	})
	ws := flinklite.Window(flinklite.KeyBy(orders, func(o orderRow) string { return o.Customer }),
		flinklite.TumblingEventTimeWindows(5*time.Minute, 0)).AllowedLateness(24 * time.Hour)
	sums := flinklite.Aggregate(ws, flinklite.Sum(func(o orderRow) int64 { return o.Amount }))
	flinklite.ToKafka(sums, "customer_sums", func(c flinklite.Change[flinklite.WindowResult[string, int64]]) ([]byte, []byte, error) {
		r := customerSum{Customer: c.Value.Key, Start: c.Value.Window.Start, Sum: c.Value.Value, Firing: c.Value.Firing}
		v, err := json.Marshal(r)
		return []byte(fmt.Sprintf("%s@%d", r.Customer, r.Start)), v, err
	})
	jctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- env.Run(jctx, flinklite.RunConfig{JobID: "customer-sums", Brokers: w.Brokers, CheckpointDir: t.TempDir(), CheckpointInterval: 200 * time.Millisecond})
	}()

	// The committed results. The streaming changes below are made once the
	// job has fired windows of the snapshot (its first committed results),
	// so that they are late for those windows: on a busy machine the job
	// could otherwise read the snapshot and the changes in one go and fire
	// each window once, leaving lateness untested.
	rd, err := kgo.NewClient(kgo.SeedBrokers(w.Brokers...), kgo.ConsumeTopics("customer_sums"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	last := map[string]int64{}
	firings := 0
	read := func() {
		pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		rd.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
			var cs customerSum
			if json.Unmarshal(r.Value, &cs) == nil {
				last[string(r.Key)] = cs.Sum
				if cs.Firing > 0 {
					firings++
				}
			}
		})
		pcancel()
	}
	for first := time.Now().Add(40 * time.Second); len(last) == 0; read() {
		if time.Now().After(first) {
			t.Fatalf("the job committed no result of the snapshot within 40 s")
		}
	}

	// Streaming changes: amount updates, a customer change, a move to
	// another window, deletes, then an order far in the future that closes
	// every window.
	for _, sql := range []string{
		`UPDATE orders SET amount = amount + 1000 WHERE id IN (3, 4, 5)`,
		`UPDATE orders SET customer = 'c9' WHERE id = 7`,
		`UPDATE orders SET created_at = created_at + interval '10 minutes' WHERE id = 8`,
		`DELETE FROM orders WHERE id IN (10, 11, 12, 13, 14, 15, 16, 17, 18, 19)`,
		`INSERT INTO orders VALUES (61, 'c1', 5, '` + base.Add(2*time.Minute).Format(time.RFC3339) + `')`,
		`INSERT INTO orders VALUES (1000, 'flush', 0, '` + base.Add(2*time.Hour).Format(time.RFC3339) + `')`,
	} {
		if err := pg.Exec(ctx, "shop", sql); err != nil {
			t.Fatal(err)
		}
	}

	// Expected: the same aggregate by SQL on the source table.
	conn, err := pg.Connect(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT customer, (extract(epoch FROM created_at)::bigint / 300) * 300000, sum(amount)::bigint
		FROM orders WHERE customer <> 'flush' GROUP BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for rows.Next() {
		var c string
		var start, sum int64
		if err := rows.Scan(&c, &start, &sum); err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprintf("%s@%d", c, start)] = sum
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}

	matches := func() bool {
		for k, v := range want {
			if last[k] != v {
				return false
			}
		}
		for k, v := range last {
			if _, ok := want[k]; !ok && v != 0 {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(40 * time.Second)
	for !matches() {
		select {
		case err := <-done:
			t.Fatalf("job ended: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("last committed results %v\nwant (SQL) %v", last, want)
		}
		read()
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("job: %v", err)
	}
	if firings == 0 {
		t.Fatalf("no late update was emitted: the streaming changes did not reach fired windows, so lateness was not exercised")
	}
	t.Logf("%d windows match SQL; %d late updates", len(want), firings)
}
