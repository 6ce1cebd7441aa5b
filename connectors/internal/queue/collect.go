package queue

import (
	"context"

	"github.com/connectd/connectd/connect"
)

// Collect runs read, which queues records on a channel of its own, and gives
// each record to emit in order, from another goroutine (connect.CurrentReader:
// a connector's snapshot code queues its records for the worker's poll; here
// emit takes them instead). The context read gets is cancelled when emit
// fails. It returns emit's error first, else read's.
func Collect(ctx context.Context, read func(ctx context.Context, records chan *connect.SourceRecord) error, emit func(*connect.SourceRecord) error) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	records := make(chan *connect.SourceRecord, 256)
	emitted := make(chan error, 1)
	go func() {
		var err error
		for r := range records {
			if err != nil {
				continue // drain: read ends on the cancelled context
			}
			if err = emit(r); err != nil {
				cancel()
			}
		}
		emitted <- err
	}()
	err := read(rctx, records)
	close(records)
	if eerr := <-emitted; eerr != nil {
		return eerr
	}
	return err
}
