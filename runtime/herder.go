package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/connectd/connectd/offsets"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Connector and task states, as Kafka Connect's AbstractStatus.State.
const (
	StateUnassigned = "UNASSIGNED"
	StateRunning    = "RUNNING"
	StatePaused     = "PAUSED"
	StateStopped    = "STOPPED"
	StateFailed     = "FAILED"
	StateRestarting = "RESTARTING"
)

// ConnectorInfo is what GET /connectors/{name} returns.
type ConnectorInfo struct {
	Name   string
	Config map[string]string
	Tasks  []TaskID
	Type   string
}

// Status is one connector or task status.
type Status struct {
	State    string
	Trace    string
	WorkerID string
}

// ConnectorStatus is what GET /connectors/{name}/status returns.
type ConnectorStatus struct {
	Name      string
	Connector Status
	Tasks     []TaskStatus
	Type      string
}

// TaskStatus is one task's status.
type TaskStatus struct {
	ID int
	Status
}

type connectorState struct {
	config      map[string]string
	taskConfigs map[int]map[string]string
	taskCount   int // from the last commit record; -1 = none yet
	target      string
}

type runningConnector struct {
	config map[string]string
	tasks  []*runningTask
}

type runningTask struct {
	id     TaskID
	cancel context.CancelFunc
	done   chan struct{}
}

// Herder manages connectors on this worker (Kafka Connect's herder). In
// this slice one worker runs every connector; group membership comes with
// distributed mode.
type Herder struct {
	cfg      WorkerConfig
	plugins  *connect.Plugins
	workerID string
	log      *slog.Logger

	configLog *kafkalog.Log
	statusLog *kafkalog.Log
	store     *offsets.KafkaStore
	producer  *kgo.Client
	topics    *topicCreator

	flushInt, flushTO time.Duration

	mu         sync.Mutex
	connectors map[string]*connectorState
	running    map[string]*runningConnector
	statuses   map[string]Status // status-connector-X / status-task-X-N
	generation int

	reconcileCh chan string
	stopCh      chan struct{}
	wg          sync.WaitGroup
}

// NewHerder opens the config, status and offsets topics on brokers, reads
// them, and starts every connector whose target state is STARTED.
func NewHerder(ctx context.Context, cfg WorkerConfig, plugins *connect.Plugins, brokers []string, workerID string, log *slog.Logger) (*Herder, error) {
	h := &Herder{
		cfg: cfg, plugins: plugins, workerID: workerID, log: log,
		connectors:  map[string]*connectorState{},
		running:     map[string]*runningConnector{},
		statuses:    map[string]Status{},
		reconcileCh: make(chan string, 1024),
		stopCh:      make(chan struct{}),
	}
	fi, err := cfg.Int("offset.flush.interval.ms")
	if err != nil {
		return nil, err
	}
	ft, err := cfg.Int("offset.flush.timeout.ms")
	if err != nil {
		return nil, err
	}
	h.flushInt, h.flushTO = time.Duration(fi)*time.Millisecond, time.Duration(ft)*time.Millisecond
	rf := func(key string) int16 { n, _ := cfg.Int(key); return int16(n) }
	offParts, err := cfg.Int("offset.storage.partitions")
	if err != nil {
		return nil, err
	}
	statusParts, err := cfg.Int("status.storage.partitions")
	if err != nil {
		return nil, err
	}

	h.store, err = offsets.OpenKafka(ctx, brokers, cfg.Get("offset.storage.topic"), int32(offParts), rf("offset.storage.replication.factor"))
	if err != nil {
		return nil, err
	}
	h.statusLog, err = kafkalog.Open(ctx, brokers, cfg.Get("status.storage.topic"), kafkalog.TopicSpec{Partitions: int32(statusParts), ReplicationFactor: rf("status.storage.replication.factor")}, h.applyStatus)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.configLog, err = kafkalog.Open(ctx, brokers, cfg.Get("config.storage.topic"), kafkalog.TopicSpec{Partitions: 1, ReplicationFactor: rf("config.storage.replication.factor")}, h.applyConfig)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.producer, err = kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.AllowAutoTopicCreation(),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(8192),
		// A topic created just before its first record must not wait for
		// kgo's default 5 s metadata refresh.
		kgo.MetadataMinAge(250*time.Millisecond),
	)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.topics = newTopicCreator(kadm.NewClient(h.producer))
	h.wg.Add(1)
	go h.reconcileLoop()
	h.mu.Lock()
	for name := range h.connectors {
		h.reconcileCh <- name
	}
	h.mu.Unlock()
	return h, nil
}

