package converters

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// Expected strings are what Java 17's Double.toString / Float.toString print
// (java.lang.Double#toString(double) javadoc rules: plain for 1e-3 <= |d| < 1e7,
// computerized scientific notation otherwise).
func TestJavaFloat(t *testing.T) {
	cases := []struct {
		f    float64
		bits int
		want string
	}{
		{100, 64, "100.0"},
		{1e7, 64, "1.0E7"},
		{9999999.5, 64, "9999999.5"},
		{0.001, 64, "0.001"},
		{0.0001, 64, "1.0E-4"},
		{12345.678, 64, "12345.678"},
		{-2.5e-10, 64, "-2.5E-10"},
		{1.23456789e20, 64, "1.23456789E20"},
		{0, 64, "0.0"},
		{math.Copysign(0, -1), 64, "-0.0"},
		{float64(float32(1.1)), 32, "1.1"},
		{float64(float32(3.4028235e38)), 32, "3.4028235E38"},
		{math.Inf(1), 64, "Infinity"},
		{math.NaN(), 64, "NaN"},
	}
	for _, c := range cases {
		if got := JavaFloat(c.f, c.bits); got != c.want {
			t.Errorf("JavaFloat(%v,%d) = %q, want %q", c.f, c.bits, got, c.want)
		}
		// appendJavaFloat (the converter's path, which formats plain
		// notation in place) writes the same text, quoted for NaN/±Inf.
		b := appendJavaFloat([]byte("x"), c.f, c.bits) // something before it, as in a record
		want := "x" + c.want
		if math.IsNaN(c.f) || math.IsInf(c.f, 0) {
			want = "x\"" + c.want + "\""
		}
		if string(b) != want {
			t.Errorf("appendJavaFloat(%v,%d) = %q, want %q", c.f, c.bits, b, want)
		}
	}
}

