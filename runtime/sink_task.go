package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/metrics"
	"github.com/connectd/connectd/transforms"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Stages of a sink task (org.apache.kafka.connect.runtime.errors.Stage).
const (
	StageKafkaConsume Stage = "KAFKA_CONSUME"
	StageTaskPut      Stage = "TASK_PUT"
)

// sinkMaxPollRecords is the consumer's max.poll.records default (500):
// the most records handed to one SinkTask.Put.
const sinkMaxPollRecords = 500

// workerSinkTask runs one SinkTask as Kafka Connect's WorkerSinkTask: it
// consumes the connector's topics in the consumer group
// connect-<connector>, converts and transforms each record, hands the
// records of a poll to Put, and commits the consumer offsets only after
// Flush said everything put so far is durable downstream.
//
// Concurrency: run owns the consumer and the task; the consumer is
// created with BlockRebalanceOnPoll, so partitions are revoked (and their
// offsets committed in onRevoked) only between two polls, never while a
// batch is being put.
type workerSinkTask struct {
	// logSync makes what the worker's Kafka acknowledged so far durable
	// (EmbeddedBroker.Sync); nil = nothing to do.
	logSync func() error

	id      TaskID
	task    connect.SinkTask
	cfg     map[string]string // task config
	connCfg map[string]string // connector config (topics, errors.*)
	keyConv connect.Converter
	valConv connect.Converter
	// headerConv reads header values (header.converter); nil passes them
	// through as SimpleHeaderConverter does.
	headerConv sinkHeaderConverter
	chain      *transforms.Chain
	brokers    []string
	flushInt   time.Duration
	setState   func(state, trace string)
	log        *slog.Logger
	gate       *pauseGate
	errs       *sinkErrorHandler
	// maxDelay caps the backoff between Put retries (errors.retry.delay.max.ms).
	maxDelay time.Duration
	// maxPoll is the most records per Put: max.poll.records (500), or the
	// connector's consumer.override.max.poll.records when the worker's
	// override policy allows it.
	maxPoll int
	// metrics is the task's monitoring state (records read and put, record
	// errors and task failures, consumer lag), kept across restarts.
	metrics *metrics.SinkTask

	consumer *kgo.Client
	// pending: per topic and partition, the offset after the last record
	// handed to Put; committed: what the group last stored.
	pending    map[string]map[int32]kgo.EpochOffset
	committed  map[string]map[int32]kgo.EpochOffset
	lastCommit time.Time
	failed     bool // run is returning a failure: no commit on revocation
	progressed atomic.Bool
}

type sinkTaskContext struct{ reporter connect.ErrantRecordReporter }

func (c sinkTaskContext) ErrantRecordReporter() connect.ErrantRecordReporter { return c.reporter }

// sinkTopics reads topics / topics.regex of a sink connector config
// (SinkConnectorConfig): exactly one must be set.
func sinkTopics(cfg map[string]string) (topics []string, re string, err error) {
	for _, t := range strings.Split(cfg["topics"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			topics = append(topics, t)
		}
	}
	re = strings.TrimSpace(cfg["topics.regex"])
	switch {
	case len(topics) > 0 && re != "":
		return nil, "", fmt.Errorf("topics and topics.regex are mutually exclusive options, but both are set.")
	case len(topics) == 0 && re == "":
		return nil, "", fmt.Errorf("Must configure one of topics or topics.regex")
	case re != "":
		if _, err := regexp.Compile(re); err != nil {
			return nil, "", fmt.Errorf("Invalid value %s for configuration topics.regex: %v", re, err)
		}
	}
	return topics, re, nil
}

