package jdbc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
)

// Write pipeline: Put prepares batch n+1 (describe, collapse, plan,
// statement text and arguments) while batch n's transaction is being
// written by its own goroutine, so the task's CPU work and the database's
// overlap. Batches Put hands over while a transaction is being written
// queue behind it, up to txRowsMax rows, and the writer commits all of
// them as the next transaction (their statements in Put order, each
// still at most batch.size rows): under load a transaction covers
// several Puts, which spares the database a commit and the task a
// hand-over per Put (group commit), and an idle task still writes each
// batch at once. Kafka Connect allows it: offsets are committed only
// after Flush (SinkTask.flush/preCommit), and Flush waits for the writer
// to drain the queue (and re-runs transactions a retriable error left
// unwritten) before the runtime commits any offset. Debezium's JDBC sink
// writes each Put's records in batches of batch.size and commits before
// put returns; the tables a replay or a crash leaves are the same.

// txRowsMax caps the rows (change events after collapse) of one
// transaction the writer builds from queued batches, in units of
// batch.size: at the default batch.size of 500, up to 10 Puts of the
// runtime's 500 records. It bounds the memory the queue holds and the
// work a retriable error repeats.
const txRowsMax = 10

// inflightTx is the writer goroutine: the transaction being written and
// the batches queued behind it. err and failed are set before done is
// closed.
type inflightTx struct {
	done chan struct{}
	err  error
	// failed are the transactions not committed when the writer stopped
	// on err: the one being written, then those still queued.
	failed []preparedTx

	mu sync.Mutex
	// queue holds batches accepted while a transaction is being written;
	// queued counts their rows. closed: the writer has stopped taking
	// batches (queue drained or an error).
	queue  []preparedTx
	queued int
	closed bool
	// taken is closed (and replaced) each time the writer takes the
	// queue, so that a Put waiting for room wakes up.
	taken chan struct{}
}

// flushRetryDelayMax caps the backoff between Flush's retries of an
// unwritten transaction (300 ms doubling, as the runtime's Put retries).
const flushRetryDelayMax = 10 * time.Second

// write hands tx to a writer goroutine of its own; the caller has awaited
// the previous writer, so the connection is free. The writer commits tx,
// then the batches queued meanwhile (enqueue) as one transaction, until
// the queue is empty.
func (t *Task) write(tx preparedTx) {
	f := &inflightTx{done: make(chan struct{}), taken: make(chan struct{})}
	db, ctx := t.db, t.writeCtx
	go func() {
		cur := tx
		defer close(f.done)
		defer func() {
			if r := recover(); r != nil {
				f.err = fmt.Errorf("jdbc sink write panicked: %v", r)
				f.stop(cur)
			}
		}()
		for {
			if err := db.exec(ctx, cur); err != nil {
				f.err = err
				f.stop(cur)
				return
			}
			f.mu.Lock()
			if len(f.queue) == 0 {
				f.closed = true
				close(f.taken)
				f.mu.Unlock()
				return
			}
			cur = db.merge(f.queue)
			f.queue, f.queued = nil, 0
			close(f.taken)
			f.taken = make(chan struct{})
			f.mu.Unlock()
		}
	}()
	t.inflight = f
}

// stop ends the writer after an error: cur and the queued transactions
// become f.failed, and Puts waiting for room are released.
func (f *inflightTx) stop(cur preparedTx) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.failed = append([]preparedTx{cur}, f.queue...)
	f.queue, f.queued, f.closed = nil, 0, true
	close(f.taken)
}

// enqueue queues tx (rows change events) behind the transaction in
// flight, waiting while the queue is full (txRowsMax × batch.size rows).
// It returns false when no writer is running or it stopped (the caller
// awaits it and writes tx itself). Errors: ctx's error while waiting (tx
// is not queued).
func (t *Task) enqueue(ctx context.Context, tx preparedTx, rows int) (bool, error) {
	f := t.inflight
	if f == nil {
		return false, nil
	}
	limit := txRowsMax * t.cfg.batchSize
	for {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return false, nil
		}
		if f.queued == 0 || f.queued+rows <= limit {
			f.queue = append(f.queue, tx)
			f.queued += rows
			f.mu.Unlock()
			return true, nil
		}
		taken := f.taken
		f.mu.Unlock()
		select {
		case <-taken:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// await waits for the writer, if any, to commit everything queued.
// Errors: ctx's error (the writer keeps running); the writer's error,
// after which a retriable one leaves the transactions it did not commit
// in t.unwritten and drops the connection.
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
			// Their records were accepted by earlier Puts that returned
			// nil: the runtime will not hand them again, so keep them.
			t.unwritten = append(t.unwritten, f.failed...)
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
