package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSinkHeaderConverter: a sink task reads header values with the
// connector's header.converter (Kafka Connect's WorkerSinkTask,
// convertHeadersFor → HeaderConverter.toConnectHeader) and receives them
// in connectd's in-memory form, the text SimpleHeaderConverter writes
// (Values.convertToString: INT32 42 → "42", a STRING as it is, null →
// null). With JsonConverter (schemas.enable defaults to true, so each
// value is a {"schema","payload"} document) the JSON is decoded; with the
// default SimpleHeaderConverter the bytes pass unchanged. A header
// JsonConverter cannot read is a HEADER_CONVERTER stage error: skipped
// under errors.tolerance=all, a task failure under none.
func TestSinkHeaderConverter(t *testing.T) {
	kafka := freeAddr(t)
	shared := map[string]*sinkShared{}
	plugins := connect.NewPlugins()
	for _, n := range []string{"json", "simple", "strict"} {
		sh := &sinkShared{flushGate: make(chan struct{})}
		close(sh.flushGate)
		shared[n] = sh
		plugins.RegisterSink("test.RecordingSink"+n, func() connect.SinkConnector { return recordingSink{sh} })
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := StartWorker(ctx, WorkerConfig{"data.dir": t.TempDir(), "embedded.kafka.listener": kafka,
		"listeners": "http://127.0.0.1:0", "offset.flush.interval.ms": "100"}, plugins, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cl := mustClient(t, kafka)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "hdr"); err != nil {
		t.Fatal(err)
	}
	val := func(s string) []byte {
		return []byte(fmt.Sprintf(`{"schema":{"type":"string","optional":false},"payload":%q}`, s))
	}
	recs := []*kgo.Record{
		{Topic: "hdr", Value: val("v1"), Headers: []kgo.RecordHeader{
			{Key: "n", Value: []byte(`{"schema":{"type":"int32","optional":false},"payload":42}`)},
			{Key: "s", Value: []byte(`{"schema":{"type":"string","optional":true},"payload":"abc"}`)},
			{Key: "null", Value: nil},
		}},
		{Topic: "hdr", Value: val("v2"), Headers: []kgo.RecordHeader{{Key: "bad", Value: []byte("not json")}}},
		{Topic: "hdr", Value: val("v3"), Headers: []kgo.RecordHeader{
			{Key: "b", Value: []byte(`{"schema":{"type":"boolean","optional":false},"payload":true}`)},
		}},
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for name, extra := range map[string]map[string]string{
		"json":   {"header.converter": "org.apache.kafka.connect.json.JsonConverter", "errors.tolerance": "all"},
		"simple": {},
		"strict": {"header.converter": "JsonConverter"},
	} {
		cfg := map[string]string{"connector.class": "test.RecordingSink" + name, "topics": "hdr"}
		for k, v := range extra {
			cfg[k] = v
		}
		if _, err := w.Herder.CreateConnector(ctx, name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	got := func(sh *sinkShared) []string {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		var out []string
		for i, hs := range sh.headers {
			var parts []string
			for _, h := range hs {
				v := "<null>"
				if h.Value != nil {
					v = string(h.Value)
				}
				parts = append(parts, h.Key+"="+v)
			}
			out = append(out, sh.values[i]+":"+strings.Join(parts, ","))
		}
		return out
	}
	want := map[string]string{
		// JsonConverter: decoded; the record with an unreadable header is
		// skipped under errors.tolerance=all.
		"json": "v1:n=42,s=abc,null=<null>|v3:b=true",
		// SimpleHeaderConverter: the bytes as they were produced.
		"simple": `v1:n={"schema":{"type":"int32","optional":false},"payload":42},s={"schema":{"type":"string","optional":true},"payload":"abc"},null=<null>|v2:bad=not json|v3:b={"schema":{"type":"boolean","optional":false},"payload":true}`,
	}
	for name, w := range want {
		deadline := time.Now().Add(20 * time.Second)
		for strings.Join(got(shared[name]), "|") != w {
			if time.Now().After(deadline) {
				t.Fatalf("%s: headers put\n%q\nwant\n%q", name, strings.Join(got(shared[name]), "|"), w)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// errors.tolerance=none (the default): the unreadable header fails
	// the task at the HEADER_CONVERTER stage.
	var st ConnectorStatus
	waitFor(t, func() bool {
		st, _ = w.Herder.ConnectorStatus("strict")
		return len(st.Tasks) == 1 && st.Tasks[0].State == StateFailed
	})
	if !strings.Contains(st.Tasks[0].Trace, "Tolerance exceeded in error handler") {
		t.Fatalf("strict task trace %q", st.Tasks[0].Trace)
	}
	if g := got(shared["strict"]); len(g) > 1 {
		t.Fatalf("strict sink got %q past the unreadable header", g)
	}
}
