package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/flinklite"
	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrUnsupported: the request is not supported for the job on this
// worker, e.g. a savepoint of a distributed job (REST 409).
var ErrUnsupported = errors.New("not supported")

// DistributedConfig makes a Manager distributed (NewDistributedManager):
// the workers of one connectd cluster (one Kafka cluster, one group.id)
// share their job specs through Topic and all run every job, scaled out.
type DistributedConfig struct {
	// Topic is the compacted topic of the job specs (worker property
	// jobs.storage.topic); one per connectd cluster, as
	// config.storage.topic.
	Topic string
	// WorkerID names this worker (its REST host:port) in GET /jobs/{id}
	// and in the jobs' consumer groups (the members' client.id).
	WorkerID string
	// SessionTimeout is how long a worker that stopped heartbeating keeps
	// its partitions (the worker's session.timeout.ms; default 10 s).
	SessionTimeout time.Duration
	// ReplicationFactor of Topic and of the repartition topics (-1 = the
	// broker's default).
	ReplicationFactor int16
}

type distributed struct {
	cfg   DistributedConfig
	specs *kafkalog.Log
	// createMu serializes this worker's creates and deletes, so that two
	// requests for one id cannot both pass the existence check.
	createMu sync.Mutex
}

// Stages of a distributed job, as GET /jobs/{id} names them.
const (
	stageRepartition = "repartition"
	stageWindow      = "window"
)

// DistributedInfo is the part of GET /jobs/{id} about the scale-out of a
// job of a distributed worker.
type DistributedInfo struct {
	// Worker is the worker that answered (its REST host:port).
	Worker string `json:"worker"`
	// RepartitionTopic is the job's repartition topic ("<job>.repartition",
	// keyed by the keyBy values), absent when keyBy is the input key.
	RepartitionTopic string `json:"repartition_topic,omitempty"`
	// Partitions are the input partitions this worker runs, per stage.
	Partitions []PartitionInfo `json:"partitions"`
	// Workers are the members of the job's consumer groups and their
	// partitions, as Kafka's DescribeGroups reports them (absent when the
	// broker did not answer in time).
	Workers []WorkerPartitions `json:"workers,omitempty"`
}

