package job

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
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

// ErrTriggerNotFound: the job has no savepoint operation with the given
// trigger id (REST 404; Flink's "Operation not found"): ids are kept in
// memory, so a worker restart forgets them, as Flink's JobManager does.
var ErrTriggerNotFound = errors.New("savepoint operation not found")

// Job states, as Flink's JobStatus.
const (
	// StateInitializing: a job just created or loaded at start, not yet
	// running and not yet failed (Flink's INITIALIZING; before it, such a
	// job showed RESTARTING with 0 restarts and no trace).
	StateInitializing = "INITIALIZING"
	StateRunning      = "RUNNING"
	StateRestarting   = "RESTARTING"
	StateFailed       = "FAILED"
	// StateCanceled: the job was stopped by a savepoint with cancel-job
	// (POST /jobs/{id}/savepoints); it stays so, across worker restarts,
	// until deleted.
	StateCanceled = "CANCELED"
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
	// logSync is every job's RunConfig.LogSync (WithLogSync).
	logSync func() error
}

// ManagerOption configures a Manager (NewManager).
type ManagerOption func(*Manager)

// WithLogSync gives every job sync as its RunConfig.LogSync: the worker's
// embedded broker's Sync.
func WithLogSync(sync func() error) ManagerOption {
	return func(m *Manager) { m.logSync = sync }
}

// persisted is job.json.
type persisted struct {
	Spec *Spec `json:"spec"`
	// Incarnation makes the Kafka transactional.id and checkpoint marker
	// topic of a re-created job (same id) distinct from the deleted one's.
	Incarnation int64     `json:"incarnation"`
	Created     time.Time `json:"created"`
	// Canceled: stopped with a savepoint (cancel-job); not started again.
	Canceled bool `json:"canceled,omitempty"`
}

type runningJob struct {
	rec     persisted
	dir     string
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	env     *flinklite.Env
	runCtx  context.Context // done when env's Run returns
	state   string
	trace   string
	restart int
	// stopping: a savepoint with cancel-job was requested, so a nil
	// return of Env.Run means the job stopped at that savepoint.
	stopping bool
	triggers map[string]*SavepointStatus
	// parts are the partition instances a distributed job runs on this
	// worker, and repartition whether it has a repartition stage.
	parts       map[partitionKey]*flinklite.Env
	repartition bool
}

// NewManager returns the manager of the jobs under dataDir/jobs, reading
// Kafka at brokers with opts (the worker's internal client security), and
// starts every job persisted there. Errors: dataDir unreadable.
func NewManager(dataDir string, brokers []string, opts []kgo.Opt, log *slog.Logger, mopts ...ManagerOption) (*Manager, error) {
	m := &Manager{dir: filepath.Join(dataDir, "jobs"), spDir: filepath.Join(dataDir, "savepoints"), brokers: brokers, opts: opts, log: log, jobs: map[string]*runningJob{}}
	for _, o := range mopts {
		o(m)
	}
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
	if err := writeJobJSON(dir, p); err != nil {
		return err
	}
	m.startLocked(p)
	return nil
}

func (m *Manager) start(p persisted) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.startLocked(p)
}

