package flinklite

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/twmb/franz-go/pkg/kgo"
	"math"
	"sync/atomic"
	"time"
)

// MinWatermark is the watermark before any event time was seen (Flink's
// Long.MIN_VALUE).
const MinWatermark int64 = math.MinInt64

// element is one record in flight: its value, event time (ms since the
// epoch), the index of the input partition it came from, and whether it
// retracts an earlier record (Flink's RowKind UPDATE_BEFORE/DELETE).
type element[T any] struct {
	v       T
	ts      int64
	part    int32
	retract bool
}

// operator receives the elements and watermarks of one upstream stream.
type operator[T any] interface {
	processElement(e element[T])
	processWatermark(wm int64)
}

// ticker is an operator with periodic processing-time work (watermark
// emission, idleness, TTL cleanup), run by Env.Tick.
type ticker interface {
	tick(now time.Time)
}

// stateful is an operator whose state goes into checkpoints. name is stable
// across runs of the same job graph (it is derived from the position of the
// operator in the graph, as Flink's auto-generated operator uids).
type stateful interface {
	snapshot() (json.RawMessage, error)
	restore(json.RawMessage) error
}

// Env builds and runs one job graph (Flink's StreamExecutionEnvironment).
// Not safe for concurrent use: one goroutine drives the job.
type Env struct {
	clock     Clock
	tickers   []ticker
	finishers []interface{ finish() }
	states    map[string]stateful
	order     []string
	nextID    int
	err       error
	metrics   Metrics
	sources   []*kafkaSource
	// scaledOut is the input partition of a RunScaledOut instance.
	scaledOut *topicPartition
	// hasKafkaSink makes Run open a transactional producer.
	hasKafkaSink bool
	sinkTopics   []string
	produce      func(*kgo.Record)
	// abandoned and beforeCommit simulate a crash in tests: Run returns at
	// once, without a checkpoint, a commit or closing its producer.
	abandoned    atomic.Bool
	producer     *kgo.Client
	txnRecords   int
	beforeCommit func(checkpoint int64)
	// watermarks are the job's watermark generators (for Status).
	watermarks []interface{ currentWatermark() int64 }
	// syncSinks write their buffered results at every checkpoint, before
	// the checkpoint is committed (database upsert sinks).
	syncSinks []syncSink
	board     statusBoard
}

// syncSink is a sink whose writes are flushed by each checkpoint and that
// holds a connection closed when Run returns.
type syncSink interface {
	flush(ctx context.Context) error
	close()
}

// Metrics are the job's counters, with Flink's metric names where one exists.
type Metrics struct {
	// NumRecordsIn counts elements emitted by the job's sources.
	NumRecordsIn int64
	// NumLateRecordsDropped counts elements later than a window's allowed
	// lateness that went to no late side output (Flink's
	// numLateRecordsDropped); those with a side output are counted in
	// NumLateRecordsSideOutput.
	NumLateRecordsDropped    int64
	NumLateRecordsSideOutput int64
	// NumUnmatchedRetractions counts retractions of a row the job never saw
	// (e.g. a Debezium update whose old row predates the job's first offset).
	NumUnmatchedRetractions int64
	// StateEntriesExpired counts keyed-state entries removed by TTL cleanup.
	StateEntriesExpired int64
	// Checkpoints counts completed checkpoints.
	Checkpoints int64
	// LastCheckpointDuration is how long the last periodic checkpoint took;
	// SlowCheckpoints counts those longer than the checkpoint interval.
	LastCheckpointDuration time.Duration
	SlowCheckpoints        int64
}

// Option configures an Env.
type Option func(*Env)

// WithClock injects the processing-time clock (default SystemClock).
func WithClock(c Clock) Option { return func(e *Env) { e.clock = c } }

// NewEnv returns an empty job graph.
func NewEnv(opts ...Option) *Env {
	e := &Env{clock: SystemClock{}, states: map[string]stateful{}}
	e.board.savepoints = make(chan savepointRequest)
	e.board.status.Watermark = MinWatermark
	for _, o := range opts {
		o(e)
	}
	return e
}

// Metrics returns a copy of the job's counters. Call it on the job's
// goroutine (e.g. from a sink) or after Run returned.
func (e *Env) Metrics() Metrics { return e.metrics }

