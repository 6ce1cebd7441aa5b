package flinklite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// JobStatus is what Env.Status reports about a running job, for the REST
// API's GET /jobs/{id}: the figures of Flink's job overview and checkpoint
// statistics.
type JobStatus struct {
	// Watermark is the job's current event-time watermark in ms since the
	// epoch (the minimum over its watermark generators), MinWatermark
	// before any event time was seen.
	Watermark int64 `json:"watermark"`
	// Lag is the number of records the sources have not read yet: the sum
	// over input partitions of (high watermark − next offset), as Flink's
	// Kafka source metric records-lag-max summed (Kafka's consumer lag).
	Lag int64 `json:"lag"`
	// StateEntries is the number of keyed-state entries: open windows per
	// key and the Debezium rows kept for retractions.
	StateEntries int `json:"state_entries"`
	// LastCheckpoint is the last completed checkpoint (nil before the first).
	LastCheckpoint *CheckpointInfo `json:"last_checkpoint"`
	Metrics        Metrics         `json:"metrics"`
}

// CheckpointInfo describes one completed checkpoint.
type CheckpointInfo struct {
	ID int64 `json:"id"`
	// Completed is when the checkpoint was committed (UTC).
	Completed time.Time `json:"completed"`
	// DurationMs is how long the checkpoint took (flush, file, commit).
	DurationMs int64 `json:"duration_ms"`
	// SizeBytes is the size of the checkpoint file (Flink's checkpointed
	// data size).
	SizeBytes int64 `json:"size_bytes"`
	// Offsets are the next input offsets the checkpoint committed (topic →
	// partition → offset): every result of the records before them is
	// committed.
	Offsets map[string]map[int32]int64 `json:"-"`
}

// statusBoard is the part of Env read by other goroutines: the status the
// job's goroutine publishes after every tick, and the savepoint requests
// it serves between two polls.
type statusBoard struct {
	mu         sync.Mutex
	status     JobStatus
	savepoints chan savepointRequest
}

type savepointRequest struct {
	dir string
	// stop ends Env.Run right after the savepoint, before any further
	// record is read (Flink's stop-with-savepoint).
	stop  bool
	reply chan savepointReply
}

type savepointReply struct {
	path string
	err  error
}

// Status returns the job's last published status. Safe for concurrent use.
func (e *Env) Status() JobStatus {
	e.board.mu.Lock()
	defer e.board.mu.Unlock()
	return e.board.status
}

// publishStatus copies the job's figures for Status; called on the job's
// goroutine.
func (e *Env) publishStatus(lag int64, last *CheckpointInfo) {
	wm := MinWatermark
	for i, w := range e.watermarks {
		if c := w.currentWatermark(); i == 0 || c < wm {
			wm = c
		}
	}
	n := 0
	for _, id := range e.order {
		if s, ok := e.states[id].(interface{ stateSize() int }); ok {
			n += s.stateSize()
		}
	}
	e.board.mu.Lock()
	e.board.status = JobStatus{Watermark: wm, Lag: lag, StateEntries: n, LastCheckpoint: last, Metrics: e.metrics}
	e.board.mu.Unlock()
}

// TriggerSavepoint asks the running job (Env.Run) for a savepoint: a
// checkpoint taken and committed at once (Flink's stop-less savepoint),
// whose file is then copied into dir. It returns the savepoint's path,
// which a later job (same job graph) starts from with
// RunConfig.Savepoint. Safe for concurrent use. Errors: ctx's, when the
// job does not serve the request in time (not running); the checkpoint's.
func (e *Env) TriggerSavepoint(ctx context.Context, dir string) (string, error) {
	return e.savepoint(ctx, savepointRequest{dir: dir})
}

// StopWithSavepoint is TriggerSavepoint followed by the end of the job:
// Env.Run returns nil right after the savepoint is written, having read
// nothing after it and taken no further checkpoint, so the savepoint holds
// every output the job committed (Flink's stop-with-savepoint, which the
// REST API's cancel-job=true asks for). When the savepoint fails, Run
// returns its error as for a failed checkpoint. Errors: as TriggerSavepoint.
func (e *Env) StopWithSavepoint(ctx context.Context, dir string) (string, error) {
	return e.savepoint(ctx, savepointRequest{dir: dir, stop: true})
}

func (e *Env) savepoint(ctx context.Context, req savepointRequest) (string, error) {
	req.reply = make(chan savepointReply, 1)
	select {
	case e.board.savepoints <- req:
	case <-ctx.Done():
		return "", fmt.Errorf("flinklite: savepoint not started: %w", ctx.Err())
	}
	select {
	case r := <-req.reply:
		return r.path, r.err
	case <-ctx.Done():
		select { // a reply sent as ctx ended (the job stopped after it) wins
		case r := <-req.reply:
			return r.path, r.err
		default:
		}
		return "", fmt.Errorf("flinklite: savepoint not completed: %w", ctx.Err())
	}
}

// writeSavepoint copies checkpoint id of chkDir to dir as
// savepoint-<id>.json, atomically.
func writeSavepoint(chkDir string, id int64, dir string) (string, error) {
	c, err := readCheckpoint(chkDir, id)
	if err != nil {
		return "", err
	}
	if err := writeCheckpoint(dir, c); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("savepoint-%016d.json", id))
	if err := os.Rename(checkpointPath(dir, id), path); err != nil {
		return "", err
	}
	return path, nil
}

// readSavepoint reads a savepoint (or checkpoint) file written by
// TriggerSavepoint.
func readSavepoint(path string) (*Checkpoint, error) {
	name := filepath.Base(path)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSavepoint, err)
	}
	c, err := decodeCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSavepoint, name, err)
	}
	return c, nil
}

// ErrSavepoint: the savepoint a job starts from cannot be read. Not
// retryable: the job's savepoint path must change.
var ErrSavepoint = errors.New("flinklite: savepoint unreadable")
