package incsnap

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// memSource is an in-memory table "s.t" with integer keys, for the
// algorithm alone (the PostgreSQL tests run it against a real server).
type memSource struct {
	keys       []int32
	watermarks []string // "type id"
	emitted    []int32
}

func (m *memSource) MaxKey(_ context.Context, c Collection) ([]any, error) {
	if len(m.keys) == 0 {
		return nil, nil
	}
	return []any{m.keys[len(m.keys)-1]}, nil
}

func (m *memSource) Chunk(_ context.Context, c Collection, after, max []any, limit int) ([]Row, error) {
	var out []Row
	for _, k := range m.keys {
		if (after == nil || k > after[0].(int32)) && k <= max[0].(int32) && len(out) < limit {
			out = append(out, Row{Key: []any{k}, Ident: fmt.Sprint(k), Value: k})
		}
	}
	return out, nil
}

func (m *memSource) Watermark(_ context.Context, id, typ, data string) error {
	m.watermarks = append(m.watermarks, typ+" "+id)
	return nil
}

func (m *memSource) Emit(_ context.Context, c Collection, r Row) error {
	m.emitted = append(m.emitted, r.Value.(int32))
	return nil
}

// window returns the open and close ids of the last chunk.
func (m *memSource) window(t *testing.T) (string, string) {
	t.Helper()
	n := len(m.watermarks)
	open := strings.Fields(m.watermarks[n-2])
	cl := strings.Fields(m.watermarks[n-1])
	if open[0] != "snapshot-window-open" || cl[0] != "snapshot-window-close" {
		t.Fatalf("watermarks %v", m.watermarks[n-2:])
	}
	return open[1], cl[1]
}

