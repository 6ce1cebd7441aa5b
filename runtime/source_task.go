package runtime

import (
	"context"
	"errors"
	"fmt"
	"github.com/connectd/connectd/transforms"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/metrics"
	"github.com/connectd/connectd/offsets"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TaskID names a task as Kafka Connect's ConnectorTaskId.
type TaskID struct {
	Connector string
	Task      int
}

func (id TaskID) String() string { return fmt.Sprintf("%s-%d", id.Connector, id.Task) }

// workerSourceTask runs one SourceTask: it polls, converts, produces and
// periodically flushes offsets (Kafka Connect's WorkerSourceTask).
type workerSourceTask struct {
	id       TaskID
	task     connect.SourceTask
	cfg      map[string]string
	keyConv  connect.Converter
	valConv  connect.Converter
	chain    *transforms.Chain // the connector's SMTs; nil = none
	producer *kgo.Client
	topics   *topicCreator
	store    offsets.Store
	flushInt time.Duration
	flushTO  time.Duration
	setState func(state, trace string)
	log      *slog.Logger
	// gate parks the poll loop while the connector is PAUSED; nil = never.
	gate *pauseGate
	// onTopic, when set, is called once per topic the task has produced to
	// successfully (KIP-558 active topics).
	onTopic func(topic string)

	// logger is the connector's own logger, given to the task through its
	// context (connect.TaskLogger).
	logger *slog.Logger

	topicsMu sync.Mutex
	seen     map[string]bool
	// lastTopic is the topic of the last record converted: known to exist.
	lastTopic string

	submitted *submittedRecords
	flushMu   sync.Mutex

	produceErrOnce sync.Once
	produceErr     chan error

	// txn, when set, is this task's transactional producer (exactly-once
	// source, source_task_eos.go); producer and the flusher are then unused.
	txn          *kgo.Client
	offsetsTopic string

	// topicCreation is the connector's topic creation rules (KIP-158,
	// topic_creation.go); nil = broker defaults.
	topicCreation *topicCreation
	// ownsProducer: producer is this task's own (producer.override.*,
	// client_overrides.go), closed when run returns.
	ownsProducer bool
	// producerOverrides are the producer.override.* options for the
	// transactional producer under exactly-once source; producerSec its
	// producer.override.* security settings (nil: the worker's).
	producerOverrides []kgo.Opt
	producerSec       *kafkaSecuritySettings

	// progressed is set once a record of this run was acknowledged by
	// Kafka: a retry streak ends there (retry.go).
	progressed atomic.Bool

	// metrics receives the task's counters (metrics package); nil = none.
	metrics *metrics.SourceTask

	// logSync makes the records Kafka acknowledged so far durable
	// (EmbeddedBroker.Sync); nil = nothing to do.
	logSync func() error
	// storageErr is the embedded broker's last storage error
	// (WithStorageError); nil = none to ask.
	storageErr func() error
}

// produceError is the task's error for a record the producer failed for
// good: the topic and the cause, and, when the embedded broker could not
// store a batch, why (a full data.dir), which the produce response's
// UNKNOWN_SERVER_ERROR does not say. Only acknowledged records' offsets
// are committed, so nothing after the failed record is confirmed to the
// database: restarting the task once there is room resends it.
func (w *workerSourceTask) produceError(topic string, err error) error {
	if w.storageErr != nil {
		if serr := w.storageErr(); serr != nil {
			return fmt.Errorf("producing to %s: %w; the embedded broker could not store it: %v (free space in data.dir, then restart the task)", topic, err, serr)
		}
	}
	return fmt.Errorf("producing to %s: %w", topic, err)
}

// syncLog runs logSync, if any.
func (w *workerSourceTask) syncLog() error {
	if w.logSync == nil {
		return nil
	}
	return w.logSync()
}

type offsetReader struct {
	store     offsets.Store
	connector string
}

func (r offsetReader) Offset(ctx context.Context, p map[string]any) (map[string]any, error) {
	return r.store.Get(ctx, r.connector, p)
}

type taskContext struct {
	r      offsetReader
	logger *slog.Logger
	// brokers are the worker's Kafka brokers and kafkaOpts their
	// security options (connect.WorkerInfo).
	brokers   []string
	kafkaOpts []kgo.Opt
	// write stores offsets durably (connect.OffsetWriter).
	write func(ctx context.Context, offs []connect.PartitionOffset) error
}

var (
	_ connect.TaskLogger         = taskContext{}
	_ connect.WorkerInfoProvider = taskContext{}
	_ connect.OffsetWriter       = taskContext{}
)

// WriteOffsets implements connect.OffsetWriter.
func (t taskContext) WriteOffsets(ctx context.Context, offs []connect.PartitionOffset) error {
	if t.write == nil {
		return errors.New("no offset store")
	}
	return t.write(ctx, offs)
}

// writeOffsets stores offsets a task writes itself (connect.OffsetWriter),
// durably before it returns: the offsets topic (acks=all), then synced as
// flush syncs.
func (w *workerSourceTask) writeOffsets(ctx context.Context, offs []connect.PartitionOffset) error {
	if w.store == nil {
		return errors.New("no offset store")
	}
	entries := make([]offsets.Entry, len(offs))
	for i, po := range offs {
		entries[i] = offsets.Entry{Connector: w.id.Connector, Partition: po.Partition, Offset: po.Offset}
	}
	if err := w.store.Put(ctx, entries); err != nil {
		return fmt.Errorf("storing offsets: %w", err)
	}
	return w.syncLog()
}

// WorkerInfo implements connect.WorkerInfoProvider.
func (t taskContext) WorkerInfo() connect.WorkerInfo {
	return connect.WorkerInfo{BootstrapServers: t.brokers, KafkaClientOpts: t.kafkaOpts}
}

func (t taskContext) OffsetReader() connect.OffsetReader { return t.r }

// Logger implements connect.TaskLogger.
func (t taskContext) Logger() *slog.Logger { return t.logger }

// run owns the task until ctx is cancelled or the task fails. It returns
// the failure, or nil after a clean stop.
func (w *workerSourceTask) run(ctx context.Context) (err error) {
	w.submitted = newSubmittedRecords()
	w.produceErr = make(chan error, 1)
	if w.ownsProducer {
		// Runs after the final flush below (deferred later, run earlier).
		defer w.producer.Close()
	}
	defer func() {
		if r := recover(); r != nil {
			// A panic in one task fails that task only (invariant 6).
			err = fmt.Errorf("task panicked: %v\n%s", r, debug.Stack())
		}
		if err != nil {
			w.metrics.Error()
		}
		if stopErr := w.task.Stop(); stopErr != nil {
			w.log.Warn("task stop", "task", w.id, "err", stopErr)
		}
		w.chain.Close()
	}()
	tc := taskContext{r: offsetReader{store: w.store, connector: w.id.Connector}, logger: w.logger, write: w.writeOffsets}
	for _, cl := range []*kgo.Client{w.producer, w.txn} {
		if cl != nil && tc.brokers == nil {
			tc.brokers, _ = cl.OptValue(kgo.SeedBrokers).([]string)
			tc.kafkaOpts = securityOptsOf(cl)
		}
	}
	if tc.logger == nil {
		tc.logger = w.log
	}
	if w.txn != nil {
		defer w.txn.Close()
		if err := w.fence(ctx); err != nil {
			return err
		}
	}
	w.metrics.Attach(w.task)
	if err := w.task.Start(ctx, tc, w.cfg); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return nil
		}
		return &TaskError{Task: w.id, Stage: StageTaskStart, Err: err}
	}
	if w.gate != nil && w.gate.isPaused() {
		w.setState(StatePaused, "")
	} else {
		w.setState(StateRunning, "")
	}
	if w.txn != nil {
		return w.pollTransactional(ctx)
	}

	flushCtx, stopFlusher := context.WithCancel(context.Background())
	flusherDone := make(chan struct{})
	go func() {
		defer close(flusherDone)
		t := time.NewTicker(w.flushInt)
		defer t.Stop()
		for {
			select {
			case <-flushCtx.Done():
				return
			case <-t.C:
				if err := w.flush(flushCtx); err != nil && flushCtx.Err() == nil {
					w.log.Error("offset flush failed", "task", w.id, "err", err)
				}
			}
		}
	}()
	defer func() {
		stopFlusher()
		<-flusherDone
		// Final flush on a clean stop: wait (bounded) for in-flight acks,
		// then persist what is committable.
		fctx, cancel := context.WithTimeout(context.Background(), w.flushTO)
		defer cancel()
		if err := w.producer.Flush(fctx); err == nil {
			if ferr := w.flush(fctx); ferr != nil {
				w.log.Warn("final offset flush", "task", w.id, "err", ferr)
			}
		}
	}()

	for {
		if ctx.Err() != nil {
			return nil
		}
		select {
		case perr := <-w.produceErr:
			return perr
		default:
		}
		if w.gate != nil {
			if err := w.gate.wait(ctx); err != nil {
				return nil
			}
		}
		recs, err := w.task.Poll(ctx)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, context.Canceled) {
				return nil
			}
			return &TaskError{Task: w.id, Stage: StageTaskPoll, Err: err}
		}
		w.metrics.Polled(len(recs))
		// One clock reading for the batch's metrics (a poll batch takes
		// milliseconds), not one per record.
		now := time.Now()
		if len(recs) >= parallelConvertMin && convertWorkers() > 1 {
			if err := w.sendBatch(ctx, recs, now); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			continue
		}
		for _, rec := range recs {
			if err := w.send(ctx, rec, now); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// send converts rec and hands it to the producer; now is the time the
// metrics count it at.
func (w *workerSourceTask) send(ctx context.Context, rec *connect.SourceRecord, now time.Time) error {
	sourceTs := w.metrics.EventAt(rec, now)
	rec, err := w.transform(rec)
	if err != nil {
		return err
	}
	if rec == nil {
		return nil
	}
	s := inflightRecords.Get().(*inflightRecord)
	if _, err := w.toKafka(ctx, rec, &s.bufs, &s.kr); err != nil {
		*s = inflightRecord{}
		inflightRecords.Put(s)
		return err
	}
	w.produce(ctx, s, rec, sourceTs)
	return nil
}

// produce submits rec's offset and hands its converted Kafka record s.kr
// to the producer (send and sendBatch, in record order).
func (w *workerSourceTask) produce(ctx context.Context, s *inflightRecord, rec *connect.SourceRecord, sourceTs int64) {
	s.w, s.rec, s.sourceTs = w, rec, sourceTs
	s.sr = w.submitted.submit(rec.SourcePartition, rec.SourceOffset)
	w.metrics.Sent()
	w.producer.Produce(ctx, &s.kr, producedPromise)
}

// inflightRecord is one record of send between Produce and its promise: the
// Kafka record and what the promise needs, in one pooled object, so that
// producing a record allocates neither the kgo.Record nor a closure
// (bench/postgres, issue 3: ~300 bytes a record less garbage).
type inflightRecord struct {
	// kr comes first: producedPromise gets &kr back and finds the
	// inflightRecord at the same address.
	kr       kgo.Record
	bufs     recordBuffers
	w        *workerSourceTask
	rec      *connect.SourceRecord
	sr       *submittedRecord
	sourceTs int64
}

var inflightRecords = sync.Pool{New: func() any { return new(inflightRecord) }}

// producedPromise is the promise of every record send produces.
func producedPromise(kr *kgo.Record, err error) {
	s := (*inflightRecord)(unsafe.Pointer(kr))
	w, rec := s.w, s.rec
	// The producer is done with the record's bytes (acknowledged or
	// failed for good): its buffers serve the next records.
	s.bufs.release()
	w.metrics.Acked(s.sourceTs, err)
	if err != nil {
		w.produceErrOnce.Do(func() {
			w.produceErr <- &TaskError{Task: w.id, Stage: StageKafkaProduce, Err: w.produceError(rec.Topic, err)}
		})
	} else {
		w.submitted.ack(s.sr)
		w.progressed.Store(true)
		w.recordActiveTopic(rec.Topic)
	}
	*s = inflightRecord{}
	inflightRecords.Put(s)
}

// transform runs rec through the connector's transformation chain. A
// record the chain drops returns nil, and its offset is still committed,
// in order with the records around it (as Kafka Connect does).
func (w *workerSourceTask) transform(rec *connect.SourceRecord) (*connect.SourceRecord, error) {
	out, err := w.applyChain(rec)
	if err == nil && out == nil && w.txn == nil {
		w.submitted.ack(w.submitted.submit(rec.SourcePartition, rec.SourceOffset))
	}
	return out, err
}

// applyChain is transform without committing a dropped record's offset.
func (w *workerSourceTask) applyChain(rec *connect.SourceRecord) (*connect.SourceRecord, error) {
	if w.chain == nil {
		return rec, nil
	}
	out, err := w.chain.Apply(rec)
	if err != nil {
		return nil, &TaskError{Task: w.id, Stage: StageTransformation, Err: err}
	}
	return out, nil
}

// toKafka converts rec and makes sure its topic exists. With bufs, a
// converter that can append (connect.AppendConverter) writes into pooled
// buffers that bufs then holds; the caller releases them once the producer
// is done with the record. With nil bufs every record gets its own bytes.
// The Kafka record is written into kr when it is not nil, else allocated.
func (w *workerSourceTask) toKafka(ctx context.Context, rec *connect.SourceRecord, bufs *recordBuffers, kr *kgo.Record) (*kgo.Record, error) {
	key, val, err := w.encode(rec, bufs)
	if err != nil {
		return nil, err
	}
	return w.kafkaRecord(ctx, rec, bufs, kr, key, val)
}

// encode converts rec's key and value (into bufs as toKafka does). It only
// reads w's converters, which are safe for concurrent use, so several
// records of a poll batch are encoded at once (sendBatch). On an error
// bufs are released.
func (w *workerSourceTask) encode(rec *connect.SourceRecord, bufs *recordBuffers) (key, val []byte, err error) {
	var keyBuf, valBuf **[]byte
	if bufs != nil {
		keyBuf, valBuf = &bufs.key, &bufs.value
		bufs.take(w.keyConv, w.valConv)
	}
	key, err = convert(w.keyConv, rec.Topic, rec.KeySchema, rec.Key, keyBuf)
	if err != nil {
		bufs.release()
		return nil, nil, &TaskError{Task: w.id, Stage: StageKeyConverter, Err: fmt.Errorf("converting key of a record for %s: %w", rec.Topic, err)}
	}
	val, err = convert(w.valConv, rec.Topic, rec.ValueSchema, rec.Value, valBuf)
	if err != nil {
		bufs.release()
		return nil, nil, &TaskError{Task: w.id, Stage: StageValueConverter, Err: fmt.Errorf("converting value of a record for %s: %w", rec.Topic, err)}
	}
	return key, val, nil
}

// kafkaRecord makes the Kafka record of rec with its converted key and
// value, once its topic exists (on the poll goroutine: lastTopic).
func (w *workerSourceTask) kafkaRecord(ctx context.Context, rec *connect.SourceRecord, bufs *recordBuffers, kr *kgo.Record, key, val []byte) (*kgo.Record, error) {
	// Records of a task mostly go to the topic of the previous one: that
	// one is known to exist without asking the shared topic creator.
	if rec.Topic != w.lastTopic {
		if err := w.topics.ensure(ctx, rec.Topic, w.topicCreation); err != nil {
			bufs.release()
			return nil, &TaskError{Task: w.id, Stage: StageKafkaProduce, Err: err}
		}
		w.lastTopic = rec.Topic
	}
	if kr == nil {
		kr = new(kgo.Record)
	}
	*kr = kgo.Record{Topic: rec.Topic, Key: key, Value: val, Timestamp: rec.Timestamp, Headers: kafkaHeaders(rec.Headers)}
	if rec.Partition != nil {
		kr.Partition = *rec.Partition
	}
	return kr, nil
}

// kafkaHeaders returns h as Kafka record headers. The two types are the
// same struct (the conversion below does not compile otherwise), so the
// record shares h's array instead of copying it: connectors share one
// header slice among many records (the PostgreSQL connector's extended
// headers), and neither kgo nor the transforms change a header in place.
func kafkaHeaders(h []connect.Header) []kgo.RecordHeader {
	if len(h) == 0 {
		return nil
	}
	_ = kgo.RecordHeader(connect.Header{})
	return unsafe.Slice((*kgo.RecordHeader)(unsafe.Pointer(unsafe.SliceData(h))), len(h))
}

// convert serialises v with conv. With an AppendConverter and a buffer in
// *buf (recordBuffers.take) the bytes are written into that buffer, which
// *buf keeps (grown if it had to be) until the record's buffers are
// released.
func convert(conv connect.Converter, topic string, s *connect.Schema, v any, buf **[]byte) ([]byte, error) {
	ac, ok := conv.(connect.AppendConverter)
	if !ok || buf == nil || *buf == nil {
		return conv.FromConnect(topic, s, v)
	}
	out, err := ac.AppendFromConnect((**buf)[:0], topic, s, v)
	if err == nil && out != nil {
		**buf = out
	}
	return out, err
}

// recordBufferPool holds the value and key buffers of records the
// producer is done with. A buffer keeps the capacity of the largest record
// it held, so a steady stream of records of one table allocates nothing
// for its bytes. Unlike a sync.Pool, each list is bounded (its budget of
// bytes of capacity, buffers up to maxRecordBuffer bytes each): what it
// keeps adds to the heap the garbage collector paces itself on, and so to
// the worker's peak RSS.
//
// Keys and values have lists of their own: with one list, a record's key
// took the 4 KB buffer of a JsonConverter value and its value the 200-byte
// buffer of a key, which then grew into a new 4 KB buffer, so that every
// buffer ended up value-sized, twice as many bytes were kept, the budget
// ran out, and about a third of the records allocated a new value buffer
// (bench/postgres snapshot, issue 3).
//
// Both lists share one lock: a record takes its key and value buffers
// together (recordBuffers.take) and gives them back together (release),
// one lock round trip each way instead of two.
var recordBufferPool = struct {
	mu           sync.Mutex
	keys, values bufferFreeList
}{keys: bufferFreeList{budget: keyBufferBudget}, values: bufferFreeList{budget: recordBufferBudget}}

const (
	// recordBufferBudget is the most capacity, in bytes, kept for reuse
	// as values: about 3000 JsonConverter change events of 3-4 KB. The
	// producer holds up to buffer.memory (defaultBufferMemory, 8 MiB) of
	// record bytes, in buffers of somewhat more capacity: with an 8 MiB
	// budget about 4% of the records of the 1M-row snapshot of
	// bench/postgres found the list at its budget and took a new buffer.
	recordBufferBudget = 12 << 20
	// keyBufferBudget is the most capacity, in bytes, kept for reuse as
	// keys: about 4000 JsonConverter keys of a few hundred bytes.
	keyBufferBudget = 1 << 20
	// maxRecordBuffer is the largest buffer kept for reuse, in bytes;
	// larger records' buffers are left to the garbage collector.
	maxRecordBuffer = 256 << 10
)

// bufferFreeList is a bounded LIFO list of byte buffers; its owner
// (recordBufferPool) locks it.
type bufferFreeList struct {
	bufs   []*[]byte
	bytes  int // capacity of the buffers in bufs
	budget int
}

// pop takes the last kept buffer, or nil.
func (l *bufferFreeList) pop() *[]byte {
	n := len(l.bufs)
	if n == 0 {
		return nil
	}
	p := l.bufs[n-1]
	l.bufs[n-1] = nil
	l.bufs = l.bufs[:n-1]
	l.bytes -= cap(*p)
	return p
}

// push keeps p for reuse when it fits the budget; otherwise p is dropped.
// nil is ignored.
func (l *bufferFreeList) push(p *[]byte) {
	if p == nil {
		return
	}
	c := cap(*p)
	if c == 0 || c > maxRecordBuffer {
		return
	}
	if l.bytes+c <= l.budget {
		l.bufs = append(l.bufs, p)
		l.bytes += c
	}
}

// recordBuffers are the pooled buffers one produced record's key and value
// were written into (nil: the record's own bytes).
type recordBuffers struct{ key, value *[]byte }

// release gives the buffers back to the pool; the record's Key and Value
// must not be read afterwards. Nil-safe.
func (b *recordBuffers) release() {
	if b == nil || b.key == nil && b.value == nil {
		return
	}
	pool := &recordBufferPool
	pool.mu.Lock()
	pool.keys.push(b.key)
	pool.values.push(b.value)
	pool.mu.Unlock()
	b.key, b.value = nil, nil
}

// take fills b with a key and a value buffer for converters that append
// (connect.AppendConverter), under one lock, for convert to write into.
func (b *recordBuffers) take(keyConv, valConv connect.Converter) {
	_, k := keyConv.(connect.AppendConverter)
	_, v := valConv.(connect.AppendConverter)
	if !k && !v {
		return
	}
	pool := &recordBufferPool
	pool.mu.Lock()
	if k {
		b.key = pool.keys.pop()
	}
	if v {
		b.value = pool.values.pop()
	}
	pool.mu.Unlock()
	if k && b.key == nil {
		b.key = new([]byte)
	}
	if v && b.value == nil {
		b.value = new([]byte)
	}
}

// recordActiveTopic reports topic once per task (WorkerSourceTask's
// recordActiveTopic, KIP-558).
func (w *workerSourceTask) recordActiveTopic(topic string) {
	if w.onTopic == nil {
		return
	}
	w.topicsMu.Lock()
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	known := w.seen[topic]
	w.seen[topic] = true
	w.topicsMu.Unlock()
	if !known {
		w.onTopic(topic)
	}
}

// flush stores the committable offsets durably, then tells the task.
func (w *workerSourceTask) flush(ctx context.Context) error {
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	offs := w.submitted.committableOffsets()
	if len(offs) == 0 {
		return nil
	}
	entries := make([]offsets.Entry, len(offs))
	for i, po := range offs {
		entries[i] = offsets.Entry{Connector: w.id.Connector, Partition: po.partition, Offset: po.offset}
	}
	// The records up to these offsets are acknowledged, but an embedded
	// broker that does not fsync each batch may hold them in the page
	// cache only: they are made durable before the offsets that stand
	// for them are stored, or a machine crash could keep the offsets and
	// lose the records.
	if err := w.syncLog(); err != nil {
		w.metrics.OffsetCommit(err)
		return err
	}
	if err := w.store.Put(ctx, entries); err != nil {
		w.metrics.OffsetCommit(err)
		return fmt.Errorf("storing offsets: %w", err)
	}
	// And the offsets themselves before any position is confirmed.
	if err := w.syncLog(); err != nil {
		w.metrics.OffsetCommit(err)
		return err
	}
	w.metrics.OffsetCommit(nil)
	for _, po := range offs {
		// The offset is durable and every record up to it is acknowledged:
		// only now may the task confirm the position upstream (invariant 1).
		if err := w.task.Commit(ctx, po.partition, po.offset); err != nil {
			w.log.Warn("task commit", "task", w.id, "err", err)
		}
	}
	return nil
}
