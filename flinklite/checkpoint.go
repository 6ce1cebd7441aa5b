package flinklite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Checkpoint is the persisted form of a checkpoint: the state of every
// stateful operator (by operator id) and the next input offset of every
// Kafka partition, taken between two elements (the job is single-threaded,
// so no barrier alignment is needed).
type Checkpoint struct {
	ID        int64                      `json:"id"`
	Created   time.Time                  `json:"created"`
	Offsets   map[string]map[int32]int64 `json:"offsets"`
	Operators map[string]json.RawMessage `json:"operators"`
}

const checkpointPrefix = "chk-"

func checkpointPath(dir string, id int64) string {
	return filepath.Join(dir, fmt.Sprintf("%s%016d.json", checkpointPrefix, id))
}

// checkpointIDs returns the ids of the checkpoint files in dir, ascending.
func checkpointIDs(dir string) ([]int64, error) {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, checkpointPrefix) || !strings.HasSuffix(n, ".json") {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(n, checkpointPrefix), ".json"), 10, 64)
		if err == nil {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// writeCheckpoint writes c to dir atomically: a temporary file is written
// and fsynced, renamed over its final name, and the directory fsynced, so
// a crash leaves either no file or the whole checkpoint.
func writeCheckpoint(dir string, c *Checkpoint) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encoding checkpoint %d: %w", c.ID, err)
	}
	return WriteFileAtomic(checkpointPath(dir, c.ID), b)
}

// WriteFileAtomic writes b to path atomically: a temporary file in the same
// directory is written and fsynced, renamed over path, and the directory
// fsynced, so a crash leaves the old file (or none) or the whole new one.
func WriteFileAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func readCheckpoint(dir string, id int64) (*Checkpoint, error) {
	b, err := os.ReadFile(checkpointPath(dir, id))
	if err != nil {
		return nil, err
	}
	c, err := decodeCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d: %w", id, err)
	}
	return c, nil
}

func decodeCheckpoint(b []byte) (*Checkpoint, error) {
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// removeCheckpoints deletes the checkpoint files whose id is not keep.
func removeCheckpoints(dir string, keep int64) error {
	ids, err := checkpointIDs(dir)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id != keep {
			if err := os.Remove(checkpointPath(dir, id)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

// snapshotOperators returns the state of every stateful operator.
func (e *Env) snapshotOperators() (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(e.order))
	for _, id := range e.order {
		b, err := e.states[id].snapshot()
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", id, err)
		}
		out[id] = b
	}
	return out, nil
}

// restoreOperators loads c's operator states. An operator of the graph
// missing from c starts empty; state of an operator the graph no longer has
// is an error (as Flink refuses unmapped savepoint state by default).
func (e *Env) restoreOperators(ops map[string]json.RawMessage) error {
	for id, b := range ops {
		s := e.states[id]
		if s == nil {
			return fmt.Errorf("flinklite: checkpoint has state for operator %s that the job graph does not have", id)
		}
		if err := s.restore(b); err != nil {
			return fmt.Errorf("restoring operator %s: %w", id, err)
		}
	}
	return nil
}

// CheckpointTo takes a checkpoint of the job's operator state into dir
// without Kafka, for programs that drive an Input themselves (no input
// offsets: the caller records its own position). The file is written
// atomically as Env.Run's (chk-<id>.json, id one more than the newest in
// dir), then older checkpoint files are removed. Call it between two
// elements, from the job's goroutine. Errors: encoding, dir's.
func (e *Env) CheckpointTo(dir string) (CheckpointInfo, error) {
	started := e.clock.Now()
	ids, err := checkpointIDs(dir)
	if err != nil {
		return CheckpointInfo{}, err
	}
	id := int64(1)
	if len(ids) > 0 {
		id = ids[len(ids)-1] + 1
	}
	ops, err := e.snapshotOperators()
	if err != nil {
		return CheckpointInfo{}, err
	}
	c := &Checkpoint{ID: id, Created: started.UTC(), Offsets: map[string]map[int32]int64{}, Operators: ops}
	if err := writeCheckpoint(dir, c); err != nil {
		return CheckpointInfo{}, fmt.Errorf("flinklite: writing checkpoint %d: %w", id, err)
	}
	if err := removeCheckpoints(dir, id); err != nil {
		return CheckpointInfo{}, err
	}
	e.metrics.Checkpoints++
	info := CheckpointInfo{ID: id, Completed: e.clock.Now().UTC()}
	info.DurationMs = info.Completed.Sub(started).Milliseconds()
	if fi, err := os.Stat(checkpointPath(dir, id)); err == nil {
		info.SizeBytes = fi.Size()
	}
	return info, nil
}

// RestoreFrom loads the newest checkpoint of dir written by CheckpointTo
// into the job's operators (built, not yet fed) and returns its id, or 0
// when dir has none.
func (e *Env) RestoreFrom(dir string) (int64, error) {
	ids, err := checkpointIDs(dir)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	id := ids[len(ids)-1]
	c, err := readCheckpoint(dir, id)
	if err != nil {
		return 0, err
	}
	return id, e.restoreOperators(c.Operators)
}
