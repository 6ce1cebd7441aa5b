package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/connectd/connectd/transforms"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/broker"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/flinklite/sql"
	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/connectd/connectd/metrics"
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

// Status is one connector or task status. Version is the connector
// plugin's version (KIP-891: Kafka Connect 4 writes it in the status
// record and shows it in the status responses); empty when unknown.
type Status struct {
	State    string
	Trace    string
	WorkerID string
	Version  string
	// Generation is the group generation of the record's writer
	// (status_generation.go); 0 in records without one.
	Generation int
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

// Target states, as Kafka Connect's TargetState (written in the config
// topic as target-state-<name>).
const (
	TargetStarted = "STARTED"
	TargetPaused  = "PAUSED"
	TargetStopped = "STOPPED"
)

type connectorState struct {
	config      map[string]string
	taskConfigs map[int]map[string]string
	// pending holds task configs read since the last commit record; a
	// commit-<name> record applies them (KafkaConfigBackingStore's deferred
	// task updates), so a task never runs a half-written set.
	pending   map[int]map[string]string
	taskCount int // from the last commit record; -1 = none yet
	target    string
}

// runningConnector is the part of a connector this worker runs: the
// connector itself when the group assigned it here (ownsConn: this worker
// writes its status), and the tasks assigned here.
type runningConnector struct {
	config   map[string]string
	taskCfgs []map[string]string // every task's committed config
	conn     connect.Connector   // source or sink; nil when the class was not found
	paused   bool
	ownsConn bool
	tasks    []*runningTask
}

type runningTask struct {
	id     TaskID
	cfg    map[string]string
	cancel context.CancelFunc
	done   chan struct{}
	gate   *pauseGate
}

// Herder manages connectors on this worker (Kafka Connect's herder): it
// runs the connectors and tasks the group assigns it (group.go,
// assignment.go); on the embedded broker the group has this one member.
type Herder struct {
	cfg WorkerConfig
	// logSync makes what the worker's Kafka acknowledged durable before
	// source offsets are stored and positions confirmed upstream
	// (WithLogSync); nil = nothing to do (an external Kafka cluster).
	logSync func() error
	// storageErr is WithStorageError's (nil with an external cluster).
	storageErr func() error
	plugins    *connect.Plugins
	workerID   string
	restURL    string // http(s)://<workerID>, as members know each other
	log        *slog.Logger
	taskLog    *slog.Logger
	loggers    *Loggers

	configLog *kafkalog.Log
	statusLog *kafkalog.Log
	store     *offsets.KafkaStore
	producer  *kgo.Client
	admin     *kgo.Client // the admin. client of topic creation
	topics    *topicCreator
	brokers   []string
	// Kafka client security (kafka_security.go): internalSec for the
	// internal topics, group and registry; producerSec for the tasks'
	// producers; adminSec for topic creation.
	internalSec, producerSec, adminSec *kafkaSecuritySettings
	// exactlyOnce: exactly.once.source.support=enabled (KIP-618): each
	// source task writes through its own transactional producer.
	exactlyOnce bool
	// transformer resolves ${provider:path:key} variables of connector and
	// task configs when they are used (config_provider.go).
	transformer *ConfigTransformer

	flushInt, flushTO time.Duration

	// metrics is the worker's monitoring state (metrics.go).
	metrics *metrics.Registry
	// verify holds the last connectd verify of each connector (verify.go).
	verify verifications
	// sqlJobs are the worker's SQL jobs (verify --against JOB); nil
	// without a worker (tests of the herder alone).
	sqlJobs *sql.Manager
	// ctx is the herder's lifetime (background work such as verify).
	ctx context.Context

	mu         sync.Mutex
	connectors map[string]*connectorState
	running    map[string]*runningConnector
	statuses   map[string]Status                 // status-connector-X / status-task-X-N
	active     map[string]map[string]topicStatus // connector -> topic (KIP-558)
	generation int

	// Group membership (group.go): group is the member's client; synced
	// is the assignment read in the last SyncGroup, asg the one applied;
	// rebalancing is set from the start of a rebalance to its assignment.
	group       *kgo.Client
	synced      *assignment
	asg         *assignment
	memberID    string
	rebalancing bool
	joined      chan struct{}
	joinedOnce  sync.Once
	// protocol is connect.protocol and maxDelay
	// scheduled.rebalance.max.delay.ms (assignment_cooperative.go); coop
	// is the leader's memory between incremental cooperative rounds;
	// delayTimer the leader's scheduled rebalance; barriers the reconcile
	// barriers in flight (reconcileBarrier).
	protocol   string
	maxDelay   time.Duration
	coop       *cooperativeState
	delayTimer *time.Timer
	barriers   map[string]chan struct{}
	barrierSeq int

	// configStarted is set once the config topic was read at start: only
	// restart requests read after that are acted on (restart.go), as
	// KafkaConfigBackingStore ignores those of its initial read.
	// selfRestarts counts this worker's own restart requests not yet read
	// back (it already acted on its share).
	configStarted bool
	selfRestarts  map[string]int

	reconcileCh chan string
	stopCh      chan struct{}
	wg          sync.WaitGroup
}

// HerderOption configures a Herder (NewHerder).
type HerderOption func(*Herder)

// WithLogSync gives the herder sync, which makes durable everything its
// Kafka acknowledged so far (EmbeddedBroker.Sync): source tasks call it
// before they store offsets and before they confirm positions upstream.
func WithLogSync(sync func() error) HerderOption {
	return func(h *Herder) { h.logSync = sync }
}

// WithStorageError gives the herder the embedded broker's last storage
// error (broker.Broker.StorageError): a produce that fails while it is set
// fails the task with it, so that the task's trace says the data.dir is
// full instead of only UNKNOWN_SERVER_ERROR.
func WithStorageError(storageErr func() error) HerderOption {
	return func(h *Herder) { h.storageErr = storageErr }
}

// NewHerder opens the config, status and offsets topics on brokers, reads
// them, and starts every connector whose target state is STARTED.
func NewHerder(ctx context.Context, cfg WorkerConfig, plugins *connect.Plugins, brokers []string, workerID string, log *slog.Logger, opts ...HerderOption) (*Herder, error) {
	loggers := loggersOf(log)
	h := &Herder{
		cfg: cfg, plugins: plugins, ctx: context.WithoutCancel(ctx), workerID: workerID, loggers: loggers,
		log: loggers.Logger(LoggerHerder), taskLog: loggers.Logger(LoggerSourceTask),
		connectors:  map[string]*connectorState{},
		running:     map[string]*runningConnector{},
		statuses:    map[string]Status{},
		active:      map[string]map[string]topicStatus{},
		reconcileCh: make(chan string, 1024),
		stopCh:      make(chan struct{}),
		joined:      make(chan struct{}),
		restURL:     cfg.RESTScheme() + "://" + workerID,
	}
	for _, o := range opts {
		o(h)
	}
	h.brokers = brokers
	var err error
	if h.protocol, h.maxDelay, err = rebalanceSettings(cfg); err != nil {
		return nil, err
	}
	if h.metrics, err = newMetrics(cfg); err != nil {
		return nil, err
	}
	switch eos := strings.ToLower(strings.TrimSpace(cfg.Get("exactly.once.source.support"))); eos {
	case "enabled":
		h.exactlyOnce = true
	case "disabled", "preparing":
	default:
		return nil, fmt.Errorf("worker config exactly.once.source.support: %q is not one of disabled, preparing, enabled", eos)
	}
	transformer, err := NewConfigTransformer(cfg)
	if err != nil {
		return nil, err
	}
	h.transformer = transformer
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

	if h.internalSec, err = kafkaSecurity(cfg, ""); err != nil {
		return nil, err
	}
	if h.producerSec, err = kafkaSecurity(cfg, "producer."); err != nil {
		return nil, err
	}
	if h.adminSec, err = kafkaSecurity(cfg, "admin."); err != nil {
		return nil, err
	}
	// Wrong credentials or TLS settings fail the start with a message
	// naming them; the clients below would retry them in the background.
	if err := checkKafkaReachable(ctx, brokers, h.internalSec, 20*time.Second); err != nil {
		return nil, err
	}
	internal := h.internalSec.opts()
	h.store, err = offsets.OpenKafka(ctx, brokers, cfg.Get("offset.storage.topic"), int32(offParts), rf("offset.storage.replication.factor"), internal...)
	if err != nil {
		return nil, err
	}
	h.statusLog, err = kafkalog.Open(ctx, brokers, cfg.Get("status.storage.topic"), kafkalog.TopicSpec{Partitions: int32(statusParts), ReplicationFactor: rf("status.storage.replication.factor")}, h.applyStatus, internal...)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.configLog, err = kafkalog.Open(ctx, brokers, cfg.Get("config.storage.topic"), kafkalog.TopicSpec{Partitions: 1, ReplicationFactor: rf("config.storage.replication.factor")}, h.applyConfig, internal...)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.mu.Lock()
	h.configStarted = true
	h.mu.Unlock()
	h.producer, err = kgo.NewClient(h.producerOpts()...)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.admin, err = kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(h.brokers...), kgo.WithLogger(kafkaClientLogger())}, h.adminSec.opts()...)...)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.topics = newTopicCreator(kadm.NewClient(h.admin))
	h.startMetrics()
	h.wg.Add(1)
	go h.reconcileLoop()
	// The first assignment reconciles every connector (onAssigned).
	if err := h.joinGroup(ctx); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// defaultBufferMemory is the producer's buffer.memory, in bytes: the
