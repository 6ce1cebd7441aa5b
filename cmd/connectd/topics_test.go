package main

import (
	"encoding/json"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTailLineHeaders: topics tail prints a record's headers (before, the
// __debezium.context.* headers of extended.headers.enabled=true could not be
// seen with it), in order, a null header value as null, and no "headers" key
// for a record without any. The header names are Debezium 3.6's
// (io.debezium.pipeline.EventDispatcher's context headers).
func TestTailLineHeaders(t *testing.T) {
	r := &kgo.Record{Topic: "fr.inventory.customers", Partition: 0, Offset: 7,
		Key: []byte(`{"id":1}`), Value: []byte(`{"op":"c"}`),
		Headers: []kgo.RecordHeader{
			{Key: "__debezium.context.connectorLogicalName", Value: []byte("fr")},
			{Key: "__debezium.context.taskId", Value: []byte("0")},
			{Key: "empty", Value: nil},
		}}
	b, err := json.Marshal(tailLine(r, func(_ string, b []byte) any { return asJSON(b) }))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"topic":"fr.inventory.customers","partition":0,"offset":7,"headers":[{"key":"__debezium.context.connectorLogicalName","value":"fr"},{"key":"__debezium.context.taskId","value":"0"},{"key":"empty","value":null}],"key":{"id":1},"value":{"op":"c"}}`
	if string(b) != want {
		t.Fatalf("tail line\n got %s\nwant %s", b, want)
	}
	r.Headers = nil
	b, _ = json.Marshal(tailLine(r, func(_ string, b []byte) any { return asJSON(b) }))
	if want := `{"topic":"fr.inventory.customers","partition":0,"offset":7,"key":{"id":1},"value":{"op":"c"}}`; string(b) != want {
		t.Fatalf("tail line without headers\n got %s\nwant %s", b, want)
	}
}
