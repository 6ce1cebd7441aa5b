// Package sourcelag holds what the PostgreSQL and MySQL source tasks
// share for connect.SourceTaskMetrics: the latest reading of how far the
// task is behind the database's log (bytes), the records queue and
// Connected, and the poller that takes a reading every interval.
//
// Each connector owns its reading (a slot query, SHOW MASTER STATUS); this
// package owns when it runs and how it is published. Readings are written
// by the poller goroutine and read by Metrics from any goroutine.
package sourcelag

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
)

// DefaultInterval is how often the poller takes a reading when
// Gauge.Interval is 0.
const DefaultInterval = 2 * time.Second

// Gauge is a source task's latest lag reading. The zero value has no
// reading and is not ready (Metrics reports only -1 lags).
type Gauge struct {
	// Interval between readings; 0 means DefaultInterval. Set it before
	// Poll (tests shorten it).
	Interval time.Duration

	ready    atomic.Bool  // the task's Start set its records channel and done
	behind   atomic.Int64 // ReplicationLagBytes of the reading; -1 unknown
	retained atomic.Int64 // RetainedBytes of the reading; -1 unknown
	at       atomic.Int64 // Unix ns of the reading, 0 none
}

// SetReady says the task's records channel and done channel are set, so
// Metrics may read them. Call it in Start after setting both.
func (g *Gauge) SetReady() { g.ready.Store(true) }

// Store publishes a reading taken now: behind is the bytes between the
// database's current log position and the position the task committed
// (ReplicationLagBytes), retained the log bytes the database keeps for
// the task (RetainedBytes); -1 is unknown.
func (g *Gauge) Store(behind, retained int64) {
	g.behind.Store(behind)
	g.retained.Store(retained)
	g.at.Store(time.Now().UnixNano())
}

// Metrics returns the metrics both connectors report alike: lags -1
// (unknown) until a reading was stored; once the task is ready, the
// records queue (QueueTotalCapacity is max.queue.size, the channel's
// capacity), Connected while done is open (the reader runs), and the last
// reading with the time it was taken.
func (g *Gauge) Metrics(records chan *connect.SourceRecord, done <-chan struct{}) connect.SourceTaskMetrics {
	m := connect.SourceTaskMetrics{ReplicationLagBytes: -1, RetainedBytes: -1}
	if !g.ready.Load() {
		return m
	}
	m.QueueTotalCapacity = cap(records)
	m.QueueRemainingCapacity = cap(records) - len(records)
	select {
	case <-done:
	default:
		m.Connected = true
	}
	if at := g.at.Load(); at != 0 {
		m.ReplicationLagBytes, m.RetainedBytes = g.behind.Load(), g.retained.Load()
		m.LagSampledAt = time.Unix(0, at)
	}
	return m
}

// Poll starts the poller: a goroutine that calls read at once and then
// every Interval until ctx ends, then calls release (to close the
// connection read used; nil: nothing to release). read takes a reading
// and Stores it; on failure it keeps the previous reading, and the next
// tick retries. The returned channel is closed once the poller stopped.
func (g *Gauge) Poll(ctx context.Context, read func(context.Context), release func()) <-chan struct{} {
	iv := g.Interval
	if iv <= 0 {
		iv = DefaultInterval
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if release != nil {
			defer release()
		}
		tick := time.NewTicker(iv)
		defer tick.Stop()
		for {
			read(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return done
}

// Stopped returns a closed channel: the result of a task that runs no
// poller (it does not stream).
func Stopped() <-chan struct{} {
	done := make(chan struct{})
	close(done)
	return done
}
