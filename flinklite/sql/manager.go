package sql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/connectd/connectd/flinklite"
)

// ErrExists: a SQL job already writes the statement's result table (REST
// 409).
var ErrExists = errors.New("a SQL job already writes this table")

// ErrNotFound: no SQL job has the id (REST 404).
var ErrNotFound = errors.New("no such SQL job")

// Manager runs the SQL jobs of one worker and keeps them across restarts.
// Each job is persisted as <data.dir>/sql/<id>/job.json (its statement,
// configuration and incarnation), next to its checkpoints and state: a
// job's state is the worker's local checkpoint files, so its definition
// lives with them, as flinklite's JSON jobs (job.Manager) and not in the
// connector config topic, which every worker of a group reads without
// having the checkpoints. NewManager starts every job it finds there; a
// job that fails is started again from its last checkpoint after a delay
// doubling from 1 s to 30 s (Flink's exponential-delay restart strategy)
// until it is deleted. The id of a job is its result table (output topic).
type Manager struct {
	dir  string
	base RunConfig
	log  *slog.Logger
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu   sync.Mutex
	jobs map[string]*managed
}

// persisted is job.json.
type persisted struct {
	SQL string `json:"sql"`
	// Config is the job's configuration (table.exec.state.ttl, …).
	Config map[string]string `json:"config,omitempty"`
	// Incarnation makes the Kafka transactional id and checkpoint marker
	// topic of a job created again (same id) distinct from the deleted
	// one's.
	Incarnation int64     `json:"incarnation"`
	Created     time.Time `json:"created"`
}

type managed struct {
	rec    persisted
	q      *Query
	dir    string
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	job      *Job // the current run (nil between runs)
	state    string
	trace    string
	restarts int
}

// Job states, as Flink's JobStatus.
const (
	StateInitializing = "INITIALIZING"
	StateRunning      = "RUNNING"
	StateRestarting   = "RESTARTING"
)

// JobInfo is a SQL job as GET /sql/jobs shows it.
type JobInfo struct {
	ID       string            `json:"id"`
	SQL      string            `json:"sql"`
	Config   map[string]string `json:"config,omitempty"`
	Sink     string            `json:"sink"`
	Sources  []string          `json:"sources"`
	Columns  []string          `json:"columns"`
	Key      []string          `json:"key"`
	Plan     string            `json:"plan"`
	State    string            `json:"state"`
	Trace    string            `json:"trace,omitempty"`
	Restarts int               `json:"restarts"`
	// LastCheckpoint, Lag and StateEntries are the current run's (absent
	// between runs): checkpoint ids go on from the restored one.
	LastCheckpoint *flinklite.CheckpointInfo `json:"last_checkpoint,omitempty"`
	Lag            int64                     `json:"lag"`
	StateEntries   int                       `json:"state_entries"`
}

// NewManager returns the manager of the SQL jobs under dataDir/sql and
// starts every job persisted there. base gives the brokers, client options
// and LogSync of every job (its JobID, Dir and Config are the job's).
// Errors: dataDir unreadable.
func NewManager(dataDir string, base RunConfig, log *slog.Logger) (*Manager, error) {
	m := &Manager{dir: filepath.Join(dataDir, "sql"), base: base, log: log, jobs: map[string]*managed{}}
	m.ctx, m.stop = context.WithCancel(context.Background())
	ents, err := os.ReadDir(m.dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(m.dir, e.Name(), "job.json"))
		if err != nil {
			continue // a job deleted half way: no job.json
		}
		var p persisted
		if err := json.Unmarshal(b, &p); err != nil {
			log.Error("SQL job unreadable, not started", "dir", e.Name(), "error", err)
			continue
		}
		q, err := Compile(p.SQL, nil)
		if err != nil || q.Sink != e.Name() {
			log.Error("SQL job does not compile, not started", "dir", e.Name(), "error", err)
			continue
		}
		m.mu.Lock()
		m.startLocked(p, q)
		m.mu.Unlock()
	}
	return m, nil
}

