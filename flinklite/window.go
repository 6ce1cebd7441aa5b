package flinklite

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// TimeWindow is an event-time window [Start, End) in ms since the epoch.
type TimeWindow struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// MaxTimestamp is the last event time inside w (End − 1), when its
// event-time trigger fires (Flink's TimeWindow.maxTimestamp).
func (w TimeWindow) MaxTimestamp() int64 { return w.End - 1 }

// WindowAssigner maps an event time to the windows it belongs to.
type WindowAssigner struct {
	size, slide, offset, gap int64
}

// TumblingEventTimeWindows assigns each element to one window of size,
// aligned to the epoch plus offset, as Flink's
// TumblingEventTimeWindows.of(size, offset).
func TumblingEventTimeWindows(size, offset time.Duration) WindowAssigner {
	return WindowAssigner{size: size.Milliseconds(), slide: size.Milliseconds(), offset: offset.Milliseconds()}
}

// SlidingEventTimeWindows assigns each element to the size/slide windows of
// size that start every slide (hopping windows), as Flink's
// SlidingEventTimeWindows.of(size, slide).
func SlidingEventTimeWindows(size, slide time.Duration) WindowAssigner {
	return WindowAssigner{size: size.Milliseconds(), slide: slide.Milliseconds()}
}

// EventTimeSessionWindows puts each element in a window [t, t+gap); windows
// of one key that overlap are merged (their accumulators with
// AggregateFunction.Merge), as Flink's EventTimeSessionWindows.withGap.
func EventTimeSessionWindows(gap time.Duration) WindowAssigner {
	return WindowAssigner{gap: gap.Milliseconds()}
}

func (a WindowAssigner) merging() bool { return a.gap > 0 }

// windowStart is Flink's TimeWindow.getWindowStartWithOffset.
func windowStart(ts, offset, size int64) int64 {
	r := (ts - offset + size) % size
	if r < 0 {
		r += size
	}
	return ts - r
}

func (a WindowAssigner) assign(ts int64, buf []TimeWindow) []TimeWindow {
	buf = buf[:0]
	if a.merging() {
		return append(buf, TimeWindow{ts, ts + a.gap})
	}
	last := windowStart(ts, a.offset, a.slide)
	for start := last; start > ts-a.size; start -= a.slide {
		buf = append(buf, TimeWindow{start, start + a.size})
	}
	return buf
}

// KeyedStream is a stream partitioned by key (Flink's KeyedStream).
type KeyedStream[T any, K comparable] struct {
	s   *Stream[T]
	key func(T) K
}

// KeyBy partitions s by key(v) (Flink's DataStream.keyBy). Keyed state and
// windows are scoped to the key. K must round-trip through encoding/json to
// be checkpointed.
func KeyBy[T any, K comparable](s *Stream[T], key func(T) K) *KeyedStream[T, K] {
	return &KeyedStream[T, K]{s: s, key: key}
}

// WindowedStream is a keyed stream with a window assigner (Flink's
// WindowedStream).
type WindowedStream[T any, K comparable] struct {
	ks       *KeyedStream[T, K]
	assigner WindowAssigner
	lateness int64
	late     *Stream[T]
	backend  StateBackend
}

// Window groups ks into event-time windows; the trigger is Flink's
// EventTimeTrigger (fire when the watermark passes the window's
// MaxTimestamp).
func Window[T any, K comparable](ks *KeyedStream[T, K], a WindowAssigner) *WindowedStream[T, K] {
	return &WindowedStream[T, K]{ks: ks, assigner: a}
}

// AllowedLateness keeps a window's state for d after it fired: a late
// element within d updates the window and fires it again with the updated
// result (WindowResult.Firing > 0), as Flink's allowedLateness.
func (ws *WindowedStream[T, K]) AllowedLateness(d time.Duration) *WindowedStream[T, K] {
	ws.lateness = d.Milliseconds()
	return ws
}

// SideOutputLateData returns the stream of elements later than the allowed
// lateness (every window they belong to is already cleaned up), as Flink's
// sideOutputLateData. Without it such elements are only counted in
// Metrics.NumLateRecordsDropped.
func (ws *WindowedStream[T, K]) SideOutputLateData() *Stream[T] {
	if ws.late == nil {
		ws.late = newStream[T](ws.ks.s.env, ws.ks.s.parts)
	}
	return ws.late
}