// most record key+value bytes a producer holds until the broker
// acknowledges them (Kafka's producer default is 32 MiB). Each buffered
// byte is live heap, and the garbage collector lets the heap grow to twice
// the live heap (GOGC=100), so it counts about twice in the worker's RSS.
// With 3.5 KB JsonConverter events (bench/postgres, issue 3): the
// 8192-record bound alone let 25-45 MB wait (snapshot peak RSS 262 MiB);
// 16 MiB gave 175-206 MiB; 8 MiB gives 137-151 MiB in every phase with the
// same CPU per row, as 8 MiB is still ~2400 records, tens of milliseconds
// of work at the embedded broker's rate.
const defaultBufferMemory = 8 << 20

// producerOpts are the options of the worker's producer and of the
// tasks' transactional producers, with the worker's producer security.
func (h *Herder) producerOpts() []kgo.Opt { return h.producerOptsWith(nil) }

// producerOptsWith is producerOpts with the security settings sec (a
// connector's producer.override.* ones, client_overrides.go) instead of
// the worker's when sec is not nil: kgo.SASL appends, so the two cannot
// both be given.
func (h *Herder) producerOptsWith(sec *kafkaSecuritySettings) []kgo.Opt {
	if sec == nil {
		sec = h.producerSec
	}
	return append([]kgo.Opt{
		kgo.SeedBrokers(h.brokers...),
		kgo.AllowAutoTopicCreation(),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// murmur2 of the key, as Kafka's default partitioner: records and
		// offsets land where Kafka Connect would put them.
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.MaxBufferedRecords(8192),
		// buffer.memory: defaultBufferMemory bytes of records waiting for
		// the broker; producer.override.buffer.memory raises it.
		kgo.MaxBufferedBytes(defaultBufferMemory),
		kgo.WithLogger(kafkaClientLogger()),
		// A topic created just before its first record must not wait for
		// kgo's default 5 s metadata refresh.
		kgo.MetadataMinAge(250 * time.Millisecond),
		// compression.type: snappy (embedded broker) or lz4, see
		// defaultCompression; producer.override.compression.type wins.
		kgo.ProducerBatchCompression(h.defaultCompression()),
		kgo.WithCompressor(h.defaultCompressor()),
		// max.request.size: kgo's 1,000,012 bytes (Kafka's), or larger
		// batches with the embedded broker, see defaultBatchMaxBytes.
		kgo.ProducerBatchMaxBytes(h.defaultBatchMaxBytes()),
	}, sec.opts()...)
}