// PartitionInfo is one partition this worker runs: the stage
// ("repartition" reads the source topics and writes the repartition
// topic; "window" reads the repartition topic, or the source topics
// without one, and writes the sinks) and the figures of its instance.
type PartitionInfo struct {
	Stage     string `json:"stage"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	flinklite.JobStatus
}

// WorkerPartitions is one member of a stage's consumer group: the worker
// (its client.id, the worker's REST host:port) and its partitions.
type WorkerPartitions struct {
	Worker     string             `json:"worker"`
	Stage      string             `json:"stage"`
	Partitions map[string][]int32 `json:"partitions"`
}

// NewDistributedManager returns the manager of a distributed worker: job
// specs are records of the compacted topic cfg.Topic (key "job-<id>", the
// value job.json's content; a delete is a tombstone), as Kafka Connect
// keeps connector configs in its config topic, and every worker runs
// every job. A job runs with flinklite.RunScaledOut: its input partitions
// are spread across the workers by a consumer group per stage, each
// partition's state checkpointed in Kafka ("<stage id>.state"), so a
// worker that gets a partition restores its state. When keyBy is not the
// input key (Spec.Source.Key), a first stage repartitions the rows by
// their keyBy values through "<job>.repartition" (Flink's keyBy shuffle).
// Errors: Kafka's, reading the topic.
func NewDistributedManager(ctx context.Context, dataDir string, brokers []string, opts []kgo.Opt, log *slog.Logger, cfg DistributedConfig) (*Manager, error) {
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	m := &Manager{dir: filepath.Join(dataDir, "jobs"), brokers: brokers, opts: opts, log: log, jobs: map[string]*runningJob{}, dist: &distributed{cfg: cfg}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	specs, err := kafkalog.Open(ctx, brokers, cfg.Topic, kafkalog.TopicSpec{Partitions: 1, ReplicationFactor: cfg.ReplicationFactor}, m.applySpec, opts...)
	if err != nil {
		m.cancel()
		return nil, fmt.Errorf("reading the job specs of %s: %w", cfg.Topic, err)
	}
	m.dist.specs = specs
	return m, nil
}

const specKeyPrefix = "job-"

// applySpec applies one record of the spec topic (on the log's goroutine):
// a new spec (or a new incarnation of an id) starts the job, replacing a
// running one, a tombstone stops it.
func (m *Manager) applySpec(r kafkalog.Record) {
	id, ok := strings.CutPrefix(string(r.Key), specKeyPrefix)
	if !ok {
		return
	}
	var p persisted
	if r.Value != nil {
		if err := json.Unmarshal(r.Value, &p); err != nil || p.Spec == nil || p.Spec.ID != id {
			m.log.Error("flinklite job spec unreadable, not started", "topic", m.dist.cfg.Topic, "key", string(r.Key), "error", err)
			return
		}
		if err := p.Spec.Validate(); err != nil {
			m.log.Error("flinklite job spec invalid, not started", "job", id, "error", err)
			return
		}
	}
	m.mu.Lock()
	old := m.jobs[id]
	if old != nil && r.Value != nil && old.rec.Incarnation == p.Incarnation {
		m.mu.Unlock()
		return
	}
	if old != nil {
		delete(m.jobs, id)
	}
	m.mu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
	}
	if r.Value != nil {
		m.start(p)
	}
}

// distributedLimits refuses what a scaled-out job cannot do: its state
// is in Kafka records, not in data.dir.
func distributedLimits(s *Spec) error {
	var errs []FieldError
	if s.StateBackend == "pebble" {
		errs = append(errs, FieldError{Field: "stateBackend", Message: "pebble is not supported on a distributed worker: each input partition's state is checkpointed in one Kafka record (memory)"})
	}
	if s.Savepoint != "" {
		errs = append(errs, FieldError{Field: "savepoint", Message: "savepoints are files of one worker; a distributed job starts from its checkpoints in Kafka"})
	}
	if len(errs) > 0 {
		return &SpecInvalidError{Errors: errs}
	}
	return nil
}

// createDistributed writes the spec to the spec topic and returns once
// this worker applied it (started the job).
func (m *Manager) createDistributed(s *Spec) error {
	if err := distributedLimits(s); err != nil {
		return err
	}
	d := m.dist
	d.createMu.Lock()
	defer d.createMu.Unlock()
	ctx, cancel := context.WithTimeout(m.ctx, 30*time.Second)
	defer cancel()
	if err := d.specs.ReadToEnd(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	_, exists := m.jobs[s.ID]
	m.mu.Unlock()
	if exists {
		return fmt.Errorf("job %s: %w", s.ID, ErrExists)
	}
	b, err := json.Marshal(persisted{Spec: s, Incarnation: time.Now().UnixNano(), Created: time.Now().UTC()})
	if err != nil {
		return err
	}
	if err := d.specs.Send(ctx, []byte(specKeyPrefix+s.ID), b); err != nil {
		return err
	}
	return d.specs.ReadToEnd(ctx)
}

// deleteDistributed writes the job's tombstone, waits until this worker
// stopped the job and the other workers left its consumer groups (up to
// the session timeout and a margin), then deletes its internal topics
// (state, repartition) and groups.
func (m *Manager) deleteDistributed(ctx context.Context, id string) error {
	d := m.dist
	d.createMu.Lock()
	defer d.createMu.Unlock()
	j, err := m.job(id)
	if err != nil {
		return err
	}
	if err := d.specs.Send(ctx, []byte(specKeyPrefix+id), nil); err != nil {
		return err
	}
	if err := d.specs.ReadToEnd(ctx); err != nil {
		return err
	}
	cl, err := m.kafkaClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	names := stageNames(j)
	groups := []string{names.window, names.repartitionStage}
	deadline := time.Now().Add(d.cfg.SessionTimeout + 10*time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		dg, err := adm.DescribeGroups(ctx, groups...)
		members := 0
		for _, g := range dg {
			members += len(g.Members)
		}
		if err == nil && members == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, _ = adm.DeleteGroups(ctx, groups...)
	_, _ = adm.DeleteTopics(ctx, names.window+".state", names.repartitionStage+".state", names.repartitionTopic)
	return nil
}

// jobNames are the Kafka names of a distributed job: the consumer groups
// (and transactional.id prefixes) of its stages and the repartition
// topic.
type jobNames struct {
	window, repartitionStage, repartitionTopic string
}

func stageNames(j *runningJob) jobNames {
	id := j.jobID()
	return jobNames{window: id, repartitionStage: id + ".shuffle", repartitionTopic: id + ".repartition"}
}

// needsRepartition: keyBy is not exactly the input key (or the map
// overwrites one of its fields), so rows of one key may be on several
// input partitions and must be shuffled by their keyBy values.
func needsRepartition(s *Spec) bool {
	if len(s.Source.Key) == 0 {
		return true
	}
	for _, p := range s.Map {
		if slices.Contains(s.KeyBy, p.As) {
			return true
		}
	}
	a, b := slices.Clone(s.Source.Key), slices.Clone(s.KeyBy)
	sort.Strings(a)
	sort.Strings(b)
	return !slices.Equal(slices.Compact(a), slices.Compact(b))
}

// repartitionRecord is the value of a record of the repartition topic:
// a row after the filter and map (its fields and event time) and whether
// it retracts an earlier row. The record key is the row's keyBy values
// (a JSON array), so the producer's murmur2 partitioner puts every row of
// a key on one partition, in the order the rows of one input partition
// were produced.
type repartitionRecord struct {
	Row     Row  `json:"row"`
	Retract bool `json:"retract,omitempty"`
}

func repartitionEncoder(s *Spec) func(flinklite.Change[Row]) ([]byte, []byte, error) {
	return func(c flinklite.Change[Row]) ([]byte, []byte, error) {
		v, err := json.Marshal(repartitionRecord{Row: c.Value, Retract: c.Retract})
		return []byte(keyOf(s, c.Value)), v, err
	}
}

// toRepartition builds the repartition stage's instance of one source
// partition, producer being its index over the source topics'
// partitions: the rows, carrying the source partition's watermarks (as in
// local mode), are filtered and mapped and go to topic (with partitions
// partitions) keyed by keyBy, and the source partition's watermark and
// idle status go to every partition (flinklite.ToKafkaShuffle), in the
// transaction of the source offsets.
func toRepartition(s *Spec, rows *flinklite.Stream[Row], topic string, partitions, producer int32) {
	flinklite.ToKafkaShuffle(transformRows(s, rows), flinklite.ShuffleConfig[Row]{
		Topic: topic, Partitions: partitions, Producer: producer, Encode: repartitionEncoder(s),
	})
}

// fromRepartition decodes the repartition topic's records into rows and
// their retractions, at their event time; the watermark is the minimum of
// the watermarks forwarded by the producers (the source partitions)
// that are not idle (flinklite.ShuffleWatermarks), so a lagging source
// partition holds it back rather than its rows arriving late. A record
// that does not decode fails the job.
func fromRepartition(env *flinklite.Env, msgs *flinklite.Stream[flinklite.Message], producers int) *flinklite.Stream[Row] {
	rows := flinklite.FlatMapChanges(flinklite.ShuffleWatermarks(msgs, producers), func(m flinklite.Message, out func(Row, bool)) {
		var r repartitionRecord
		if err := json.Unmarshal(m.Value, &r); err != nil || r.Row.Fields == nil {
			env.Fail(fmt.Errorf("repartition record %s/%d@%d is not a row: %v", m.Topic, m.Partition, m.Offset, err))
			return
		}
		out(r.Row, r.Retract)
	})
	return flinklite.AssignTimestamps(rows, func(r Row) time.Time { return time.UnixMilli(r.Time) })
}

// checkInputKey fails the job on a record whose Kafka key does not have
// exactly the fields of Spec.Source.Key: without a repartition, the job's
// state per input partition is only correct when the topic is
// partitioned by the keyBy fields.
func checkInputKey(env *flinklite.Env, s *Spec, msgs *flinklite.Stream[flinklite.Message]) *flinklite.Stream[flinklite.Message] {
	want := slices.Clone(s.Source.Key)
	sort.Strings(want)
	want = slices.Compact(want)
	return flinklite.Filter(msgs, func(m flinklite.Message) bool {
		if m.Key == nil && m.Value == nil {
			return true
		}
		got, err := keyFieldNames(m.Key)
		if err == nil && !slices.Equal(got, want) {
			err = fmt.Errorf("has the fields %v", got)
		}
		if err != nil {
			env.Fail(fmt.Errorf("the key of record %s/%d@%d %v, not source.key %v: the topic is not partitioned by keyBy (remove source.key to repartition)", m.Topic, m.Partition, m.Offset, err, want))
			return false
		}
		return true
	})
}

// keyFieldNames returns the sorted field names of a JSON object key, or
// of the payload of a JSON converter envelope ({"schema", "payload"}).
func keyFieldNames(key []byte) ([]string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(key, &obj); err != nil || obj == nil {
		return nil, errors.New("is not a JSON object")
	}
	if p, ok := obj["payload"]; ok && len(obj) == 2 && obj["schema"] != nil {
		obj = nil
		if err := json.Unmarshal(p, &obj); err != nil || obj == nil {
			return nil, errors.New("has no JSON object payload")
		}
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, nil
}

// partitionCount returns the total number of partitions of topics and
// the index of each topic's partition 0 among them (topics in order,
// partitions in number order: a source partition's producer index in the
// repartition topic's watermarks).
func partitionCount(ctx context.Context, adm *kadm.Client, topics []string) (int32, map[string]int32, error) {
	md, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return 0, nil, fmt.Errorf("reading the partitions of %v: %w", topics, err)
	}
	var n int32
	first := map[string]int32{}
	for _, t := range topics {
		td, ok := md[t]
		if !ok || td.Err != nil {
			return 0, nil, fmt.Errorf("topic %s: %v", t, td.Err)
		}
		if _, dup := first[t]; dup {
			continue
		}
		first[t] = n
		n += int32(len(td.Partitions))
	}
	return n, first, nil
}

// runDistributed runs j's stages on this worker until ctx is done,
// restarting them after failures with the local jobs' backoff.
func (m *Manager) runDistributed(ctx context.Context, j *runningJob) {
	delay := time.Second
	for {
		started := time.Now()
		err := m.runStages(ctx, j)
		if ctx.Err() != nil {
			if err != nil {
				m.log.Info("flinklite job stopped", "job", j.rec.Spec.ID, "error", err)
			}
			return
		}
		if time.Since(started) > time.Minute {
			delay = time.Second
		}
		var ok bool
		if delay, ok = m.restartAfter(ctx, j, err, delay); !ok {
			return
		}
	}
}

// runStages runs the job's stages once: with a repartition, the
// repartition stage over the source topics and the window stage over the
// repartition topic (created with as many partitions as the sources
// have, so the window stage has the sources' parallelism); without, the
// window stage over the source topics. The first stage error stops both.
func (m *Manager) runStages(ctx context.Context, j *runningJob) error {
	s := j.rec.Spec
	names := stageNames(j)
	cl, err := m.kafkaClient()
	if err != nil {
		return err
	}
	adm := kadm.NewClient(cl)
	n, producerBase, err := partitionCount(ctx, adm, s.Source.Topics)
	repartition := needsRepartition(s)
	var rn int32 // partitions of the repartition topic
	if err == nil && repartition {
		// The partition count is fixed at creation: a row's partition
		// (its state's home) must not change while the job lives.
		_, err = adm.CreateTopic(ctx, n, m.dist.cfg.ReplicationFactor, nil, names.repartitionTopic)
		if errors.Is(err, kerr.TopicAlreadyExists) {
			err = nil
		}
		if err == nil {
			rn, _, err = partitionCount(ctx, adm, []string{names.repartitionTopic})
		}
	}
	cl.Close()
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base := flinklite.ScaleOutConfig{
		Brokers: m.brokers, ClientOpts: m.opts, CheckpointInterval: s.Checkpoint.Interval.D,
		SessionTimeout: m.dist.cfg.SessionTimeout, MemberClientID: m.dist.cfg.WorkerID,
	}
	type stage struct {
		name  string
		cfg   flinklite.ScaleOutConfig
		build flinklite.PartitionJob
	}
	window := base
	window.JobID = names.window
	var stages []stage
	if repartition {
		shuffle := base
		shuffle.JobID, shuffle.Topics = names.repartitionStage, s.Source.Topics
		stages = append(stages, stage{stageRepartition, shuffle, func(env *flinklite.Env, msgs *flinklite.Stream[flinklite.Message]) error {
			topic, p, _ := env.InputPartition()
			toRepartition(s, withWatermarks(s, decodeRows(s, msgs)), names.repartitionTopic, rn, producerBase[topic]+p)
			return nil
		}})
		window.Topics = []string{names.repartitionTopic}
		stages = append(stages, stage{stageWindow, window, func(env *flinklite.Env, msgs *flinklite.Stream[flinklite.Message]) error {
			return compileWindows(env, s, fromRepartition(env, msgs, int(n)), nil)
		}})
	} else {
		window.Topics = s.Source.Topics
		stages = append(stages, stage{stageWindow, window, func(env *flinklite.Env, msgs *flinklite.Stream[flinklite.Message]) error {
			return compileWindows(env, s, transformRows(s, withWatermarks(s, decodeRows(s, checkInputKey(env, s, msgs)))), nil)
		}})
	}
	j.mu.Lock()
	j.state, j.trace = StateRunning, ""
	j.repartition = repartition
	j.mu.Unlock()
	m.log.Info("flinklite job running", "job", s.ID, "restarts", j.restart, "repartition", repartition, "partitions", n)
	errc := make(chan error, len(stages))
	for _, st := range stages {
		st.cfg.OnStarted = func(topic string, p int32, env *flinklite.Env) { j.partitionStarted(st.name, topic, p, env) }
		st.cfg.OnStopped = func(topic string, p int32) { j.partitionStopped(st.name, topic, p) }
		go func() {
			err := flinklite.RunScaledOut(sctx, st.cfg, st.build)
			if err != nil {
				err = fmt.Errorf("%s stage: %w", st.name, err)
				cancel()
			}
			errc <- err
		}()
	}
	var first error
	for range stages {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// partitionKey names a partition instance of a stage in runningJob.parts.
type partitionKey struct {
	stage, topic string
	part         int32
}

func (j *runningJob) partitionStarted(stage, topic string, p int32, env *flinklite.Env) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.parts == nil {
		j.parts = map[partitionKey]*flinklite.Env{}
	}
	j.parts[partitionKey{stage, topic, p}] = env
}

func (j *runningJob) partitionStopped(stage, topic string, p int32) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.parts, partitionKey{stage, topic, p})
}

// distributedStatus fills info with the partitions this worker runs and
// the job's status summed over them: the watermark is the window stage's
// lowest, lag and state entries are sums, the last checkpoint the latest,
// metrics sums. Called with j.mu held.
func (j *runningJob) distributedStatus(info *Info, worker string) {
	d := &DistributedInfo{Worker: worker, Partitions: []PartitionInfo{}}
	if j.repartition {
		d.RepartitionTopic = stageNames(j).repartitionTopic
	}
	info.Watermark = flinklite.MinWatermark
	first := true
	for k, env := range j.parts {
		st := env.Status()
		d.Partitions = append(d.Partitions, PartitionInfo{Stage: k.stage, Topic: k.topic, Partition: k.part, JobStatus: st})
		info.Lag += st.Lag
		info.StateEntries += st.StateEntries
		if c := st.LastCheckpoint; c != nil && (info.LastCheckpoint == nil || c.Completed.After(info.LastCheckpoint.Completed)) {
			info.LastCheckpoint = c
		}
		mt := &info.Metrics
		mt.NumRecordsIn += st.Metrics.NumRecordsIn
		mt.NumLateRecordsDropped += st.Metrics.NumLateRecordsDropped
		mt.NumLateRecordsSideOutput += st.Metrics.NumLateRecordsSideOutput
		mt.NumUnmatchedRetractions += st.Metrics.NumUnmatchedRetractions
		mt.StateEntriesExpired += st.Metrics.StateEntriesExpired
		mt.Checkpoints += st.Metrics.Checkpoints
		mt.SlowCheckpoints += st.Metrics.SlowCheckpoints
		mt.LastCheckpointDuration = max(mt.LastCheckpointDuration, st.Metrics.LastCheckpointDuration)
		if k.stage == stageWindow && (first || st.Watermark < info.Watermark) {
			info.Watermark, first = st.Watermark, false
		}
	}
	sort.Slice(d.Partitions, func(a, b int) bool {
		x, y := d.Partitions[a], d.Partitions[b]
		if x.Stage != y.Stage {
			return x.Stage == stageRepartition
		}
		if x.Topic != y.Topic {
			return x.Topic < y.Topic
		}
		return x.Partition < y.Partition
	})
	info.Distributed = d
}

// describeWorkers adds the members of j's consumer groups to info (best
// effort: Kafka's answer within a few seconds).
func (m *Manager) describeWorkers(j *runningJob, info *Info) {
	names := stageNames(j)
	cl, err := m.kafkaClient()
	if err != nil {
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(m.ctx, 3*time.Second)
	defer cancel()
	dg, err := kadm.NewClient(cl).DescribeGroups(ctx, names.repartitionStage, names.window)
	if err != nil {
		return
	}
	for _, g := range dg.Sorted() {
		stage := stageWindow
		if g.Group == names.repartitionStage {
			stage = stageRepartition
		}
		for _, mem := range g.Members {
			wp := WorkerPartitions{Worker: mem.ClientID, Stage: stage, Partitions: map[string][]int32{}}
			if c, ok := mem.Assigned.AsConsumer(); ok {
				for _, t := range c.Topics {
					ps := slices.Clone(t.Partitions)
					slices.Sort(ps)
					wp.Partitions[t.Topic] = ps
				}
			}
			info.Distributed.Workers = append(info.Distributed.Workers, wp)
		}
	}
	sort.SliceStable(info.Distributed.Workers, func(a, b int) bool {
		return info.Distributed.Workers[a].Worker < info.Distributed.Workers[b].Worker
	})
}
