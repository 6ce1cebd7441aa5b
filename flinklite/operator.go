package flinklite

import (
	"encoding/json"
	"fmt"
	"time"
)

// Operator is a user-defined operator with checkpointed state, for
// compilers onto flinklite (flinklite/sql), as Flink's
// AbstractStreamOperator: it sees every element and the periodic
// processing-time tick, emits elements downstream through emit (value,
// retraction) from either, and its state goes into each checkpoint.
// Env.Run ticks after every poll and before every checkpoint, so what an
// operator emits from OnTick is in the checkpoint's transaction. An error
// fails the job.
type Operator[T, U any] interface {
	ProcessElement(c Change[T], emit func(U, bool)) error
	OnTick(now time.Time, emit func(U, bool)) error
	// Snapshot returns the state; Restore loads it (before any element).
	Snapshot() (json.RawMessage, error)
	Restore(json.RawMessage) error
	// StateSize is the number of state entries (JobStatus.StateEntries).
	StateSize() int
}

type customOp[T, U any] struct {
	env  *Env
	f    Operator[T, U]
	out  *Stream[U]
	emit func(U, bool)
}

// Apply runs f on s; kind names the operator in checkpoints (its id is
// kind-N, N its position in the graph).
func Apply[T, U any](s *Stream[T], kind string, f Operator[T, U]) *Stream[U] {
	out := newStream[U](s.env, s.parts)
	op := &customOp[T, U]{env: s.env, f: f, out: out}
	op.emit = func(v U, retract bool) {
		op.out.emit(element[U]{v: v, ts: MinWatermark, retract: retract})
	}
	s.subscribe(op)
	s.env.register(s.env.uid(kind), op)
	s.env.tickers = append(s.env.tickers, op)
	return out
}

func (o *customOp[T, U]) processElement(e element[T]) {
	if o.env.err != nil {
		return
	}
	var t time.Time
	if e.ts != MinWatermark {
		t = time.UnixMilli(e.ts).UTC()
	}
	if err := o.f.ProcessElement(Change[T]{Value: e.v, EventTime: t, Retract: e.retract}, o.emit); err != nil {
		o.env.fail(err)
	}
}

func (o *customOp[T, U]) processWatermark(wm int64) { o.out.emitWatermark(wm) }

func (o *customOp[T, U]) tick(now time.Time) {
	if o.env.err != nil {
		return
	}
	if err := o.f.OnTick(now, o.emit); err != nil {
		o.env.fail(err)
	}
}

func (o *customOp[T, U]) snapshot() (json.RawMessage, error) { return o.f.Snapshot() }
func (o *customOp[T, U]) restore(b json.RawMessage) error {
	if err := o.f.Restore(b); err != nil {
		return fmt.Errorf("restoring a %T: %w", o.f, err)
	}
	return nil
}
func (o *customOp[T, U]) stateSize() int { return o.f.StateSize() }

// Abandon stops Env.Run at once, as if the process died: no final
// checkpoint, no commit, the transactional producer left open (the next
// run of the same JobID fences it, aborting its transaction). For tests
// of recovery (a SIGKILL where the test cannot kill a process). Safe for
// concurrent use.
func (e *Env) Abandon() { e.abandoned.Store(true) }
