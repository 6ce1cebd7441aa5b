package queue

import (
	"context"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
)

// Bytes bounds the bytes of the records queued between a source task's
// reader and Poll, in addition to the channel's capacity in records:
// Debezium's max.queue.size.in.bytes (ChangeEventQueue, which sizes each
// record with ObjectSizeCalculator and makes the producer wait while the
// queue holds more than the bound).
//
// Protocol: the reader (the queue's only producer) calls Reserve with a
// record's size before it sends the record to the channel; Poll's caller
// (the only consumer) calls Release with the number of records it took.
// Sizes are released in queue order. A nil *Bytes (no byte bound) accepts
// every call and never waits.
type Bytes struct {
	max   int64
	mu    sync.Mutex
	used  int64
	sizes []int64       // sizes of the reserved records, oldest first
	freed chan struct{} // capacity 1: a Release happened
}

// NewBytes returns a bound of max bytes, or nil when max <= 0 (unbounded).
func NewBytes(max int64) *Bytes {
	if max <= 0 {
		return nil
	}
	return &Bytes{max: max, freed: make(chan struct{}, 1)}
}

// Reserve waits until size more bytes fit under the bound, then counts
// them. A record larger than the bound is admitted alone, when nothing is
// queued (else it could never be queued). While waiting, keepalive (when
// not nil) runs every interval, so a replication connection is not timed
// out by the server. It returns ctx's error if ctx ends first, or
// keepalive's.
func (b *Bytes) Reserve(ctx context.Context, size int64, interval time.Duration, keepalive func() error) error {
	if b == nil {
		return nil
	}
	var tick <-chan time.Time
	for {
		b.mu.Lock()
		if b.used == 0 || b.used+size <= b.max {
			b.used += size
			b.sizes = append(b.sizes, size)
			b.mu.Unlock()
			return nil
		}
		b.mu.Unlock()
		if tick == nil && keepalive != nil && interval > 0 {
			t := time.NewTicker(interval)
			defer t.Stop()
			tick = t.C
		}
		select {
		case <-b.freed:
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
			if err := keepalive(); err != nil {
				return err
			}
		}
	}
}

// Release frees the bytes of the n oldest reserved records: the records
// Poll returned.
func (b *Bytes) Release(n int) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	n = min(n, len(b.sizes))
	for _, s := range b.sizes[:n] {
		b.used -= s
	}
	b.sizes = b.sizes[n:]
	if len(b.sizes) == 0 {
		b.sizes = nil // drop the consumed backing array
	}
	b.mu.Unlock()
	select {
	case b.freed <- struct{}{}:
	default:
	}
}

// Used returns the bytes of the records reserved and not yet released
// (Debezium's CurrentQueueSizeInBytes).
func (b *Bytes) Used() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Max returns the bound in bytes (Debezium's MaxQueueSizeInBytes), 0 for nil.
func (b *Bytes) Max() int64 {
	if b == nil {
		return 0
	}
	return b.max
}

// Size estimates the bytes a record holds in memory: its topic, key, value
// and offset, walked through structs, maps, slices and strings with Go's
// header sizes (16 bytes a string or interface, 24 a slice, 8 a number),
// as Debezium's ObjectSizeCalculator estimates the Java objects. Schemas
// are shared between records and not counted.
func Size(r *connect.SourceRecord) int64 {
	n := int64(64) + int64(len(r.Topic)) // the record's own fields
	n += valueSize(r.Key) + valueSize(r.Value)
	for k, v := range r.SourceOffset {
		n += 16 + int64(len(k)) + valueSize(v)
	}
	return n
}

func valueSize(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return 16 + int64(len(x))
	case []byte:
		return 24 + int64(len(x))
	case *connect.Struct:
		if x == nil {
			return 0
		}
		n := int64(48) // the struct and its Values slice header
		for _, e := range x.Values {
			n += 16 + valueSize(e)
		}
		return n
	case map[string]any:
		n := int64(48)
		for k, e := range x {
			n += 32 + int64(len(k)) + valueSize(e)
		}
		return n
	case map[any]any:
		n := int64(48)
		for k, e := range x {
			n += 32 + valueSize(k) + valueSize(e)
		}
		return n
	case []any:
		n := int64(24)
		for _, e := range x {
			n += 16 + valueSize(e)
		}
		return n
	case connect.Decimal:
		return 48
	}
	return 8
}
