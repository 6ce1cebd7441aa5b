package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/connectd/connectd/broker"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/flinklite"
	"github.com/connectd/connectd/flinklite/job"
	"github.com/connectd/connectd/flinklite/sql"
	"github.com/connectd/connectd/metrics"
	"github.com/connectd/connectd/registry"
)

// Worker is one connectd process: the embedded broker (when
// bootstrap.servers is empty) and the herder.
type Worker struct {
	Config    WorkerConfig
	Herder    *Herder
	Broker    *broker.Broker     // nil with an external cluster
	Registry  *registry.Registry // nil when schema.registry.listener is empty
	Brokers   []string
	ClusterID string
	// Jobs runs the flinklite jobs of this worker (REST /jobs), persisted
	// in data.dir/jobs.
	Jobs *job.Manager
	// SQL runs the streaming SQL jobs of this worker (REST /sql),
	// persisted in data.dir/sql.
	SQL *sql.Manager
}

// StartWorker starts the embedded broker if needed, then the herder.
func StartWorker(ctx context.Context, cfg WorkerConfig, plugins *connect.Plugins, log *slog.Logger) (*Worker, error) {
	// Worker properties may hold config provider variables too (KIP-421),
	// e.g. ssl.keystore.password=${file:/etc/connectd/secrets.properties:ks}.
	tr, err := NewConfigTransformer(cfg)
	if err != nil {
		return nil, err
	}
	if cfg, err = tr.Transform(cfg); err != nil {
		return nil, fmt.Errorf("worker config: %w", err)
	}
	w := &Worker{Config: cfg}
	if _, err := OverridePolicy(cfg); err != nil {
		return nil, err
	}
	if bs := strings.TrimSpace(cfg.Get("bootstrap.servers")); bs != "" {
		for _, b := range strings.Split(bs, ",") {
			if b = strings.TrimSpace(b); b != "" {
				w.Brokers = append(w.Brokers, b)
			}
		}
	} else {
		sec, err := broker.SecurityOptions(cfg)
		if err != nil {
			return nil, err
		}
		logCfg, err := broker.LogOptions(cfg)
		if err != nil {
			return nil, err
		}
		sec = append(sec, logCfg)
		if err := broker.ForgetPersistedSASLUsers(cfg, cfg.Get("data.dir")); err != nil {
			return nil, err
		}
		syncWrites, err := cfg.Bool("embedded.kafka.sync.writes")
		if err != nil {
			return nil, err
		}
		if broker.UncleanShutdown(cfg.Get("data.dir")) {
			// The recovery reads the whole log before the broker (and the
			// REST API) answer: say why the start takes a while.
			log.Info("embedded Kafka broker: the last run did not stop cleanly; checking the log's indexes and ending the transactions it left open before starting",
				"data.dir", cfg.Get("data.dir"))
		}
		b, err := broker.Start(cfg.Get("embedded.kafka.listener"), cfg.Get("data.dir"), syncWrites, sec...)
		if err != nil {
			return nil, err
		}
		w.Broker = b
		w.Brokers = []string{b.Addr()}
		w.ClusterID = b.ClusterID()
		committed, aborted := b.RecoveredTransactions()
		log.Info("embedded Kafka broker started", "listener", b.Addr(), "data.dir", cfg.Get("data.dir"), "sync.writes", syncWrites,
			"crash.transactions.committed", committed, "crash.transactions.aborted", aborted,
			"crash.indexes.repaired", len(b.RepairedIndexes()))
	}
	restAddr, err := cfg.RESTAddr()
	if err != nil {
		w.Close()
		return nil, err
	}
	var hopts []HerderOption
	if w.Broker != nil {
		hopts = append(hopts, WithLogSync(w.Broker.Sync), WithStorageError(w.Broker.StorageError))
	}
	h, err := NewHerder(ctx, cfg, plugins, w.Brokers, restAddr, log, hopts...)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("starting herder: %w", err)
	}
	w.Herder = h
	if strings.TrimSpace(cfg.Get("schema.registry.listener")) != "" {
		// The registry reads `_schemas` to the end before it is returned,
		// so it never answers from a partial view (ids stay global).
		reg, err := registry.Open(ctx, w.Brokers, registry.Topic, h.InternalKafkaOpts()...)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("starting schema registry: %w", err)
		}
		w.Registry = reg
	}
	if w.ClusterID == "" {
		w.ClusterID = clusterIDOf(ctx, h)
	}
	jobs, err := startJobs(ctx, cfg, w, h, restAddr, log)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("starting flinklite jobs: %w", err)
	}
	w.Jobs = jobs
	sqlCfg := sql.RunConfig{Brokers: w.Brokers, ClientOpts: h.InternalKafkaOpts()}
	if w.Broker != nil {
		sqlCfg.LogSync = w.Broker.Sync
	}
	if w.SQL, err = sql.NewManager(cfg.Get("data.dir"), sqlCfg, log); err != nil {
		w.Close()
		return nil, fmt.Errorf("starting SQL jobs: %w", err)
	}
	h.sqlJobs = w.SQL
	if h.metrics != nil {
		h.metrics.SetJobs(w.jobStates)
	}
	return w, nil
}

