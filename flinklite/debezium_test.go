package flinklite

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

type order struct {
	ID        int32
	Date      int32 // io.debezium.time.Date: days since the epoch
	Purchaser int32
	Quantity  int32
}

type product struct {
	ID     int32
	Weight float64
	At     int64 // source.ts_ms
}

// captured reads a Debezium capture (testdata/debezium, real Debezium 3.6.1
// output: {"topic","key","value"} per line, key and value as the JSON
// converter wrote them) into Kafka messages.
func captured(t *testing.T, path string) []Message {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Message
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l struct {
			Topic string          `json:"topic"`
			Key   json.RawMessage `json:"key"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		m := Message{Topic: l.Topic, Key: l.Key, Offset: int64(len(out))}
		if string(l.Value) != "null" {
			m.Value = l.Value
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func decodeOrder(r *connect.Struct, _ ChangeMeta) (order, error) {
	o := order{}
	o.ID, _ = r.Get("id").(int32)
	o.Date, _ = r.Get("order_date").(int32)
	o.Purchaser, _ = r.Get("purchaser").(int32)
	o.Quantity, _ = r.Get("quantity").(int32)
	return o, nil
}

func decodeProduct(r *connect.Struct, m ChangeMeta) (product, error) {
	p := product{At: m.SourceTs.UnixMilli()}
	p.ID, _ = r.Get("id").(int32)
	p.Weight, _ = r.Get("weight").(float64)
	return p, nil
}

// Aggregates over the captured inventory tables stay equal to the tables'
// final content although the capture has updates without a before image
// and a delete whose before image holds only the key (PostgreSQL REPLICA
// IDENTITY DEFAULT, testdata/debezium/pg_inventory_snapshot_stream.jsonl).
//
// Expected values are the final rows of the capture's after images:
// orders: id 1 (2016-01-16 = day 16816, quantity 1) remains, id 2 (day
// 16817, quantity 2) was deleted; products: weights 5.25 (id 1 after its
// update), 8.1, null (id 3), 1.75, 0.5 → 5 rows, sum 15.6.
func TestDebeziumChangesRetractUpdatesAndDeletes(t *testing.T) {
	msgs := captured(t, "../testdata/debezium/pg_inventory_snapshot_stream.jsonl")
	env := NewEnv(WithClock(NewManualClock(t0)))
	in := NewInput[Message](env, 1)

	isTopic := func(name string) func(Message) bool { return func(m Message) bool { return m.Topic == name } }
	orders := DebeziumChanges(Filter(in.Stream(), isTopic("dbserver1.inventory.orders")), decodeOrder)
	orders = AssignTimestampsAndWatermarks(orders, WatermarkStrategy[order]{
		Timestamp: func(o order) time.Time { return time.Unix(int64(o.Date)*86400, 0) },
	})
	type daily struct {
		Count int64
		Qty   int64
	}
	ow := Window(KeyBy(orders, func(order) string { return "all" }), TumblingEventTimeWindows(24*time.Hour, 0))
	oc := map[TimeWindow]int64{}
	Sink(Aggregate(ow, Count[order]()), func(c Change[WindowResult[string, int64]]) { oc[c.Value.Window] = c.Value.Value })
	oq := map[TimeWindow]int32{}
	Sink(Aggregate(ow, Sum(func(o order) int32 { return o.Quantity })), func(c Change[WindowResult[string, int32]]) { oq[c.Value.Window] = c.Value.Value })

	products := DebeziumChanges(Filter(in.Stream(), isTopic("dbserver1.inventory.products")), decodeProduct)
	products = AssignTimestampsAndWatermarks(products, WatermarkStrategy[product]{
		Timestamp: func(p product) time.Time { return time.UnixMilli(p.At) },
	})
	pw := Window(KeyBy(products, func(product) string { return "all" }), TumblingEventTimeWindows(24*time.Hour, 0))
	var pCount []int64
	var pSum, pAvg []float64
	Sink(Aggregate(pw, Count[product]()), func(c Change[WindowResult[string, int64]]) { pCount = append(pCount, c.Value.Value) })
	Sink(Aggregate(pw, Sum(func(p product) float64 { return p.Weight })), func(c Change[WindowResult[string, float64]]) { pSum = append(pSum, c.Value.Value) })
	Sink(Aggregate(pw, Avg(func(p product) float64 { return p.Weight })), func(c Change[WindowResult[string, float64]]) { pAvg = append(pAvg, c.Value.Value) })

	for _, m := range msgs {
		if err := in.Emit(0, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Finish(); err != nil {
		t.Fatal(err)
	}
	day := func(d int64) TimeWindow { return TimeWindow{d * 86400000, (d + 1) * 86400000} }
	if want := map[TimeWindow]int64{day(16816): 1, day(16817): 0}; !reflect.DeepEqual(oc, want) {
		t.Fatalf("order counts per day %v, want %v", oc, want)
	}
	if want := map[TimeWindow]int32{day(16816): 1, day(16817): 0}; !reflect.DeepEqual(oq, want) {
		t.Fatalf("order quantity per day %v, want %v", oq, want)
	}
	if len(pCount) != 1 || pCount[0] != 5 {
		t.Fatalf("product count %v, want [5]", pCount)
	}
	if len(pSum) != 1 || math.Abs(pSum[0]-15.6) > 1e-9 {
		t.Fatalf("product weight sum %v, want 15.6 (a changelog without retractions gives 18.74)", pSum)
	}
	if len(pAvg) != 1 || math.Abs(pAvg[0]-15.6/5) > 1e-9 {
		t.Fatalf("product weight avg %v, want %v", pAvg, 15.6/5)
	}
	if m := env.Metrics(); m.NumUnmatchedRetractions != 0 {
		t.Fatalf("unmatched retractions %d", m.NumUnmatchedRetractions)
	}
}

// A delete of a row the job never saw (it started after the insert) falls
// back to the event's before image; without one it is counted, not
// silently ignored.
func TestDebeziumUnmatchedRetraction(t *testing.T) {
	msgs := captured(t, "../testdata/debezium/pg_inventory_snapshot_stream.jsonl")
	env := NewEnv(WithClock(NewManualClock(t0)))
	in := NewInput[Message](env, 1)
	var got []Change[product]
	Sink(DebeziumChanges(Filter(in.Stream(), func(m Message) bool { return m.Topic == "dbserver1.inventory.products" }), decodeProduct),
		func(c Change[product]) { got = append(got, c) })
	for _, m := range msgs {
		if m.Topic != "dbserver1.inventory.products" {
			continue
		}
		var op struct {
			Payload struct{ Op string } `json:"payload"`
		}
		_ = json.Unmarshal(m.Value, &op)
		if op.Payload.Op == "r" {
			continue // the job starts after the snapshot
		}
		if err := in.Emit(0, m); err != nil {
			t.Fatal(err)
		}
	}
	// u(1), c(4), c(5), u(3): the two updates have no before image.
	if n := env.Metrics().NumUnmatchedRetractions; n != 2 {
		t.Fatalf("unmatched retractions %d, want 2", n)
	}
	retracts := 0
	for _, c := range got {
		if c.Retract {
			retracts++
		}
	}
	if len(got) != 4 || retracts != 0 {
		t.Fatalf("changes %+v", got)
	}
}
