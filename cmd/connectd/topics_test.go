package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
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

// TestTailIsolationLevel runs "topics tail" against a Kafka-protocol broker
// (kfake) holding an aborted transaction's record, then a committed one's:
// --isolation-level read_committed prints only the committed record (a
// flinklite Kafka sink's results after a failed checkpoint are such aborted
// records), the default read_uncommitted both, as Kafka's console consumer.
// Headers are printed end to end.
func TestTailIsolationLevel(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "results"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("tail-test"), kgo.DefaultProduceTopic("results"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := t.Context()
	for _, commit := range []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		v := map[kgo.TransactionEndTry]string{kgo.TryAbort: `{"n":"aborted"}`, kgo.TryCommit: `{"n":"committed"}`}[commit]
		r := &kgo.Record{Value: []byte(v), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := cl.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	tail := func(args ...string) []tailRecord {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout := os.Stdout
		os.Stdout = w
		err = topics(append([]string{"tail", "results", "--from-beginning", "-o", "embedded.kafka.listener=" + addr, "-o", "schema.registry.listener="}, args...))
		os.Stdout = stdout
		w.Close()
		if err != nil {
			t.Fatalf("topics tail %v: %v", args, err)
		}
		var out []tailRecord
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var rec tailRecord
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			out = append(out, rec)
		}
		return out
	}
	// read_committed: the committed record only (offset 2: the aborted
	// record is 0, its abort marker 1).
	got := tail("--isolation-level", "read_committed", "--max-records", "1")
	if len(got) != 1 || got[0].Offset != 2 || fmt.Sprint(got[0].Value) != "map[n:committed]" || len(got[0].Headers) != 1 || got[0].Headers[0].Key != "h" {
		t.Fatalf("read_committed: %+v", got)
	}
	got = tail("--max-records", "2")
	if len(got) != 2 || got[0].Offset != 0 || fmt.Sprint(got[0].Value) != "map[n:aborted]" || got[1].Offset != 2 {
		t.Fatalf("read_uncommitted (default): %+v", got)
	}
	if err := topics([]string{"tail", "results", "--isolation-level", "serializable"}); err == nil || !strings.Contains(err.Error(), "--isolation-level") {
		t.Fatalf("bad --isolation-level: %v", err)
	}
}
