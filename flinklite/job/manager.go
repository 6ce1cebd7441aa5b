package job

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
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrNotFound: no job has the given id (REST 404).
var ErrNotFound = errors.New("job not found")

// ErrExists: a job with the spec's id exists (REST 409).
var ErrExists = errors.New("job already exists")

// ErrNotRunning: the job is not running, so it cannot take a savepoint
// (REST 409); retry when its state is RUNNING.
var ErrNotRunning = errors.New("job is not running")

// Job states, as Flink's JobStatus.
const (
	StateRunning    = "RUNNING"
	StateRestarting = "RESTARTING"
	StateFailed     = "FAILED"
)

// Manager runs the jobs of one worker. Each job is persisted as
// <data.dir>/jobs/<id>/job.json, next to its checkpoints
// (<data.dir>/jobs/<id>/checkpoints): a job's state is the
// worker's local checkpoint files, so its spec lives with them (not in the
// connector config topic, which every worker of a group would read without
// having the checkpoints) and the worker restarts the jobs it finds there.
// A job that fails is restarted from its last committed checkpoint after a
// delay doubling from 1 s to 30 s (Flink's exponential-delay restart
// strategy); it never stops trying until deleted. That is a local job;
// on a distributed worker (NewDistributedManager) the specs are in Kafka
// and every worker runs every job scaled out.
type Manager struct {
	dir     string
	spDir   string
	brokers []string
	opts    []kgo.Opt
	log     *slog.Logger
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu   sync.Mutex
	jobs map[string]*runningJob
	// dist is set on a distributed worker (NewDistributedManager).
	dist *distributed
}

// persisted is job.json.
type persisted struct {
	Spec *Spec `json:"spec"`
	// Incarnation makes the Kafka transactional.id and checkpoint marker
	// topic of a re-created job (same id) distinct from the deleted one's.
	Incarnation int64     `json:"incarnation"`
	Created     time.Time `json:"created"`
}

type runningJob struct {
	rec     persisted
	dir     string
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	env     *flinklite.Env
	state   string
	trace   string
	restart int
	// parts are the partition instances a distributed job runs on this
	// worker, and repartition whether it has a repartition stage.
	parts       map[partitionKey]*flinklite.Env
	repartition bool
}

// NewManager returns the manager of the jobs under dataDir/jobs, reading
// Kafka at brokers with opts (the worker's internal client security), and
// starts every job persisted there. Errors: dataDir unreadable.
func NewManager(dataDir string, brokers []string, opts []kgo.Opt, log *slog.Logger) (*Manager, error) {
	m := &Manager{dir: filepath.Join(dataDir, "jobs"), spDir: filepath.Join(dataDir, "savepoints"), brokers: brokers, opts: opts, log: log, jobs: map[string]*runningJob{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
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
		if err := json.Unmarshal(b, &p); err != nil || p.Spec == nil {
			log.Error("flinklite job unreadable, not started", "dir", e.Name(), "error", err)
			continue
		}
		m.start(p)
	}
	return m, nil
}

// Create persists s and starts it. Errors: *SpecInvalidError, ErrExists,
// the file system's.
func (m *Manager) Create(s *Spec) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if m.dist != nil {
		return m.createDistributed(s)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.jobs[s.ID]; ok {
		return fmt.Errorf("job %s: %w", s.ID, ErrExists)
	}
	p := persisted{Spec: s, Incarnation: time.Now().UnixNano(), Created: time.Now().UTC()}
	dir := filepath.Join(m.dir, s.ID)
	// A leftover of a deleted job (crash during the delete) goes first.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	// Atomic: a crash leaves no job.json or the whole of it.
	tmp := filepath.Join(dir, ".job.json.tmp")
	if err := writeSynced(tmp, b); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "job.json")); err != nil {
		return err
	}
	m.startLocked(p)
	return nil
}

func writeSynced(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (m *Manager) start(p persisted) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.startLocked(p)
}

func (m *Manager) startLocked(p persisted) {
	ctx, cancel := context.WithCancel(m.ctx)
	j := &runningJob{rec: p, dir: filepath.Join(m.dir, p.Spec.ID), cancel: cancel, done: make(chan struct{}), state: StateRestarting}
	m.jobs[p.Spec.ID] = j
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(j.done)
		if m.dist != nil {
			m.runDistributed(ctx, j)
			return
		}
		m.run(ctx, j)
	}()
}

// jobID is the job's Kafka transactional.id (and marker topic prefix).
func (j *runningJob) jobID() string {
	return fmt.Sprintf("flinklite-%s-%d", j.rec.Spec.ID, j.rec.Incarnation)
}