// StateBackend keeps the window state (one entry per key and window) in
// b's table "windows" instead of the operator's own maps, as Flink keeps
// window contents in the keyed state backend: with a PebbleStateBackend
// the open windows can outgrow memory. Event-time timers stay on the heap
// (Flink's RocksDB timer-service factory HEAP). Session windows, which
// merge, always keep their state in memory. Checkpoints have the same
// format with either.
func (ws *WindowedStream[T, K]) StateBackend(b StateBackend) *WindowedStream[T, K] {
	ws.backend = b
	return ws
}

// WindowResult is the result of one firing of one window of one key.
type WindowResult[K comparable, O any] struct {
	Key    K
	Window TimeWindow
	Value  O
	// Firing is 0 for the on-time firing and n for the n-th late update.
	Firing int
}

type winKey[K comparable] struct {
	key K
	w   TimeWindow
}

type winState[A any] struct {
	acc     A
	firings int
}

type winTimer[K comparable] struct {
	ts      int64
	key     K
	w       TimeWindow
	cleanup bool
}

// timerHeap is a binary min-heap on ts.
type timerHeap[K comparable] []winTimer[K]

func (h *timerHeap[K]) push(t winTimer[K]) {
	*h = append(*h, t)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].ts <= s[i].ts {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *timerHeap[K]) pop() winTimer[K] {
	s := *h
	t := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && s[l].ts < s[m].ts {
			m = l
		}
		if r < n && s[r].ts < s[m].ts {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return t
}

type windowOp[T any, K comparable, A, O any] struct {
	env      *Env
	key      func(T) K
	agg      AggregateFunction[T, A, O]
	retract  RetractingAggregateFunction[T, A, O]
	assigner WindowAssigner
	lateness int64
	late     *Stream[T]
	out      *Stream[WindowResult[K, O]]
	wm       int64
	buf      []TimeWindow
	// Non-merging windows: in states, or in table when the stream has a
	// state backend (keys: encoded key + window bounds).
	states map[winKey[K]]*winState[A]
	table  StateTable
	enc    func(K) string
	// Session windows, per key, unordered.
	sessions map[K][]*session[A]
	timers   timerHeap[K]
}

type session[A any] struct {
	w TimeWindow
	winState[A]
}

// Aggregate applies f to each window of each key and emits a WindowResult
// per firing (Flink's WindowedStream.aggregate). Window state is
// checkpointed.
func Aggregate[T any, K comparable, A, O any](ws *WindowedStream[T, K], f AggregateFunction[T, A, O]) *Stream[WindowResult[K, O]] {
	env := ws.ks.s.env
	out := newStream[WindowResult[K, O]](env, ws.ks.s.parts)
	op := &windowOp[T, K, A, O]{
		env: env, key: ws.ks.key, agg: f, assigner: ws.assigner, lateness: ws.lateness,
		late: ws.late, out: out, wm: MinWatermark,
		states: map[winKey[K]]*winState[A]{}, sessions: map[K][]*session[A]{},
	}
	op.retract, _ = f.(RetractingAggregateFunction[T, A, O])
	if ws.backend != nil && !ws.assigner.merging() {
		op.table = ws.backend.Table("windows", jsonCodec[*windowEntry[K, A]]())
		op.enc = keyEncoder[K]()
	}
	ws.ks.s.subscribe(op)
	env.register(env.uid("window"), op)
	return out
}

func (o *windowOp[T, K, A, O]) cleanupTime(w TimeWindow) int64 { return w.MaxTimestamp() + o.lateness }

// tableKey is the state-table key of window w of k: the encoded key, then
// the window's bounds in 16 fixed-width bytes.
func (o *windowOp[T, K, A, O]) tableKey(k K, w TimeWindow) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(w.Start))
	binary.BigEndian.PutUint64(b[8:], uint64(w.End))
	return o.enc(k) + string(b[:])
}

// getWin returns the state of window w of k (nil if none) and its table
// key (table mode only).
func (o *windowOp[T, K, A, O]) getWin(k K, w TimeWindow) (*winState[A], string) {
	if o.table == nil {
		return o.states[winKey[K]{k, w}], ""
	}
	tk := o.tableKey(k, w)
	v, ok := o.table.Get(tk)
	if !ok {
		return nil, tk
	}
	e := v.(*windowEntry[K, A])
	return &winState[A]{acc: e.Acc, firings: e.Firings}, tk
}

// putWin stores st after a change: a new window in map mode (others are
// changed in place), every change in table mode.
func (o *windowOp[T, K, A, O]) putWin(tk string, k K, w TimeWindow, st *winState[A], isNew bool) {
	if o.table == nil {
		if isNew {
			o.states[winKey[K]{k, w}] = st
		}
		return
	}
	o.table.Put(tk, &windowEntry[K, A]{Key: k, Window: w, Acc: st.acc, Firings: st.firings})
}