// Close stops every connector (draining their offsets) and the clients.
func (h *Herder) Close() {
	if h.stopCh != nil {
		select {
		case <-h.stopCh:
		default:
			close(h.stopCh)
		}
	}
	h.wg.Wait()
	h.mu.Lock()
	names := make([]string, 0, len(h.running))
	for n := range h.running {
		names = append(names, n)
	}
	h.mu.Unlock()
	for _, n := range names {
		h.stopConnector(n)
	}
	if h.producer != nil {
		h.producer.Close()
	}
	if h.configLog != nil {
		h.configLog.Close()
	}
	if h.statusLog != nil {
		h.statusLog.Close()
	}
	if h.store != nil {
		h.store.Close()
	}
}

// ---- config topic (Kafka Connect's KafkaConfigBackingStore format) ----

func (h *Herder) applyConfig(r kafkalog.Record) {
	key := string(r.Key)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case strings.HasPrefix(key, "connector-"):
		name := strings.TrimPrefix(key, "connector-")
		if r.Value == nil {
			delete(h.connectors, name)
		} else {
			var v struct {
				Properties map[string]string `json:"properties"`
			}
			if json.Unmarshal(r.Value, &v) != nil {
				return
			}
			st := h.state(name)
			st.config = v.Properties
		}
		h.enqueue(name)
	case strings.HasPrefix(key, "target-state-"):
		name := strings.TrimPrefix(key, "target-state-")
		if st, ok := h.connectors[name]; ok && r.Value != nil {
			var v struct {
				State   string `json:"state"`
				StateV2 string `json:"state.v2"`
			}
			if json.Unmarshal(r.Value, &v) == nil {
				st.target = v.State
				if v.StateV2 != "" {
					st.target = v.StateV2
				}
			}
			h.enqueue(name)
		}
	case strings.HasPrefix(key, "task-"):
		rest := strings.TrimPrefix(key, "task-")
		i := strings.LastIndex(rest, "-")
		if i < 0 || r.Value == nil {
			return
		}
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil {
			return
		}
		var v struct {
			Properties map[string]string `json:"properties"`
		}
		if json.Unmarshal(r.Value, &v) != nil {
			return
		}
		h.state(rest[:i]).taskConfigs[n] = v.Properties
	case strings.HasPrefix(key, "commit-"):
		name := strings.TrimPrefix(key, "commit-")
		var v struct {
			Tasks int `json:"tasks"`
		}
		if r.Value == nil || json.Unmarshal(r.Value, &v) != nil {
			return
		}
		h.state(name).taskCount = v.Tasks
		h.enqueue(name)
	}
}

// state returns the state of name, creating it. Callers hold h.mu.
func (h *Herder) state(name string) *connectorState {
	st, ok := h.connectors[name]
	if !ok {
		st = &connectorState{taskConfigs: map[int]map[string]string{}, taskCount: -1, target: "STARTED"}
		h.connectors[name] = st
	}
	return st
}