// run compiles and runs the job until ctx is done, restarting it after
// failures.
func (m *Manager) run(ctx context.Context, j *runningJob) {
	delay := time.Second
	for {
		env := flinklite.NewEnv()
		var state *flinklite.PebbleStateBackend
		var err error
		if j.rec.Spec.StateBackend == "pebble" {
			// A working copy, emptied on open: the state is rebuilt from
			// the checkpoint, as Flink's RocksDB local directory.
			state, err = flinklite.NewPebbleStateBackend(filepath.Join(j.dir, "state"))
		}
		if err == nil {
			if state != nil {
				err = CompileWithState(ctx, env, j.rec.Spec, m.brokers, state, m.opts...)
			} else {
				err = Compile(ctx, env, j.rec.Spec, m.brokers, m.opts...)
			}
		}
		if err == nil {
			j.mu.Lock()
			j.env, j.state, j.trace = env, StateRunning, ""
			j.mu.Unlock()
			m.log.Info("flinklite job running", "job", j.rec.Spec.ID, "restarts", j.restart)
			started := time.Now()
			err = env.Run(ctx, flinklite.RunConfig{
				JobID: j.jobID(), Brokers: m.brokers, ClientOpts: m.opts,
				CheckpointDir:      filepath.Join(j.dir, "checkpoints"),
				CheckpointInterval: j.rec.Spec.Checkpoint.Interval.D,
				Savepoint:          j.rec.Spec.Savepoint,
			})
			if time.Since(started) > time.Minute {
				delay = time.Second // ran fine for a while: a new failure starts the backoff over
			}
		}
		if state != nil {
			state.Close()
		}
		if ctx.Err() != nil {
			if err != nil {
				m.log.Info("flinklite job stopped", "job", j.rec.Spec.ID, "error", err)
			}
			return
		}
		if err == nil {
			err = errors.New("job ended")
		}
		j.mu.Lock()
		j.state, j.trace = StateRestarting, err.Error()
		j.restart++
		j.mu.Unlock()
		m.log.Warn("flinklite job failed, restarting", "job", j.rec.Spec.ID, "delay", delay, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// Info is what GET /jobs/{id} returns.
type Info struct {
	ID    string `json:"id"`
	State string `json:"state"`
	// Trace is the last failure's message (empty while it runs fine).
	Trace    string `json:"trace,omitempty"`
	Restarts int    `json:"restarts"`
	flinklite.JobStatus
	// WatermarkTime is Watermark as RFC 3339 (absent before the first).
	WatermarkTime *time.Time `json:"watermark_time,omitempty"`
	Spec          *Spec      `json:"spec"`
	// Distributed is the job's scale-out on a distributed worker: the
	// partitions this worker runs and the cluster's workers.
	Distributed *DistributedInfo `json:"distributed,omitempty"`
}

// Get returns the job's state and figures. Errors: ErrNotFound.
func (m *Manager) Get(id string) (Info, error) {
	m.mu.Lock()
	j, ok := m.jobs[id]
	m.mu.Unlock()
	if !ok {
		return Info{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	j.mu.Lock()
	info := Info{ID: id, State: j.state, Trace: j.trace, Restarts: j.restart, Spec: redacted(j.rec.Spec)}
	switch {
	case m.dist != nil:
		j.distributedStatus(&info, m.dist.cfg.WorkerID)
	case j.env != nil:
		info.JobStatus = j.env.Status()
	default:
		info.Watermark = flinklite.MinWatermark
	}
	j.mu.Unlock()
	if m.dist != nil {
		m.describeWorkers(j, &info) // asks Kafka: outside j.mu
	}
	if info.Watermark != flinklite.MinWatermark {
		t := time.UnixMilli(info.Watermark).UTC()
		info.WatermarkTime = &t
	}
	return info, nil
}

// redacted is s without the JDBC password, for GET responses.
func redacted(s *Spec) *Spec {
	if s.Sinks.JDBC == nil || s.Sinks.JDBC.Password == "" {
		return s
	}
	c := *s
	j := *s.Sinks.JDBC
	j.Password = "[hidden]"
	c.Sinks.JDBC = &j
	return &c
}

// List returns the ids of the jobs, sorted.
func (m *Manager) List() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.jobs))
	for id := range m.jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Delete stops the job (without a final savepoint: take one first to keep
// its state) and removes its spec, checkpoints and checkpoint marker
// topic; its savepoints stay. Errors: ErrNotFound; the file system's.
func (m *Manager) Delete(ctx context.Context, id string) error {
	if m.dist != nil {
		return m.deleteDistributed(ctx, id)
	}
	m.mu.Lock()
	j, ok := m.jobs[id]
	if ok {
		delete(m.jobs, id)
	}
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	j.cancel()
	<-j.done
	// job.json first: a crash half way leaves no job to restart.
	if err := os.Remove(filepath.Join(j.dir, "job.json")); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.RemoveAll(j.dir); err != nil {
		return err
	}
	if cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(m.brokers...)}, m.opts...)...); err == nil {
		_, _ = kadm.NewClient(cl).DeleteTopics(ctx, j.jobID()+".checkpoints")
		cl.Close()
	}
	return nil
}

// Savepoint takes a savepoint of the running job into
// <data.dir>/savepoints/<id> (kept when the job is deleted, so that a new
// job can start from it) and returns its path. Errors:
// ErrNotFound, ErrNotRunning, the checkpoint's.
func (m *Manager) Savepoint(ctx context.Context, id string) (string, error) {
	m.mu.Lock()
	j, ok := m.jobs[id]
	m.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if m.dist != nil {
		return "", fmt.Errorf("job %s: savepoints of a distributed job: %w", id, ErrUnsupported)
	}
	j.mu.Lock()
	env, state := j.env, j.state
	j.mu.Unlock()
	if env == nil || state != StateRunning {
		return "", fmt.Errorf("job %s is %s: %w", id, state, ErrNotRunning)
	}
	return env.TriggerSavepoint(ctx, filepath.Join(m.spDir, id))
}

// Close stops every job, each with a final checkpoint (Env.Run's clean
// stop), and waits for them.
func (m *Manager) Close() {
	if m.dist != nil {
		m.dist.specs.Close()
	}
	m.cancel()
	m.wg.Wait()
}
