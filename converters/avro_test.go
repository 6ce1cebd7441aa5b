package converters

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/registry"
	"github.com/hamba/avro/v2"
)

// testRegistry serves an in-memory connectd registry and counts requests.
func testRegistry(t testing.TB, opts ...registry.ServerOption) (*httptest.Server, *atomic.Int64) {
	srv := registry.NewServer(registry.NewInMemory(), opts...)
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &n
}

// envelope10 is a Debezium envelope of a 10-column table and one event.
func envelope10() (*connect.Schema, *connect.Struct) {
	vb := connect.StructSchema().Name("bench.public.t.Value").Optional().
		Field("id", connect.Prim(connect.Int32, false)).
		Field("c_smallint", connect.Prim(connect.Int16, true)).
		Field("c_bigint", connect.Prim(connect.Int64, true)).
		Field("c_bool", connect.Prim(connect.Boolean, true)).
		Field("c_double", connect.Prim(connect.Float64, true)).
		Field("c_numeric", connect.DecimalSchema(2, true)).
		Field("c_text", connect.Prim(connect.String, true)).
		Field("c_varchar", connect.Prim(connect.String, true)).
		Field("c_ts", connect.NewSchema(connect.Int64).Name("io.debezium.time.MicroTimestamp").Version(1).Optional().Build()).
		Field("c_bytes", connect.Prim(connect.Bytes, true))
	value := vb.Build()
	source := connect.StructSchema().Name("io.debezium.connector.postgresql.Source").Version(1).
		Field("version", connect.Prim(connect.String, false)).
		Field("connector", connect.Prim(connect.String, false)).
		Field("name", connect.Prim(connect.String, false)).
		Field("ts_ms", connect.Prim(connect.Int64, false)).
		Field("snapshot", connect.NewSchema(connect.String).Name("io.debezium.data.Enum").Version(1).Param("allowed", "true,last,false,incremental").Default("false").Optional().Build()).
		Field("db", connect.Prim(connect.String, false)).
		Field("schema", connect.Prim(connect.String, false)).
		Field("table", connect.Prim(connect.String, false)).
		Field("txId", connect.Prim(connect.Int64, true)).
		Field("lsn", connect.Prim(connect.Int64, true)).
		Build()
	env := connect.StructSchema().Name("bench.public.t.Envelope").Version(2).
		Field("before", value).Field("after", value).Field("source", source).
		Field("op", connect.Prim(connect.String, false)).
		Field("ts_ms", connect.Prim(connect.Int64, true)).
		Build()
	after := connect.NewStruct(value)
	copy(after.Values, []any{int32(42), int16(7), int64(1234567890123), true, 3.25,
		connect.Decimal{Unscaled: bigInt(12345), Scale: 2}, "hello world", "varchar value", int64(1700000000000000), []byte{1, 2, 3, 4}})
	src := connect.NewStruct(source)
	copy(src.Values, []any{"3.6.1.Final", "postgresql", "bench", int64(1700000000000), "false", "bench", "public", "t", int64(777), int64(123456789)})
	ev := connect.NewStruct(env)
	ev.Put("after", after).Put("source", src).Put("op", "c").Put("ts_ms", int64(1700000000001))
	return env, ev
}

func TestAvroConverterWireFormatAndCache(t *testing.T) {
	ts, n := testRegistry(t)
	c := NewAvroConverter()
	if err := c.Configure(map[string]string{"schema.registry.url": ts.URL}, false); err != nil {
		t.Fatal(err)
	}
	env, ev := envelope10()
	var first []byte
	for i := 0; i < 100; i++ {
		b, err := c.FromConnect("bench.public.t", env, ev)
		if err != nil {
			t.Fatal(err)
		}
		first = b
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("%d registry requests for 100 records of one schema, want 1", got)
	}
	if first[0] != 0 || binary.BigEndian.Uint32(first[1:5]) != 1 {
		t.Fatalf("header % x, want magic 0 and id 1", first[:5])
	}
	text, _ := avroSchemaJSON(env, true)
	var back map[string]any
	if err := avro.Unmarshal(avro.MustParse(text), first[5:], &back); err != nil {
		t.Fatal(err)
	}
	after := back["after"].(map[string]any)["bench.public.t.Value"].(map[string]any)
	if !strings.Contains(fmt.Sprint(after["c_text"]), "hello world") || after["id"] != 42 {
		t.Fatalf("decoded %v", after)
	}
	// Tombstones stay tombstones.
	if b, err := c.FromConnect("bench.public.t", nil, nil); b != nil || err != nil {
		t.Fatalf("tombstone: %v %v", b, err)
	}
	// Keys use the -key subject.
	kc := NewAvroConverter()
	kc.Configure(map[string]string{"schema.registry.url": ts.URL}, true)
	if got := kc.Subject("t", env); got != "t-key" {
		t.Fatalf("key subject %s", got)
	}
}