// The expected JSON follows org.apache.kafka.connect.json.JsonConverter:
// schema field order type/fields/optional/name/version/parameters/default/field
// (JsonConverter#asJsonSchema), Decimal as base64 of BigInteger#toByteArray,
// Jackson string escaping (no HTML escaping, control chars as \u00XX).
func TestJSONConverterEnvelope(t *testing.T) {
	src := connect.StructSchema().Name("x.Source").
		Field("snapshot", connect.NewSchema(connect.String).Optional().Name("io.debezium.data.Enum").Version(1).Param("allowed", "true,last,false").Default("false").Build()).
		Build()
	val := connect.StructSchema().Name("t.Value").Optional().
		Field("id", connect.Prim(connect.Int32, false)).
		Field("price", connect.DecimalSchema(2, true)).
		Field("note", connect.Prim(connect.String, true)).
		Field("raw", connect.Prim(connect.Bytes, true)).
		Field("w", connect.Prim(connect.Float64, true)).
		Build()
	env := connect.StructSchema().Name("t.Envelope").Version(2).
		Field("after", val).Field("source", src).Build()
	after := connect.NewStruct(val).Put("id", int32(1)).
		Put("price", connect.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}).
		Put("note", "a<b>&\"c\"\n\x01é😀").Put("raw", []byte{0, 0xff}).Put("w", 2.0)
	v := connect.NewStruct(env).Put("after", after).Put("source", connect.NewStruct(src))
	got, err := NewJSONConverter().FromConnect("t", env, v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"price"},{"type":"string","optional":true,"field":"note"},{"type":"bytes","optional":true,"field":"raw"},{"type":"double","optional":true,"field":"w"}],"optional":true,"name":"t.Value","field":"after"},{"type":"struct","fields":[{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,last,false"},"default":"false","field":"snapshot"}],"optional":false,"name":"x.Source","field":"source"}],"optional":false,"name":"t.Envelope","version":2},"payload":{"after":{"id":1,"price":"z8c=","note":"a<b>&\"c\"\n\u0001é\uD83D\uDE00","raw":"AP8=","w":2.0},"source":{"snapshot":"false"}}}`
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestJSONConverterTombstoneAndSchemaless(t *testing.T) {
	c := NewJSONConverter()
	b, err := c.FromConnect("t", nil, nil)
	if err != nil || b != nil {
		t.Fatalf("tombstone: %q %v", b, err)
	}
	if err := c.Configure(map[string]string{"schemas.enable": "false"}, false); err != nil {
		t.Fatal(err)
	}
	b, _ = c.FromConnect("t", nil, map[string]any{"b": int64(2), "a": "x"})
	if string(b) != `{"a":"x","b":2}` {
		t.Fatalf("schemaless: %s", b)
	}
	if err := c.Configure(map[string]string{"schemas.enable": "maybe"}, false); err == nil {
		t.Fatal("want error for schemas.enable=maybe")
	}
}

// BigInteger#toByteArray vectors.
func TestTwosComplement(t *testing.T) {
	cases := map[int64][]byte{0: {0}, 127: {0x7f}, 128: {0, 0x80}, -1: {0xff}, -128: {0x80}, -129: {0xff, 0x7f}, 255: {0, 0xff}, -256: {0xff, 0},
		32767: {0x7f, 0xff}, 32768: {0, 0x80, 0}, -32768: {0x80, 0}, -32769: {0xff, 0x7f, 0xff},
		math.MaxInt64: {0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, math.MinInt64: {0x80, 0, 0, 0, 0, 0, 0, 0}}
	for n, want := range cases {
		got := connect.Decimal{Unscaled: big.NewInt(n)}.TwosComplement()
		if string(got) != string(want) {
			t.Errorf("%d: got %x want %x", n, got, want)
		}
		if got := (connect.Decimal{Unscaled: big.NewInt(n)}).AppendTwosComplement([]byte("x")); string(got) != "x"+string(want) {
			t.Errorf("%d: AppendTwosComplement got %x want %x after the prefix", n, got, want)
		}
	}
	// Beyond int64 (the big.Int path): 2^64 is 01 followed by eight zero bytes.
	big64 := new(big.Int).Lsh(big.NewInt(1), 64)
	if got := (connect.Decimal{Unscaled: big64}).AppendTwosComplement(nil); string(got) != "\x01\x00\x00\x00\x00\x00\x00\x00\x00" {
		t.Errorf("2^64: AppendTwosComplement got %x", got)
	}
}

// BenchmarkJSONEnvelope10 converts one 10-column Debezium envelope (with
// its source block) through JsonConverter with schemas.enable=true: the
// per-record cost of the default output path.
func BenchmarkJSONEnvelope10(b *testing.B) {
	c := NewJSONConverter()
	env, ev := envelope10()
	out, err := c.FromConnect("bench.public.t", env, ev)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.FromConnect("bench.public.t", env, ev); err != nil {
			b.Fatal(err)
		}
	}
}

// AppendFromConnect (connect.AppendConverter, the runtime's path) must give
// exactly FromConnect's bytes after whatever dst holds, for records with
// and without schemas, and nil for a tombstone.
func TestJSONConverterAppendFromConnect(t *testing.T) {
	env, ev := envelope10()
	for _, schemas := range []string{"true", "false"} {
		c := NewJSONConverter()
		if err := c.Configure(map[string]string{"schemas.enable": schemas}, false); err != nil {
			t.Fatal(err)
		}
		want, err := c.FromConnect("t", env, ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, dst := range [][]byte{nil, []byte("prefix"), make([]byte, 0, 16), make([]byte, 0, 64<<10)} {
			got, err := c.AppendFromConnect(dst, "t", env, ev)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(dst)+string(want) {
				t.Fatalf("schemas.enable=%s dst %q: got\n%s\nwant\n%s", schemas, dst, got, want)
			}
		}
		if got, err := c.AppendFromConnect([]byte("x"), "t", nil, nil); got != nil || err != nil {
			t.Fatalf("tombstone: %q %v", got, err)
		}
	}
	// A value that does not fit its schema fails as FromConnect does.
	c := NewJSONConverter()
	_, wantErr := c.FromConnect("t", connect.Prim(connect.Int32, false), "x")
	if _, err := c.AppendFromConnect(nil, "t", connect.Prim(connect.Int32, false), "x"); err == nil || err.Error() != wantErr.Error() {
		t.Fatalf("error: got %v, want %v", err, wantErr)
	}
}

// BenchmarkJSONEnvelope10Append is BenchmarkJSONEnvelope10 through
// AppendFromConnect into a reused buffer, as the runtime's producer path
// does with the buffers of acknowledged records.
func BenchmarkJSONEnvelope10Append(b *testing.B) {
	c := NewJSONConverter()
	env, ev := envelope10()
	buf, err := c.AppendFromConnect(nil, "bench.public.t", env, ev)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if buf, err = c.AppendFromConnect(buf[:0], "bench.public.t", env, ev); err != nil {
			b.Fatal(err)
		}
	}
}

// Logical types, arrays, maps, defaults and nested structs through the
// per-schema plan. Expected values follow JsonConverter#convertToJson:
// Date as days since the epoch, Timestamp as epoch milliseconds, Time as
// milliseconds of the day (org.apache.kafka.connect.data.Date/Timestamp/
// Time#fromLogical), a logical name over a value that is not a time.Time
// written as its plain type, a null optional field with a default written
// as the default, map keys sorted (as connectd's schemaless maps).
func TestJSONConverterPlanLogicalNested(t *testing.T) {
	named := func(typ connect.Type, name string) *connect.Schema {
		return connect.NewSchema(typ).Name(name).Version(1).Build()
	}
	inner := connect.StructSchema().Name("inner").Optional().Field("n", connect.Prim(connect.Int16, false)).Build()
	s := connect.StructSchema().Name("rec").
		Field("d", named(connect.Int32, connect.DateName)).
		Field("ts", named(connect.Int64, connect.TimestampName)).
		Field("tm", named(connect.Int32, connect.TimeName)).
		Field("days", named(connect.Int32, connect.DateName)).
		Field("arr", connect.NewSchema(connect.Array).Items(connect.Prim(connect.Int64, true)).Build()).
		Field("m", &connect.Schema{Type: connect.Map, KeySchema: connect.Prim(connect.String, false), ValueSchema: connect.Prim(connect.String, true)}).
		Field("def", connect.NewSchema(connect.String).Optional().Default("x").Build()).
		Field("in", inner).
		Field("f", connect.Prim(connect.Float32, true)).
		Build()
	v := connect.NewStruct(s)
	copy(v.Values, []any{
		time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), time.UnixMilli(1700000000123).UTC(),
		time.Date(1970, 1, 1, 1, 2, 3, 4_000_000, time.UTC), int32(19000),
		[]any{int64(1), nil, int64(-3)}, map[string]any{"b": "2", "a": nil}, nil,
		connect.NewStruct(inner).Put("n", int16(7)), float32(1.5),
	})
	c := NewJSONConverter()
	if err := c.Configure(map[string]string{"schemas.enable": "false"}, false); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second time through the cached plan
		got, err := c.FromConnect("t", s, v)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"d":19724,"ts":1700000000123,"tm":3723004,"days":19000,"arr":[1,null,-3],"m":{"a":null,"b":"2"},"def":"x","in":{"n":7},"f":1.5}`
		if string(got) != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	}
	// A required field left null names the field, as before the plan.
	v.Values[7] = connect.NewStruct(inner)
	if _, err := c.FromConnect("t", s, v); err == nil || err.Error() != "field in: field n: json converter: null value for a required int16 field" {
		t.Fatalf("error %v", err)
	}
}

