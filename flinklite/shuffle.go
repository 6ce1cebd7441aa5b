package flinklite

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Watermarks through a Kafka shuffle topic. Flink's network shuffle sends
// each upstream subtask's watermarks and watermark status to every
// downstream channel, and a downstream task's watermark is the minimum
// over its channels that are not idle (StatusWatermarkValve);
// FlinkKafkaShuffle does the same through a Kafka topic, writing each
// producer's watermark to every partition. ToKafkaShuffle and
// ShuffleWatermarks are that pair for the scaled-out stages of
// RunScaledOut: a row of a lagging upstream then holds the downstream
// watermark back instead of arriving late.

// WatermarkHeader is the header key that marks a watermark record of a
// shuffle topic (ToKafkaShuffle); its value is empty and the record's
// value is JSON {"producer": n, "watermark": ms, "idle": bool}.
const WatermarkHeader = "flinklite.watermark"

// shuffleWatermark is the value of a watermark record: producer's
// watermark (ms since the epoch, MinWatermark before its first) and
// whether it is idle (Flink's WatermarkStatus.IDLE).
type shuffleWatermark struct {
	Producer  int32 `json:"producer"`
	Watermark int64 `json:"watermark"`
	Idle      bool  `json:"idle,omitempty"`
}

// isWatermarkRecord reports whether headers mark a watermark record.
func isWatermarkRecord(headers []kgo.RecordHeader) bool {
	for _, h := range headers {
		if h.Key == WatermarkHeader {
			return true
		}
	}
	return false
}

// ShuffleConfig configures ToKafkaShuffle.
type ShuffleConfig[T any] struct {
	// Topic is the shuffle topic; Partitions its partition count (each
	// watermark record goes to every partition).
	Topic      string
	Partitions int32
	// Producer is this instance's index among the producers of Topic,
	// 0 ≤ Producer < the producers ShuffleWatermarks is given (e.g. the
	// index of the instance's input partition, Env.InputPartition).
	Producer int32
	// Encode returns an element's record key and value; rows are
	// partitioned by key with Kafka's default partitioner (murmur2).
	Encode func(Change[T]) (key, value []byte, err error)
	// WatermarkInterval is the least processing time between two writes
	// of a changed watermark or status (default 200 ms, Flink's
	// pipeline.auto-watermark-interval); every checkpoint also writes a
	// changed one, in its transaction.
	WatermarkInterval time.Duration
}

// shuffleSink writes elements and the stream's watermark and status.
type shuffleSink[T any] struct {
	kafkaSink[T] // the rows, as ToKafka writes them
	cfg          ShuffleConfig[T]
	// cur is the stream's watermark and status now; written the last ones
	// written to every partition, in a transaction that is committed with
	// the checkpoint that holds it.
	cur, written shuffleWatermark
	lastWrite    time.Time
}

// ToKafkaShuffle writes s to cfg.Topic exactly once, as ToKafka, and
// forwards the stream's watermark and watermark status: when either
// changed, at most every WatermarkInterval and at every checkpoint, a
// watermark record (header WatermarkHeader, value {"producer",
// "watermark", "idle"}) goes to every partition of the topic, in the
// transaction of the rows it follows. The last watermark written is
// checkpointed. Read the topic with ShuffleWatermarks.
func ToKafkaShuffle[T any](s *Stream[T], cfg ShuffleConfig[T]) {
	if cfg.WatermarkInterval <= 0 {
		cfg.WatermarkInterval = 200 * time.Millisecond
	}
	env := s.env
	initial := shuffleWatermark{Producer: cfg.Producer, Watermark: MinWatermark}
	k := &shuffleSink[T]{kafkaSink: kafkaSink[T]{env: env, topic: cfg.Topic, encode: cfg.Encode}, cfg: cfg, cur: initial, written: initial}
	s.subscribe(k)
	env.tickers = append(env.tickers, k)
	env.syncSinks = append(env.syncSinks, k)
	env.register(env.uid("shuffle"), k)
	env.addKafkaSink(cfg.Topic)
}

func (k *shuffleSink[T]) processWatermark(wm int64) { k.cur.Watermark = max(k.cur.Watermark, wm) }
func (k *shuffleSink[T]) processStatus(idle bool)   { k.cur.Idle = idle }

func (k *shuffleSink[T]) tick(now time.Time) {
	if k.cur != k.written && now.Sub(k.lastWrite) >= k.cfg.WatermarkInterval {
		k.write(now)
	}
}

