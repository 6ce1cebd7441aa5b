package flinklite

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

type topicPartition struct {
	topic string
	part  int32
}

// kafkaSource reads fixed partitions at offsets the job owns (restored from
// its checkpoint), not a consumer group's: Flink's KafkaSource does the
// same and commits to the group only for monitoring.
type kafkaSource struct {
	in    *Input[Message]
	parts []topicPartition
	index map[topicPartition]int
	next  []int64 // next offset per partition, -1 = from the start
}

// FromKafka returns the stream of the records of topics, one input
// partition per Kafka partition (their count is read from the cluster at
// brokers now). Records are read with isolation level read_committed from
// the start of each partition, or from the offsets of the restored
// checkpoint; Env.Run drives the source.
func FromKafka(ctx context.Context, env *Env, brokers []string, topics []string, opts ...kgo.Opt) (*Stream[Message], error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).ListTopics(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("flinklite: reading the partitions of %v: %w", topics, err)
	}
	src := &kafkaSource{index: map[topicPartition]int{}}
	for _, t := range topics {
		td, ok := md[t]
		if !ok || td.Err != nil {
			return nil, fmt.Errorf("flinklite: topic %s: %v", t, td.Err)
		}
		ps := td.Partitions.Numbers()
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			tp := topicPartition{t, p}
			src.index[tp] = len(src.parts)
			src.parts = append(src.parts, tp)
			src.next = append(src.next, -1)
		}
	}
	src.in = NewInput[Message](env, len(src.parts))
	env.sources = append(env.sources, src)
	return src.in.Stream(), nil
}

func (s *kafkaSource) offsets(into map[string]map[int32]int64) {
	for i, tp := range s.parts {
		if s.next[i] < 0 {
			continue
		}
		if into[tp.topic] == nil {
			into[tp.topic] = map[int32]int64{}
		}
		into[tp.topic][tp.part] = s.next[i]
	}
}

func (s *kafkaSource) restoreOffsets(from map[string]map[int32]int64) {
	for i, tp := range s.parts {
		if o, ok := from[tp.topic][tp.part]; ok {
			s.next[i] = o
		}
	}
}

type kafkaSink[T any] struct {
	env    *Env
	topic  string
	encode func(Change[T]) (key, value []byte, err error)
}

func (k *kafkaSink[T]) processWatermark(int64) {}

func (k *kafkaSink[T]) processElement(e element[T]) {
	var t time.Time
	if e.ts != MinWatermark {
		t = time.UnixMilli(e.ts)
	}
	key, val, err := k.encode(Change[T]{Value: e.v, EventTime: t, Retract: e.retract})
	if err != nil {
		k.env.fail(fmt.Errorf("flinklite: encoding a record for %s: %w", k.topic, err))
		return
	}
	if k.env.produce == nil {
		k.env.fail(errors.New("flinklite: a Kafka sink needs Env.Run"))
		return
	}
	k.env.produce(&kgo.Record{Topic: k.topic, Key: key, Value: val, Timestamp: t})
}

// ToKafka writes s to topic exactly once: records are produced in a Kafka
// transaction that Env.Run commits together with each checkpoint (Flink's
// KafkaSink with DeliveryGuarantee.EXACTLY_ONCE), so a read_committed
// consumer sees each result once across failures and restarts.
func ToKafka[T any](s *Stream[T], topic string, encode func(Change[T]) (key, value []byte, err error)) {
	s.subscribe(&kafkaSink[T]{env: s.env, topic: topic, encode: encode})
	s.env.addKafkaSink(topic)
}

// addKafkaSink notes that the job writes topic in its transactions.
func (e *Env) addKafkaSink(topic string) {
	e.hasKafkaSink = true
	e.sinkTopics = append(e.sinkTopics, topic)
}