// defaultBatchMaxBytes is the producer's largest record batch, in bytes
// before compression, when no producer.override.max.request.size is given:
// Kafka's default (1,000,012, as kgo's) against an external cluster, and
// broker.BatchMaxBytes against the embedded broker, whose
// message.max.bytes is raised to match (broker.Start), so that a
// batch that does not compress is still accepted. The embedded broker
// writes and fsyncs each batch (segment and index) in its one request
// loop, and each fsync costs the process CPU as well as time: 1 MB holds
// only about 290 JsonConverter change events of 3.5 KB. A throwaway loop
// producing 300k such events to broker.Start (snappy, sync writes;
// two runs each, load average 13-15) spent 7.7-10.2 µs/record with 1 MB
// batches (the broker's request loop 0.38-0.49 s of CPU, fsync 0.20-0.31
// s) and 6.9-8.2 µs/record with 4 MB batches (0.18-0.20 s, 0.11-0.13 s).
// The 1M-row JSON snapshot of bench/postgres, alternating runs at load
// average 2.5-4: 6.4 and 8.5 µs/row with 2 MB batches, 7.8 and 9.3 with
// 1 MB. Larger batches hold larger buffers while they are written and
// compressed: the 300k-row snapshot peaked at 125-134 MiB with 1 MB,
// 148-151 MiB with 2 MB and 170-183 MiB with 4 MB.
func (h *Herder) defaultBatchMaxBytes() int32 {
	if h.cfg.EmbeddedBroker() {
		return broker.BatchMaxBytes
	}
	return 1000012
}

