// Package queue holds what source tasks share between their reader
// goroutine and the worker's poll loop.
package queue

import (
	"context"
	"time"

	"github.com/connectd/connectd/connect"
)

// Poll takes up to maxBatch records from records, waiting at most interval
// for the first one (Kafka Connect's SourceTask.poll contract: an empty
// result is fine). done is closed when the reader goroutine has returned;
// then readerErr reports why (nil: it finished, as after an initial_only
// snapshot, and Poll keeps returning nothing). Records queued before the
// reader failed are returned before its error.
func Poll(ctx context.Context, records <-chan *connect.SourceRecord, done <-chan struct{}, readerErr func() error, interval time.Duration, maxBatch int) ([]*connect.SourceRecord, error) {
	timer := time.NewTimer(interval)
	defer timer.Stop()
	var batch []*connect.SourceRecord
	select {
	case r := <-records:
		batch = append(batch, r)
	case <-done:
		select {
		case r := <-records:
			batch = append(batch, r)
		default:
			if err := readerErr(); err != nil {
				return nil, err
			}
			select {
			case <-timer.C:
			case <-ctx.Done():
			}
			return nil, nil
		}
	case <-timer.C:
		return nil, nil
	case <-ctx.Done():
		return nil, nil
	}
	for len(batch) < maxBatch {
		select {
		case r := <-records:
			batch = append(batch, r)
		default:
			return batch, nil
		}
	}
	return batch, nil
}
