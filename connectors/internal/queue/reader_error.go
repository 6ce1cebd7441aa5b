package queue

import (
	"context"
	"sync"
)

// ReaderError is the error a source task's reader goroutine ended with:
// set by the reader as it returns, read by Poll (pass its Err method as
// Poll's readerErr) and by Stop. Safe for concurrent use; the zero value
// holds no error.
type ReaderError struct {
	mu  sync.Mutex
	err error
}

// Set records err, the reader's result, unless err is nil or ctx (the
// reader's context) has ended: an error caused by Stop cancelling the
// reader is not a failure of the task.
func (e *ReaderError) Set(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	e.mu.Lock()
	e.err = err
	e.mu.Unlock()
}

// Err returns the recorded error, nil while the reader runs or after it
// finished cleanly.
func (e *ReaderError) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}