// run owns the task until ctx is cancelled or the task fails; it returns
// the failure, or nil after a clean stop (final flush + commit included).
func (w *workerSinkTask) run(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &TaskError{Stage: StageTaskPut, Err: fmt.Errorf("panic in sink task: %v\n%s", r, debug.Stack())}
		}
		if err != nil {
			// A task failure counts as an error, as a source task's does.
			w.metrics.Error()
		}
	}()
	defer w.chain.Close()
	topics, re, err := sinkTopics(w.connCfg)
	if err != nil {
		return &TaskError{Stage: StageTaskStart, Err: err}
	}
	if err := w.task.Start(ctx, sinkTaskContext{reporter: w.errs}, w.cfg); err != nil {
		_ = w.task.Stop()
		return &TaskError{Stage: StageTaskStart, Err: err}
	}
	defer w.task.Stop()
	w.pending = map[string]map[int32]kgo.EpochOffset{}
	w.committed = map[string]map[int32]kgo.EpochOffset{}
	opts := []kgo.Opt{
		kgo.SeedBrokers(w.brokers...),
		kgo.ConsumerGroup("connect-" + w.id.Connector), // WorkerSinkTask's group id
		kgo.ClientID(fmt.Sprintf("connector-consumer-%s", w.id)),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), // Connect's auto.offset.reset=earliest
		kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.OnPartitionsRevoked(w.onRevoked),
		kgo.OnPartitionsLost(w.onLost),
		kgo.WithLogger(kafkaClientLogger()),
	}
	if re != "" {
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(re))
	} else {
		opts = append(opts, kgo.ConsumeTopics(topics...))
	}
	w.consumer, err = kgo.NewClient(opts...)
	if err != nil {
		return &TaskError{Stage: StageTaskStart, Err: err}
	}
	defer func() {
		// With BlockRebalanceOnPoll, Close waits for AllowRebalance; the
		// revocation it triggers commits what was put, except after a
		// failure (Kafka Connect closes a failed task without committing).
		w.failed = err != nil
		w.consumer.AllowRebalance()
		w.consumer.Close()
	}()
	w.lastCommit = time.Now()
	for {
		if ctx.Err() != nil {
			return w.closeClean()
		}
		if w.gate != nil && w.gate.isPaused() {
			w.consumer.AllowRebalance()
			if err := w.gate.wait(ctx); err != nil {
				return w.closeClean()
			}
		}
		pollCtx, cancel := context.WithTimeout(ctx, time.Second)
		maxPoll := w.maxPoll
		if maxPoll <= 0 {
			maxPoll = sinkMaxPollRecords
		}
		fetches := w.consumer.PollRecords(pollCtx, maxPoll)
		cancel()
		if ctx.Err() != nil {
			// Records polled but not put are consumed again after a restart.
			return w.closeClean()
		}
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				w.log.Warn("sink task fetch error", "task", w.id, "topic", t, "partition", p, "err", err)
			}
		})
		var batch []*connect.SinkRecord
		var polled []*kgo.Record
		fetches.EachRecord(func(r *kgo.Record) { polled = append(polled, r) })
		// sink-record-read-total counts records as consumed, before
		// conversion and transformations (WorkerSinkTask.pollConsumer).
		w.metrics.Read(len(polled))
		w.recordLag(fetches)
		originals := make(map[*connect.SinkRecord]*kgo.Record, len(polled))
		for _, r := range polled {
			sr, err := w.convert(ctx, r)
			if err != nil {
				return err
			}
			if sr != nil {
				batch = append(batch, sr)
				originals[sr] = r
			}
		}
		w.errs.originals = originals
		if len(batch) > 0 {
			if err := w.put(ctx, batch); err != nil {
				if ctx.Err() != nil {
					return w.closeClean()
				}
				return err
			}
		}
		for _, r := range polled {
			w.markPut(r)
		}
		if time.Since(w.lastCommit) >= w.flushInt {
			if err := w.flushAndCommit(ctx); err != nil {
				if ctx.Err() != nil {
					return w.closeClean()
				}
				return err
			}
		}
		w.consumer.AllowRebalance()
	}
}

// closeClean flushes and commits what was put, with a fresh deadline:
// ctx is already cancelled when the task stops.
func (w *workerSinkTask) closeClean() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.flushAndCommit(ctx); err != nil {
		w.log.Warn("final sink offset commit failed; the records are consumed again after a restart", "task", w.id, "err", err)
	}
	return nil
}

