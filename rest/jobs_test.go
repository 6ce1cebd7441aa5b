package rest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/runtime"
)

// The /jobs API: an invalid spec is answered 400 with every field and its
// reason (locked by testdata/rest/jobs_invalid.json, as the connector
// config errors), unknown jobs 404, a job id taken 409; a created job is
// persisted in data.dir and comes back on a worker restarted on the same
// data.dir (its source topic does not exist here, so it stays RESTARTING
// with the reason as trace); DELETE removes it and its files.
func TestJobsAPI(t *testing.T) {
	e := startEnv(t)
	e.golden("jobs_invalid", 400, "POST", "/jobs", map[string]any{
		"id": "bad id", "source": map[string]any{"topics": []string{}}, "eventTime": map[string]any{},
		"keyBy": []string{"customer"}, "window": map[string]any{"type": "hopping", "size": "1m"},
		"aggregates": []any{map[string]any{"function": "sum"}}, "sinks": map[string]any{"jdbc": map[string]any{"connection.url": "postgres://x"}},
	})
	e.golden("jobs_malformed", 400, "POST", "/jobs", `{"id": "x", "window": {"type": 5}}`)
	if code, body := e.do("GET", "/jobs/nope", nil); code != 404 {
		t.Fatalf("GET unknown job: %d %s", code, body)
	}
	if code, body := e.do("GET", "/jobs", nil); code != 200 || string(body) != "[]" {
		t.Fatalf("GET /jobs: %d %s", code, body)
	}
	spec := map[string]any{
		"id": "totals", "source": map[string]any{"topics": []string{"no.such.topic"}}, "eventTime": map[string]any{"kafkaTimestamp": true},
		"keyBy": []string{"customer"}, "window": map[string]any{"type": "tumbling", "size": "5m"},
		"aggregates": []any{map[string]any{"function": "count"}}, "sinks": map[string]any{"kafka": map[string]any{"topic": "out"}},
	}
	if code, body := e.do("POST", "/jobs", spec); code != 201 {
		t.Fatalf("POST /jobs: %d %s", code, body)
	}
	if code, body := e.do("POST", "/jobs", spec); code != 409 {
		t.Fatalf("POST /jobs twice: %d %s", code, body)
	}
	dataDir := e.w.Config.Get("data.dir")
	if _, err := os.Stat(filepath.Join(dataDir, "jobs", "totals", "job.json")); err != nil {
		t.Fatal(err)
	}

	// Restart the worker on the same data.dir.
	e.w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w2, err := runtime.StartWorker(ctx, e.w.Config, connect.NewPlugins(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	rs, err := New(w2, connect.NewPlugins())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rs.Handler())
	defer srv.Close()
	e2 := &env{t: t, url: srv.URL, w: w2}
	if code, body := e2.do("GET", "/jobs", nil); code != 200 || string(body) != `["totals"]` {
		t.Fatalf("GET /jobs after the restart: %d %s", code, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := w2.Jobs.Get("totals")
		if err != nil {
			t.Fatal(err)
		}
		if info.State == "RESTARTING" && info.Trace != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job without its source topic: %+v", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body := e2.do("POST", "/jobs/totals/savepoints", nil); code != 409 {
		t.Fatalf("savepoint of a job not running: %d %s", code, body)
	}
	if code, body := e2.do("DELETE", "/jobs/totals", nil); code != 204 {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "jobs", "totals")); !os.IsNotExist(err) {
		t.Fatalf("job files after DELETE: %v", err)
	}
	if code, _ := e2.do("DELETE", "/jobs/totals", nil); code != 404 {
		t.Fatalf("DELETE twice: %d", code)
	}
}