// InternalKafkaOpts are the security options of the worker's internal
// Kafka clients (the unprefixed security.protocol, sasl.*, ssl.* keys),
// for other clients of the worker such as the schema registry's.
func (h *Herder) InternalKafkaOpts() []kgo.Opt { return h.internalSec.opts() }

// defaultCompressor is lz4Compressor against an external cluster (lz4
// frames without the content checksum), nil (kgo's, by
// defaultCompression) against the embedded broker.
// producer.override.compression.type sets it back to nil (client_overrides.go).
func (h *Herder) defaultCompressor() kgo.Compressor {
	if h.cfg.EmbeddedBroker() {
		return nil
	}
	return lz4Default
}

// lz4Default is shared by every producer: its writers are pooled.
var lz4Default = newLZ4Compressor()

// defaultCompression is the producer's compression.type when no
// producer.override.compression.type is given: snappy against the
// embedded broker, lz4 against an external cluster (Kafka Connect's
// producer default is none). Consumers decompress transparently: records
// read back are the same bytes, only the batch is compressed.
//
// External cluster: a real Kafka 4.3 broker on this machine spent 13-27
// µs of CPU per JsonConverter change event (about 3.5 KB, most of it the
// repeated schema) with uncompressed 1 MB batches, and it handles one
// connection's produce requests one at a time, so the broker, not the
// round trips (kgo already keeps 5 idempotent requests in flight), bounded
// the rate. With lz4 it spent 6-10 µs per event warm (snappy 8-11) for
// about 1 µs more in connectd, and the rate rose from 26-67k to 67-94k
// rows/s (bench/postgres -brokers kafka, 300k-row snapshot and backlog,
// two runs each per codec, load average 5-8; issue 20).
//
// Embedded broker: it runs in this process and stores batches as they
// arrive, so every byte a batch carries is also copied, checksummed,
// written and fsynced by this process: the 1M-row snapshot benchmark spends
// about 25% less CPU per row with lz4 than with none (bench/postgres,
// issue 3); snappy costs about as much CPU as lz4 or less (snapshot
// 14.8-15.8 vs 16.5-19.4 µs/row, streaming 13.8-17.3 vs 15.4-18.2 µs/row,
// same runs) and holds no 4 MiB lz4 frame buffers per pooled writer: peak
// RSS 177 vs 186-188 MiB in the snapshot, 175-187 vs 174-201 MiB streaming.
func (h *Herder) defaultCompression() kgo.CompressionCodec {
	if h.cfg.EmbeddedBroker() {
		return kgo.SnappyCompression()
	}
	return kgo.Lz4Compression()
}

// newTransactionalProducer returns task id's producer under exactly-once
// source support (source_task_eos.go).
// sec and overrides are the connector's producer.override.* security
// settings (nil: the worker's) and other options (client_overrides.go).
func (h *Herder) newTransactionalProducer(id TaskID, sec *kafkaSecuritySettings, overrides ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append(append(h.producerOptsWith(sec), overrides...),
		kgo.TransactionalID(transactionalID(h.cfg.Get("group.id"), id)),
		kgo.TransactionTimeout(txnTimeout),
	)...)
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
	h.metrics.Close()
	h.mu.Lock()
	if h.delayTimer != nil {
		h.delayTimer.Stop()
	}
	names := make([]string, 0, len(h.running))
	for n := range h.running {
		names = append(names, n)
	}
	h.mu.Unlock()
	for _, n := range names {
		h.stopConnector(n)
	}
	// Leave the group only once this worker's tasks flushed their offsets
	// and stopped: the next owner starts after that.
	if h.group != nil {
		h.group.Close()
	}
	if h.producer != nil {
		h.producer.Close()
	}
	if h.admin != nil {
		h.admin.Close()
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
		h.state(rest[:i]).pending[n] = v.Properties
	case strings.HasPrefix(key, restartRecordPrefix):
		h.applyRestartRecord(strings.TrimPrefix(key, restartRecordPrefix), r.Value)
	case strings.HasPrefix(key, "commit-"):
		name := strings.TrimPrefix(key, "commit-")
		var v struct {
			Tasks int `json:"tasks"`
		}
		if r.Value == nil || json.Unmarshal(r.Value, &v) != nil {
			return
		}
		st := h.state(name)
		for n, tc := range st.pending {
			if n < v.Tasks {
				st.taskConfigs[n] = tc
			}
		}
		for n := range st.taskConfigs {
			if n >= v.Tasks {
				delete(st.taskConfigs, n)
			}
		}
		st.pending = map[int]map[string]string{}
		st.taskCount = v.Tasks
		h.enqueue(name)
	}
}

