package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/runtime"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/rest")

// counterSource emits count records numbered from its committed offset
// (as Kafka Connect's VerifiableSourceConnector), to topic.
type counterSource struct{}

func (counterSource) Version() string { return "1.0.0" }
func (counterSource) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "topic", Type: connect.TypeString, Importance: connect.High, Doc: "Topic to write to.", Group: "Counter", Width: "LONG", DisplayName: "Topic"}).
		Define(connect.ConfigKey{Name: "count", Type: connect.TypeInt, Default: connect.Str("5"), Importance: connect.Medium, Doc: "Records to emit.", Group: "Counter"}).
		Define(connect.ConfigKey{Name: "mode", Type: connect.TypeString, Default: connect.Str("plain"), Importance: connect.Low, Doc: "Output mode.", Allowed: []string{"plain", "fancy"}})
}
func (counterSource) Validate(map[string]string) []connect.ConfigError { return nil }
func (counterSource) TaskConfigs(cfg map[string]string, _ int) ([]map[string]string, error) {
	out := map[string]string{}
	for k, v := range cfg {
		out[k] = v
	}
	return []map[string]string{out}, nil
}
func (counterSource) NewTask() connect.SourceTask { return &counterTask{} }

type counterTask struct {
	next, end int64
	topic     string
}

var counterPartition = map[string]any{"source": "counter"}

func (t *counterTask) Start(ctx context.Context, tc connect.SourceTaskContext, cfg map[string]string) error {
	off, err := tc.OffsetReader().Offset(ctx, counterPartition)
	if err != nil {
		return err
	}
	if off != nil {
		t.next = off["seq"].(int64) + 1
	}
	n, _ := strconv.Atoi(cfg["count"])
	t.end, t.topic = t.next+int64(n), cfg["topic"]
	return nil
}

func (t *counterTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if t.next >= t.end {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
			return nil, nil
		}
	}
	var out []*connect.SourceRecord
	for ; t.next < t.end; t.next++ {
		out = append(out, &connect.SourceRecord{SourcePartition: counterPartition, SourceOffset: map[string]any{"seq": t.next},
			Topic: t.topic, ValueSchema: connect.Prim(connect.String, false), Value: fmt.Sprint(t.next)})
	}
	return out, nil
}
func (t *counterTask) Commit(context.Context, map[string]any, map[string]any) error { return nil }
func (t *counterTask) Stop() error                                                  { return nil }

type env struct {
	t   testing.TB
	url string
	w   *runtime.Worker
}

func startEnv(t testing.TB) *env {
	t.Helper()
	plugins := connect.NewPlugins()
	plugins.RegisterSource("test.CounterSourceConnector", func() connect.SourceConnector { return counterSource{} }, "CounterSource")
	plugins.RegisterPlugin(connect.PluginDesc{Class: "org.apache.kafka.connect.json.JsonConverter", Type: connect.PluginConverter, Version: Version})
	plugins.RegisterPlugin(connect.PluginDesc{Class: "test.InsertField", Type: connect.PluginTransformation, Config: func() *connect.ConfigDef {
		return connect.NewConfigDef().Define(connect.ConfigKey{Name: "static.field", Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Medium, Doc: "Field name for static data insertion."})
	}})
	plugins.RegisterPlugin(connect.PluginDesc{Class: "test.TopicNameMatches", Type: connect.PluginPredicate})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kafka := l.Addr().String()
	l.Close()
	cfg := runtime.WorkerConfig{"data.dir": t.TempDir(), "embedded.kafka.listener": kafka, "listeners": "http://127.0.0.1:8083", "offset.flush.interval.ms": "100"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	loggers := runtime.NewLoggers(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.Level(-1 << 20)}), slog.LevelInfo)
	w, err := runtime.StartWorker(ctx, cfg, plugins, loggers.Logger(runtime.LoggerWorker))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := New(w, plugins)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rs.Handler())
	t.Cleanup(func() { srv.Close(); w.Close() })
	return &env{t: t, url: srv.URL, w: w}
}

func (e *env) do(method, path string, body any) (int, []byte) {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, e.url+path, r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

var (
	workerRE   = regexp.MustCompile(`"worker_id":"[^"]*"`)
	modifiedRE = regexp.MustCompile(`"last_modified":[0-9]+`)
)

// golden compares status and body of a call with testdata/rest/<name>.json
// (first line: the status code; then the body, indented). worker_id and
// last_modified values vary per run and are masked.
func (e *env) golden(name string, wantCode int, method, path string, body any) []byte {
	e.t.Helper()
	code, got := e.do(method, path, body)
	if code != wantCode {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, wantCode, got)
	}
	masked := workerRE.ReplaceAll(got, []byte(`"worker_id":"WORKER"`))
	masked = modifiedRE.ReplaceAll(masked, []byte(`"last_modified":1700000000000`))
	var pretty bytes.Buffer
	if len(masked) > 0 {
		if err := json.Indent(&pretty, masked, "", "  "); err != nil {
			e.t.Fatalf("%s %s: body is not JSON: %v\n%s", method, path, err, got)
		}
	}
	text := fmt.Sprintf("%s %s -> %d\n%s\n", method, path, code, pretty.String())
	file := filepath.Join("..", "testdata", "rest", name+".json")
	if *update {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			e.t.Fatal(err)
		}
		return got
	}
	want, err := os.ReadFile(file)
	if err != nil {
		e.t.Fatalf("%v (run with -update to create)", err)
	}
	if string(want) != text {
		e.t.Errorf("%s differs from the golden file (run with -update after checking):\n got:\n%s\nwant:\n%s", file, text, want)
	}
	return got
}

func (e *env) waitState(name, connState, taskState string) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := e.w.Herder.ConnectorStatus(name)
		ok := err == nil && st.Connector.State == connState
		if ok && taskState == "" {
			ok = len(st.Tasks) == 0
		} else if ok {
			ok = len(st.Tasks) > 0 && st.Tasks[0].State == taskState
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: status %+v %v, want %s/%s", name, st, err, connState, taskState)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