// convert turns a consumed record into a SinkRecord: key, value, then the
// transformation chain. A failure follows errors.tolerance: nil record
// and nil error when the record is skipped (and reported), an error that
// fails the task otherwise.
func (w *workerSinkTask) convert(ctx context.Context, r *kgo.Record) (*connect.SinkRecord, error) {
	sr := &connect.SinkRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp}
	fail := func(stage Stage, class string, err error) (*connect.SinkRecord, error) {
		if herr := w.errs.handle(ctx, r, stage, class, err); herr != nil {
			return nil, herr
		}
		return nil, nil
	}
	kc, ok := w.keyConv.(connect.ToConnectConverter)
	if !ok {
		return nil, &TaskError{Stage: StageKeyConverter, Err: fmt.Errorf("key converter %T cannot read records (no toConnectData)", w.keyConv)}
	}
	vc, ok := w.valConv.(connect.ToConnectConverter)
	if !ok {
		return nil, &TaskError{Stage: StageValueConverter, Err: fmt.Errorf("value converter %T cannot read records (no toConnectData)", w.valConv)}
	}
	var err error
	if sr.KeySchema, sr.Key, err = kc.ToConnect(r.Topic, r.Key); err != nil {
		return fail(StageKeyConverter, fmt.Sprintf("%T", w.keyConv), err)
	}
	if sr.ValueSchema, sr.Value, err = vc.ToConnect(r.Topic, r.Value); err != nil {
		return fail(StageValueConverter, fmt.Sprintf("%T", w.valConv), err)
	}
	// Headers after key and value, as WorkerSinkTask.convertHeadersFor.
	hc := w.headerConv
	if hc == nil {
		hc = simpleHeaders{}
	}
	for _, h := range r.Headers {
		v, err := hc.toSink(r.Topic, h.Key, h.Value)
		if err != nil {
			return fail(StageHeaderConverter, hc.class(), err)
		}
		sr.Headers = append(sr.Headers, connect.Header{Key: h.Key, Value: v})
	}
	if w.chain == nil || w.chain.Len() == 0 {
		return sr, nil
	}
	p := sr.Partition
	src := &connect.SourceRecord{Topic: sr.Topic, Partition: &p, KeySchema: sr.KeySchema, Key: sr.Key,
		ValueSchema: sr.ValueSchema, Value: sr.Value, Timestamp: sr.Timestamp, Headers: sr.Headers}
	out, err := w.chain.Apply(src)
	if err != nil {
		return fail(StageTransformation, "transforms", err)
	}
	if out == nil {
		return nil, nil // filtered out by a transformation
	}
	sr.Topic, sr.KeySchema, sr.Key, sr.ValueSchema, sr.Value, sr.Timestamp, sr.Headers =
		out.Topic, out.KeySchema, out.Key, out.ValueSchema, out.Value, out.Timestamp, out.Headers
	if out.Partition != nil {
		sr.Partition = *out.Partition
	}
	return sr, nil
}

