package runtime

import (
	"context"
	"sync"
	"time"
)

// pauseGate parks a source task's poll loop while its connector is PAUSED
// (Kafka Connect's WorkerTask.awaitUnpause): the task stays started, its
// offsets keep being flushed, but Poll is not called until resume, so the
// task goes on from where it stopped.
type pauseGate struct {
	mu      sync.Mutex
	paused  bool
	parked  bool          // the poll loop is waiting in wait
	resumed chan struct{} // closed on resume; replaced on pause
}

func newPauseGate(paused bool) *pauseGate {
	g := &pauseGate{resumed: make(chan struct{})}
	if paused {
		g.paused = true
	} else {
		close(g.resumed)
	}
	return g
}

// set pauses or resumes the loop.
func (g *pauseGate) set(paused bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if paused == g.paused {
		return
	}
	g.paused = paused
	if paused {
		g.resumed = make(chan struct{})
	} else {
		close(g.resumed)
	}
}

func (g *pauseGate) isPaused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.paused
}

// wait blocks while paused; it returns ctx's error when ctx ends first.
func (g *pauseGate) wait(ctx context.Context) error {
	for {
		g.mu.Lock()
		if !g.paused {
			g.mu.Unlock()
			return nil
		}
		ch := g.resumed
		g.parked = true
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		g.mu.Lock()
		g.parked = false
		g.mu.Unlock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// awaitParked waits (at most timeout) until the poll loop is parked, so
// that no record polled after the pause request is produced once the
// PAUSED status is written. done is the task's exit channel.
func (g *pauseGate) awaitParked(done <-chan struct{}, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		g.mu.Lock()
		ok := g.parked || !g.paused
		g.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