// state returns the state of name, creating it. Callers hold h.mu.
func (h *Herder) state(name string) *connectorState {
	st, ok := h.connectors[name]
	if !ok {
		st = &connectorState{taskConfigs: map[int]map[string]string{}, pending: map[int]map[string]string{}, taskCount: -1, target: TargetStarted}
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
	if strings.HasPrefix(key, topicStatusPrefix) {
		h.applyTopicStatus(key, r.Value)
		return
	}
	if r.Value == nil {
		delete(h.statuses, key)
		return
	}
	var v struct {
		State      string  `json:"state"`
		Trace      *string `json:"trace"`
		WorkerID   string  `json:"worker_id"`
		Version    string  `json:"version"`
		Generation int     `json:"generation"`
	}
	if json.Unmarshal(r.Value, &v) != nil {
		return
	}
	s := Status{State: v.State, WorkerID: v.WorkerID, Version: v.Version, Generation: v.Generation}
	if v.Trace != nil {
		s.Trace = *v.Trace
	}
	if h.staleStatusLocked(key, s) {
		h.log.Debug("ignoring stale status record", "key", key, "state", s.State, "generation", s.Generation, "worker_id", s.WorkerID)
		return
	}
	h.statuses[key] = s
}

func (h *Herder) putStatus(key, state, trace string) {
	var tr *string
	if trace != "" {
		tr = &trace
	}
	h.mu.Lock()
	gen := h.generation
	if !h.safeWriteAllowedLocked(key, state, gen) {
		cur := h.statuses[key]
		h.mu.Unlock()
		h.log.Info("status not written: another worker wrote a later generation's", "key", key, "state", state, "generation", gen,
			"current_worker_id", cur.WorkerID, "current_generation", cur.Generation)
		return
	}
	version := h.pluginVersionLocked(connectorOfStatusKey(key))
	h.statuses[key] = Status{State: state, Trace: trace, WorkerID: h.workerID, Version: version, Generation: gen}
	h.mu.Unlock()
	// The record as KafkaStatusBackingStore writes it (Kafka 4: with the
	// plugin's version).
	rec := map[string]any{"state": state, "trace": tr, "worker_id": h.workerID, "generation": gen}
	if version != "" {
		rec["version"] = version
	}
	val := mustJSON(rec)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.statusLog.Send(ctx, []byte(key), val); err != nil {
		h.log.Warn("writing status", "key", key, "err", err)
	}
}

func connectorStatusKey(name string) string { return "status-connector-" + name }

// connectorOfStatusKey returns the connector of a status-connector-<c> or
// status-task-<c>-<n> key.
func connectorOfStatusKey(key string) string {
	if c, ok := strings.CutPrefix(key, "status-connector-"); ok {
		return c
	}
	t := strings.TrimPrefix(key, "status-task-")
	if i := strings.LastIndexByte(t, '-'); i > 0 {
		return t[:i]
	}
	return t
}

// pluginVersionLocked returns the version of connector name's plugin, ""
// when the connector or its class is unknown. h.mu is held.
func (h *Herder) pluginVersionLocked(name string) string {
	st, ok := h.connectors[name]
	if !ok || st.config == nil {
		return ""
	}
	class := st.config["connector.class"]
	if f, _, ok := h.plugins.Source(class); ok {
		return f().Version()
	}
	if f, _, ok := h.plugins.Sink(class); ok {
		return f().Version()
	}
	return ""
}
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
			if strings.HasPrefix(name, barrierPrefix) {
				h.mu.Lock()
				ch := h.barriers[name]
				delete(h.barriers, name)
				h.mu.Unlock()
				if ch != nil {
					close(ch)
				}
				continue
			}
			h.reconcile(name)
			h.maybeRebalance()
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
	ownConn, mine := h.asg.owns(name)
	h.mu.Unlock()

	if !exists || cfg == nil || (!ownConn && len(mine) == 0) {
		// Deleted, or not (any more) this worker's: another member runs it.
		if rc != nil {
			h.stopConnector(name)
		}
		return
	}
	// Tasks run their task configs: they restart when a commit brought new
	// ones (an updated connector config does so through its task configs),
	// as Kafka Connect restarts tasks on task config changes.
	if rc != nil && ready && !sameTaskConfigs(rc.taskCfgs, taskCfgs) {
		h.stopConnector(name)
		h.dropTaskStatuses(name, rc, len(taskCfgs))
		rc = nil
	}
	if rc != nil {
		h.mu.Lock()
		rc.config = cfg
		h.mu.Unlock()
		h.applyAssignment(name, rc, ownConn, mine)
	}
	switch target {
	case TargetStopped:
		// KIP-875: tasks are shut down; their configs are emptied by the
		// commit record written with the target state.
		if rc != nil {
			h.stopConnector(name)
			h.dropTaskStatuses(name, rc, len(taskCfgs))
		}
		if ownConn && h.statusOf(connectorStatusKey(name)) != StateStopped {
			h.putStatus(connectorStatusKey(name), StateStopped, "")
		}
	case TargetPaused:
		if rc == nil {
			if ready {
				h.startConnector(name, cfg, taskCfgs, true, ownConn, mine)
			}
			return
		}
		if !rc.paused {
			h.setPaused(name, rc, true)
		}
	default:
		if rc == nil {
			if ready {
				h.startConnector(name, cfg, taskCfgs, false, ownConn, mine)
			}
			return
		}
		if rc.paused {
			h.setPaused(name, rc, false)
		}
	}
}