func (m *Manager) startLocked(p persisted) {
	ctx, cancel := context.WithCancel(m.ctx)
	j := &runningJob{rec: p, dir: filepath.Join(m.dir, p.Spec.ID), cancel: cancel, done: make(chan struct{}), state: StateInitializing, triggers: map[string]*SavepointStatus{}}
	m.jobs[p.Spec.ID] = j
	if p.Canceled {
		j.state = StateCanceled
		close(j.done)
		return
	}
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
		runCtx, runDone := context.WithCancel(ctx)
		if err == nil {
			j.mu.Lock()
			j.env, j.runCtx, j.state, j.trace = env, runCtx, StateRunning, ""
			j.mu.Unlock()
			m.log.Info("flinklite job running", "job", j.rec.Spec.ID, "restarts", j.restart)
			started := time.Now()
			err = env.Run(ctx, flinklite.RunConfig{
				JobID: j.jobID(), Brokers: m.brokers, ClientOpts: m.opts,
				CheckpointDir:      filepath.Join(j.dir, "checkpoints"),
				CheckpointInterval: j.rec.Spec.Checkpoint.Interval.D,
				Savepoint:          j.rec.Spec.Savepoint,
				LogSync:            m.logSync,
			})
			if time.Since(started) > time.Minute {
				delay = time.Second // ran fine for a while: a new failure starts the backoff over
			}
		}
		runDone() // a savepoint request the ended run did not serve fails
		if state != nil {
			state.Close()
		}
		j.mu.Lock()
		stopped := err == nil && j.stopping && ctx.Err() == nil
		if stopped {
			j.state, j.env = StateCanceled, nil
		}
		j.mu.Unlock()
		if stopped {
			m.log.Info("flinklite job stopped with a savepoint", "job", j.rec.Spec.ID)
			return
		}
		if ctx.Err() != nil {
			if err != nil {
				m.log.Info("flinklite job stopped", "job", j.rec.Spec.ID, "error", err)
			}
			return
		}
		var ok bool
		if delay, ok = m.restartAfter(ctx, j, err, delay); !ok {
			return
		}
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

// job returns the running job id. Errors: ErrNotFound.
func (m *Manager) job(id string) (*runningJob, error) {
	m.mu.Lock()
	j, ok := m.jobs[id]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return j, nil
}

// Get returns the job's state and figures. Errors: ErrNotFound.
func (m *Manager) Get(id string) (Info, error) {
	j, err := m.job(id)
	if err != nil {
		return Info{}, err
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
	if cl, err := m.kafkaClient(); err == nil {
		_, _ = kadm.NewClient(cl).DeleteTopics(ctx, j.jobID()+".checkpoints")
		cl.Close()
	}
	return nil
}

// SavepointRequest is the body of POST /jobs/{id}/savepoints, Flink's
// SavepointTriggerRequestBody (REST API reference, /jobs/:jobid/savepoints).
type SavepointRequest struct {
	// TargetDirectory is the directory the savepoint file is written to:
	// an absolute path; empty: <data.dir>/savepoints/<id> (Flink's
	// state.savepoints.dir).
	TargetDirectory string `json:"target-directory,omitempty"`
	// CancelJob stops the job right after the savepoint (Flink's
	// cancel-job): nothing is read after it, and the job stays CANCELED.
	CancelJob bool `json:"cancel-job,omitempty"`
	// TriggerID, when set (32 hex digits), names the operation instead of
	// a random id; triggering an id that exists returns it again without a
	// new savepoint (Flink's idempotent triggerId).
	TriggerID string `json:"triggerId,omitempty"`
	// FormatType is Flink's CANONICAL or NATIVE; accepted for
	// compatibility: flinklite has one savepoint format.
	FormatType string `json:"formatType,omitempty"`
}

// SavepointStatus is GET /jobs/{id}/savepoints/{triggerid}: Flink's
// AsynchronousOperationResult with a SavepointInfo operation.
type SavepointStatus struct {
	Status struct {
		// ID is IN_PROGRESS or COMPLETED (Flink's QueueStatus.Id).
		ID string `json:"id"`
	} `json:"status"`
	// Operation is absent while in progress.
	Operation *SavepointInfo `json:"operation,omitempty"`
	completed time.Time
}

// SavepointInfo is the outcome of a savepoint: Location on success, else
// FailureCause (Flink's SavepointInfo).
type SavepointInfo struct {
	Location     string        `json:"location,omitempty"`
	FailureCause *FailureCause `json:"failure-cause,omitempty"`
}

// FailureCause is Flink's SerializedThrowable as its REST API writes it:
// "class" (here the kind of failure) and "stack-trace" (here the error
// message). Flink's "serialized-throwable" (a Java-serialized exception)
// has no meaning outside a JVM and is left out.
type FailureCause struct {
	Class      string `json:"class"`
	StackTrace string `json:"stack-trace"`
}

// Savepoint statuses, as Flink's QueueStatus.Id.
const (
	SavepointInProgress = "IN_PROGRESS"
	SavepointCompleted  = "COMPLETED"
)

// operationTTL is how long a completed savepoint operation can be read
// (Flink's rest.async.store-duration, default 5 min); older ones are
// forgotten when the next savepoint of the job is triggered.
const operationTTL = 5 * time.Minute

// savepointTimeout bounds one savepoint operation (Flink's
// execution.checkpointing.timeout, which bounds savepoints too).
const savepointTimeout = 10 * time.Minute

var triggerIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TriggerSavepoint starts a savepoint of the running job and returns its
// trigger id at once (Flink's POST /jobs/:jobid/savepoints, answered 202);
// SavepointStatus tells when it completes. The savepoint is a checkpoint
// committed at once whose file is copied to req.TargetDirectory (kept when
// the job is deleted, so that a new job can start from it with
// spec.savepoint). With req.CancelJob the job stops right after the
// savepoint and stays CANCELED (persisted in job.json); if the savepoint
// fails, the job restarts from its last checkpoint instead. Errors:
// ErrNotFound, ErrNotRunning, *SpecInvalidError for a relative
// target-directory, a malformed triggerId or formatType.
func (m *Manager) TriggerSavepoint(id string, req SavepointRequest) (string, error) {
	var errs []FieldError
	dir := req.TargetDirectory
	if dir != "" && !filepath.IsAbs(dir) {
		errs = append(errs, FieldError{Field: "target-directory", Message: fmt.Sprintf("must be an absolute path, got %q", dir)})
	}
	if req.TriggerID != "" && !triggerIDRE.MatchString(req.TriggerID) {
		errs = append(errs, FieldError{Field: "triggerId", Message: fmt.Sprintf("must be 32 hexadecimal digits, got %q", req.TriggerID)})
	}
	if req.FormatType != "" && req.FormatType != "CANONICAL" && req.FormatType != "NATIVE" {
		errs = append(errs, FieldError{Field: "formatType", Message: fmt.Sprintf("must be CANONICAL or NATIVE, got %q", req.FormatType)})
	}
	if len(errs) > 0 {
		return "", &SpecInvalidError{Errors: errs, What: "Savepoint request"}
	}
	if dir == "" {
		dir = filepath.Join(m.spDir, id)
	}
	dir = filepath.Clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return "", fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	if m.dist != nil {
		return "", fmt.Errorf("job %s: savepoints of a distributed job: %w", id, ErrUnsupported)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for id, op := range j.triggers {
		if !op.completed.IsZero() && time.Since(op.completed) > operationTTL {
			delete(j.triggers, id)
		}
	}
	if req.TriggerID != "" {
		if _, ok := j.triggers[req.TriggerID]; ok {
			return req.TriggerID, nil
		}
	}
	env, runCtx, state := j.env, j.runCtx, j.state
	if env == nil || state != StateRunning || j.stopping {
		if j.stopping {
			state = "stopping with a savepoint"
		}
		return "", fmt.Errorf("job %s is %s: %w", id, state, ErrNotRunning)
	}
	trigger := req.TriggerID
	if trigger == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		trigger = hex.EncodeToString(b[:])
	}
	op := &SavepointStatus{}
	op.Status.ID = SavepointInProgress
	j.triggers[trigger] = op
	j.stopping = req.CancelJob
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		// The run the request went to may end first (a failure, a
		// restart): the operation fails then instead of waiting.
		ctx, cancel := context.WithTimeout(runCtx, savepointTimeout)
		defer cancel()
		var path string
		var err error
		if req.CancelJob {
			path, err = env.StopWithSavepoint(ctx, dir)
		} else {
			path, err = env.TriggerSavepoint(ctx, dir)
		}
		if err == nil && req.CancelJob {
			err = m.persistCanceled(j)
		}
		j.mu.Lock()
		defer j.mu.Unlock()
		info := &SavepointInfo{Location: path}
		if err != nil {
			info = &SavepointInfo{FailureCause: &FailureCause{Class: "flinklite.SavepointFailure", StackTrace: err.Error()}}
			j.stopping = false
			m.log.Warn("flinklite savepoint failed", "job", id, "trigger", trigger, "error", err)
		}
		op.Operation = info
		op.Status.ID = SavepointCompleted
		op.completed = time.Now()
	}()
	return trigger, nil
}

// persistCanceled records in job.json that the job stopped with a
// savepoint, so that a restarted worker does not start it again.
func (m *Manager) persistCanceled(j *runningJob) error {
	p := j.rec
	p.Canceled = true
	return writeJobJSON(j.dir, p)
}

// writeJobJSON writes p to dir/job.json atomically: a crash leaves the old
// file (or none) or the whole new one.
func writeJobJSON(dir string, p persisted) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return flinklite.WriteFileAtomic(filepath.Join(dir, "job.json"), b)
}

