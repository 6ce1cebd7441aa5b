package runtime

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/offsets"
)

type orderStore struct{ events *[]string }

func (s orderStore) Get(context.Context, string, map[string]any) (map[string]any, error) {
	return nil, nil
}
func (s orderStore) Put(_ context.Context, e []offsets.Entry) error {
	*s.events = append(*s.events, "put")
	return nil
}
func (s orderStore) Partitions(string) []offsets.Entry { return nil }

type orderTask struct{ events *[]string }

func (orderTask) Start(context.Context, connect.SourceTaskContext, map[string]string) error {
	return nil
}
func (orderTask) Poll(context.Context) ([]*connect.SourceRecord, error) { return nil, nil }
func (t orderTask) Commit(context.Context, map[string]any, map[string]any) error {
	*t.events = append(*t.events, "commit")
	return nil
}
func (orderTask) Stop() error { return nil }

// An offset flush makes the acknowledged records durable before it stores
// their offsets, and the offsets durable before the task confirms the
// position upstream (DESIGN.md invariant 1 with an embedded broker that
// does not fsync each batch); a failed sync stores and confirms nothing.
func TestOffsetFlushSyncsTheLogFirst(t *testing.T) {
	var events []string
	var syncErr error
	w := &workerSourceTask{
		id: TaskID{"c", 0}, submitted: newSubmittedRecords(), store: orderStore{&events}, task: orderTask{&events},
		log: slog.Default(),
		logSync: func() error {
			events = append(events, "sync")
			return syncErr
		},
	}
	part := map[string]any{"server": "s"}
	w.submitted.ack(w.submitted.submit(part, map[string]any{"lsn": 1}))
	if err := w.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"sync", "put", "sync", "commit"}; !slices.Equal(events, want) {
		t.Fatalf("flush did %q, want %q", events, want)
	}
	events, syncErr = nil, errors.New("EIO")
	w.submitted.ack(w.submitted.submit(part, map[string]any{"lsn": 2}))
	if err := w.flush(context.Background()); err == nil || !slices.Equal(events, []string{"sync"}) {
		t.Fatalf("failed sync: flush did %q (%v), want only the sync and an error", events, err)
	}
}

// Offsets a task writes itself (connect.OffsetWriter) are stored, then
// synced, before WriteOffsets returns; a failed sync is the task's error.
func TestTaskWrittenOffsetsAreSynced(t *testing.T) {
	var events []string
	var syncErr error
	w := &workerSourceTask{
		id: TaskID{"c", 0}, store: orderStore{&events}, log: slog.Default(),
		logSync: func() error {
			events = append(events, "sync")
			return syncErr
		},
	}
	var ow connect.OffsetWriter = taskContext{write: w.writeOffsets}
	offs := []connect.PartitionOffset{{Partition: map[string]any{"server": "s", "relation_history": "1"}, Offset: map[string]any{"versions": "[]"}}}
	if err := ow.WriteOffsets(context.Background(), offs); err != nil {
		t.Fatal(err)
	}
	if want := []string{"put", "sync"}; !slices.Equal(events, want) {
		t.Fatalf("WriteOffsets did %q, want %q", events, want)
	}
	syncErr = errors.New("EIO")
	if err := ow.WriteOffsets(context.Background(), offs); !errors.Is(err, syncErr) {
		t.Fatalf("failed sync: %v", err)
	}
	if err := (taskContext{}).WriteOffsets(context.Background(), offs); err == nil {
		t.Fatal("no store: no error")
	}
}