// Submit persists the job of q (a statement with a result table) with its
// configuration and starts it. The first run is started before Submit
// returns, so that an error of the sources (a missing topic) is returned
// and nothing is persisted. Errors: ErrExists, the configuration's, the
// first start's, the file system's.
func (m *Manager) Submit(ctx context.Context, q *Query, config map[string]string) (JobInfo, error) {
	if q.Sink == "" {
		return JobInfo{}, errors.New("sql: the query has no result table (CREATE TABLE name AS SELECT … or INSERT INTO name SELECT …)")
	}
	if _, err := ParseConfig(config); err != nil {
		return JobInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.jobs[q.Sink]; ok {
		return JobInfo{}, fmt.Errorf("%s: %w", q.Sink, ErrExists)
	}
	p := persisted{SQL: q.SQL, Config: config, Incarnation: time.Now().UnixNano(), Created: time.Now().UTC()}
	dir := filepath.Join(m.dir, q.Sink)
	// A leftover of a deleted job (crash during the delete) goes first.
	if err := os.RemoveAll(dir); err != nil {
		return JobInfo{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return JobInfo{}, err
	}
	// The job runs on the manager's context, not the caller's (a request's).
	jctx, cancel := context.WithCancel(m.ctx)
	stopSetup := context.AfterFunc(ctx, cancel)
	first, err := Start(jctx, q, m.runConfig(p, dir))
	if !stopSetup() {
		err = errors.Join(err, ctx.Err())
	}
	if err != nil {
		if first != nil {
			first.Stop()
		}
		cancel()
		os.RemoveAll(dir)
		return JobInfo{}, err
	}
	b, _ := json.MarshalIndent(p, "", "  ")
	if err := flinklite.WriteFileAtomic(filepath.Join(dir, "job.json"), b); err != nil {
		first.Stop()
		cancel()
		os.RemoveAll(dir)
		return JobInfo{}, err
	}
	j := m.startWith(jctx, cancel, p, q, first)
	return j.info(), nil
}

func (m *Manager) runConfig(p persisted, dir string) RunConfig {
	cfg := m.base
	cfg.JobID = fmt.Sprintf("sql-%s-%d", filepath.Base(dir), p.Incarnation)
	cfg.Dir = dir
	cfg.Config = p.Config
	return cfg
}

func (m *Manager) startLocked(p persisted, q *Query) *managed {
	ctx, cancel := context.WithCancel(m.ctx)
	return m.startWith(ctx, cancel, p, q, nil)
}

// startWith registers the job and runs it on ctx (first: its already
// started first run, or nil).
func (m *Manager) startWith(ctx context.Context, cancel context.CancelFunc, p persisted, q *Query, first *Job) *managed {
	j := &managed{rec: p, q: q, dir: filepath.Join(m.dir, q.Sink), cancel: cancel, done: make(chan struct{}), state: StateInitializing}
	if first != nil {
		j.job, j.state = first, StateRunning
	}
	m.jobs[q.Sink] = j
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(j.done)
		m.run(ctx, j, first)
	}()
	return j
}

// run runs the job until ctx is done, starting it again after failures.
func (m *Manager) run(ctx context.Context, j *managed, run *Job) {
	delay := time.Second
	for {
		var err error
		if run == nil {
			run, err = Start(ctx, j.q, m.runConfig(j.rec, j.dir))
		}
		if err == nil {
			j.mu.Lock()
			j.job, j.state, j.trace = run, StateRunning, ""
			j.mu.Unlock()
			started := time.Now()
			select {
			case <-ctx.Done():
				err = run.Stop()
			case <-run.Done():
				err = run.Err()
			}
			if time.Since(started) > time.Minute {
				delay = time.Second
			}
		}
		run = nil
		if ctx.Err() != nil {
			if err != nil {
				m.log.Info("SQL job stopped", "job", j.q.Sink, "error", err)
			}
			return
		}
		if err == nil {
			err = errors.New("job ended")
		}
		j.mu.Lock()
		j.state, j.trace = StateRestarting, err.Error()
		j.restarts++
		j.mu.Unlock()
		m.log.Warn("SQL job failed, restarting", "job", j.q.Sink, "delay", delay, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

func (j *managed) info() JobInfo {
	q := j.q
	i := JobInfo{ID: q.Sink, SQL: q.SQL, Config: j.rec.Config, Sink: q.Sink, Sources: q.Topics(), Columns: q.Columns, Key: q.KeyColumns, Plan: q.Plan()}
	j.mu.Lock()
	i.State, i.Trace, i.Restarts = j.state, j.trace, j.restarts
	run := j.job
	j.mu.Unlock()
	if run != nil {
		st := run.Status()
		i.LastCheckpoint, i.Lag, i.StateEntries = st.LastCheckpoint, st.Lag, st.StateEntries
	}
	return i
}

// List returns the jobs, by id.
func (m *Manager) List() []JobInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]JobInfo, 0, len(m.jobs))
	for _, j := range m.jobs {
		out = append(out, j.info())
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// Get returns job id. Errors: ErrNotFound.
func (m *Manager) Get(id string) (JobInfo, error) {
	m.mu.Lock()
	j, ok := m.jobs[id]
	m.mu.Unlock()
	if !ok {
		return JobInfo{}, fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	return j.info(), nil
}

// Running returns the current run of job id (nil between runs). For
// tests and status.
func (m *Manager) Running(id string) *Job {
	m.mu.Lock()
	j, ok := m.jobs[id]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.job
}

// Delete stops the job and removes its definition, checkpoints and state
// durably (job.json first: a crash half way leaves no job to start).
// Errors: ErrNotFound, the file system's.
func (m *Manager) Delete(ctx context.Context, id string) error {
	m.mu.Lock()
	j, ok := m.jobs[id]
	delete(m.jobs, id)
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	j.cancel()
	<-j.done
	if err := os.Remove(filepath.Join(j.dir, "job.json")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if d, err := os.Open(j.dir); err == nil {
		d.Sync()
		d.Close()
	}
	if err := os.RemoveAll(j.dir); err != nil {
		return err
	}
	cleanupJob(ctx, m.runConfig(j.rec, j.dir))
	return nil
}

// Close stops every job (each with a final checkpoint); they start again
// with the next NewManager on the same data.dir.
func (m *Manager) Close() {
	m.stop()
	m.wg.Wait()
}

// Query returns the compiled statement of job id (connectd verify
// --against JOB). Errors: ErrNotFound.
func (m *Manager) Query(id string) (*Query, error) {
	m.mu.Lock()
	j, ok := m.jobs[id]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	return j.q, nil
}

// Has says whether job id exists.
func (m *Manager) Has(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.jobs[id]
	return ok
}
