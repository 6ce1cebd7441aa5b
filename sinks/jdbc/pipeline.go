package jdbc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/connectd/connectd/connect"
)

// Write pipeline: Put prepares batch n+1 (describe, collapse, plan,
// statement text and arguments) while batch n's transaction is being
// written by its own goroutine, so the task's CPU work and the database's
// overlap. At most one transaction is in flight; Put waits for it before
// handing over the next, and Flush waits for it (and re-runs
// transactions a retriable error left unwritten) before the runtime
// commits any offset.

// inflightTx is the transaction being written; err is set before done is
// closed.
type inflightTx struct {
	tx   preparedTx
	done chan struct{}
	err  error
}

// flushRetryDelayMax caps the backoff between Flush's retries of an
// unwritten transaction (300 ms doubling, as the runtime's Put retries).
const flushRetryDelayMax = 10 * time.Second

// write hands tx to a goroutine of its own; the caller has awaited the
// previous transaction, so the connection is free.
func (t *Task) write(tx preparedTx) {
	f := &inflightTx{tx: tx, done: make(chan struct{})}
	db, ctx := t.db, t.writeCtx
	go func() {
		defer close(f.done)
		defer func() {
			if r := recover(); r != nil {
				f.err = fmt.Errorf("jdbc sink write panicked: %v", r)
			}
		}()
		f.err = db.exec(ctx, tx)
	}()
	t.inflight = f
}

// await waits for the transaction in flight, if any. Errors: ctx's error
// (the transaction stays in flight); the transaction's error, after which
// a retriable one leaves the transaction in t.unwritten and drops the
// connection.
func (t *Task) await(ctx context.Context) error {
	f := t.inflight
	if f == nil {
		return nil
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	t.inflight = nil
	if f.err != nil {
		var re *connect.RetriableError
		if errors.As(f.err, &re) {
			// Its records were accepted by an earlier Put that returned
			// nil: the runtime will not hand them again, so keep them.
			t.unwritten = append(t.unwritten, f.tx)
		}
		return t.failed(f.err)
	}
	return nil
}

// writeUnwritten re-runs, in order and synchronously, the transactions a
// retriable error left unwritten (reconnecting first).
func (t *Task) writeUnwritten(ctx context.Context) error {
	if len(t.unwritten) == 0 {
		return nil
	}
	if t.db == nil {
		if err := t.connect(ctx); err != nil {
			return err
		}
	}
	for len(t.unwritten) > 0 {
		if err := t.db.exec(ctx, t.unwritten[0]); err != nil {
			return t.failed(err)
		}
		t.unwritten = t.unwritten[1:]
	}
	return nil
}

// Flush returns once every batch passed to Put is committed in the
// database: it waits for the transaction in flight and re-runs those a
// retriable error left unwritten, with a backoff from 300 ms doubling up
// to 10 s, until they commit or ctx ends. Errors: ctx's error; a
// non-retriable database error (the task fails and the runtime commits
// no offset past the last successful Flush).
func (t *Task) Flush(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		err := t.await(ctx)
		if err == nil {
			err = t.writeUnwritten(ctx)
		}
		if err == nil {
			return nil
		}
		var re *connect.RetriableError
		if !errors.As(err, &re) || ctx.Err() != nil {
			return err
		}
		delay := min(300*time.Millisecond<<min(attempt-1, 10), flushRetryDelayMax)
		t.log.Warn("jdbc sink flush failed with a retriable error; writing the batch again", "retry", attempt, "delay", delay, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}