// jobStates lists the SQL and JSON jobs for the connectd_job_* metrics.
func (w *Worker) jobStates() []metrics.JobState {
	var out []metrics.JobState
	add := func(id, kind, state string, restarts int, st flinklite.JobStatus, running bool) {
		js := metrics.JobState{ID: id, Kind: kind, State: state, Restarts: restarts}
		if running {
			js.Lag, js.StateEntries = st.Lag, st.StateEntries
			m := st.Metrics
			js.RecordsIn, js.LateDropped, js.LateSideOutput = m.NumRecordsIn, m.NumLateRecordsDropped, m.NumLateRecordsSideOutput
			js.Checkpoints, js.SlowCheckpoints, js.LastCheckpointDuration = m.Checkpoints, m.SlowCheckpoints, m.LastCheckpointDuration
			if st.LastCheckpoint != nil {
				js.LastCheckpoint = st.LastCheckpoint.Completed
			}
		}
		out = append(out, js)
	}
	if w.SQL != nil {
		for _, i := range w.SQL.List() {
			run := w.SQL.Running(i.ID)
			var st flinklite.JobStatus
			if run != nil {
				st = run.Status()
			}
			add(i.ID, "sql", i.State, i.Restarts, st, run != nil)
		}
	}
	if w.Jobs != nil {
		for _, id := range w.Jobs.List() {
			if i, err := w.Jobs.Get(id); err == nil {
				add(id, "json", i.State, i.Restarts, i.JobStatus, true)
			}
		}
	}
	return out
}

// startJobs returns the worker's flinklite job manager. With the embedded
// broker (bootstrap.servers empty) jobs are the worker's own, kept in
// data.dir/jobs. With bootstrap.servers the worker is distributed, as
// Kafka Connect's: job specs are kept in the compacted topic
// jobs.storage.topic (one per connectd cluster, as config.storage.topic),
// every worker of the cluster runs every job, and each job's input
// partitions are spread across the workers (job.NewDistributedManager).
func startJobs(ctx context.Context, cfg WorkerConfig, w *Worker, h *Herder, restAddr string, log *slog.Logger) (*job.Manager, error) {
	if w.Broker != nil {
		return job.NewManager(cfg.Get("data.dir"), w.Brokers, h.InternalKafkaOpts(), log, job.WithLogSync(w.Broker.Sync))
	}
	session, err := cfg.Int("session.timeout.ms")
	if err != nil {
		return nil, err
	}
	rf, err := cfg.Int("config.storage.replication.factor")
	if err != nil {
		return nil, err
	}
	topic := cfg.Get("jobs.storage.topic")
	if local, _ := filepath.Glob(filepath.Join(cfg.Get("data.dir"), "jobs", "*", "job.json")); len(local) > 0 {
		log.Warn("local flinklite jobs in data.dir are not started on a distributed worker (bootstrap.servers is set): POST their specs again", "jobs", local, "jobs.storage.topic", topic)
	}
	return job.NewDistributedManager(ctx, cfg.Get("data.dir"), w.Brokers, h.InternalKafkaOpts(), log, job.DistributedConfig{
		Topic: topic, WorkerID: restAddr, SessionTimeout: time.Duration(session) * time.Millisecond, ReplicationFactor: int16(rf),
	})
}

func clusterIDOf(ctx context.Context, h *Herder) string {
	id, err := h.clusterID(ctx)
	if err != nil {
		return ""
	}
	return id
}

// Close stops the jobs (each with a final checkpoint), the herder
// (flushing offsets) and then the broker.
func (w *Worker) Close() {
	if w.SQL != nil {
		w.SQL.Close()
	}
	if w.Jobs != nil {
		w.Jobs.Close()
	}
	if w.Herder != nil {
		w.Herder.Close()
	}
	if w.Registry != nil {
		w.Registry.Close()
	}
	if w.Broker != nil {
		w.Broker.Close()
	}
}