// RunConfig configures Env.Run.
type RunConfig struct {
	// JobID names the job: the Kafka transactional.id of its sink and the
	// topic "<JobID>.checkpoints" where each transaction records the
	// checkpoint it commits.
	JobID   string
	Brokers []string
	// CheckpointDir holds the checkpoint files (data.dir).
	CheckpointDir string
	// CheckpointInterval is Flink's execution.checkpointing.interval
	// (default 10 s).
	CheckpointInterval time.Duration
	// ClientOpts are extra franz-go options (SASL, TLS) for every client.
	ClientOpts []kgo.Opt
	// PollTimeout bounds one poll, hence the delay of Tick while the input
	// is quiet (default 100 ms).
	PollTimeout time.Duration
	// Savepoint, when set, is the path of a savepoint (Env.TriggerSavepoint)
	// the job starts from when it has no committed checkpoint of its own,
	// as Flink's `flink run -s <path>`; after its first checkpoint the job
	// restores from its checkpoints.
	Savepoint string
	// LogSync, when set, makes everything the Kafka cluster acknowledged so
	// far durable (connectd's embedded broker, which does not fsync each
	// batch: broker.Broker.Sync). A checkpoint with a Kafka sink
	// calls it before its transaction commits, so that a machine crash
	// cannot keep the commit and lose records it commits or input it
	// names, and again after, before the older checkpoints are removed;
	// one without calls it before it writes the checkpoint file.
	LogSync func() error

	// markerTopic overrides "<JobID>.checkpoints" and stateInMarker puts
	// the operator state and offsets in the marker instead of a file in
	// CheckpointDir, so that any worker can restore it (RunScaledOut).
	markerTopic   string
	stateInMarker bool
	// onRestored, if set, is told the id of the checkpoint Run restored
	// (0 when it started from the beginning).
	onRestored func(checkpoint int64)
}

// logSync runs cfg.LogSync, if any.
func logSync(cfg RunConfig) error {
	if cfg.LogSync == nil {
		return nil
	}
	return cfg.LogSync()
}

// checkpointMarker is the record each sink transaction carries to name the
// checkpoint it commits (with the input offsets, which Kafka Streams also
// commits inside its transactions).
type checkpointMarker struct {
	Job        string                     `json:"job"`
	Checkpoint int64                      `json:"checkpoint"`
	Offsets    map[string]map[int32]int64 `json:"offsets"`
	// Operators is the operator state when the checkpoint is kept in Kafka
	// (RunScaledOut); absent when it is in a file of CheckpointDir.
	Operators map[string]json.RawMessage `json:"operators,omitempty"`
}