// applyAssignment makes rc match this worker's share of the connector:
// tasks assigned elsewhere are stopped (their final offset flush
// included), tasks newly assigned here are started, and the connector's
// status is written when the connector itself came here.
func (h *Herder) applyAssignment(name string, rc *runningConnector, ownConn bool, mine map[int]bool) {
	h.mu.Lock()
	var lost []*runningTask
	have := map[int]bool{}
	kept := make([]*runningTask, 0, len(rc.tasks))
	for _, t := range rc.tasks {
		if mine[t.id.Task] {
			kept = append(kept, t)
			have[t.id.Task] = true
		} else {
			lost = append(lost, t)
		}
	}
	rc.tasks = kept
	gainedConn := ownConn && !rc.ownsConn
	rc.ownsConn = ownConn
	conn, paused, taskCfgs := rc.conn, rc.paused, rc.taskCfgs
	h.mu.Unlock()
	for _, t := range lost {
		t.cancel()
	}
	for _, t := range lost {
		<-t.done
		h.log.Info("task moved to another worker", "task", t.id)
	}
	if conn == nil {
		return
	}
	for _, i := range sortedTasks(mine) {
		if !have[i] && i < len(taskCfgs) {
			h.startTask(rc, TaskID{Connector: name, Task: i}, conn, taskCfgs[i])
		}
	}
	if gainedConn {
		state := StateRunning
		if paused {
			state = StatePaused
		}
		h.putStatus(connectorStatusKey(name), state, "")
	}
}

