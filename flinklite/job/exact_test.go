package job

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/flinklite"
	"github.com/connectd/connectd/internal/testenv"
	"github.com/connectd/connectd/sinks/jdbc"
	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
)

// orderSchema is the row schema of the test's Debezium events, with the
// field schemas of Debezium 3.6.1's PostgreSQL connector as captured in
// testdata/debezium/pg_types_default.jsonl (topic dbserver1.types.num):
// numeric(10,2) is org.apache.kafka.connect.data.Decimal (bytes, "scale"
// parameter), numeric without scale io.debezium.data.VariableScaleDecimal
// (struct of int32 "scale" and bytes "value"), bigint int64.
const orderSchema = `{"type":"struct","optional":true,"name":"dbserver1.shop.orders.Value","fields":[
 {"type":"int32","optional":false,"field":"id"},
 {"type":"string","optional":false,"field":"customer"},
 {"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"},
 {"type":"int64","optional":true,"field":"qty"},
 {"type":"struct","fields":[{"type":"int32","optional":false,"field":"scale"},{"type":"bytes","optional":false,"field":"value"}],"optional":true,"name":"io.debezium.data.VariableScaleDecimal","version":1,"doc":"Variable scaled decimal","field":"rate"},
 {"type":"int64","optional":false,"field":"at"}]}`

type exactOrder struct {
	id       int
	customer string
	amount   string // unscaled, scale 2
	qty      int64
	rate     [2]int64 // scale, unscaled
	at       int64
}

// base64 of the two's-complement bytes of n, as the JSON converter writes
// a Decimal's unscaled value.
func decimalBytes(n string) string {
	u, _ := new(big.Int).SetString(n, 10)
	return base64.StdEncoding.EncodeToString(connect.Decimal{Unscaled: u}.TwosComplement())
}

func (o exactOrder) image() string {
	return fmt.Sprintf(`{"id":%d,"customer":%q,"amount":%q,"qty":%d,"rate":{"scale":%d,"value":%q},"at":%d}`,
		o.id, o.customer, decimalBytes(o.amount), o.qty, o.rate[0], decimalBytes(fmt.Sprint(o.rate[1])), o.at)
}

// event is the Debezium change event (JSON converter with
// schemas.enable=true: {"schema", "payload"}) of op on o.
func (o exactOrder) event(op string) (key, value []byte) {
	key = fmt.Appendf(nil, `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"dbserver1.shop.orders.Key"},"payload":{"id":%d}}`, o.id)
	value = fmt.Appendf(nil, `{"schema":{"type":"struct","optional":false,"name":"dbserver1.shop.orders.Envelope","fields":[%s,%s,{"type":"string","optional":false,"field":"op"}]},
		"payload":{"before":null,"after":%s,"op":%q}}`,
		strings.Replace(orderSchema, `"optional":true,"name":"dbserver1`, `"field":"before","optional":true,"name":"dbserver1`, 1),
		strings.Replace(orderSchema, `"optional":true,"name":"dbserver1`, `"field":"after","optional":true,"name":"dbserver1`, 1),
		o.image(), op)
	return key, value
}

// 2^53 + 1 = 9007199254740993 is the first integer a float64 cannot hold.
const big53 = 9007199254740993