// Run restores the latest committed checkpoint, then reads the Kafka
// sources, processes their records and takes a checkpoint every
// CheckpointInterval until ctx is done; a clean stop takes a final
// checkpoint. It returns nil after a clean stop, or the first error.
//
// Exactly-once protocol (Flink's two-phase-commit sink, with the commit
// decision kept in Kafka): checkpoint n is (1) the sink's records flushed
// in the open transaction, (2) the checkpoint file written atomically,
// (3) a marker naming n produced in the same transaction, (4) the
// transaction committed. On restart the newest checkpoint whose marker is
// committed is restored and newer files are deleted: a crash before (4)
// aborts the transaction (the restarted producer fences it) and replays
// from checkpoint n−1, whose outputs are exactly those committed.
func (e *Env) Run(ctx context.Context, cfg RunConfig) error {
	if cfg.CheckpointInterval <= 0 {
		cfg.CheckpointInterval = 10 * time.Second
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 100 * time.Millisecond
	}
	base := append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, cfg.ClientOpts...)
	markerTopic := cfg.JobID + ".checkpoints"
	if cfg.markerTopic != "" {
		markerTopic = cfg.markerTopic
	}
	var producer *kgo.Client
	if e.hasKafkaSink || cfg.stateInMarker {
		var err error
		producer, err = kgo.NewClient(append(base, kgo.TransactionalID(cfg.JobID), kgo.RecordPartitioner(shufflePartitioner{kgo.StickyKeyPartitioner(nil)}))...)
		if err != nil {
			return err
		}
		e.producer = producer
		defer func() {
			if !e.abandoned.Load() {
				producer.Close()
			}
		}()
		// The marker topic has one partition (markers are read in order);
		// sink topics missing from the cluster get the broker's defaults.
		adm := kadm.NewClient(producer)
		if _, err := adm.CreateTopic(ctx, 1, -1, markerTopicConfig, markerTopic); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("flinklite: creating %s: %w", markerTopic, err)
		}
		if cfg.stateInMarker {
			// Take the transactional id now: this fences a previous owner
			// of the partition (its open transaction is aborted) before
			// the committed checkpoint is read, so that no commit of the
			// previous owner can land after the read.
			if _, _, err := producer.ProducerID(ctx); err != nil {
				return fmt.Errorf("flinklite: initializing the producer of %s: %w", cfg.JobID, err)
			}
		}
		for _, t := range e.sinkTopics {
			if _, err := adm.CreateTopic(ctx, -1, -1, nil, t); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
				return fmt.Errorf("flinklite: creating %s: %w", t, err)
			}
		}
	}
	defer func() {
		for _, s := range e.syncSinks {
			s.close()
		}
	}()
	lastID, err := e.restore(ctx, cfg, base, markerTopic, producer != nil)
	if err != nil {
		return err
	}
	if cfg.onRestored != nil {
		cfg.onRestored(lastID)
	}

	consume := map[string]map[int32]kgo.Offset{}
	for _, s := range e.sources {
		for i, tp := range s.parts {
			if consume[tp.topic] == nil {
				consume[tp.topic] = map[int32]kgo.Offset{}
			}
			o := kgo.NewOffset().AtStart()
			if s.next[i] >= 0 {
				o = kgo.NewOffset().At(s.next[i])
			}
			consume[tp.topic][tp.part] = o
		}
	}
	consumer, err := kgo.NewClient(append(base, kgo.ConsumePartitions(consume), kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		return err
	}
	defer consumer.Close()

	var (
		mu         sync.Mutex
		produceErr error
	)
	if producer != nil {
		if err := producer.BeginTransaction(); err != nil {
			return err
		}
		// Produce outlives ctx: on a clean stop the buffered results still
		// go into the final checkpoint's transaction.
		pctx, cancelProduce := context.WithCancel(context.Background())
		defer cancelProduce()
		e.produce = func(r *kgo.Record) {
			e.txnRecords++
			producer.Produce(pctx, r, func(_ *kgo.Record, err error) {
				mu.Lock()
				if err != nil && produceErr == nil {
					produceErr = err
				}
				mu.Unlock()
			})
		}
	}
	defer func() { e.produce = nil }()

	var lastInfo *CheckpointInfo
	checkpoint := func(cctx context.Context) error {
		started := e.clock.Now()
		// Database sinks write first: a crash after their write and before
		// the commit replays from the previous checkpoint, and their
		// upserts keyed on (window, key) converge to the same rows.
		for _, s := range e.syncSinks {
			if err := s.flush(cctx); err != nil {
				return fmt.Errorf("flinklite: flushing a database sink: %w", err)
			}
		}
		if producer != nil {
			if err := producer.Flush(cctx); err != nil {
				return err
			}
			mu.Lock()
			perr := produceErr
			mu.Unlock()
			if perr != nil {
				return fmt.Errorf("flinklite: producing results: %w", perr)
			}
		}
		ops, err := e.snapshotOperators()
		if err != nil {
			return err
		}
		c := &Checkpoint{ID: lastID + 1, Created: e.clock.Now().UTC(), Offsets: map[string]map[int32]int64{}, Operators: ops}
		for _, s := range e.sources {
			s.offsets(c.Offsets)
		}
		marker := checkpointMarker{Job: cfg.JobID, Checkpoint: c.ID, Offsets: c.Offsets}
		if producer == nil {
			// The input read up to these offsets durable before a file
			// names them: after a machine crash a source would produce
			// records it lost again at the same offsets, and the restored
			// job would skip them. (With a Kafka sink the sync before the
			// commit below covers them.)
			if err := logSync(cfg); err != nil {
				return fmt.Errorf("flinklite: checkpoint %d: %w", c.ID, err)
			}
		}
		if cfg.stateInMarker {
			marker.Operators = c.Operators
		} else if err := writeCheckpoint(cfg.CheckpointDir, c); err != nil {
			return fmt.Errorf("flinklite: writing checkpoint %d: %w", c.ID, err)
		}
		var markerSize int64
		if producer != nil {
			b, _ := json.Marshal(marker)
			markerSize = int64(len(b))
			if err := producer.ProduceSync(cctx, &kgo.Record{Topic: markerTopic, Partition: 0, Key: []byte(cfg.JobID), Value: b}).FirstErr(); err != nil {
				return fmt.Errorf("flinklite: producing the marker of checkpoint %d: %w", c.ID, err)
			}
			if e.beforeCommit != nil {
				e.beforeCommit(c.ID)
				if e.abandoned.Load() {
					return errAbandoned
				}
			}
			if err := logSync(cfg); err != nil {
				return fmt.Errorf("flinklite: checkpoint %d: %w", c.ID, err)
			}
			if err := producer.EndTransaction(cctx, kgo.TryCommit); err != nil {
				return fmt.Errorf("flinklite: committing checkpoint %d: %w", c.ID, err)
			}
			if err := logSync(cfg); err != nil {
				return fmt.Errorf("flinklite: checkpoint %d: %w", c.ID, err)
			}
		}
		// Checkpoint c is committed: only now may the older ones go.
		lastID = c.ID
		e.metrics.Checkpoints++
		info := &CheckpointInfo{ID: c.ID, Completed: e.clock.Now().UTC(), Offsets: c.Offsets}
		info.DurationMs = info.Completed.Sub(started).Milliseconds()
		if cfg.stateInMarker {
			info.SizeBytes = markerSize
		} else if fi, err := os.Stat(checkpointPath(cfg.CheckpointDir, c.ID)); err == nil {
			info.SizeBytes = fi.Size()
		}
		lastInfo = info
		if err := removeCheckpoints(cfg.CheckpointDir, c.ID); err != nil {
			return err
		}
		if producer != nil {
			e.txnRecords = 0
			return producer.BeginTransaction()
		}
		return nil
	}

	highWatermarks := map[topicPartition]int64{}
	lag := func() int64 {
		var n int64
		for _, s := range e.sources {
			for i, tp := range s.parts {
				hw, ok := highWatermarks[tp]
				if !ok {
					continue
				}
				n += max(0, hw-max(0, s.next[i]))
			}
		}
		return n
	}
	lastChk := e.clock.Now()
	for {
		if e.abandoned.Load() {
			return errAbandoned
		}
		if ctx.Err() != nil {
			// Clean stop: a final checkpoint commits what was processed.
			sctx, cancel := context.WithTimeout(context.Background(), checkpointTimeout)
			defer cancel()
			return checkpoint(sctx)
		}
		pctx, cancel := context.WithTimeout(ctx, cfg.PollTimeout)
		fs := consumer.PollRecords(pctx, 10000)
		cancel()
		for _, fe := range fs.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) && !errors.Is(fe.Err, context.Canceled) {
				return fmt.Errorf("flinklite: fetching %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
			}
		}
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if p.Err == nil {
				highWatermarks[topicPartition{p.Topic, p.Partition}] = p.HighWatermark
			}
		})
		var perr error
		fs.EachRecord(func(r *kgo.Record) {
			if perr != nil || e.abandoned.Load() {
				return
			}
			for _, s := range e.sources {
				i, ok := s.index[topicPartition{r.Topic, r.Partition}]
				if !ok {
					continue
				}
				s.next[i] = r.Offset + 1
				perr = s.in.Emit(i, Message{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Headers: r.Headers})
			}
		})
		if perr != nil {
			return perr
		}
		if err := e.Tick(); err != nil {
			return err
		}
		e.publishStatus(lag(), lastInfo)
		select {
		case req := <-e.board.savepoints:
			// A savepoint is a checkpoint committed now, then copied.
			cctx, ccancel := context.WithTimeout(context.Background(), checkpointTimeout)
			err := checkpoint(cctx)
			ccancel()
			if err != nil {
				req.reply <- savepointReply{err: err}
				return err
			}
			lastChk = e.clock.Now()
			path, err := writeSavepoint(cfg.CheckpointDir, lastID, req.dir)
			req.reply <- savepointReply{path: path, err: err}
			e.publishStatus(lag(), lastInfo)
			if req.stop && err == nil {
				return nil // stop-with-savepoint: nothing read after it
			}
		default:
		}
		if now := e.clock.Now(); now.Sub(lastChk) >= cfg.CheckpointInterval {
			// A checkpoint is not interrupted by a stop: it runs on its own
			// context, so the transaction is never left half ended.
			cctx, ccancel := context.WithTimeout(context.Background(), checkpointTimeout)
			err := checkpoint(cctx)
			ccancel()
			if err != nil {
				return err
			}
			// The next checkpoint is due an interval after this one ended
			// (Flink's min-pause-between-checkpoints): a checkpoint slower
			// than the interval is counted, not started back to back.
			lastChk = e.clock.Now()
			e.metrics.LastCheckpointDuration = lastChk.Sub(now)
			if e.metrics.LastCheckpointDuration > cfg.CheckpointInterval {
				e.metrics.SlowCheckpoints++
			}
			e.publishStatus(lag(), lastInfo)
		}
	}
}

