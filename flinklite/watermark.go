package flinklite

import (
	"encoding/json"
	"math"
	"time"
)

// WatermarkStrategy says where an element's event time comes from and how
// watermarks follow it, as Flink's
// WatermarkStrategy.forBoundedOutOfOrderness(maxOutOfOrderness)
// .withTimestampAssigner(timestamp).withIdleness(idleTimeout).
type WatermarkStrategy[T any] struct {
	// Timestamp returns the event time of v (e.g. a record field).
	Timestamp func(v T) time.Time
	// MaxOutOfOrderness bounds how late (in event time) an element may be
	// relative to the latest one seen on its partition.
	MaxOutOfOrderness time.Duration
	// IdleTimeout, when > 0, marks a partition that received no element for
	// that long (processing time) idle: it no longer holds the watermark
	// back until it receives an element again. 0 disables idleness, and one
	// silent partition then stalls the watermark forever (Flink's
	// documented "watermark stall").
	IdleTimeout time.Duration
}

type partitionWatermark struct {
	MaxTs      int64 `json:"max_ts"`
	lastActive time.Time
	idle       bool
}

// watermarkOp assigns event time and generates per-partition watermarks,
// combined as the minimum over active partitions; the emitted watermark
// never decreases.
type watermarkOp[T any] struct {
	strat   WatermarkStrategy[T]
	ooo     int64
	parts   []partitionWatermark
	current int64
	// idle is the stream's watermark status: every partition idle.
	idle bool
	out  *Stream[T]
	env  *Env
}

// AssignTimestampsAndWatermarks sets each element's event time and emits
// watermarks on every Env.Tick (Flink's
// DataStream.assignTimestampsAndWatermarks with periodic emission). The
// watermark of partition p is max event time seen on p − MaxOutOfOrderness
// − 1 ms (Flink's BoundedOutOfOrdernessWatermarks); the stream's watermark
// is the minimum over partitions not idle, and only ever moves forward.
// Per-partition maxima are checkpointed. When every partition is idle the
// stream's watermark status is idle (Flink's WatermarkStatus.IDLE) until
// the next element; ToKafkaShuffle forwards it.
func AssignTimestampsAndWatermarks[T any](s *Stream[T], strat WatermarkStrategy[T]) *Stream[T] {
	out := newStream[T](s.env, s.parts)
	now := s.env.clock.Now()
	op := &watermarkOp[T]{strat: strat, ooo: strat.MaxOutOfOrderness.Milliseconds(), current: MinWatermark, out: out, env: s.env}
	op.parts = make([]partitionWatermark, s.parts)
	for i := range op.parts {
		op.parts[i] = partitionWatermark{MaxTs: MinWatermark, lastActive: now}
	}
	s.subscribe(op)
	s.env.tickers = append(s.env.tickers, op)
	s.env.finishers = append(s.env.finishers, op)
	s.env.watermarks = append(s.env.watermarks, op)
	s.env.register(s.env.uid("watermarks"), op)
	return out
}

func (w *watermarkOp[T]) processElement(e element[T]) {
	e.ts = w.strat.Timestamp(e.v).UnixMilli()
	p := &w.parts[e.part]
	if e.ts > p.MaxTs {
		p.MaxTs = e.ts
	}
	p.idle = false
	p.lastActive = w.env.clock.Now()
	if w.idle {
		w.idle = false
		w.out.emitStatus(false)
	}
	w.out.emit(e)
}

func (w *watermarkOp[T]) currentWatermark() int64 { return w.current }

// processWatermark ignores upstream watermarks: this operator generates them.
func (w *watermarkOp[T]) processWatermark(int64) {}

func (w *watermarkOp[T]) tick(now time.Time) {
	for i := range w.parts {
		p := &w.parts[i]
		if w.strat.IdleTimeout > 0 && now.Sub(p.lastActive) >= w.strat.IdleTimeout {
			p.idle = true
		}
	}
	min, idle := valveWatermark(len(w.parts), func(i int) (int64, bool) {
		p := &w.parts[i]
		if p.MaxTs == MinWatermark {
			return MinWatermark, p.idle
		}
		return p.MaxTs - w.ooo - 1, p.idle
	})
	if min > w.current {
		w.current = min
		w.out.emitWatermark(min)
	}
	// The status goes idle after the flushed watermark, as Flink's
	// StatusWatermarkValve; downstream of a shuffle (ToKafkaShuffle) an
	// idle upstream no longer holds the watermark back.
	if idle != w.idle {
		w.idle = idle
		w.out.emitStatus(idle)
	}
}

// valveWatermark combines the watermarks of n channels (at gives channel
// i's watermark and whether it is idle) as Flink's StatusWatermarkValve:
// the minimum over the channels that are not idle, or, when every channel
// is idle (allIdle), the maximum over all of them. With no channel it is
// MinWatermark, all idle.
func valveWatermark(n int, at func(i int) (wm int64, idle bool)) (wm int64, allIdle bool) {
	wm, maxAll, active := int64(math.MaxInt64), MinWatermark, 0
	for i := 0; i < n; i++ {
		w, idle := at(i)
		maxAll = max(maxAll, w)
		if idle {
			continue
		}
		wm = min(wm, w)
		active++
	}
	if active == 0 {
		return maxAll, true
	}
	return wm, false
}

type watermarkSnapshot struct {
	Partitions []partitionWatermark `json:"partitions"`
	Current    int64                `json:"current"`
}

func (w *watermarkOp[T]) snapshot() (json.RawMessage, error) {
	return json.Marshal(watermarkSnapshot{Partitions: w.parts, Current: w.current})
}

func (w *watermarkOp[T]) restore(b json.RawMessage) error {
	var s watermarkSnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	now := w.env.clock.Now()
	for i := range w.parts {
		if i < len(s.Partitions) {
			w.parts[i].MaxTs = s.Partitions[i].MaxTs
		}
		w.parts[i].lastActive = now
	}
	// The restored watermark is re-emitted on the next tick that advances
	// it; operators restore their own watermark from their snapshots.
	w.current = s.Current
	return nil
}

func (w *watermarkOp[T]) finish() {
	w.current = math.MaxInt64
	w.out.emitWatermark(math.MaxInt64)
}