// Sums, averages, minima and maxima of decimal amounts and big integers
// are exact, through a Debezium source, the window state and both sinks:
// 0.10 + 0.20 is 0.30 (a float64 sum gives 0.30000000000000004) and
// (2^53+1) + (2^53+1) is 18014398509481986 (float64: 18014398509481984),
// written as those digits to the Kafka results (JSON numbers) and to
// numeric columns of the upsert table, in PostgreSQL (numeric) and
// MariaDB (DECIMAL(65, s)); an update retracts the exact value it
// replaces. The expected values are the arithmetic of SQL's exact
// numerics (SUM over numeric(10,2) keeps scale 2; AVG scale is
// max(6, s) as Flink's AVG over DECIMAL).
func TestExactNumbersEndToEnd(t *testing.T) {
	orders := []exactOrder{
		{1, "c1", "10", big53, [2]int64{1, 1}, 1000},              // 0.10, 0.1
		{2, "c1", "20", big53, [2]int64{1, 2}, 2000},              // 0.20, 0.2
		{3, "c2", "1234567891", -5, [2]int64{3, 1005}, 3000},      // 12345678.91, 1.005
		{3, "c2", "1", -5, [2]int64{3, 1005}, 3000},               // update: 0.01
		{99, "flush", "0", 0, [2]int64{0, 0}, 3_600_000 + 60_000}, // moves the watermark past the window
	}
	wantKafka := map[string]string{
		"c1": `{"window_start":0,"window_end":60000,"customer":"c1","total":0.30,"avg_amount":0.150000,"max_amount":0.20,"min_amount":0.10,"qty":18014398509481986,"min_qty":9007199254740993,"rate":0.3,"count":2,"firing":0}`,
		"c2": `{"window_start":0,"window_end":60000,"customer":"c2","total":0.01,"avg_amount":0.010000,"max_amount":0.01,"min_amount":0.01,"qty":-5,"min_qty":-5,"rate":1.005,"count":1,"firing":0}`,
	}
	ctx, brokers := seededCluster(t, 1, "dbserver1.shop.orders", 2*time.Minute)
	in, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("dbserver1.shop.orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	for i, o := range orders {
		op := "c"
		if i == 3 {
			op = "u"
		}
		k, v := o.event(op)
		if err := in.ProduceSync(ctx, &kgo.Record{Key: k, Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	run := func(t *testing.T, id, jdbcURL, user, password string, query func() []string, wantTable []string) {
		spec, err := ParseSpec(fmt.Appendf(nil, `{"id": %q, "source": {"topics": ["dbserver1.shop.orders"]},
			"eventTime": {"field": "at"}, "keyBy": ["customer"], "window": {"type": "tumbling", "size": "1m"},
			"aggregates": [{"function": "sum", "field": "amount", "as": "total"}, {"function": "avg", "field": "amount"},
				{"function": "max", "field": "amount"}, {"function": "min", "field": "amount"},
				{"function": "sum", "field": "qty", "as": "qty"}, {"function": "min", "field": "qty"},
				{"function": "sum", "field": "rate", "as": "rate"}, {"function": "count"}],
			"sinks": {"kafka": {"topic": %q}, "jdbc": {"connection.url": %q, "connection.username": %q, "connection.password": %q, "table": "totals"}},
			"checkpoint": {"interval": "50ms"}}`, id, id+".out", jdbcURL, user, password))
		if err != nil {
			t.Fatal(err)
		}
		env := flinklite.NewEnv()
		if err := Compile(ctx, env, spec, brokers); err != nil {
			t.Fatal(err)
		}
		jctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- env.Run(jctx, flinklite.RunConfig{JobID: id, Brokers: brokers, CheckpointDir: t.TempDir(), CheckpointInterval: 50 * time.Millisecond})
		}()
		defer func() {
			stop()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}()
		out, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(id+".out"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		got := map[string]string{}
		for len(got) < len(wantKafka) && ctx.Err() == nil {
			out.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				var k struct{ Customer string }
				if json.Unmarshal(r.Key, &k) == nil && k.Customer != "flush" {
					got[k.Customer] = string(r.Value)
				}
			})
		}
		if !reflect.DeepEqual(got, wantKafka) {
			t.Fatalf("Kafka results\n got %v\nwant %v", got, wantKafka)
		}
		var have []string
		deadline := time.Now().Add(20 * time.Second)
		for {
			if have = query(); reflect.DeepEqual(have, wantTable) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("table totals\n got %q\nwant %q", have, wantTable)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	t.Run("postgresql", func(t *testing.T) {
		pg := testenv.PostgresT(t)
		if err := pg.CreateDatabase(ctx, "shop"); err != nil {
			t.Fatal(err)
		}
		conn, err := pg.Connect(ctx, "shop")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		query := func() []string {
			rows, err := conn.Query(ctx, `SELECT concat_ws('|', customer, total, avg_amount, max_amount, min_amount, qty, min_qty, rate, count, pg_typeof(total), pg_typeof(qty))
				FROM totals WHERE customer <> 'flush' ORDER BY customer`)
			if err != nil {
				return []string{err.Error()}
			}
			out, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return []string{err.Error()}
			}
			return out
		}
		run(t, "exact-pg", fmt.Sprintf("jdbc:postgresql://%s:%d/shop", pg.Host, pg.Port), pg.User, "", query, []string{
			"c1|0.30|0.150000|0.20|0.10|18014398509481986|9007199254740993|0.3|2|numeric|numeric",
			"c2|0.01|0.010000|0.01|0.01|-5|-5|1.005|1|numeric|numeric",
		})
	})
	t.Run("mariadb", func(t *testing.T) {
		m := testenv.MariaDBT(t)
		if err := m.CreateDatabase(ctx, "shop"); err != nil {
			t.Fatal(err)
		}
		url := fmt.Sprintf("jdbc:mariadb://%s/shop", m.Addr())
		_, dsn, err := jdbc.DriverDSN(url, m.User, m.Password)
		if err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		query := func() []string {
			rows, err := db.QueryContext(ctx, `SELECT concat_ws('|', customer, total, avg_amount, max_amount, min_amount, qty, min_qty, rate, count,
				  (SELECT group_concat(COLUMN_TYPE ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'totals'))
				FROM totals WHERE customer <> 'flush' ORDER BY customer`)
			if err != nil {
				return []string{err.Error()}
			}
			defer rows.Close()
			var out []string
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					return []string{err.Error()}
				}
				out = append(out, s)
			}
			return out
		}
		// One DECIMAL scale per column: the variable-scale rate column
		// takes the largest scale of its first checkpoint (1.005: 3).
		const types = "datetime(3),datetime(3),varchar(255),decimal(65,2),decimal(65,6),decimal(65,2),decimal(65,2),decimal(65,0),decimal(65,0),decimal(65,3),bigint(20),int(11)"
		want := []string{
			"c1|0.30|0.150000|0.20|0.10|18014398509481986|9007199254740993|0.300|2|" + types,
			"c2|0.01|0.010000|0.01|0.01|-5|-5|1.005|1|" + types,
		}
		run(t, "exact-mariadb", url, m.User, m.Password, query, want)
		// Idempotent: a replay of the whole topic (a new job: no
		// checkpoint) upserts the same rows (INSERT … ON DUPLICATE KEY
		// UPDATE), adding none.
		run(t, "exact-mariadb-replay", url, m.User, m.Password, query, want)
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM totals").Scan(&n); err != nil || n != 2 {
			t.Fatalf("rows in totals after the replay: %d %v", n, err)
		}
	})
}