// kafkaClient is a client of the worker's Kafka (its brokers and client
// options).
func (m *Manager) kafkaClient(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(m.brokers...)}, m.opts...), opts...)...)
}

// SavepointStatus returns the state of the savepoint operation trigger
// of job id (Flink's GET /jobs/:jobid/savepoints/:triggerid). Errors:
// ErrNotFound, ErrTriggerNotFound.
func (m *Manager) SavepointStatus(id, trigger string) (SavepointStatus, error) {
	j, err := m.job(id)
	if err != nil {
		return SavepointStatus{}, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	op, ok := j.triggers[trigger]
	if !ok {
		return SavepointStatus{}, fmt.Errorf("job %s, trigger %s: %w", id, trigger, ErrTriggerNotFound)
	}
	out := *op
	if op.Operation != nil {
		info := *op.Operation
		out.Operation = &info
	}
	return out, nil
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

// restartAfter marks j RESTARTING with err's message (a nil err: the job
// ended by itself), waits delay and returns the next delay (doubled, at
// most 30 s); false when ctx ended while waiting.
func (m *Manager) restartAfter(ctx context.Context, j *runningJob, err error, delay time.Duration) (time.Duration, bool) {
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
		return delay, false
	case <-time.After(delay):
	}
	return min(2*delay, 30*time.Second), true
}