// flush writes a changed watermark into the checkpoint's transaction.
func (k *shuffleSink[T]) flush(context.Context) error {
	if k.cur != k.written {
		k.write(k.env.clock.Now())
	}
	return nil
}

func (k *shuffleSink[T]) close() {}

func (k *shuffleSink[T]) write(now time.Time) {
	if k.env.produce == nil {
		return // not run by Env.Run: there is no transaction to write to
	}
	v, err := json.Marshal(k.cur)
	if err != nil {
		k.env.fail(err)
		return
	}
	hdr := []kgo.RecordHeader{{Key: WatermarkHeader}}
	for p := int32(0); p < k.cfg.Partitions; p++ {
		k.env.produce(&kgo.Record{Topic: k.cfg.Topic, Partition: p, Value: v, Headers: hdr})
	}
	k.written, k.lastWrite = k.cur, now
}

type shuffleSinkSnapshot struct {
	Watermark int64            `json:"watermark"`
	Written   shuffleWatermark `json:"written"`
}

func (k *shuffleSink[T]) snapshot() (json.RawMessage, error) {
	return json.Marshal(shuffleSinkSnapshot{Watermark: k.cur.Watermark, Written: k.written})
}

// restore takes back the watermark the checkpoint committed; the status
// is active, as the restored watermark generator's partitions are, so a
// restored idle status is written as active at the next tick.
func (k *shuffleSink[T]) restore(b json.RawMessage) error {
	var s shuffleSinkSnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	k.written = s.Written
	k.written.Producer = k.cfg.Producer
	k.cur = shuffleWatermark{Producer: k.cfg.Producer, Watermark: s.Watermark}
	return nil
}

// upstreamWatermark is the last watermark and status a shuffle partition
// received from one producer.
type upstreamWatermark struct {
	Watermark int64 `json:"watermark"`
	Idle      bool  `json:"idle,omitempty"`
}

// shuffleWatermarkOp turns the watermark records of a shuffle partition
// into the stream's watermark.
type shuffleWatermarkOp struct {
	env     *Env
	ups     []upstreamWatermark
	current int64
	out     *Stream[Message]
}

// ShuffleWatermarks reads the watermark records ToKafkaShuffle wrote to
// the shuffle partitions of msgs and passes the other records on: the
// stream's watermark is the minimum of the latest watermark of each of
// the producers (0 ≤ producer < producers; one that has not written yet
// holds it at MinWatermark), leaving out the idle ones, or their maximum
// when all are idle (Flink's StatusWatermarkValve), and never moves
// back. It moves when a watermark record is read, in the partition's
// order, so a replay from a checkpoint's offset gives the same results;
// the event time of the rows themselves moves nothing (assign it with
// AssignTimestamps). The per-producer watermarks are checkpointed with the
// offset they were read up to. A watermark record that does not decode,
// or names a producer out of range, fails the job.
func ShuffleWatermarks(msgs *Stream[Message], producers int) *Stream[Message] {
	env := msgs.env
	op := &shuffleWatermarkOp{env: env, ups: make([]upstreamWatermark, producers), current: MinWatermark, out: newStream[Message](env, msgs.parts)}
	for i := range op.ups {
		op.ups[i].Watermark = MinWatermark
	}
	msgs.subscribe(op)
	env.finishers = append(env.finishers, op)
	env.watermarks = append(env.watermarks, op)
	// Registered as a watermark generator ("watermarks-<n>"): the
	// checkpoint of a graph that generated the same stream's watermarks
	// from its rows (AssignTimestampsAndWatermarks) restores into it, its
	// current watermark kept and no producer's known yet.
	env.register(env.uid("watermarks"), op)
	return op.out
}

func (o *shuffleWatermarkOp) processElement(e element[Message]) {
	if !isWatermarkRecord(e.v.Headers) {
		o.out.emit(e)
		return
	}
	// A watermark record is not an input record (Flink counts no
	// watermarks in numRecordsIn).
	o.env.metrics.NumRecordsIn--
	var w shuffleWatermark
	if err := json.Unmarshal(e.v.Value, &w); err != nil {
		o.env.fail(fmt.Errorf("flinklite: watermark record %s/%d@%d: %w", e.v.Topic, e.v.Partition, e.v.Offset, err))
		return
	}
	if w.Producer < 0 || int(w.Producer) >= len(o.ups) {
		o.env.fail(fmt.Errorf("flinklite: watermark record %s/%d@%d of producer %d, but the shuffle has %d producers", e.v.Topic, e.v.Partition, e.v.Offset, w.Producer, len(o.ups)))
		return
	}
	u := &o.ups[w.Producer]
	u.Watermark = max(u.Watermark, w.Watermark)
	u.Idle = w.Idle
	o.advance()
}

