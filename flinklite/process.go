package flinklite

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// RuntimeContext gives a KeyedProcessFunction its keyed state, scoped to
// the key of the element or timer being processed (Flink's
// RuntimeContext).
type RuntimeContext struct {
	env      *Env
	backend  StateBackend
	key      string
	cleanups []cleaner
}

func (rc *RuntimeContext) now() int64 { return rc.env.clock.Now().UnixMilli() }

// Backend returns the operator's state backend (for StateSize checks).
func (rc *RuntimeContext) Backend() StateBackend { return rc.backend }

// KeyedProcessFunction processes the elements of a keyed stream one by one
// with keyed state and event-time timers (Flink's KeyedProcessFunction).
// A returned error fails the job.
type KeyedProcessFunction[K comparable, T, O any] interface {
	// Open declares the function's state (NewValueState, …).
	Open(rc *RuntimeContext) error
	ProcessElement(v T, ctx *ProcessContext[K, O]) error
	// OnTimer runs when the watermark reaches a registered timer ts (ms).
	OnTimer(ts int64, ctx *ProcessContext[K, O]) error
}

// ProcessContext is the element or timer being processed.
type ProcessContext[K comparable, O any] struct {
	op      *processOp[any, K, O]
	key     K
	ts      int64
	retract bool
}

// Key is the current key.
func (c *ProcessContext[K, O]) Key() K { return c.key }

// Timestamp is the event time (ms) of the element, or the timer's time.
func (c *ProcessContext[K, O]) Timestamp() int64 { return c.ts }

// IsRetract tells whether the element retracts an earlier one.
func (c *ProcessContext[K, O]) IsRetract() bool { return c.retract }

// CurrentWatermark is the operator's watermark (ms).
func (c *ProcessContext[K, O]) CurrentWatermark() int64 { return c.op.wm }

// RegisterEventTimeTimer asks for OnTimer(ts) for the current key once the
// watermark reaches ts; registering the same (key, ts) twice fires once.
func (c *ProcessContext[K, O]) RegisterEventTimeTimer(ts int64) { c.op.registerTimer(c.key, ts) }

// Collect emits o with the current timestamp.
func (c *ProcessContext[K, O]) Collect(o O) {
	c.op.out.emit(element[O]{v: o, ts: c.ts, retract: c.retract})
}

type procTimer[K comparable] struct {
	Key K     `json:"key"`
	Ts  int64 `json:"ts"`
}

type processOp[T any, K comparable, O any] struct {
	env    *Env
	keyFn  func(any) K
	encode func(K) string
	fn     func(v any, ctx *ProcessContext[K, O]) error
	onT    func(ts int64, ctx *ProcessContext[K, O]) error
	rc     *RuntimeContext
	out    *Stream[O]
	wm     int64
	timers timerHeap[K]
	set    map[procTimer[K]]bool
	ctx    ProcessContext[K, O]
}

// processAdapter bridges the typed element to the op, which is stored
// without T so that ProcessContext needs only K and O.
type processAdapter[T any, K comparable, O any] struct{ op *processOp[any, K, O] }

func (a processAdapter[T, K, O]) processElement(e element[T]) {
	a.op.processElement(element[any]{v: e.v, ts: e.ts, part: e.part, retract: e.retract})
}
func (a processAdapter[T, K, O]) processWatermark(wm int64) { a.op.processWatermark(wm) }