func TestAvroConverterSubjectStrategies(t *testing.T) {
	env, _ := envelope10()
	for strategy, want := range map[string]string{
		"":                        "topic-value",
		TopicNameStrategy:         "topic-value",
		RecordNameStrategy:        "bench.public.t.Envelope",
		TopicRecordNameStrategy:   "topic-bench.public.t.Envelope",
		"TopicRecordNameStrategy": "topic-bench.public.t.Envelope",
	} {
		c := NewAvroConverter()
		if err := c.Configure(map[string]string{"schema.registry.url": "http://127.0.0.1:1", "value.subject.name.strategy": strategy}, false); err != nil {
			t.Fatal(err)
		}
		if got := c.Subject("topic", env); got != want {
			t.Errorf("%s: subject %s, want %s", strategy, got, want)
		}
	}
	if err := NewAvroConverter().Configure(map[string]string{}, false); err == nil || !strings.Contains(err.Error(), "schema.registry.url") {
		t.Fatalf("missing url: %v", err)
	}
}

func TestAvroConverterRegistryRejectsIncompatible(t *testing.T) {
	ts, _ := testRegistry(t)
	c := NewAvroConverter()
	c.Configure(map[string]string{"schema.registry.url": ts.URL}, false)
	v1 := connect.StructSchema().Name("x.V").Field("a", connect.Prim(connect.Int32, false)).Build()
	if _, err := c.FromConnect("x", v1, connect.NewStruct(v1).Put("a", int32(1))); err != nil {
		t.Fatal(err)
	}
	// A required column added without default is not BACKWARD compatible.
	v2 := connect.StructSchema().Name("x.V").Field("a", connect.Prim(connect.Int32, false)).Field("b", connect.Prim(connect.String, false)).Build()
	_, err := c.FromConnect("x", v2, connect.NewStruct(v2).Put("a", int32(1)).Put("b", "x"))
	if err == nil || !strings.Contains(err.Error(), "Schema being registered is incompatible with an earlier schema") {
		t.Fatalf("want the registry's 409 message, got %v", err)
	}
	// An optional column is.
	v3 := connect.StructSchema().Name("x.V").Field("a", connect.Prim(connect.Int32, false)).Field("b", connect.Prim(connect.String, true)).Build()
	b, err := c.FromConnect("x", v3, connect.NewStruct(v3).Put("a", int32(1)))
	if err != nil {
		t.Fatal(err)
	}
	if id := binary.BigEndian.Uint32(b[1:5]); id != 2 {
		t.Fatalf("id %d, want 2", id)
	}
}

func TestAvroConverterBasicAuthAndLookup(t *testing.T) {
	ts, _ := testRegistry(t, registry.WithBasicAuth("fred", "s3cret"))
	env, ev := envelope10()
	bad := NewAvroConverter()
	bad.Configure(map[string]string{"schema.registry.url": ts.URL}, false)
	if _, err := bad.FromConnect("t", env, ev); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("without credentials: %v", err)
	}
	// auto.register.schemas=false looks the schema up: not there yet.
	look := NewAvroConverter()
	look.Configure(map[string]string{"schema.registry.url": ts.URL, "basic.auth.credentials.source": "USER_INFO",
		"basic.auth.user.info": "fred:s3cret", "auto.register.schemas": "false"}, false)
	if _, err := look.FromConnect("t", env, ev); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("lookup before register: %v", err)
	}
	u := strings.Replace(ts.URL, "http://", "http://fred:s3cret@", 1)
	reg := NewAvroConverter()
	reg.Configure(map[string]string{"schema.registry.url": u}, false)
	b1, err := reg.FromConnect("t", env, ev)
	if err != nil {
		t.Fatal(err)
	}
	look2 := NewAvroConverter()
	look2.Configure(map[string]string{"schema.registry.url": u, "auto.register.schemas": "false"}, false)
	b2, err := look2.FromConnect("t", env, ev)
	if err != nil || !bytes.Equal(b1, b2) {
		t.Fatalf("lookup: %v", err)
	}
	latest := NewAvroConverter()
	latest.Configure(map[string]string{"schema.registry.url": u, "auto.register.schemas": "false", "use.latest.version": "true"}, false)
	b3, err := latest.FromConnect("t", env, ev)
	if err != nil || !bytes.Equal(b1, b3) {
		t.Fatalf("use.latest.version: %v", err)
	}
}

// BenchmarkAvroEnvelope10 encodes a Debezium envelope of a 10-column row
// (with its source block) through AvroConverter.FromConnect, schema id
// cached: the per-record cost of the Avro path (target ≥ 1M events/s per
// core).
func BenchmarkAvroEnvelope10(b *testing.B) {
	ts, _ := testRegistry(b)
	c := NewAvroConverter()
	c.Configure(map[string]string{"schema.registry.url": ts.URL}, false)
	env, ev := envelope10()
	if _, err := c.FromConnect("bench.public.t", env, ev); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := c.FromConnect("bench.public.t", env, ev); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

func bigInt(n int64) *big.Int { return big.NewInt(n) }