// A row and an accumulator come back from a checkpoint (JSON) with the
// same kinds of numbers: an int64 above 2^53, a Decimal with its scale, a
// float64 that is integral (1.0) stay what they were.
func TestExactNumbersSurviveCheckpoints(t *testing.T) {
	d := func(s string) Decimal { x, _ := parseDecimal(s); return x }
	r := Row{Fields: map[string]any{"i": int64(big53), "d": d("0.10"), "f": 1.0, "s": "x", "n": nil, "b": true, "neg": d("-12.3400")}, Time: 7}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Row
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("row after a round trip %#v, want %#v (%s)", back, r, b)
	}
	f := specAggregate{aggs: []AggregateSpec{{Function: "sum", Field: "v"}, {Function: "max", Field: "v"}, {Function: "distinctCount", Field: "v"}}}
	acc := f.CreateAccumulator()
	for _, v := range []any{d("0.10"), d("0.20"), d("0.2")} {
		acc = f.Add(Row{Fields: map[string]any{"v": v}}, acc)
	}
	ab, _ := json.Marshal(acc)
	var accBack Acc
	if err := json.Unmarshal(ab, &accBack); err != nil {
		t.Fatal(err)
	}
	got := f.GetResult(accBack).Values
	if len(got) != 3 || got[0].(Decimal).String() != "0.50" || got[1].(Decimal).String() != "0.20" || got[2] != int64(2) {
		t.Fatalf("after a round trip: %v (%s)", got, ab)
	}
}