// TestWindowDeduplication follows AbstractIncrementalSnapshotChangeEventSource:
// a key changed by the stream inside the window is not emitted from the
// chunk; outside the window (before open) it is; stale watermark ids are
// ignored.
func TestWindowDeduplication(t *testing.T) {
	ctx := context.Background()
	src := &memSource{keys: []int32{1, 2, 3, 4, 5, 6, 7}}
	s := New(src, 3, nil)
	if err := s.Add(ctx, "sig-1", []Collection{{ID: "s.t"}}); err != nil {
		t.Fatal(err)
	}
	open, cl := src.window(t)
	s.Dedup("s.t", "2") // before the open watermark: no effect
	s.OpenWindow("someone-elses-open")
	if s.WindowOpen() {
		t.Fatal("a foreign window id opened the window")
	}
	s.OpenWindow(open)
	s.Dedup("s.t", "3")
	s.Dedup("other.table", "1")
	if err := s.CloseWindow(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(src.emitted, []int32{1, 2}) {
		t.Fatalf("first window emitted %v, want [1 2]", src.emitted)
	}
	off := map[string]any{"lsn": int64(7)}
	if err := s.Store(off); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/offset_running.json", off)

	open, cl = src.window(t)
	s.OpenWindow(open)
	if err := s.CloseWindow(ctx, cl); err != nil {
		t.Fatal(err)
	}
	open, cl = src.window(t)
	s.OpenWindow(open)
	if err := s.CloseWindow(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(src.emitted, []int32{1, 2, 4, 5, 6, 7}) || s.Running() {
		t.Fatalf("emitted %v, running %v", src.emitted, s.Running())
	}
	off = map[string]any{"lsn": int64(8)}
	s.Store(off)
	if len(off) != 1 {
		t.Fatalf("offset after the snapshot has state: %v", off)
	}
}

// TestLoadResumesAfterLastKey: the state stored in an offset restarts the
// snapshot after incremental_snapshot_primary_key.
func TestLoadResumesAfterLastKey(t *testing.T) {
	ctx := context.Background()
	var off map[string]any
	b, err := os.ReadFile("testdata/offset_running.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &off); err != nil {
		t.Fatal(err)
	}
	src := &memSource{keys: []int32{1, 2, 3, 4, 5, 6, 7}}
	s := New(src, 10, nil)
	if err := s.Load(off); err != nil {
		t.Fatal(err)
	}
	if !s.Running() || s.Current() != "s.t" {
		t.Fatalf("loaded state not running: %+v", s)
	}
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	open, cl := src.window(t)
	s.OpenWindow(open)
	if err := s.CloseWindow(ctx, cl); err != nil {
		t.Fatal(err)
	}
	// last key sent was 2; the maximum key stored was 7
	if !reflect.DeepEqual(src.emitted, []int32{3, 4, 5, 6, 7}) {
		t.Fatalf("emitted %v after restart, want [3 4 5 6 7]", src.emitted)
	}
	if err := s.Load(map[string]any{OffCollections: "[{]"}); err == nil {
		t.Fatal("bad collections JSON accepted")
	}
}

// TestStopAndPause: stop-snapshot of the current table drops its window and
// moves on; pause stops chunk reading until resume, which re-reads after the
// last key sent.
func TestStopAndPause(t *testing.T) {
	ctx := context.Background()
	src := &memSource{keys: []int32{1, 2, 3, 4, 5}}
	s := New(src, 2, nil)
	var notes []string
	s.Notify = func(_ context.Context, id, typ string, data map[string]string) error {
		notes = append(notes, id+" "+typ+" "+data["data_collections"])
		return nil
	}
	s.Add(ctx, "sig-2", []Collection{{ID: "s.t"}, {ID: "s.u"}})
	open, cl := src.window(t)
	s.OpenWindow(open)
	s.CloseWindow(ctx, cl) // emits 1, 2
	s.Pause(ctx)
	open, cl = src.window(t)
	s.OpenWindow(open)
	s.CloseWindow(ctx, cl) // the chunk in flight completes: 3, 4
	n := len(src.watermarks)
	open, cl = src.window(t)
	s.OpenWindow(open)
	s.CloseWindow(ctx, cl) // stale ids: nothing happens
	if len(src.watermarks) != n || !reflect.DeepEqual(src.emitted, []int32{1, 2, 3, 4}) {
		t.Fatalf("paused snapshot read on: %v %v", src.watermarks, src.emitted)
	}
	if err := s.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx, []string{`s\.t`}); err != nil {
		t.Fatal(err)
	}
	if s.Current() != "s.u" {
		t.Fatalf("current table %q after stopping s.t", s.Current())
	}
	if err := s.Stop(ctx, nil); err != nil || s.Running() {
		t.Fatalf("stop all: %v running %v", err, s.Running())
	}
	// Debezium's IncrementalSnapshotNotificationService: notifyStarted,
	// notifyInProgress per chunk, notifyPaused / notifyResumed with the
	// queued tables, notifyAborted with the stopped tables (none listed
	// when the whole snapshot stops).
	want := []string{"sig-2 STARTED s.t,s.u", "sig-2 IN_PROGRESS s.t,s.u", "sig-2 IN_PROGRESS s.t,s.u", "sig-2 PAUSED s.t,s.u",
		"sig-2 RESUMED s.t,s.u", "sig-2 IN_PROGRESS s.t,s.u", "sig-2 ABORTED s.t", "sig-2 IN_PROGRESS s.u", "sig-2 ABORTED "}
	if !reflect.DeepEqual(notes, want) {
		t.Fatalf("notifications\n%q\nwant\n%q", notes, want)
	}
}

func golden(t *testing.T, path string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s differs:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestLoadDebeziumOffset: the offset real Debezium 3.6.1 stored with its
// second incremental snapshot record (id 2 of public.t, maximum key 5,
// condition "(id <> 3)"; testdata/debezium/pg_incremental_snapshot.jsonl,
// record 8) resumes the snapshot after key 2 in connectd.
func TestLoadDebeziumOffset(t *testing.T) {
	b, err := os.ReadFile("../../../testdata/debezium/pg_incremental_snapshot.jsonl.record-offsets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var rec struct {
		Value map[string]any `json:"value"`
	}
	if err := json.Unmarshal([]byte(lines[8]), &rec); err != nil {
		t.Fatal(err)
	}
	src := &memSource{keys: []int32{1, 2, 3, 4, 5, 6}}
	s := New(src, 10, nil)
	if err := s.Load(rec.Value); err != nil {
		t.Fatal(err)
	}
	if s.Current() != "public.t" || s.colls[0].AdditionalCondition != "(id <> 3)" || *s.correlationID != "ad-hoc-1" {
		t.Fatalf("loaded %+v", s.colls)
	}
	// connectd writes the loaded state back as Debezium wrote it
	off := map[string]any{}
	if err := s.Store(off); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{OffMaximumKey, OffCollections, OffCorrelationID} {
		if off[k] != rec.Value[k] {
			t.Errorf("%s = %v, Debezium wrote %v", k, off[k], rec.Value[k])
		}
	}
	ctx := context.Background()
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	open, cl := src.window(t)
	s.OpenWindow(open)
	if err := s.CloseWindow(ctx, cl); err != nil {
		t.Fatal(err)
	}
	// after key 2, up to the stored maximum key 5 (6 was inserted later)
	if !reflect.DeepEqual(src.emitted, []int32{3, 4, 5}) {
		t.Fatalf("emitted %v, want [3 4 5]", src.emitted)
	}
}
