package flinklite

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The checkpoint file format is persisted across versions (restores read
// old checkpoints): it is locked by testdata/checkpoint.golden.json
// (regenerate with go test ./flinklite -run Golden -update). The file is
// also written and read back through writeCheckpoint/readCheckpoint.
func TestCheckpointFormatGolden(t *testing.T) {
	h := newHarness(t, 2, WatermarkStrategy[click]{MaxOutOfOrderness: time.Millisecond, IdleTimeout: time.Minute},
		TumblingEventTimeWindows(10*time.Millisecond, 0), 5*time.Millisecond, Avg(func(c click) int64 { return c.N }))
	h.emit(t, 0, click{"b", 3, 4}, click{"a", 1, 2}, click{"a", 12, 6})
	h.emit(t, 1, click{"a", 14, 1})
	h.tick(t)
	ops, err := h.env.snapshotOperators()
	if err != nil {
		t.Fatal(err)
	}
	c := &Checkpoint{ID: 7, Created: t0, Offsets: map[string]map[int32]int64{"clicks": {0: 3, 1: 1}}, Operators: ops}
	dir := t.TempDir()
	if err := writeCheckpoint(dir, c); err != nil {
		t.Fatal(err)
	}
	back, err := readCheckpoint(dir, 7)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(back, "", "  ")
	golden := filepath.Join("testdata", "checkpoint.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Fatalf("checkpoint format changed:\n%s\nwant:\n%s", got, want)
	}
	// Atomic write leaves no temporary file behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("files in the checkpoint dir: %v", ents)
	}
}
