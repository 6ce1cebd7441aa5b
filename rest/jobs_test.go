package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/flinklite/job"
	"github.com/connectd/connectd/runtime"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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

var (
	requestIDRE = regexp.MustCompile(`"request-id":"[0-9a-f]{32}"`)
	locationRE  = regexp.MustCompile(`"location":"[^"]*/savepoint-[0-9]{16}\.json"`)
)

// Savepoints are asynchronous, as Flink's REST API: POST
// /jobs/{id}/savepoints answers 202 {"request-id"} at once and GET
// /jobs/{id}/savepoints/{triggerid} answers {"status":{"id":"IN_PROGRESS"}}
// until {"status":{"id":"COMPLETED"},"operation":{"location"}} or
// {"operation":{"failure-cause"}}. Every body is locked by a golden file
// under testdata/rest (jobs_savepoint_*.json); the fields and codes come
// from Flink's REST API reference (flink-docs-release-2.2, ops/rest_api):
// /jobs/:jobid/savepoints (POST, "202 Accepted", request
// SavepointTriggerRequestBody {"target-directory", "cancel-job",
// "formatType", "triggerId"}, response TriggerResponse {"request-id"}) and
// /jobs/:jobid/savepoints/:triggerid (GET, "200 OK",
// AsynchronousOperationResult {"status": QueueStatus {"id": IN_PROGRESS |
// COMPLETED}, "operation": SavepointInfo {"location", "failure-cause"}});
// failure-cause is Flink's SerializedThrowable as its
// SerializedThrowableSerializer writes it ("class", "stack-trace").
// The trigger id (32 hex digits, Flink's TriggerId) and the savepoint
// file's directory vary per run and are masked. cancel-job stops the job
// (CANCELED, kept across a worker restart), and a new job started from the
// savepoint restores it (its checkpoint ids go on from the savepoint's,
// and it holds the savepoint's open windows without reading a record).
func TestJobsSavepointsAsync(t *testing.T) {
	e := startEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	broker := e.w.Config.Get("embedded.kafka.listener")
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		v := fmt.Sprintf(`{"customer": "c%d", "amount": %d}`, i%3, i)
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	spec := func(id, savepoint string) map[string]any {
		s := map[string]any{
			"id": id, "source": map[string]any{"topics": []string{"orders"}, "format": "json"}, "eventTime": map[string]any{"kafkaTimestamp": true},
			"keyBy": []string{"customer"}, "window": map[string]any{"type": "tumbling", "size": "1h"},
			"aggregates": []any{map[string]any{"function": "sum", "field": "amount"}}, "sinks": map[string]any{"kafka": map[string]any{"topic": id + ".out"}},
			"checkpoint": map[string]any{"interval": "100ms"},
		}
		if savepoint != "" {
			s["savepoint"] = savepoint
		}
		return s
	}
	if code, body := e.do("POST", "/jobs", spec("sp", "")); code != 201 {
		t.Fatalf("POST /jobs: %d %s", code, body)
	}
	waitInfo := func(id, what string, ok func(job.Info) bool) job.Info {
		t.Helper()
		var info job.Info
		e.waitFor(what, func() bool {
			i, err := e.w.Jobs.Get(id)
			info = i
			return err == nil && ok(i)
		})
		return info
	}
	waitInfo("sp", "job sp running with its 3 windows", func(i job.Info) bool { return i.State == "RUNNING" && i.StateEntries == 3 })

	tmp := t.TempDir()
	mask := func(b []byte) []byte {
		b = requestIDRE.ReplaceAll(b, []byte(`"request-id":"TRIGGER"`))
		b = locationRE.ReplaceAll(b, []byte(`"location":"DIR/savepoint-ID.json"`))
		return bytes.ReplaceAll(b, []byte(tmp), []byte("TMP"))
	}
	trigger := func(name string, body any) string {
		t.Helper()
		code, got := e.do("POST", "/jobs/sp/savepoints", body)
		var r struct {
			ID string `json:"request-id"`
		}
		if code != 202 || json.Unmarshal(got, &r) != nil || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(r.ID) {
			t.Fatalf("trigger a savepoint: %d %s", code, got)
		}
		e.goldenBody(name, "POST /jobs/sp/savepoints", code, mask(got))
		return r.ID
	}
	// status polls until COMPLETED; the golden file is the final body.
	status := func(name, id string) job.SavepointStatus {
		t.Helper()
		var st job.SavepointStatus
		var got []byte
		e.waitFor("savepoint "+id+" completed", func() bool {
			var code int
			code, got = e.do("GET", "/jobs/sp/savepoints/"+id, nil)
			if code != 200 || json.Unmarshal(got, &st) != nil {
				t.Fatalf("savepoint status: %d %s", code, got)
			}
			if st.Status.ID == job.SavepointInProgress && st.Operation != nil {
				t.Fatalf("IN_PROGRESS with an operation: %s", got)
			}
			return st.Status.ID == job.SavepointCompleted
		})
		e.goldenBody(name, "GET /jobs/sp/savepoints/{triggerid}", 200, mask(got))
		return st
	}

	// The body while in progress (its shape; the test cannot time a poll
	// to fall within a savepoint).
	var inProgress job.SavepointStatus
	inProgress.Status.ID = job.SavepointInProgress
	b, _ := json.Marshal(inProgress)
	e.goldenBody("jobs_savepoint_in_progress", "GET /jobs/sp/savepoints/{triggerid}", 200, b)

	// Into a given directory; the job runs on.
	dir := filepath.Join(tmp, "sp")
	st := status("jobs_savepoint_completed", trigger("jobs_savepoint_trigger", map[string]any{"target-directory": dir}))
	if loc := st.Operation.Location; filepath.Dir(loc) != dir {
		t.Fatalf("savepoint at %s, not in %s", loc, dir)
	} else if _, err := os.Stat(loc); err != nil {
		t.Fatal(err)
	}
	// An empty body (Flink reads it as {}) writes to data.dir/savepoints/<id>.
	st = status("jobs_savepoint_completed", trigger("jobs_savepoint_trigger", nil))
	if want := filepath.Join(e.w.Config.Get("data.dir"), "savepoints", "sp"); filepath.Dir(st.Operation.Location) != want {
		t.Fatalf("default savepoint at %s, not in %s", st.Operation.Location, want)
	}
	// A directory that cannot be created: COMPLETED with the failure.
	if err := os.WriteFile(filepath.Join(tmp, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st = status("jobs_savepoint_failed", trigger("jobs_savepoint_trigger", map[string]any{"target-directory": filepath.Join(tmp, "file", "sub")}))
	if st.Operation.FailureCause == nil || st.Operation.Location != "" {
		t.Fatalf("savepoint into a file: %+v", st.Operation)
	}
	e.golden("jobs_savepoint_relative_dir", 400, "POST", "/jobs/sp/savepoints", map[string]any{"target-directory": "sp", "formatType": "BINARY"})
	e.golden("jobs_savepoint_unknown_field", 400, "POST", "/jobs/sp/savepoints", map[string]any{"target_directory": "/x"})
	e.golden("jobs_savepoint_unknown_trigger", 404, "GET", "/jobs/sp/savepoints/0123456789abcdef0123456789abcdef", nil)
	e.golden("jobs_savepoint_unknown_job", 404, "POST", "/jobs/nope/savepoints", nil)
	// A client-chosen triggerId is idempotent, as Flink's.
	const tid = "00000000000000000000000000000001"
	if code, body := e.do("POST", "/jobs/sp/savepoints", map[string]any{"triggerId": tid, "target-directory": dir}); code != 202 || string(body) != `{"request-id":"`+tid+`"}` {
		t.Fatalf("savepoint with a triggerId: %d %s", code, body)
	}
	first := status("jobs_savepoint_completed", tid)
	if code, body := e.do("POST", "/jobs/sp/savepoints", map[string]any{"triggerId": tid}); code != 202 || string(body) != `{"request-id":"`+tid+`"}` {
		t.Fatalf("savepoint with the same triggerId: %d %s", code, body)
	}
	if again := status("jobs_savepoint_completed", tid); again.Operation.Location != first.Operation.Location {
		t.Fatalf("the same triggerId took another savepoint: %s, then %s", first.Operation.Location, again.Operation.Location)
	}

	// cancel-job: the job stops at the savepoint and stays stopped.
	st = status("jobs_savepoint_completed", trigger("jobs_savepoint_trigger", map[string]any{"target-directory": dir, "cancel-job": true}))
	final := st.Operation.Location
	waitInfo("sp", "job sp CANCELED", func(i job.Info) bool { return i.State == job.StateCanceled })
	if code, body := e.do("POST", "/jobs/sp/savepoints", nil); code != 409 {
		t.Fatalf("savepoint of a canceled job: %d %s", code, body)
	}
	var p struct {
		Canceled bool `json:"canceled"`
	}
	if b, err := os.ReadFile(filepath.Join(e.w.Config.Get("data.dir"), "jobs", "sp", "job.json")); err != nil || json.Unmarshal(b, &p) != nil || !p.Canceled {
		t.Fatalf("job.json of the canceled job: %v %+v", err, p)
	}
	spID := savepointID(t, final)

	// A new job from the savepoint: restored (checkpoint ids go on from
	// the savepoint's, its 3 open windows are there) with no record read.
	if code, body := e.do("POST", "/jobs", spec("sp2", final)); code != 201 {
		t.Fatalf("POST /jobs from the savepoint: %d %s", code, body)
	}
	info := waitInfo("sp2", "job sp2 checkpointed", func(i job.Info) bool { return i.State == "RUNNING" && i.LastCheckpoint != nil })
	if info.LastCheckpoint.ID <= spID || info.StateEntries != 3 || info.Metrics.NumRecordsIn != 0 {
		t.Fatalf("job from savepoint %d: checkpoint %d, %d state entries, %d records read", spID, info.LastCheckpoint.ID, info.StateEntries, info.Metrics.NumRecordsIn)
	}
}

// savepointID is the checkpoint id in a savepoint file's name
// (savepoint-<id>.json).
func savepointID(t *testing.T, path string) int64 {
	t.Helper()
	var id int64
	if _, err := fmt.Sscanf(filepath.Base(path), "savepoint-%d.json", &id); err != nil {
		t.Fatalf("savepoint file name %s: %v", path, err)
	}
	return id
}

// goldenBody compares a response already read (and masked) with
// testdata/rest/<name>.json, as golden does; call names the request.
func (e *env) goldenBody(name, call string, code int, got []byte) {
	e.t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		e.t.Fatalf("%s: body is not JSON: %v\n%s", call, err, got)
	}
	text := fmt.Sprintf("%s -> %d\n%s\n", call, code, pretty.String())
	file := filepath.Join("..", "testdata", "rest", name+".json")
	if *update {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			e.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		e.t.Fatalf("%v (run with -update to create)", err)
	}
	if string(want) != text {
		e.t.Errorf("%s differs from the golden file (run with -update after checking):\n got:\n%s\nwant:\n%s", file, text, want)
	}
}
