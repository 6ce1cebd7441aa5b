package envelope

import (
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

func TestSchemaAndValues(t *testing.T) {
	row := connect.StructSchema().Name("p.s.t.Value").Optional().Field("id", connect.Prim(connect.Int32, false)).Build()
	src := connect.StructSchema().Name("src").Field("x", connect.Prim(connect.String, false)).Build()
	env := Schema("p.s.t", row, src)
	var names []string
	for _, f := range env.Fields {
		names = append(names, f.Name)
	}
	if got := names; len(got) != 8 || got[0] != "before" || got[3] != "transaction" || got[4] != "op" || got[7] != "ts_ns" {
		t.Fatalf("fields %v", got)
	}
	if env.Name != "p.s.t.Envelope" || env.Version != 2 || TransactionSchema().Name != "event.block" || !TransactionSchema().Optional {
		t.Fatal("names/versions")
	}
	now := time.Unix(1, 2000)
	v := Delete(env, connect.NewStruct(row).Put("id", int32(1)), connect.NewStruct(src).Put("x", "y"), now)
	if v.Get("op") != OpDelete || v.Get("after") != nil || v.Get("ts_us") != int64(1000002) {
		t.Fatalf("delete %v", v.Values)
	}
	rec := &connect.SourceRecord{Topic: "p.s.t", Key: 1, Value: v, ValueSchema: env}
	ts := Tombstone(rec)
	if ts.Value != nil || ts.ValueSchema != nil || ts.Key != 1 || ts.Topic != "p.s.t" {
		t.Fatal("tombstone")
	}
}

// Value fills a standard envelope (Schema's fields) by position and any
// other envelope schema by field name: both give the same field values.
func TestValueStandardAndOtherLayouts(t *testing.T) {
	row := connect.StructSchema().Name("r").Optional().Field("id", connect.Prim(connect.Int32, false)).Build()
	src := connect.StructSchema().Name("src").Field("x", connect.Prim(connect.String, false)).Build()
	other := connect.StructSchema().Name("o.Envelope").
		Field("op", connect.Prim(connect.String, false)).
		Field("after", row).Field("before", row).Field("source", src).
		Field("ts_ms", connect.Prim(connect.Int64, true)).Field("ts_us", connect.Prim(connect.Int64, true)).
		Field("ts_ns", connect.Prim(connect.Int64, true)).Build()
	now := time.Unix(5, 6000)
	before, after, source := connect.NewStruct(row).Put("id", int32(1)), connect.NewStruct(row).Put("id", int32(2)), connect.NewStruct(src).Put("x", "y")
	for _, env := range []*connect.Schema{Schema("p.s.t", row, src), other} {
		v := Update(env, before, after, source, now)
		if v.Get("before") != before || v.Get("after") != after || v.Get("source") != source || v.Get("op") != OpUpdate ||
			v.Get("ts_ms") != int64(5000) || v.Get("ts_us") != int64(5000006) || v.Get("ts_ns") != int64(5000006000) {
			t.Fatalf("%s: %v", env.Name, v.Values)
		}
	}
}
