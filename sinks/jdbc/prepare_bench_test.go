package jdbc

import (
	"math/big"
	"strconv"
	"testing"

	"github.com/connectd/connectd/connect"
)

// BenchmarkPreparePostgres measures the task's CPU work for one Put of
// 500 Debezium envelopes (bench/jdbc's rows) up to the prepared
// PostgreSQL statement, without a database: describe, collapse, plan and
// the statement's arguments. Allocations per op do not depend on the load
// of the machine, unlike bench/jdbc's wall-clock rates.
func BenchmarkPreparePostgres(b *testing.B) {
	keyS := connect.StructSchema().Name("b.public.t.Key").Field("id", connect.Prim(connect.Int64, false)).Build()
	priceS := connect.NewSchema(connect.Bytes).Name(connect.DecimalName).Version(1).Param("scale", "2").Param("connect.decimal.precision", "10").Optional().Build()
	tsS := connect.NewSchema(connect.Int64).Name(dbzMicroTimestamp).Version(1).Optional().Build()
	rowS := connect.StructSchema().Name("b.public.t.Value").Optional().
		Field("id", connect.Prim(connect.Int64, false)).Field("name", connect.Prim(connect.String, true)).
		Field("qty", connect.Prim(connect.Int32, true)).Field("price", priceS).Field("ts", tsS).Build()
	envS := connect.StructSchema().Name("b.public.t.Envelope").Version(2).
		Field("before", rowS).Field("after", rowS).Field("op", connect.Prim(connect.String, false)).Build()
	recs := make([]*connect.SinkRecord, 500)
	for i := range recs {
		id := int64(i)
		row := connect.NewStruct(rowS).Put("id", id).Put("name", "name-"+strconv.Itoa(i)).Put("qty", int32(i%1000)).
			Put("price", connect.Decimal{Unscaled: big.NewInt(id), Scale: 2}).Put("ts", int64(1709212455123456)+id)
		recs[i] = &connect.SinkRecord{Topic: "b.public.t", Offset: id, KeySchema: keyS, Key: connect.NewStruct(keyS).Put("id", id),
			ValueSchema: envS, Value: connect.NewStruct(envS).Put("after", row).Put("op", "u")}
	}
	cfg, err := parseConfig(map[string]string{"connection.url": "jdbc:postgresql://h/db", "insert.mode": "upsert", "primary.key.mode": "record_key",
		"collection.name.format": "sink_t"})
	if err != nil {
		b.Fatal(err)
	}
	t := &Task{cfg: cfg, tables: map[string]map[string]string{"sink_t": {"id": "bigint", "name": "text", "qty": "integer", "price": "numeric(10,2)", "ts": "timestamp(6) without time zone"}},
		topicTables: map[string]string{}}
	d := &postgresDialect{cfg: cfg}
	b.ReportAllocs()
	for b.Loop() {
		ops, err := t.ops(b.Context(), recs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.prepare(ops, t.tables); err != nil {
			b.Fatal(err)
		}
	}
}