func (h *Herder) enqueue(name string) {
	select {
	case h.reconcileCh <- name:
	default:
		go func() { h.reconcileCh <- name }()
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// ---- status topic (Kafka Connect's KafkaStatusBackingStore format) ----

func (h *Herder) applyStatus(r kafkalog.Record) {
	key := string(r.Key)
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Value == nil {
		delete(h.statuses, key)
		return
	}
	var v struct {
		State    string  `json:"state"`
		Trace    *string `json:"trace"`
		WorkerID string  `json:"worker_id"`
	}
	if json.Unmarshal(r.Value, &v) != nil {
		return
	}
	s := Status{State: v.State, WorkerID: v.WorkerID}
	if v.Trace != nil {
		s.Trace = *v.Trace
	}
	h.statuses[key] = s
}

func (h *Herder) putStatus(key, state, trace string) {
	var tr *string
	if trace != "" {
		tr = &trace
	}
	h.mu.Lock()
	h.statuses[key] = Status{State: state, Trace: trace, WorkerID: h.workerID}
	gen := h.generation
	h.mu.Unlock()
	val := mustJSON(map[string]any{"state": state, "trace": tr, "worker_id": h.workerID, "generation": gen})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.statusLog.Send(ctx, []byte(key), val); err != nil {
		h.log.Warn("writing status", "key", key, "err", err)
	}
}

func connectorStatusKey(name string) string { return "status-connector-" + name }
func taskStatusKey(id TaskID) string {
	return fmt.Sprintf("status-task-%s-%d", id.Connector, id.Task)
}

// ---- reconcile: start and stop connectors to match the config topic ----

func (h *Herder) reconcileLoop() {
	defer h.wg.Done()
	for {
		select {
		case <-h.stopCh:
			return
		case name := <-h.reconcileCh:
			h.reconcile(name)
		}
	}
}

func (h *Herder) reconcile(name string) {
	h.mu.Lock()
	st, exists := h.connectors[name]
	var cfg map[string]string
	var taskCfgs []map[string]string
	ready := false
	target := ""
	if exists && st.config != nil {
		cfg = st.config
		target = st.target
		if st.taskCount >= 0 {
			ready = true
			for i := 0; i < st.taskCount; i++ {
				tc, ok := st.taskConfigs[i]
				if !ok {
					ready = false
					break
				}
				taskCfgs = append(taskCfgs, tc)
			}
		}
	}
	rc := h.running[name]
	h.mu.Unlock()

	if !exists || cfg == nil {
		if rc != nil {
			h.stopConnector(name)
		}
		return
	}
	if rc != nil && sameConfig(rc.config, cfg) && target == "STARTED" && len(rc.tasks) == len(taskCfgs) {
		return
	}
	if rc != nil {
		h.stopConnector(name)
	}
	if target != "STARTED" || !ready {
		return
	}
	h.startConnector(name, cfg, taskCfgs)
}

func sameConfig(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func (h *Herder) startConnector(name string, cfg map[string]string, taskCfgs []map[string]string) {
	rc := &runningConnector{config: cfg}
	h.mu.Lock()
	h.running[name] = rc
	h.mu.Unlock()
	factory, _, ok := h.plugins.Source(cfg["connector.class"])
	if !ok {
		h.putStatus(connectorStatusKey(name), StateFailed, fmt.Sprintf("Failed to find any class that implements Connector and which name matches %s", cfg["connector.class"]))
		return
	}
	h.putStatus(connectorStatusKey(name), StateRunning, "")
	h.log.Info("connector started", "connector", name, "tasks", len(taskCfgs))
	conn := factory()
	for i, tc := range taskCfgs {
		h.startTask(rc, TaskID{Connector: name, Task: i}, conn, tc)
	}
}

func (h *Herder) startTask(rc *runningConnector, id TaskID, conn connect.SourceConnector, cfg map[string]string) {
	ctx, cancel := context.WithCancel(context.Background())
	rt := &runningTask{id: id, cancel: cancel, done: make(chan struct{})}
	h.mu.Lock()
	rc.tasks = append(rc.tasks, rt)
	h.mu.Unlock()
	fail := func(err error) {
		h.log.Error("task failed", "task", id, "err", err)
		h.putStatus(taskStatusKey(id), StateFailed, err.Error())
	}
	keyConv, err := newConverter(h.cfg, cfg, true)
	if err != nil {
		close(rt.done)
		fail(err)
		return
	}
	valConv, err := newConverter(h.cfg, cfg, false)
	if err != nil {
		close(rt.done)
		fail(err)
		return
	}
	w := &workerSourceTask{
		id: id, task: conn.NewTask(), cfg: cfg, keyConv: keyConv, valConv: valConv,
		producer: h.producer, topics: h.topics, store: h.store, flushInt: h.flushInt, flushTO: h.flushTO, log: h.log,
		setState: func(state, trace string) { h.putStatus(taskStatusKey(id), state, trace) },
	}
	h.putStatus(taskStatusKey(id), StateRunning, "")
	go func() {
		defer close(rt.done)
		if err := w.run(ctx); err != nil {
			fail(err)
			return
		}
	}()
}

// stopConnector stops name's tasks and waits for them (their final offset
// flush included).
func (h *Herder) stopConnector(name string) {
	h.mu.Lock()
	rc := h.running[name]
	delete(h.running, name)
	h.mu.Unlock()
	if rc == nil {
		return
	}
	for _, t := range rc.tasks {
		t.cancel()
	}
	for _, t := range rc.tasks {
		<-t.done
	}
}

// ---- API used by the REST layer ----

// Connectors returns the connector names, sorted.
func (h *Herder) Connectors() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.connectors))
	for n, st := range h.connectors {
		if st.config != nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ValidateConfig checks a connector config with the connector's ConfigDef
// and the worker-level keys; it returns nil when valid.
func (h *Herder) ValidateConfig(cfg map[string]string) error {
	class := strings.TrimSpace(cfg["connector.class"])
	if class == "" {
		return &BadRequestError{Msg: "Connector config " + configString(cfg) + " contains no connector type"}
	}
	factory, _, ok := h.plugins.Source(class)
	if !ok {
		return &BadRequestError{Msg: fmt.Sprintf("Failed to find any class that implements Connector and which name matches %s, available connectors are: %s", class, strings.Join(h.plugins.SourceClasses(), ", "))}
	}
	conn := factory()
	// Per-key rules from the ConfigDef, then the connector's own checks;
	// a connector may repeat the per-key ones, so keep each error once.
	errs := dedupeErrors(append(conn.Config().Validate(cfg), conn.Validate(cfg)...))
	for _, isKey := range []bool{true, false} {
		if _, err := newConverter(h.cfg, cfg, isKey); err != nil {
			k := "value.converter"
			if isKey {
				k = "key.converter"
			}
			errs = append(errs, connect.ConfigError{Key: k, Message: err.Error()})
		}
	}
	if len(errs) > 0 {
		return &ConfigInvalidError{Errors: errs}
	}
	return nil
}

func configString(cfg map[string]string) string {
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + cfg[k]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// CreateConnector validates cfg, writes it and its task configs to the
// config topic, and waits until this worker has read them back.
// Errors: ErrAlreadyExists, *ConfigInvalidError, *BadRequestError.
func (h *Herder) CreateConnector(ctx context.Context, name string, cfg map[string]string) (ConnectorInfo, error) {
	if strings.TrimSpace(name) == "" {
		return ConnectorInfo{}, &BadRequestError{Msg: "Connector name must not be empty"}
	}
	cfg = withName(cfg, name)
	h.mu.Lock()
	st, exists := h.connectors[name]
	exists = exists && st.config != nil
	h.mu.Unlock()
	if exists {
		return ConnectorInfo{}, fmt.Errorf("Connector %s already exists: %w", name, ErrAlreadyExists)
	}
	if err := h.ValidateConfig(cfg); err != nil {
		return ConnectorInfo{}, err
	}
	factory, _, _ := h.plugins.Source(cfg["connector.class"])
	maxTasks := 1
	if v, ok := cfg["tasks.max"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return ConnectorInfo{}, &ConfigInvalidError{Errors: []connect.ConfigError{{Key: "tasks.max", Message: fmt.Sprintf("Invalid value %s for configuration tasks.max: Value must be at least 1", v)}}}
		}
		maxTasks = n
	}
	taskCfgs, err := factory().TaskConfigs(cfg, maxTasks)
	if err != nil {
		return ConnectorInfo{}, err
	}
	recs := []kafkalog.Record{
		{Key: []byte("connector-" + name), Value: mustJSON(map[string]any{"properties": cfg})},
		{Key: []byte("target-state-" + name), Value: mustJSON(map[string]any{"state": "STARTED", "state.v2": "STARTED"})},
	}
	for i, tc := range taskCfgs {
		recs = append(recs, kafkalog.Record{Key: []byte(fmt.Sprintf("task-%s-%d", name, i)), Value: mustJSON(map[string]any{"properties": tc})})
	}
	recs = append(recs, kafkalog.Record{Key: []byte("commit-" + name), Value: mustJSON(map[string]any{"tasks": len(taskCfgs)})})
	if err := h.configLog.SendBatch(ctx, recs); err != nil {
		return ConnectorInfo{}, err
	}
	if err := h.configLog.ReadToEnd(ctx); err != nil {
		return ConnectorInfo{}, err
	}
	return h.ConnectorInfo(name)
}

func withName(cfg map[string]string, name string) map[string]string {
	out := make(map[string]string, len(cfg)+1)
	for k, v := range cfg {
		out[k] = v
	}
	out["name"] = name
	return out
}

// ConnectorInfo returns name's config and tasks, or a *NotFoundError.
func (h *Herder) ConnectorInfo(name string) (ConnectorInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, ok := h.connectors[name]
	if !ok || st.config == nil {
		return ConnectorInfo{}, &NotFoundError{Connector: name}
	}
	info := ConnectorInfo{Name: name, Config: st.config, Type: "source", Tasks: []TaskID{}}
	for i := 0; i < st.taskCount; i++ {
		info.Tasks = append(info.Tasks, TaskID{Connector: name, Task: i})
	}
	return info, nil
}

// ConnectorStatus returns the statuses of name and its tasks.
func (h *Herder) ConnectorStatus(name string) (ConnectorStatus, error) {
	info, err := h.ConnectorInfo(name)
	if err != nil {
		return ConnectorStatus{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cs := ConnectorStatus{Name: name, Type: info.Type, Tasks: []TaskStatus{}}
	if s, ok := h.statuses[connectorStatusKey(name)]; ok {
		cs.Connector = s
	} else {
		cs.Connector = Status{State: StateUnassigned, WorkerID: h.workerID}
	}
	for _, t := range info.Tasks {
		s, ok := h.statuses[taskStatusKey(t)]
		if !ok {
			s = Status{State: StateUnassigned, WorkerID: h.workerID}
		}
		cs.Tasks = append(cs.Tasks, TaskStatus{ID: t.Task, Status: s})
	}
	return cs, nil
}

// DeleteConnector stops name and removes its config (tombstones in the
// config topic, as Kafka Connect writes them). Errors: *NotFoundError.
func (h *Herder) DeleteConnector(ctx context.Context, name string) error {
	info, err := h.ConnectorInfo(name)
	if err != nil {
		return err
	}
	recs := []kafkalog.Record{
		{Key: []byte("connector-" + name)},
		{Key: []byte("target-state-" + name)},
	}
	if err := h.configLog.SendBatch(ctx, recs); err != nil {
		return err
	}
	if err := h.configLog.ReadToEnd(ctx); err != nil {
		return err
	}
	h.stopConnector(name)
	var status []kafkalog.Record
	status = append(status, kafkalog.Record{Key: []byte(connectorStatusKey(name))})
	for _, t := range info.Tasks {
		status = append(status, kafkalog.Record{Key: []byte(taskStatusKey(t))})
	}
	if err := h.statusLog.SendBatch(ctx, status); err != nil {
		return err
	}
	return h.statusLog.ReadToEnd(ctx)
}

// RestartConnector restarts name's connector and tasks (all of them, or
// only the failed ones with onlyFailed), as POST /connectors/{name}/restart
// with includeTasks=true. Errors: *NotFoundError.
func (h *Herder) RestartConnector(ctx context.Context, name string, onlyFailed bool) error {
	if _, err := h.ConnectorInfo(name); err != nil {
		return err
	}
	if onlyFailed {
		st, _ := h.ConnectorStatus(name)
		failed := st.Connector.State == StateFailed
		for _, t := range st.Tasks {
			failed = failed || t.State == StateFailed
		}
		if !failed {
			return nil
		}
	}
	h.stopConnector(name)
	h.mu.Lock()
	h.enqueue(name)
	h.mu.Unlock()
	return nil
}

// WorkerID returns this worker's id (its REST host:port).
func (h *Herder) WorkerID() string { return h.workerID }

func (h *Herder) clusterID(ctx context.Context) (string, error) {
	m, err := kadm.NewClient(h.producer).BrokerMetadata(ctx)
	if err != nil {
		return "", err
	}
	return m.Cluster, nil
}

func dedupeErrors(errs []connect.ConfigError) []connect.ConfigError {
	seen := map[connect.ConfigError]bool{}
	out := errs[:0]
	for _, e := range errs {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}