func (o *windowOp[T, K, A, O]) deleteWin(tk string, k K, w TimeWindow) {
	if o.table == nil {
		delete(o.states, winKey[K]{k, w})
		return
	}
	o.table.Delete(tk)
}

func (o *windowOp[T, K, A, O]) fold(acc A, e element[T]) (A, bool) {
	if !e.retract {
		return o.agg.Add(e.v, acc), true
	}
	if o.retract == nil {
		o.env.fail(fmt.Errorf("%w (%T)", ErrNotRetractable, o.agg))
		return acc, false
	}
	return o.retract.Retract(e.v, acc), true
}

func (o *windowOp[T, K, A, O]) processElement(e element[T]) {
	if e.ts == MinWatermark {
		o.env.fail(ErrNoTimestamp)
		return
	}
	k := o.key(e.v)
	if o.assigner.merging() {
		o.processSession(k, e)
		return
	}
	o.buf = o.assigner.assign(e.ts, o.buf)
	accepted := false
	for _, w := range o.buf {
		if o.cleanupTime(w) <= o.wm {
			continue // Flink's isWindowLate: this window is gone
		}
		accepted = true
		st, tk := o.getWin(k, w)
		if st == nil && e.retract {
			// Retracting from a window that holds nothing: the insertion
			// was never seen (or its window was already cleaned up).
			o.env.metrics.NumUnmatchedRetractions++
			continue
		}
		isNew := st == nil
		if isNew {
			st = &winState[A]{acc: o.agg.CreateAccumulator()}
			o.registerTimers(k, w)
		}
		var ok bool
		if st.acc, ok = o.fold(st.acc, e); !ok {
			return
		}
		if w.MaxTimestamp() <= o.wm { // late but within allowedLateness
			o.fire(k, w, st)
		}
		o.putWin(tk, k, w, st, isNew)
	}
	if !accepted {
		o.sideOutputLate(e)
	}
}

func (o *windowOp[T, K, A, O]) registerTimers(k K, w TimeWindow) {
	o.timers.push(winTimer[K]{ts: w.MaxTimestamp(), key: k, w: w, cleanup: o.lateness == 0})
	if o.lateness > 0 {
		o.timers.push(winTimer[K]{ts: o.cleanupTime(w), key: k, w: w, cleanup: true})
	}
}

func (o *windowOp[T, K, A, O]) sideOutputLate(e element[T]) {
	if o.late != nil {
		o.env.metrics.NumLateRecordsSideOutput++
		o.late.emit(e)
		return
	}
	o.env.metrics.NumLateRecordsDropped++
}

func (o *windowOp[T, K, A, O]) fire(k K, w TimeWindow, st *winState[A]) {
	o.out.emit(element[WindowResult[K, O]]{
		v:  WindowResult[K, O]{Key: k, Window: w, Value: o.agg.GetResult(st.acc), Firing: st.firings},
		ts: w.MaxTimestamp(),
	})
	st.firings++
}

func (o *windowOp[T, K, A, O]) processSession(k K, e element[T]) {
	list := o.sessions[k]
	if e.retract {
		for _, s := range list {
			if s.w.Start <= e.ts && e.ts < s.w.End {
				var ok bool
				if s.acc, ok = o.fold(s.acc, e); ok && s.w.MaxTimestamp() <= o.wm {
					o.fire(k, s.w, &s.winState)
				}
				return
			}
		}
		o.env.metrics.NumUnmatchedRetractions++
		return
	}
	nw := TimeWindow{e.ts, e.ts + o.assigner.gap}
	// Merge every session that intersects nw (Flink's
	// TimeWindow.mergeWindows: overlapping or touching windows).
	merged := &session[A]{w: nw}
	merged.acc = o.agg.CreateAccumulator()
	kept := list[:0]
	for _, s := range list {
		if s.w.Start <= merged.w.End && merged.w.Start <= s.w.End {
			merged.w = TimeWindow{min(merged.w.Start, s.w.Start), max(merged.w.End, s.w.End)}
			merged.acc = o.agg.Merge(merged.acc, s.acc)
			merged.firings = max(merged.firings, s.firings)
			continue
		}
		kept = append(kept, s)
	}
	if o.cleanupTime(merged.w) <= o.wm {
		// Flink drops the element when the merged window is already late;
		// the merged-away sessions are unchanged.
		o.sideOutputLate(e)
		return
	}
	var ok bool
	if merged.acc, ok = o.fold(merged.acc, e); !ok {
		return
	}
	o.sessions[k] = append(kept, merged)
	// Timers of merged-away sessions become stale; onTimer ignores a timer
	// whose window is no longer a session of its key.
	o.registerTimers(k, merged.w)
	if merged.w.MaxTimestamp() <= o.wm {
		o.fire(k, merged.w, &merged.winState)
	}
}