// checkpointTimeout bounds one checkpoint (flush, file, commit), as
// Flink's execution.checkpointing.timeout (default 10 min; shorter here
// because the job is in-process).
const checkpointTimeout = time.Minute

var errAbandoned = errors.New("flinklite: job abandoned (simulated crash)")

// restore loads the newest committed checkpoint, returning its id (0 if
// none). With a Kafka sink, committed means its marker is in a committed
// transaction; otherwise the newest file is committed.
func (e *Env) restore(ctx context.Context, cfg RunConfig, base []kgo.Opt, markerTopic string, transactional bool) (int64, error) {
	ids, err := checkpointIDs(cfg.CheckpointDir)
	if err != nil {
		return 0, err
	}
	var id int64
	switch {
	case transactional:
		m, err := lastCommittedMarker(ctx, base, markerTopic, cfg.JobID)
		if err != nil {
			return 0, err
		}
		if m == nil {
			break
		}
		id = m.Checkpoint
		if cfg.stateInMarker {
			if err := e.restoreOperators(m.Operators); err != nil {
				return 0, err
			}
			for _, s := range e.sources {
				s.restoreOffsets(m.Offsets)
			}
			return id, nil
		}
	case len(ids) > 0:
		id = ids[len(ids)-1]
	}
	// Files newer than the committed checkpoint were never committed.
	if err := removeCheckpoints(cfg.CheckpointDir, id); err != nil {
		return 0, err
	}
	var c *Checkpoint
	switch {
	case id == 0 && cfg.Savepoint == "":
		return 0, nil
	case id == 0:
		if c, err = readSavepoint(cfg.Savepoint); err != nil {
			return 0, err
		}
		id = c.ID
	default:
		if c, err = readCheckpoint(cfg.CheckpointDir, id); err != nil {
			return 0, fmt.Errorf("%w: %d: %v", ErrNoCommittedCheckpoint, id, err)
		}
	}
	if err := e.restoreOperators(c.Operators); err != nil {
		return 0, err
	}
	for _, s := range e.sources {
		s.restoreOffsets(c.Offsets)
	}
	return id, nil
}