// A frozen struct (connect.Struct.Freeze) shared by many records is written
// once and its JSON reused for every record holding the same *Struct; a
// struct that is not frozen, or another frozen one, is written from its
// values. The bytes are those of an unfrozen copy.
func TestJSONConverterFrozenStructMemo(t *testing.T) {
	src := connect.StructSchema().Name("src").Field("db", connect.Prim(connect.String, false)).Field("n", connect.Prim(connect.Int64, false)).Build()
	env := connect.StructSchema().Name("env").Field("source", src).Field("op", connect.Prim(connect.String, false)).Build()
	c := NewJSONConverter()
	write := func(source *connect.Struct, op string) string {
		t.Helper()
		out, err := c.AppendFromConnect(nil, "t", env, connect.NewStruct(env).Put("source", source).Put("op", op))
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	shared := connect.NewStruct(src).Put("db", "a").Put("n", int64(1)).Freeze()
	plain := write(connect.NewStruct(src).Put("db", "a").Put("n", int64(1)), "r")
	if got := write(shared, "r"); got != plain {
		t.Fatalf("frozen struct written as\n%s\nwant\n%s", got, plain)
	}
	if got := write(shared, "r"); got != plain {
		t.Fatalf("frozen struct from the memo written as\n%s\nwant\n%s", got, plain)
	}
	other := connect.NewStruct(src).Put("db", "b").Put("n", int64(2)).Freeze()
	if got, want := write(other, "r"), write(connect.NewStruct(src).Put("db", "b").Put("n", int64(2)), "r"); got != want {
		t.Fatalf("another frozen struct written as\n%s\nwant\n%s", got, want)
	}
	mutable := connect.NewStruct(src).Put("db", "a").Put("n", int64(1))
	write(mutable, "r")
	mutable.Put("n", int64(3))
	if got := write(mutable, "r"); !strings.Contains(got, `"n":3`) {
		t.Fatalf("a struct that is not frozen must be written from its values: %s", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Put on a frozen struct must panic")
		}
	}()
	shared.Put("n", int64(9))
}