// Process runs fn over ks (Flink's KeyedStream.process). State lives in
// backend (nil: a new MemoryStateBackend) and is checkpointed with the
// registered timers. It returns fn's output stream, or an error from Open.
func Process[T any, K comparable, O any](ks *KeyedStream[T, K], fn KeyedProcessFunction[K, T, O], backend StateBackend) (*Stream[O], error) {
	env := ks.s.env
	if backend == nil {
		backend = NewMemoryStateBackend()
	}
	out := newStream[O](env, ks.s.parts)
	op := &processOp[any, K, O]{
		env:    env,
		keyFn:  func(v any) K { return ks.key(v.(T)) },
		encode: keyEncoder[K](),
		fn:     func(v any, c *ProcessContext[K, O]) error { return fn.ProcessElement(v.(T), c) },
		onT:    fn.OnTimer,
		rc:     &RuntimeContext{env: env, backend: backend},
		out:    out,
		wm:     MinWatermark,
		set:    map[procTimer[K]]bool{},
	}
	op.ctx.op = op
	if err := fn.Open(op.rc); err != nil {
		return nil, err
	}
	ks.s.subscribe(processAdapter[T, K, O]{op})
	env.tickers = append(env.tickers, op)
	env.register(env.uid("process"), op)
	return out, nil
}

// keyEncoder returns the state-key encoding of K: strings as they are,
// anything else as JSON.
func keyEncoder[K comparable]() func(K) string {
	var zero K
	switch any(zero).(type) {
	case string:
		return func(k K) string { return any(k).(string) }
	case int:
		return func(k K) string { return strconv.Itoa(any(k).(int)) }
	case int32:
		return func(k K) string { return strconv.FormatInt(int64(any(k).(int32)), 10) }
	case int64:
		return func(k K) string { return strconv.FormatInt(any(k).(int64), 10) }
	}
	return func(k K) string {
		b, err := json.Marshal(k)
		if err != nil {
			return fmt.Sprint(k)
		}
		return string(b)
	}
}

func (o *processOp[T, K, O]) setKey(k K) {
	o.ctx.key = k
	o.rc.key = o.encode(k)
}

func (o *processOp[T, K, O]) processElement(e element[any]) {
	o.setKey(o.keyFn(e.v))
	o.ctx.ts, o.ctx.retract = e.ts, e.retract
	if err := o.fn(e.v, &o.ctx); err != nil {
		o.env.fail(err)
	}
}

func (o *processOp[T, K, O]) registerTimer(k K, ts int64) {
	pt := procTimer[K]{k, ts}
	if o.set[pt] {
		return
	}
	o.set[pt] = true
	o.timers.push(winTimer[K]{ts: ts, key: k})
}

func (o *processOp[T, K, O]) processWatermark(wm int64) {
	if wm <= o.wm {
		return
	}
	o.wm = wm
	for len(o.timers) > 0 && o.timers[0].ts <= wm {
		t := o.timers.pop()
		delete(o.set, procTimer[K]{t.key, t.ts})
		o.setKey(t.key)
		o.ctx.ts, o.ctx.retract = t.ts, false
		if err := o.onT(t.ts, &o.ctx); err != nil {
			o.env.fail(err)
			return
		}
	}
	o.out.emitWatermark(wm)
}

func (o *processOp[T, K, O]) tick(now time.Time) {
	ms := now.UnixMilli()
	for _, c := range o.rc.cleanups {
		c.cleanup(ms)
	}
}

type processSnapshot[K comparable] struct {
	Watermark int64           `json:"watermark"`
	Timers    []procTimer[K]  `json:"timers"`
	State     json.RawMessage `json:"state"`
}

func (o *processOp[T, K, O]) snapshot() (json.RawMessage, error) {
	st, err := o.rc.backend.Snapshot()
	if err != nil {
		return nil, err
	}
	s := processSnapshot[K]{Watermark: o.wm, State: st}
	for _, t := range o.timers {
		s.Timers = append(s.Timers, procTimer[K]{t.key, t.ts})
	}
	return json.Marshal(s)
}

func (o *processOp[T, K, O]) restore(b json.RawMessage) error {
	var s processSnapshot[K]
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if err := o.rc.backend.Restore(s.State); err != nil {
		return err
	}
	o.wm = s.Watermark
	for _, t := range s.Timers {
		o.registerTimer(t.Key, t.Ts)
	}
	for _, c := range o.rc.cleanups {
		c.rebuildQueue()
	}
	return nil
}