func (o *windowOp[T, K, A, O]) processWatermark(wm int64) {
	if wm <= o.wm {
		return
	}
	o.wm = wm
	for len(o.timers) > 0 && o.timers[0].ts <= wm {
		t := o.timers.pop()
		o.onTimer(t)
	}
	o.out.emitWatermark(wm)
}

func (o *windowOp[T, K, A, O]) onTimer(t winTimer[K]) {
	if o.assigner.merging() {
		list := o.sessions[t.key]
		for i, s := range list {
			if s.w != t.w {
				continue
			}
			if t.ts == s.w.MaxTimestamp() && s.firings == 0 {
				o.fire(t.key, s.w, &s.winState)
			}
			if t.cleanup {
				list[i] = list[len(list)-1]
				list = list[:len(list)-1]
				if len(list) == 0 {
					delete(o.sessions, t.key)
				} else {
					o.sessions[t.key] = list
				}
			}
			return
		}
		return
	}
	st, tk := o.getWin(t.key, t.w)
	if st == nil {
		return
	}
	fired := false
	if t.ts == t.w.MaxTimestamp() && st.firings == 0 {
		o.fire(t.key, t.w, st)
		fired = true
	}
	if t.cleanup {
		o.deleteWin(tk, t.key, t.w)
	} else if fired {
		o.putWin(tk, t.key, t.w, st, false)
	}
}

// windowEntry is the checkpointed form of one window of one key.
type windowEntry[K comparable, A any] struct {
	Key     K          `json:"key"`
	Window  TimeWindow `json:"window"`
	Acc     A          `json:"acc"`
	Firings int        `json:"firings"`
}

type windowSnapshot[K comparable, A any] struct {
	Watermark int64               `json:"watermark"`
	Windows   []windowEntry[K, A] `json:"windows"`
}

func (o *windowOp[T, K, A, O]) snapshot() (json.RawMessage, error) {
	s := windowSnapshot[K, A]{Watermark: o.wm}
	for wk, st := range o.states {
		s.Windows = append(s.Windows, windowEntry[K, A]{Key: wk.key, Window: wk.w, Acc: st.acc, Firings: st.firings})
	}
	if o.table != nil {
		o.table.Range(func(_ string, v any) bool {
			s.Windows = append(s.Windows, *v.(*windowEntry[K, A]))
			return true
		})
	}
	for k, list := range o.sessions {
		for _, ss := range list {
			s.Windows = append(s.Windows, windowEntry[K, A]{Key: k, Window: ss.w, Acc: ss.acc, Firings: ss.firings})
		}
	}
	// Sorted, so that equal state gives equal checkpoint bytes.
	enc := keyEncoder[K]()
	sort.Slice(s.Windows, func(i, j int) bool {
		a, b := s.Windows[i], s.Windows[j]
		if a.Window != b.Window {
			return a.Window.Start < b.Window.Start || a.Window.Start == b.Window.Start && a.Window.End < b.Window.End
		}
		return enc(a.Key) < enc(b.Key)
	})
	return json.Marshal(s)
}

func (o *windowOp[T, K, A, O]) restore(b json.RawMessage) error {
	var s windowSnapshot[K, A]
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	o.wm = s.Watermark
	for _, e := range s.Windows {
		st := winState[A]{acc: e.Acc, firings: e.Firings}
		switch {
		case o.assigner.merging():
			o.sessions[e.Key] = append(o.sessions[e.Key], &session[A]{w: e.Window, winState: st})
		case o.table != nil:
			o.putWin(o.tableKey(e.Key, e.Window), e.Key, e.Window, &st, true)
		default:
			o.states[winKey[K]{e.Key, e.Window}] = &st
		}
		if e.Firings == 0 {
			o.timers.push(winTimer[K]{ts: e.Window.MaxTimestamp(), key: e.Key, w: e.Window, cleanup: o.lateness == 0})
		}
		if o.lateness > 0 || e.Firings > 0 {
			o.timers.push(winTimer[K]{ts: o.cleanupTime(e.Window), key: e.Key, w: e.Window, cleanup: true})
		}
	}
	return nil
}

// StateSize returns the number of open windows (for tests and metrics).
func (o *windowOp[T, K, A, O]) stateSize() int {
	n := len(o.states)
	if o.table != nil {
		n += o.table.Len()
	}
	for _, l := range o.sessions {
		n += len(l)
	}
	return n
}