func (o *shuffleWatermarkOp) advance() {
	wm, _ := valveWatermark(len(o.ups), func(i int) (int64, bool) { return o.ups[i].Watermark, o.ups[i].Idle })
	if wm > o.current {
		o.current = wm
		o.out.emitWatermark(wm)
	}
}

// processWatermark: the source emits none; this operator makes them.
func (o *shuffleWatermarkOp) processWatermark(int64) {}

func (o *shuffleWatermarkOp) currentWatermark() int64 { return o.current }

func (o *shuffleWatermarkOp) finish() {
	o.current = math.MaxInt64
	o.out.emitWatermark(math.MaxInt64)
}

type shuffleWatermarkSnapshot struct {
	Producers []upstreamWatermark `json:"producers"`
	Current   int64               `json:"current"`
}

func (o *shuffleWatermarkOp) snapshot() (json.RawMessage, error) {
	return json.Marshal(shuffleWatermarkSnapshot{Producers: o.ups, Current: o.current})
}

func (o *shuffleWatermarkOp) restore(b json.RawMessage) error {
	var s shuffleWatermarkSnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	copy(o.ups, s.Producers)
	// Downstream operators restore their own watermark.
	o.current = s.Current
	return nil
}

type timestampOp[T any] struct {
	ts  func(T) time.Time
	out *Stream[T]
}

func (o *timestampOp[T]) processElement(e element[T]) {
	e.ts = o.ts(e.v).UnixMilli()
	o.out.emit(e)
}
func (o *timestampOp[T]) processWatermark(wm int64) { o.out.emitWatermark(wm) }
func (o *timestampOp[T]) processStatus(idle bool)   { o.out.emitStatus(idle) }

// AssignTimestamps sets each element's event time to ts(v) and forwards
// the upstream watermarks unchanged (they come e.g. from
// ShuffleWatermarks), where AssignTimestampsAndWatermarks would generate
// its own.
func AssignTimestamps[T any](s *Stream[T], ts func(v T) time.Time) *Stream[T] {
	out := newStream[T](s.env, s.parts)
	s.subscribe(&timestampOp[T]{ts: ts, out: out})
	return out
}

// shufflePartitioner is Kafka's default partitioner (murmur2 of the key,
// sticky without one) that puts a watermark record on the partition it
// names, so that one producer can write a watermark to every partition.
type shufflePartitioner struct{ kgo.Partitioner }

func (p shufflePartitioner) ForTopic(t string) kgo.TopicPartitioner {
	return &shuffleTopicPartitioner{p.Partitioner.ForTopic(t)}
}

type shuffleTopicPartitioner struct{ kgo.TopicPartitioner }

func (p *shuffleTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return isWatermarkRecord(r.Headers) || p.TopicPartitioner.RequiresConsistency(r)
}

func (p *shuffleTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if isWatermarkRecord(r.Headers) {
		// A watermark holds for every partition: a topic with fewer
		// partitions than configured still gets one on each.
		return int(r.Partition) % n
	}
	return p.TopicPartitioner.Partition(r, n)
}

func (p *shuffleTopicPartitioner) OnNewBatch() {
	if nb, ok := p.TopicPartitioner.(kgo.TopicPartitionerOnNewBatch); ok {
		nb.OnNewBatch()
	}
}

var (
	_ syncSink                       = (*shuffleSink[int])(nil)
	_ ticker                         = (*shuffleSink[int])(nil)
	_ statusOperator                 = (*shuffleSink[int])(nil)
	_ stateful                       = (*shuffleSink[int])(nil)
	_ stateful                       = (*shuffleWatermarkOp)(nil)
	_ statusOperator                 = (*timestampOp[int])(nil)
	_ statusOperator                 = (*mapOp[int, int])(nil)
	_ statusOperator                 = (*filterOp[int])(nil)
	_ statusOperator                 = (*flatMapOp[int, int])(nil)
	_ statusOperator                 = (*flatMapChangesOp[int, int])(nil)
	_ kgo.TopicPartitionerOnNewBatch = (*shuffleTopicPartitioner)(nil)
)