// markerTopicConfig makes the marker topic compacted: the key of a marker
// is its job id, so compaction keeps each job's (or input partition's)
// latest checkpoint, as Kafka Streams' changelog topics.
var markerTopicConfig = map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}

// lastCommittedMarker reads markerTopic up to its high watermark with
// read_uncommitted and the control records, and returns the marker with
// the highest checkpoint id of job whose transaction ended with a commit
// marker (nil if none).
func lastCommittedMarker(ctx context.Context, base []kgo.Opt, topic, job string) (*checkpointMarker, error) {
	cl, err := kgo.NewClient(append(base,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.KeepControlRecords())...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	end, ok := ends.Lookup(topic, 0)
	if !ok || end.Err != nil {
		return nil, fmt.Errorf("flinklite: end offset of %s: %v", topic, end.Err)
	}
	var committed *checkpointMarker
	commit := func(m *checkpointMarker) {
		if committed == nil || m.Checkpoint > committed.Checkpoint {
			committed = m
		}
	}
	pending := map[int64][]*checkpointMarker{} // producer id → markers of its open transaction
	for pos := int64(0); pos < end.Offset; {
		// Compaction may remove the records at the end of the log: a
		// poll that finds nothing more ends the read.
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if fs.Empty() && ctx.Err() == nil {
			break
		}
		if err := fs.Err0(); err != nil {
			return nil, fmt.Errorf("flinklite: reading %s: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			pos = r.Offset + 1
			if r.Attrs.IsControl() {
				// Control record key: version int16, type int16 (0 abort, 1 commit).
				if len(r.Key) >= 4 && binary.BigEndian.Uint16(r.Key[2:4]) == 1 {
					for _, m := range pending[r.ProducerID] {
						commit(m)
					}
				}
				delete(pending, r.ProducerID)
				return
			}
			if string(r.Key) != job {
				return
			}
			m := new(checkpointMarker)
			if json.Unmarshal(r.Value, m) != nil || m.Job != job {
				return
			}
			if r.Attrs.IsTransactional() {
				pending[r.ProducerID] = append(pending[r.ProducerID], m)
			} else {
				commit(m)
			}
		})
	}
	return committed, nil
}