func sortedTasks(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for i := range set {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

func sameTaskConfigs(a, b []map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameConfig(a[i], b[i]) {
			return false
		}
	}
	return true
}

// statusOf returns the state last written or read for key, or "".
func (h *Herder) statusOf(key string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.statuses[key].State
}

// dropTaskStatuses removes the status records of rc's tasks numbered from
// keep on: those tasks no longer exist.
func (h *Herder) dropTaskStatuses(name string, rc *runningConnector, keep int) {
	var recs []kafkalog.Record
	for _, t := range rc.tasks {
		if t.id.Task >= keep {
			recs = append(recs, kafkalog.Record{Key: []byte(taskStatusKey(t.id))})
		}
	}
	if len(recs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.statusLog.SendBatch(ctx, recs); err != nil {
		h.log.Warn("removing task statuses", "connector", name, "err", err)
		return
	}
	h.mu.Lock()
	for _, r := range recs {
		delete(h.statuses, string(r.Key))
	}
	h.mu.Unlock()
}

// setPaused parks or unparks every task of rc and writes the PAUSED or
// RUNNING statuses once the poll loops obey (WorkerTask.transitionTo).
func (h *Herder) setPaused(name string, rc *runningConnector, paused bool) {
	h.mu.Lock()
	rc.paused = paused
	tasks := append([]*runningTask(nil), rc.tasks...)
	h.mu.Unlock()
	state := StateRunning
	if paused {
		state = StatePaused
	}
	for _, t := range tasks {
		t.gate.set(paused)
	}
	for _, t := range tasks {
		if paused {
			t.gate.awaitParked(t.done, 30*time.Second)
		}
		select {
		case <-t.done: // failed or stopped: keep its status
		default:
			h.putStatus(taskStatusKey(t.id), state, "")
		}
	}
	if rc.conn != nil && rc.ownsConn {
		h.putStatus(connectorStatusKey(name), state, "")
	}
	h.log.Info("connector target state applied", "connector", name, "state", state)
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

// startConnector starts this worker's share of name: the connector's
// status when ownConn, and the tasks in mine.
func (h *Herder) startConnector(name string, cfg map[string]string, taskCfgs []map[string]string, paused, ownConn bool, mine map[int]bool) {
	rc := &runningConnector{config: cfg, taskCfgs: taskCfgs, paused: paused, ownsConn: ownConn}
	h.mu.Lock()
	h.running[name] = rc
	h.mu.Unlock()
	factory, _, _, ok := h.plugins.Connector(cfg["connector.class"])
	if !ok {
		if ownConn {
			h.putStatus(connectorStatusKey(name), StateFailed, fmt.Sprintf("Failed to find any class that implements Connector and which name matches %s", cfg["connector.class"]))
		}
		return
	}
	state := StateRunning
	if paused {
		state = StatePaused
	}
	if ownConn {
		h.putStatus(connectorStatusKey(name), state, "")
	}
	h.log.Info("connector started", "connector", name, "tasks", len(taskCfgs), "here", sortedTasks(mine), "state", state)
	conn := factory()
	h.mu.Lock()
	rc.conn = conn
	h.mu.Unlock()
	for _, i := range sortedTasks(mine) {
		if i < len(taskCfgs) {
			h.startTask(rc, TaskID{Connector: name, Task: i}, conn, taskCfgs[i])
		}
	}
}

func (h *Herder) startTask(rc *runningConnector, id TaskID, conn connect.Connector, cfg map[string]string) {
	ctx, cancel := context.WithCancel(context.Background())
	h.mu.Lock()
	rt := &runningTask{id: id, cfg: cfg, cancel: cancel, done: make(chan struct{}), gate: newPauseGate(rc.paused)}
	replaced := false
	for i, t := range rc.tasks {
		if t.id == id {
			rc.tasks[i] = rt
			replaced = true
		}
	}
	if !replaced {
		rc.tasks = append(rc.tasks, rt)
	}
	h.mu.Unlock()
	fail := func(err error) {
		h.log.Error("task failed", "task", id, "err", err)
		h.putStatus(taskStatusKey(id), StateFailed, err.Error())
	}
	// The task and its converters see the resolved config; rt.cfg keeps
	// the raw one (a restart resolves again, reading current secrets).
	cfg, connCfg, err := h.resolveTaskConfig(cfg, rc.config)
	if err != nil {
		close(rt.done)
		fail(err)
		return
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
	logger := h.connectorLogger(connCfg)
	if sink, ok := conn.(connect.SinkConnector); ok {
		h.startSinkTask(ctx, rt, id, sink, cfg, connCfg, keyConv, valConv, logger, fail) // sink_herder.go
		return
	}
	source := conn.(connect.SourceConnector)
	newWorker := func() (supervisedWorker, error) {
		// Transformations come from the connector's config, as in Kafka
		// Connect; a fresh chain per task instance (SMTs may keep state).
		chain, err := transforms.NewChain(connCfg)
		if err != nil {
			return nil, err
		}
		w := &workerSourceTask{
			id: id, task: source.NewTask(), cfg: cfg, keyConv: keyConv, valConv: valConv, chain: chain,
			producer: h.producer, topics: h.topics, store: h.store, flushInt: h.flushInt, flushTO: h.flushTO, log: h.taskLog,
			logSync: h.logSync, storageErr: h.storageErr,
			setState: func(state, trace string) { h.putStatus(taskStatusKey(id), state, trace) },
			gate:     rt.gate,
			onTopic:  func(topic string) { h.recordActiveTopic(id, topic) },
			logger:   logger,
			metrics:  h.metrics.SourceTask(id.Connector, id.Task),
		}
		if err := h.configureTaskClients(w, connCfg); err != nil {
			return nil, err
		}
		if h.exactlyOnce {
			txn, err := h.newTransactionalProducer(id, w.producerSec, w.producerOverrides...)
			if err != nil {
				return nil, err
			}
			w.txn, w.offsetsTopic = txn, h.store.Topic()
		}
		return w, nil
	}
	state := StateRunning
	if rt.gate.isPaused() {
		state = StatePaused
	}
	h.putStatus(taskStatusKey(id), state, "")
	go func() {
		defer close(rt.done)
		h.superviseTask(ctx, id, "task", StageTaskPoll, retryPolicyOf(cfg), newWorker, fail)
	}()
}

// supervisedWorker is one task instance superviseTask runs: a
// *workerSourceTask or a *workerSinkTask.
type supervisedWorker interface {
	// run runs the task until ctx is done (nil) or it fails.
	run(ctx context.Context) error
	// madeProgress says a record of this run was delivered (acknowledged
	// by the broker, or put and committed by a sink), which resets the
	// retry count.
	madeProgress() bool
}

// madeProgress implements supervisedWorker.
func (w *workerSourceTask) madeProgress() bool { return w.progressed.Load() }

// superviseTask runs the task until ctx is done, starting a fresh task
// instance (which resumes from the last committed offset) after a
// retriable failure, as the retry policy allows (retry.go). While it waits
// the task's status is RESTARTING with the cause as trace. A failure of
// the very first Start fails the task at once, as Debezium's "configuration
// and startup errors" do; a Start that fails while recovering from a lost
// connection is retried. what names the task in the log ("task", "sink
// task"); otherStage is the stage of a failure that is not a *TaskError.
func (h *Herder) superviseTask(ctx context.Context, id TaskID, what string, otherStage Stage, policy retryPolicy, newWorker func() (supervisedWorker, error), fail func(error)) {
	attempt := 0
	var since time.Time
	for {
		w, err := newWorker()
		if err != nil {
			fail(err)
			return
		}
		err = w.run(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		if w.madeProgress() {
			attempt = 0
		}
		stage := otherStage
		var te *TaskError
		if errors.As(err, &te) {
			stage = te.Stage
		}
		if !IsRetriable(err) || (stage == StageTaskStart && attempt == 0) {
			fail(err)
			return
		}
		attempt++
		if attempt == 1 {
			since = time.Now()
		}
		delay, ok := policy.next(stage, attempt, since, time.Now())
		if !ok {
			fail(errors.New(policy.exhausted(stage, attempt, err)))
			return
		}
		trace := policy.describe(stage, attempt, delay, err)
		h.log.Warn(what+" will be restarted after a retriable error", "task", id, "stage", stage, "retry", attempt, "delay", delay, "err", err)
		h.putStatus(taskStatusKey(id), StateRestarting, trace)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
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

// ValidateConfig checks a connector config as POST /connectors does (see
// ValidateConnectorConfig); it returns nil when valid, else a
// *ConfigInvalidError or *BadRequestError.
func (h *Herder) ValidateConfig(cfg map[string]string) error { return h.validateForWrite(cfg) }

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
	info, _, err := h.PutConnectorConfig(ctx, name, cfg, false, "")
	return info, err
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
	if _, _, sink, ok := h.plugins.Connector(st.config["connector.class"]); ok && sink {
		info.Type = "sink"
	}
	for i := 0; i < st.taskCount; i++ {
		info.Tasks = append(info.Tasks, TaskID{Connector: name, Task: i})
	}
	return info, nil
}

// ConnectorStatus returns the statuses of name and its tasks.
func (h *Herder) ConnectorStatus(name string) (ConnectorStatus, error) {
	info, err := h.ConnectorInfo(name)
	if err != nil {
		// AbstractHerder.connectorStatus's message.
		return ConnectorStatus{}, &NotFoundError{Connector: name, Msg: "No status found for connector " + name}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cs := ConnectorStatus{Name: name, Type: info.Type, Tasks: []TaskStatus{}}
	if s, ok := h.statuses[connectorStatusKey(name)]; ok {
		cs.Connector = s
	} else {
		cs.Connector = Status{State: StateUnassigned, WorkerID: h.workerID, Version: h.pluginVersionLocked(name)}
	}
	for _, t := range info.Tasks {
		s, ok := h.statuses[taskStatusKey(t)]
		if !ok {
			s = Status{State: StateUnassigned, WorkerID: h.workerID, Version: h.pluginVersionLocked(name)}
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
	h.metrics.RemoveConnector(name)
	var status []kafkalog.Record
	status = append(status, kafkalog.Record{Key: []byte(connectorStatusKey(name))})
	for _, t := range info.Tasks {
		status = append(status, kafkalog.Record{Key: []byte(taskStatusKey(t))})
	}
	for _, t := range h.ActiveTopics(name) {
		status = append(status, kafkalog.Record{Key: []byte(topicStatusKey(name, t))})
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
	_, err := h.RestartConnectorAndTasks(ctx, name, true, onlyFailed)
	return err
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

// kafkaClientLogger returns a logger for the Kafka clients: silent unless
// CONNECTD_KAFKA_CLIENT_LOG=debug|info|warn|error (a developer aid).
func kafkaClientLogger() kgo.Logger {
	lvl := map[string]kgo.LogLevel{"debug": kgo.LogLevelDebug, "info": kgo.LogLevelInfo, "warn": kgo.LogLevelWarn, "error": kgo.LogLevelError}[os.Getenv("CONNECTD_KAFKA_CLIENT_LOG")]
	return kgo.BasicLogger(os.Stderr, lvl, nil) // LogLevelNone logs nothing
}
