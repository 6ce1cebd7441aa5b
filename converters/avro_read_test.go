package converters

import (
	"bytes"
	"testing"

	"github.com/connectd/connectd/connect"
)

// TestAvroToConnectRoundTrip: a Debezium envelope written by the
// AvroConverter (Confluent's AvroData mapping) reads back into the same
// Connect schema and value: the JSON rendering of both (JsonConverter,
// byte-compatible with Kafka Connect's) is identical, and writing the
// read value again gives the same bytes and schema id (AvroConverter's
// toConnectData ∘ fromConnectData is the identity for Connect data it
// wrote). A map with non-string keys and an array cover the MapEntry and
// array encodings.
func TestAvroToConnectRoundTrip(t *testing.T) {
	ts, _ := testRegistry(t)
	w := NewAvroConverter()
	if err := w.Configure(map[string]string{"schema.registry.url": ts.URL}, false); err != nil {
		t.Fatal(err)
	}
	r := NewAvroConverter() // a separate reader: the schema comes from the registry
	if err := r.Configure(map[string]string{"schema.registry.url": ts.URL}, false); err != nil {
		t.Fatal(err)
	}
	env, ev := envelope10()
	js := NewJSONConverter()
	check := func(topic string, s *connect.Schema, v any) {
		t.Helper()
		b, err := w.FromConnect(topic, s, v)
		if err != nil {
			t.Fatal(err)
		}
		s2, v2, err := r.ToConnect(topic, b)
		if err != nil {
			t.Fatal(err)
		}
		want, err := js.FromConnect("t", s, v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := js.FromConnect("t", s2, v2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("read back differs:\n got %s\nwant %s", got, want)
		}
		again, err := w.FromConnect(topic, s2, v2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("rewritten bytes differ (schema id %x vs %x)", again[:5], b[:5])
		}
	}
	check("bench.public.t", env, ev)
	// A tombstone stays a tombstone.
	if s, v, err := r.ToConnect("t", nil); s != nil || v != nil || err != nil {
		t.Fatalf("tombstone: %v %v %v", s, v, err)
	}
	// Arrays and maps (string keys: an Avro map; int keys: MapEntry records).
	other := connect.StructSchema().Name("x.Other").
		Field("tags", connect.NewSchema(connect.Array).Items(connect.Prim(connect.String, false)).Optional().Build()).
		Field("attrs", func() *connect.Schema {
			s := connect.NewSchema(connect.Map).Items(connect.Prim(connect.Int64, true)).Build()
			s.KeySchema = connect.Prim(connect.String, false)
			return s
		}()).
		Field("small", connect.Prim(connect.Int8, false)).
		Field("f", connect.Prim(connect.Float32, true)).Build()
	ov := connect.NewStruct(other).Put("tags", []any{"a", "b"}).Put("attrs", map[string]any{"k": int64(5), "n": nil}).
		Put("small", int8(-3)).Put("f", float32(1.5))
	check("other", other, ov)
	if _, _, err := r.ToConnect("t", []byte{1, 0, 0, 0, 1}); err == nil {
		t.Fatal("a bad magic byte was accepted")
	}
}
