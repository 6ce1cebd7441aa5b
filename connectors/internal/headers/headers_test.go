package headers

import (
	"bufio"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

// TestKeyValueGolden: the __debezium.newkey/oldkey header text is Kafka
// Connect's Values.convertToString of the key struct, byte for byte as the
// real connect-api 4.3.0 writes it (testdata/connect/header_values.tsv,
// reference/connect/values/values.sh): same case names as HeaderValues.java.
func TestKeyValueGolden(t *testing.T) {
	one := func(s *connect.Schema, v any) *connect.Struct {
		sch := connect.StructSchema().Name("K").Field("k", s).Build()
		return connect.NewStruct(sch).Put("k", v)
	}
	p := connect.Prim
	date := connect.NewSchema(connect.Int32).Name(connect.DateName).Version(1).Build()
	tim := connect.NewSchema(connect.Int32).Name(connect.TimeName).Version(1).Build()
	ts := connect.NewSchema(connect.Int64).Name(connect.TimestampName).Version(1).Build()
	dec := func(u string, scale int) connect.Decimal {
		n, _ := new(big.Int).SetString(u, 10)
		return connect.Decimal{Unscaled: n, Scale: scale}
	}
	vsd := connect.StructSchema().Name("io.debezium.data.VariableScaleDecimal").
		Field("scale", p(connect.Int32, false)).Field("value", p(connect.Bytes, false)).Build()
	multi := connect.StructSchema().Name("K").Field("id", p(connect.Int32, false)).
		Field("Name x", p(connect.String, false)).Field("d", date).Build()
	cases := map[string]*connect.Struct{
		"int32":                  one(p(connect.Int32, false), int32(3)),
		"int64":                  one(p(connect.Int64, false), int64(-9223372036854775808)),
		"int16":                  one(p(connect.Int16, false), int16(-7)),
		"int8":                   one(p(connect.Int8, false), int8(5)),
		"bool":                   one(p(connect.Boolean, false), true),
		"null":                   one(p(connect.String, true), nil),
		"double2":                one(p(connect.Float64, false), 2.0),
		"double1e21":             one(p(connect.Float64, false), 1e21),
		"double_small":           one(p(connect.Float64, false), 0.0001),
		"float01":                one(p(connect.Float32, false), float32(0.1)),
		"string":                 one(p(connect.String, false), "a\tb\nc\"d\\e ü 😀 {x:1}"),
		"bytes":                  one(p(connect.Bytes, false), []byte{1, 2, 255}),
		"decimal150":             one(connect.DecimalSchema(3, false), dec("150000", 3)),
		"decimal_neg":            one(connect.DecimalSchema(1, false), dec("-125", 1)),
		"decimal_1e-7":           one(connect.DecimalSchema(7, false), dec("1", 7)),
		"decimal_zero8":          one(connect.DecimalSchema(8, false), dec("0", 8)),
		"decimal_small":          one(connect.DecimalSchema(6, false), dec("12", 6)),
		"decimal_int":            one(connect.DecimalSchema(0, false), dec("123456789012345678901234567890", 0)),
		"date":                   one(date, int32(18265)),
		"date_before_epoch":      one(date, int32(-1)),
		"date_epoch":             one(date, int32(0)),
		"time_midnight":          one(tim, int32(0)),
		"time":                   one(tim, int32(3723004)),
		"timestamp":              one(ts, int64(1577836800123)),
		"timestamp_day":          one(ts, int64(1577836800000)),
		"timestamp_before_epoch": one(ts, int64(-1500)),
		"array":                  one(connect.NewSchema(connect.Array).Items(p(connect.String, true)).Build(), []any{"x", nil, "y\""}),
		"nested":                 one(vsd, connect.NewStruct(vsd).Put("scale", int32(2)).Put("value", []byte{0x04, 0xd2})),
		"composite":              connect.NewStruct(multi).Put("id", int32(1)).Put("Name x", "o'k").Put("d", int32(18265)),
	}
	f, err := os.Open("../../../testdata/connect/header_values.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unesc := strings.NewReplacer(`\\`, `\`, `\t`, "\t", `\n`, "\n")
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		name, want, _ := strings.Cut(sc.Text(), "\t")
		want = unesc.Replace(want)
		st, ok := cases[name]
		if !ok {
			t.Errorf("case %s of the golden file is not built here", name)
			continue
		}
		n++
		if got := string(KeyValue(st)); got != want {
			t.Errorf("%s: got %s, Kafka Connect %s", name, got, want)
		}
	}
	if n != len(cases) {
		t.Errorf("%d golden cases, %d built", n, len(cases))
	}
	if KeyValue(nil) != nil {
		t.Error("nil key: want no header value")
	}
}
