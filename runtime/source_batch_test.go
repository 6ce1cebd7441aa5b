package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/registry"
	"github.com/connectd/connectd/transforms"
)

// batchTask is a workerSourceTask producing to a kfake cluster, with a
// Filter that drops the records of topics "drop.*".
func batchTask(t *testing.T) (*workerSourceTask, *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "kept"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	chain, err := transforms.NewChain(map[string]string{
		"transforms": "f", "transforms.f.type": "org.apache.kafka.connect.transforms.Filter", "transforms.f.predicate": "p",
		"predicates": "p", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "predicates.p.pattern": "drop.*",
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &workerSourceTask{
		id: TaskID{"c", 0}, keyConv: converters.NewJSONConverter(), valConv: converters.NewJSONConverter(), chain: chain,
		producer: cl, topics: newTopicCreator(kadm.NewClient(cl)), submitted: newSubmittedRecords(),
		produceErr: make(chan error, 1), log: slog.Default(),
	}
	return w, cl
}

// batchRecords are n records numbered 0..n-1 of one source partition:
// every seventh to topic "drop.x" (dropped by the Filter), the others to
// "kept" with a key.
func batchRecords(n int) []*connect.SourceRecord {
	var recs []*connect.SourceRecord
	for i := range n {
		topic := "kept"
		if i%7 == 3 {
			topic = "drop.x"
		}
		recs = append(recs, &connect.SourceRecord{
			SourcePartition: map[string]any{"p": "0"}, SourceOffset: map[string]any{"seq": int64(i)}, Topic: topic,
			KeySchema: connect.Prim(connect.Int64, false), Key: int64(i % 10),
			ValueSchema: connect.Prim(connect.String, false), Value: fmt.Sprintf("record-%d", i),
		})
	}
	return recs
}

func consumeKept(t *testing.T, cl *kgo.Client, want int) []*kgo.Record {
	t.Helper()
	rd, err := kgo.NewClient(kgo.SeedBrokers(cl.OptValue(kgo.SeedBrokers).([]string)...), kgo.ConsumeTopics("kept"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < want && ctx.Err() == nil {
		rd.PollFetches(ctx).EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	// and nothing more
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	rd.PollFetches(short).EachRecord(func(r *kgo.Record) { out = append(out, r) })
	return out
}

// A poll batch converted on several goroutines (sendBatch) reaches Kafka
// exactly as send would produce it record by record: every kept record, in
// order, with its own key and value bytes (a buffer shared between two
// goroutines would show another record's bytes); the dropped records'
// offsets commit in order with the others; a record whose value the
// converter refuses stops the batch there: the records before it are
// produced, none after it, and the committable offset is the last one
// before it.
func TestSendBatchConvertsInParallelInOrder(t *testing.T) {
	old := convertWorkers
	convertWorkers = func() int { return 4 }
	defer func() { convertWorkers = old }()
	w, cl := batchTask(t)
	ctx := context.Background()
	recs := batchRecords(2000)
	if err := w.sendBatch(ctx, recs, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range recs {
		if r.Topic == "kept" {
			want = append(want, fmt.Sprintf(`{"schema":{"type":"string","optional":false},"payload":"%s"}`, r.Value))
		}
	}
	got := consumeKept(t, cl, len(want))
	if len(got) != len(want) {
		t.Fatalf("%d records in Kafka, want %d", len(got), len(want))
	}
	for i, r := range got {
		if string(r.Value) != want[i] {
			t.Fatalf("record %d: %s, want %s", i, r.Value, want[i])
		}
		var n int
		fmt.Sscanf(string(r.Value), `{"schema":{"type":"string","optional":false},"payload":"record-%d"}`, &n)
		if k := fmt.Sprintf(`{"schema":{"type":"int64","optional":false},"payload":%d}`, n%10); string(r.Key) != k {
			t.Fatalf("record %d: key %s, want %s", i, r.Key, k)
		}
	}
	offs := w.submitted.committableOffsets()
	if len(offs) != 1 || offs[0].offset["seq"] != int64(1999) {
		t.Fatalf("committable offsets %v, want seq 1999", offs)
	}

	// A batch with a value the JsonConverter refuses at record 151 (150 is dropped).
	w2, cl2 := batchTask(t)
	recs = batchRecords(300)
	recs[151].Value = int64(151) // not a string
	err := w2.sendBatch(ctx, recs, time.Now())
	var te *TaskError
	if !errors.As(err, &te) || te.Stage != StageValueConverter {
		t.Fatalf("sendBatch: %v, want a value converter error", err)
	}
	if err := cl2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, r := range recs[:151] {
		if r.Topic == "kept" {
			kept++
		}
	}
	got = consumeKept(t, cl2, kept)
	if len(got) != kept || !strings.HasSuffix(string(got[len(got)-1].Value), `"record-149"}`) {
		t.Fatalf("%d records before the failed one, want %d ending with record-149 (150 dropped)", len(got), kept)
	}
	offs = w2.submitted.committableOffsets()
	if len(offs) != 1 || offs[0].offset["seq"] != int64(150) {
		t.Fatalf("committable offsets %v, want seq 150 (the dropped record before the failed one)", offs)
	}
}

// With a converter that registers schemas (AvroConverter), a batch whose
// value schema changes twice registers the three schemas as versions 1, 2
// and 3 of the subject, in the order of the records, though the records
// after each change are converted on other goroutines (sendBatch converts
// the first record of each schema first, in order): the second change is
// where the second of four goroutines starts in the second part, which would otherwise
// register the third schema while the first goroutine is still at the
// first.
func TestSendBatchRegistersSchemasInRecordOrder(t *testing.T) {
	old := convertWorkers
	convertWorkers = func() int { return 4 }
	defer func() { convertWorkers = old }()
	srv := registry.NewServer(registry.NewInMemory())
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for round := range 5 {
		w, cl := batchTask(t)
		av := converters.NewAvroConverter()
		if err := av.Configure(map[string]string{"schema.registry.url": ts.URL}, false); err != nil {
			t.Fatal(err)
		}
		w.valConv = av
		topic := fmt.Sprintf("kept%d", round)
		schemas := make([]*connect.Schema, 3)
		for v := range schemas {
			b := connect.StructSchema().Name("v").Field("f0", connect.Prim(connect.Int64, false))
			for f := 1; f <= v; f++ {
				b = b.Field(fmt.Sprintf("f%d", f), connect.Prim(connect.Int64, true))
			}
			schemas[v] = b.Build()
		}
		var recs []*connect.SourceRecord
		for i := range 2000 {
			v := 0
			switch {
			case i >= 320:
				v = 2
			case i >= 300:
				v = 1
			}
			st := connect.NewStruct(schemas[v]).Put("f0", int64(i))
			recs = append(recs, &connect.SourceRecord{SourcePartition: map[string]any{"p": "0"}, SourceOffset: map[string]any{"seq": int64(i)},
				Topic: topic, KeySchema: connect.Prim(connect.Int64, false), Key: int64(i), ValueSchema: schemas[v], Value: st})
		}
		if err := w.sendBatch(context.Background(), recs, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := cl.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		for v := 1; v <= 3; v++ {
			resp, err := http.Get(fmt.Sprintf("%s/subjects/%s-value/versions/%d", ts.URL, topic, v))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last := fmt.Sprintf(`f%d`, v-1)
			if !strings.Contains(string(body), last) || strings.Contains(string(body), fmt.Sprintf(`f%d`, v)) {
				t.Fatalf("round %d: version %d of %s-value is %s; want the schema with fields f0..%s", round, v, topic, body, last)
			}
		}
	}
}

// BenchmarkEncodeBatch is the conversion of a 2048-record poll batch of
// Debezium-like change events (a 10-column row, its source block) with
// JsonConverter, on 1, 2 and 4 goroutines (sendBatch, issue 20: the lever
// that lets one source use both cores). ns/record is the wall time per
// record; with more goroutines than idle cores it cannot drop.
func BenchmarkEncodeBatch(b *testing.B) {
	row := connect.StructSchema().Name("bench.public.t.Value").Optional()
	for i := range 10 {
		row = row.Field(fmt.Sprintf("c%d", i), connect.Prim(connect.String, true))
	}
	rs := row.Build()
	src := connect.StructSchema().Name("io.debezium.connector.postgresql.Source").
		Field("version", connect.Prim(connect.String, false)).Field("lsn", connect.Prim(connect.Int64, true)).Build()
	env := connect.StructSchema().Name("bench.public.t.Envelope").
		Field("before", rs).Field("after", rs).Field("source", src).Field("op", connect.Prim(connect.String, false)).Build()
	ks := connect.StructSchema().Name("bench.public.t.Key").Field("id", connect.Prim(connect.Int64, false)).Build()
	recs := make([]*connect.SourceRecord, 2048)
	for i := range recs {
		after := connect.NewStruct(rs)
		for c := range 10 {
			after.Put(fmt.Sprintf("c%d", c), fmt.Sprintf("value %d of column %d, some text to make it longer", i, c))
		}
		v := connect.NewStruct(env).Put("after", after).Put("op", "c").
			Put("source", connect.NewStruct(src).Put("version", "3.6.1.Final").Put("lsn", int64(i)))
		recs[i] = &connect.SourceRecord{Topic: "bench.public.t", KeySchema: ks, Key: connect.NewStruct(ks).Put("id", int64(i)), ValueSchema: env, Value: v}
	}
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			old := convertWorkers
			convertWorkers = func() int { return n }
			defer func() { convertWorkers = old }()
			w := &workerSourceTask{keyConv: converters.NewJSONConverter(), valConv: converters.NewJSONConverter()}
			slots := make([]batchSlot, len(recs))
			b.ResetTimer()
			for range b.N {
				for i, r := range recs {
					slots[i] = batchSlot{rec: r, out: r}
				}
				w.encodeBatch(slots)
				for i := range slots {
					if slots[i].err != nil {
						b.Fatal(slots[i].err)
					}
				}
				releaseSlots(slots)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
		})
	}
}