// put hands batch to the task, again and again after a *RetriableError
// (WorkerSinkTask redelivers the batch after a RetriableException), with a
// backoff from 300 ms doubling up to errors.retry.delay.max.ms.
func (w *workerSinkTask) put(ctx context.Context, batch []*connect.SinkRecord) error {
	for attempt := 1; ; attempt++ {
		err := w.task.Put(ctx, batch)
		if err == nil {
			w.progressed.Store(true)
			// sink-record-send-total: the whole batch once Put returned
			// (WorkerSinkTask.deliverMessages' recordBatch), records the
			// task reported as errant included.
			w.metrics.Sent(len(batch))
			return nil
		}
		var re *connect.RetriableError
		if !errors.As(err, &re) || ctx.Err() != nil {
			return &TaskError{Stage: StageTaskPut, Err: err}
		}
		delay := backoff(frameworkInitialDelay, attempt, w.maxDelay)
		w.log.Warn("sink task put failed with a retriable error; redelivering the batch", "task", w.id, "retry", attempt, "delay", delay, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// recordLag sets the consumer lag of every partition a poll returned
// records of: the partition's high watermark, as the fetch response
// carried it, minus the position after the last record polled (the
// consumer's records-lag). A partition without records in this poll keeps
// its previous lag.
func (w *workerSinkTask) recordLag(fetches kgo.Fetches) {
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.Err != nil || len(p.Records) == 0 {
			return
		}
		pos := p.Records[len(p.Records)-1].Offset + 1
		w.metrics.ConsumerLag(p.Topic, p.Partition, max(0, p.HighWatermark-pos))
	})
}

func (w *workerSinkTask) markPut(r *kgo.Record) {
	m := w.pending[r.Topic]
	if m == nil {
		m = map[int32]kgo.EpochOffset{}
		w.pending[r.Topic] = m
	}
	// Epoch -1: no leader-epoch validation on resume; the embedded broker
	// restarts its epochs after a crash, and a mismatch must not make the
	// consumer reset past unwritten records.
	m[r.Partition] = kgo.EpochOffset{Epoch: -1, Offset: r.Offset + 1}
}

// flushAndCommit asks the task to make everything put durable and only
// then commits the consumer offsets of those records.
func (w *workerSinkTask) flushAndCommit(ctx context.Context) error {
	toCommit := map[string]map[int32]kgo.EpochOffset{}
	for t, ps := range w.pending {
		for p, o := range ps {
			if c, ok := w.committed[t][p]; ok && c.Offset == o.Offset {
				continue
			}
			if toCommit[t] == nil {
				toCommit[t] = map[int32]kgo.EpochOffset{}
			}
			toCommit[t][p] = o
		}
	}
	w.lastCommit = time.Now()
	if len(toCommit) == 0 {
		return nil
	}
	if err := w.task.Flush(ctx); err != nil {
		return &TaskError{Stage: StageTaskPut, Err: fmt.Errorf("flush: %w", err)}
	}
	// The records read are durable in the embedded broker before the
	// offsets past them: after a machine crash a source would produce
	// records it lost again at the same offsets, which committed offsets
	// past them would skip.
	if w.logSync != nil {
		if err := w.logSync(); err != nil {
			w.log.Warn("sink offset commit deferred", "task", w.id, "err", err)
			return nil
		}
	}
	// Invariant 1 (no loss): the offsets are committed only now, after
	// Flush returned nil, i.e. every record before them is durable in the
	// downstream system. A crash before this line replays them (the sink
	// is idempotent); a crash after it never skips an unwritten record.
	var commitErr error
	w.consumer.CommitOffsetsSync(ctx, toCommit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			commitErr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && commitErr == nil {
					commitErr = e
				}
			}
		}
	})
	if commitErr != nil {
		// As WorkerSinkTask: a failed commit is logged and retried at the
		// next commit; the records stay written (replayed after a crash).
		w.log.Warn("committing sink consumer offsets failed; retried at the next commit", "task", w.id, "err", commitErr)
		return nil
	}
	for t, ps := range toCommit {
		if w.committed[t] == nil {
			w.committed[t] = map[int32]kgo.EpochOffset{}
		}
		for p, o := range ps {
			w.committed[t][p] = o
		}
	}
	return nil
}

// onRevoked commits what was put for the revoked partitions before
// another member takes them (WorkerSinkTask's HandleRebalance). It runs
// inside AllowRebalance or Close, never during a Put.
func (w *workerSinkTask) onRevoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	if w.failed {
		w.forget(revoked)
		return
	}
	if err := w.flushAndCommit(ctx); err != nil {
		w.log.Warn("sink offset commit on partition revocation failed", "task", w.id, "err", err)
	}
	w.forget(revoked)
}

func (w *workerSinkTask) onLost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	w.forget(lost)
}

func (w *workerSinkTask) forget(parts map[string][]int32) {
	w.metrics.ForgetPartitions(parts)
	for t, ps := range parts {
		for _, p := range ps {
			delete(w.pending[t], p)
			delete(w.committed[t], p)
		}
	}
}