// The number rules: integers overflow into exact decimals, a float64
// meets exact numbers as its shortest decimal (0.1 is 0.1), a JSON record's
// literals are int64, Decimal (plain decimal literal) or float64
// (exponent), averages round half up at scale max(6, s).
func TestNumberArithmetic(t *testing.T) {
	d := func(s string) Decimal { x, _ := parseDecimal(s); return x }
	str := func(v any) string { return fmt.Sprintf("%T %v", v, v) }
	for _, c := range []struct{ got, want any }{
		{addNumbers(int64(9223372036854775807), int64(1)), d("9223372036854775808")},
		{addNumbers(d("0.1"), d("0.20")), d("0.30")},
		{addNumbers(int64(1), d("0.5")), d("1.5")},
		{addNumbers(0.5, int64(1)), 1.5},
		{mulNumbers(d("19.99"), 100), d("1999.00")},
		{mulNumbers(int64(3), 0.1), d("0.3")},
		{mulNumbers(int64(4611686018427387904), 4), d("18446744073709551616")},
		{avgNumbers(d("0.30"), 2), d("0.150000")},
		{avgNumbers(int64(2), 3), d("0.666667")},
		{avgNumbers(int64(-2), 3), d("-0.666667")},
		{avgNumbers(1.0, 4), 0.25},
		{jsonNumber("9007199254740993"), int64(big53)},
		{jsonNumber("99999999999999999999"), d("99999999999999999999")},
		{jsonNumber("0.1"), d("0.1")},
		{jsonNumber("1e3"), 1000.0},
		{literalNumber(100), int64(100)},
		{literalNumber(0.1), d("0.1")},
	} {
		if str(c.got) != str(c.want) {
			t.Errorf("got %s, want %s", str(c.got), str(c.want))
		}
	}
	for _, c := range []struct {
		a, b any
		want int
	}{
		{d("0.1"), 0.1, 0}, {int64(big53), float64(1 << 53), 1}, {d("1.50"), d("1.5"), 0}, {int64(2), d("1.999"), 1},
	} {
		if n, ok := compareNumbers(c.a, c.b); !ok || n != c.want {
			t.Errorf("compare(%v, %v) = %d %v, want %d", c.a, c.b, n, ok, c.want)
		}
	}
}

// Numbers written in a spec are exact too: a filter on 2^53+1 matches
// that value and not 2^53 (as float64 both are 2^53), and "in" [0.1]
// matches the decimal 0.1 (the float64 0.1 is 0.1000000000000000055…).
func TestSpecLiteralsExact(t *testing.T) {
	var eq, in Condition
	if err := json.Unmarshal([]byte(`{"field": "q", "op": "=", "value": 9007199254740993}`), &eq); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"field": "q", "op": "in", "value": [0.1, 7]}`), &in); err != nil {
		t.Fatal(err)
	}
	eq, in = eq.compiled(), in.compiled()
	row := func(v any) Row { return Row{Fields: map[string]any{"q": v}} }
	d, _ := parseDecimal("0.10")
	for _, c := range []struct {
		cond Condition
		v    any
		want bool
	}{
		{eq, int64(big53), true}, {eq, int64(big53 - 1), false}, {in, d, true}, {in, int64(7), true}, {in, 0.1, true}, {in, int64(1), false},
	} {
		if got := c.cond.matches(row(c.v)); got != c.want {
			t.Errorf("%s %s %v on %v: %v, want %v", c.cond.Field, c.cond.Op, c.cond.Value, c.v, got, c.want)
		}
	}
}
