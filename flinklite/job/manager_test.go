package job

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A job stopped by a savepoint with cancel-job is persisted as canceled
// (job.json "canceled": true): a worker restarted on the same data.dir
// keeps it CANCELED without running it (its source topic does not even
// exist: a run would leave it RESTARTING with a trace), takes no savepoint
// of it (409), and deletes it on request.
func TestManagerKeepsCanceledJobs(t *testing.T) {
	dataDir := t.TempDir()
	dir := filepath.Join(dataDir, "jobs", "stopped")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := `{"id": "stopped", "source": {"topics": ["no.such.topic"], "format": "json"}, "eventTime": {"kafkaTimestamp": true},
		"keyBy": ["k"], "window": {"type": "tumbling", "size": "1m"}, "aggregates": [{"function": "count"}],
		"sinks": {"kafka": {"topic": "out"}}}`
	if err := os.WriteFile(filepath.Join(dir, "job.json"), []byte(`{"spec": `+spec+`, "incarnation": 1, "created": "2026-01-01T00:00:00Z", "canceled": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(dataDir, []string{"127.0.0.1:1"}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	info, err := m.Get("stopped")
	if err != nil || info.State != StateCanceled || info.Trace != "" || info.Restarts != 0 {
		t.Fatalf("canceled job after a restart: %+v %v", info, err)
	}
	if _, err := m.TriggerSavepoint("stopped", SavepointRequest{}); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("savepoint of a canceled job: %v", err)
	}
	if _, err := m.SavepointStatus("stopped", "00000000000000000000000000000000"); !errors.Is(err, ErrTriggerNotFound) {
		t.Fatalf("unknown trigger: %v", err)
	}
	if err := m.Delete(t.Context(), "stopped"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("job files after Delete: %v", err)
	}
}

// A job just created is INITIALIZING (Flink's JobStatus for a job received
// but not yet running), not RESTARTING: before, POST /jobs answered
// "RESTARTING" with 0 restarts and no trace for a job that had never failed.
// Here its brokers refuse connections (127.0.0.1:1), so it must then go to
// RESTARTING with a trace and a restart counted, and nothing else.
func TestManagerNewJobInitializing(t *testing.T) {
	m, err := NewManager(t.TempDir(), []string{"127.0.0.1:1"}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s, err := ParseSpec([]byte(`{"id": "fresh", "source": {"topics": ["no.such.topic"], "format": "json"}, "eventTime": {"kafkaTimestamp": true},
		"keyBy": ["k"], "window": {"type": "tumbling", "size": "1m"}, "aggregates": [{"function": "count"}],
		"sinks": {"kafka": {"topic": "out"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Create(s); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		info, err := m.Get("fresh")
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case info.State == StateInitializing && info.Restarts == 0 && info.Trace == "":
		case info.State == StateRestarting && info.Restarts >= 1 && info.Trace != "":
			return
		default:
			t.Fatalf("job state %q, restarts %d, trace %q: want INITIALIZING (no trace) then RESTARTING with a trace", info.State, info.Restarts, info.Trace)
		}
	}
	t.Fatal("still INITIALIZING after 60 s against a refused broker")
}