// Err returns the first error an operator failed with, or nil. After an
// error the job must be restarted from its last checkpoint, as Flink's
// failover.
func (e *Env) Err() error { return e.err }

// Fail fails the job with err from a user function on the job's goroutine
// (a Map, FlatMap or Filter that meets input it must not skip): the
// element being processed is the last, and Env.Run returns err, as a
// Flink operator throwing an exception fails its task.
func (e *Env) Fail(err error) { e.fail(err) }

func (e *Env) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// uid returns the next stable operator id for kind.
func (e *Env) uid(kind string) string {
	e.nextID++
	return fmt.Sprintf("%s-%d", kind, e.nextID)
}

func (e *Env) register(id string, s stateful) {
	e.states[id] = s
	e.order = append(e.order, id)
}

// Tick runs the periodic processing-time work of every operator in graph
// order: sources emit their watermark (Flink's autoWatermarkInterval),
// idle partitions are detected, expired keyed state is removed. Event-time
// timers fire as the watermark reaches them. It returns Err().
func (e *Env) Tick() error {
	now := e.clock.Now()
	for _, t := range e.tickers {
		t.tick(now)
	}
	return e.err
}

// Finish signals the end of bounded input: every source emits the maximum
// watermark, so all pending windows and timers fire (Flink's
// MAX_WATERMARK at end of input). It returns Err().
func (e *Env) Finish() error {
	for _, f := range e.finishers {
		f.finish()
	}
	return e.err
}

// Stream is a typed stream of elements (Flink's DataStream).
type Stream[T any] struct {
	env   *Env
	parts int
	outs  []operator[T]
}

func newStream[T any](env *Env, parts int) *Stream[T] { return &Stream[T]{env: env, parts: parts} }

func (s *Stream[T]) emit(e element[T]) {
	for _, o := range s.outs {
		o.processElement(e)
	}
}

func (s *Stream[T]) emitWatermark(wm int64) {
	for _, o := range s.outs {
		o.processWatermark(wm)
	}
}

func (s *Stream[T]) subscribe(o operator[T]) { s.outs = append(s.outs, o) }

// statusOperator is an operator that receives the stream's watermark
// status (Flink's WatermarkStatus): idle when every input partition of the
// watermark generator upstream is idle, active again at its next element.
type statusOperator interface {
	processStatus(idle bool)
}

// emitStatus passes a watermark status change to the operators that take
// it (pass-through operators forward it; the others ignore it).
func (s *Stream[T]) emitStatus(idle bool) {
	for _, o := range s.outs {
		if so, ok := o.(statusOperator); ok {
			so.processStatus(idle)
		}
	}
}

// Input is a source the caller pushes into (partitioned, as a Kafka topic):
// used by tests, benchmarks and embedding programs. Each Emit runs the
// element through the whole graph before returning.
type Input[T any] struct {
	out *Stream[T]
}

// NewInput returns a source with partitions input partitions (≥ 1).
func NewInput[T any](env *Env, partitions int) *Input[T] {
	if partitions < 1 {
		partitions = 1
	}
	return &Input[T]{out: newStream[T](env, partitions)}
}

// Stream returns the stream of the input's elements.
func (in *Input[T]) Stream() *Stream[T] { return in.out }

// Emit pushes v as an insertion from partition part. It returns the job's
// first error, if any.
func (in *Input[T]) Emit(part int, v T) error { return in.push(part, v, false) }

// Retract pushes v as a retraction of an earlier v (Flink's RowKind
// DELETE/UPDATE_BEFORE).
func (in *Input[T]) Retract(part int, v T) error { return in.push(part, v, true) }

func (in *Input[T]) push(part int, v T, retract bool) error {
	env := in.out.env
	if env.err != nil {
		return env.err
	}
	if part < 0 || part >= in.out.parts {
		return fmt.Errorf("flinklite: partition %d out of range [0,%d)", part, in.out.parts)
	}
	env.metrics.NumRecordsIn++
	in.out.emit(element[T]{v: v, ts: MinWatermark, part: int32(part), retract: retract})
	return env.err
}

type mapOp[T, U any] struct {
	f   func(T) U
	out *Stream[U]
}

