package sourcelag

import (
	"context"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// Before Start (not ready) every lag is -1 and the queue is not read; once
// ready, the queue and Connected show, and a reading Stored by the poller
// shows with its time. Poll releases its connection once ctx ended. The
// -1 "unknown" comes from connect.SourceTaskMetrics' contract (Kafka
// Connect's -1 for an unknown gauge).
func TestGaugeMetricsAndPoll(t *testing.T) {
	var g Gauge
	records := make(chan *connect.SourceRecord, 4)
	records <- &connect.SourceRecord{}
	done := make(chan struct{})
	if m := g.Metrics(records, done); m.Connected || m.QueueTotalCapacity != 0 || m.ReplicationLagBytes != -1 || m.RetainedBytes != -1 {
		t.Fatalf("not ready: %+v", m)
	}
	g.SetReady()
	if m := g.Metrics(records, done); !m.Connected || m.QueueTotalCapacity != 4 || m.QueueRemainingCapacity != 3 || m.ReplicationLagBytes != -1 || !m.LagSampledAt.IsZero() {
		t.Fatalf("ready, no reading: %+v", m)
	}
	g.Interval = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	reads, released := 0, false
	stopped := g.Poll(ctx, func(context.Context) { reads++; g.Store(int64(100*reads), 7) }, func() { released = true })
	deadline := time.Now().Add(5 * time.Second)
	for g.Metrics(records, done).ReplicationLagBytes < 300 {
		if time.Now().After(deadline) {
			t.Fatalf("no third reading: %+v", g.Metrics(records, done))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-stopped
	if !released {
		t.Fatal("release not called after ctx ended")
	}
	close(done)
	m := g.Metrics(records, done)
	if m.Connected || m.ReplicationLagBytes != int64(100*reads) || m.RetainedBytes != 7 || time.Since(m.LagSampledAt) > time.Minute {
		t.Fatalf("after stop: %+v (reads %d)", m, reads)
	}
	select {
	case <-Stopped():
	default:
		t.Fatal("Stopped() is not closed")
	}
}