func (m *mapOp[T, U]) processElement(e element[T]) {
	m.out.emit(element[U]{v: m.f(e.v), ts: e.ts, part: e.part, retract: e.retract})
}
func (m *mapOp[T, U]) processWatermark(wm int64) { m.out.emitWatermark(wm) }
func (m *mapOp[T, U]) processStatus(idle bool)   { m.out.emitStatus(idle) }

// Map applies f to every element (Flink's DataStream.map). A retraction
// stays a retraction of f's result, so f must be deterministic.
func Map[T, U any](s *Stream[T], f func(T) U) *Stream[U] {
	out := newStream[U](s.env, s.parts)
	s.subscribe(&mapOp[T, U]{f: f, out: out})
	return out
}

type filterOp[T any] struct {
	f   func(T) bool
	out *Stream[T]
}

func (m *filterOp[T]) processElement(e element[T]) {
	if m.f(e.v) {
		m.out.emit(e)
	}
}
func (m *filterOp[T]) processWatermark(wm int64) { m.out.emitWatermark(wm) }
func (m *filterOp[T]) processStatus(idle bool)   { m.out.emitStatus(idle) }

// Filter keeps the elements for which f is true (Flink's DataStream.filter).
func Filter[T any](s *Stream[T], f func(T) bool) *Stream[T] {
	out := newStream[T](s.env, s.parts)
	s.subscribe(&filterOp[T]{f: f, out: out})
	return out
}

type flatMapOp[T, U any] struct {
	f   func(T, func(U))
	out *Stream[U]
}

func (m *flatMapOp[T, U]) processElement(e element[T]) {
	m.f(e.v, func(u U) { m.out.emit(element[U]{v: u, ts: e.ts, part: e.part, retract: e.retract}) })
}
func (m *flatMapOp[T, U]) processWatermark(wm int64) { m.out.emitWatermark(wm) }
func (m *flatMapOp[T, U]) processStatus(idle bool)   { m.out.emitStatus(idle) }

// FlatMap calls f once per element; f emits zero or more results through
// its collect argument (Flink's DataStream.flatMap with a Collector).
func FlatMap[T, U any](s *Stream[T], f func(v T, collect func(U))) *Stream[U] {
	out := newStream[U](s.env, s.parts)
	s.subscribe(&flatMapOp[T, U]{f: f, out: out})
	return out
}

type flatMapChangesOp[T, U any] struct {
	f   func(T, func(U, bool))
	out *Stream[U]
}

func (m *flatMapChangesOp[T, U]) processElement(e element[T]) {
	m.f(e.v, func(u U, retract bool) { m.out.emit(element[U]{v: u, ts: e.ts, part: e.part, retract: retract}) })
}
func (m *flatMapChangesOp[T, U]) processWatermark(wm int64) { m.out.emitWatermark(wm) }
func (m *flatMapChangesOp[T, U]) processStatus(idle bool)   { m.out.emitStatus(idle) }

// FlatMapChanges is FlatMap whose f also says, for each result, whether it
// is a retraction (Flink's RowKind set by a changelog format): it decodes a
// changelog written to Kafka with each Change's Retract flag in the record,
// e.g. a repartition topic between two scaled-out stages. The input
// element's own flag is not carried over.
func FlatMapChanges[T, U any](s *Stream[T], f func(v T, collect func(u U, retract bool))) *Stream[U] {
	out := newStream[U](s.env, s.parts)
	s.subscribe(&flatMapChangesOp[T, U]{f: f, out: out})
	return out
}

// Change is an element as a sink sees it: the value, its event time and
// whether it is a retraction.
type Change[T any] struct {
	Value     T
	EventTime time.Time
	Retract   bool
}

type sinkOp[T any] struct {
	f func(Change[T])
}

func (m *sinkOp[T]) processElement(e element[T]) {
	var t time.Time
	if e.ts != MinWatermark {
		t = time.UnixMilli(e.ts).UTC()
	}
	m.f(Change[T]{Value: e.v, EventTime: t, Retract: e.retract})
}
func (m *sinkOp[T]) processWatermark(int64) {}

// Sink calls f with every element, on the job's goroutine (Flink's
// DataStream.addSink with a SinkFunction).
func Sink[T any](s *Stream[T], f func(Change[T])) {
	s.subscribe(&sinkOp[T]{f: f})
}
