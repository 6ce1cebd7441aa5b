package metrics

import "time"

// Sample is one point of a connector's history, summed over its tasks.
type Sample struct {
	T              int64 `json:"t"`                // Unix ms
	LagBytes       int64 `json:"lag_bytes"`        // -1 = unknown
	BehindSourceMs int64 `json:"behind_source_ms"` // max over tasks, -1 = unknown
	EventsBehind   int64 `json:"events_behind"`    // queued + in flight
	Written        int64 `json:"written"`          // cumulative source-record-write-total
	Errors         int64 `json:"errors"`           // cumulative
	DeadLetters    int64 `json:"dead_letters"`     // cumulative
	latency        []uint64
}

// history is a ring of samples covering keep.
type history struct {
	buf  []Sample
	next int
	full bool
}

func newHistory(n int) *history { return &history{buf: make([]Sample, n)} }

func (h *history) add(s Sample) {
	h.buf[h.next] = s
	h.next = (h.next + 1) % len(h.buf)
	if h.next == 0 {
		h.full = true
	}
}

// samples returns the ring oldest first.
func (h *history) samples() []Sample {
	if !h.full {
		return append([]Sample(nil), h.buf[:h.next]...)
	}
	return append(append([]Sample(nil), h.buf[h.next:]...), h.buf[:h.next]...)
}

// aggregate sums a connector's task snapshots into one sample at now. A
// sink task's records put count as written and its consumer lag as events
// behind.
func aggregate(now time.Time, tasks []TaskSnapshot, sinks []sinkSnapshot) Sample {
	s := Sample{T: now.UnixMilli(), LagBytes: -1, BehindSourceMs: -1, latency: make([]uint64, len(LatencyBuckets)+1)}
	for _, t := range tasks {
		s.Written += t.Written
		s.Errors += t.Errors
		s.DeadLetters += t.DeadLetters
		s.EventsBehind += t.InFlight
		s.BehindSourceMs = max(s.BehindSourceMs, t.BehindSourceMs)
		for i, c := range t.LatencyCounts {
			s.latency[i] += c
		}
		if m := t.Source; m != nil {
			s.EventsBehind += int64(m.QueueTotalCapacity - m.QueueRemainingCapacity)
			if m.ReplicationLagBytes >= 0 {
				s.LagBytes = max(s.LagBytes, 0) + m.ReplicationLagBytes
			}
		}
	}
	for _, sk := range sinks {
		s.Written += sk.sent
		s.Errors += sk.errs
		s.DeadLetters += sk.dlq
		s.EventsBehind += sk.lagTotal
	}
	return s
}

// Sample adds one point to every connector's history (the sampler calls
// it every interval; tests call it directly with an injected clock).
func (r *Registry) Sample() {
	snaps := r.snapshots()
	now := r.now()
	by := map[string][]TaskSnapshot{}
	for _, s := range snaps {
		by[s.Connector] = append(by[s.Connector], s)
	}
	sinks := map[string][]sinkSnapshot{}
	for _, s := range r.sinkSnapshots() {
		sinks[s.connector] = append(sinks[s.connector], s)
	}
	n := int(r.keep/r.interval) + 1
	r.mu.Lock()
	defer r.mu.Unlock()
	add := func(c string) {
		h, ok := r.hist[c]
		if !ok {
			h = newHistory(n)
			r.hist[c] = h
		}
		h.add(aggregate(now, by[c], sinks[c]))
	}
	for c := range by {
		add(c)
	}
	for c := range sinks {
		if _, ok := by[c]; !ok {
			add(c)
		}
	}
}

func (r *Registry) history(connector string) []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.hist[connector]; ok {
		return h.samples()
	}
	return nil
}

// growing reports whether lag grew steadily over window ending at the last
// sample: the samples cover the window, never decrease, end higher than
// they started, and rise in at least half of the steps.
func growing(samples []Sample, window, interval time.Duration) bool {
	if len(samples) < 2 {
		return false
	}
	last := samples[len(samples)-1]
	from := last.T - window.Milliseconds()
	i := len(samples) - 1
	for i > 0 && samples[i-1].T >= from-interval.Milliseconds()/2 {
		i--
	}
	win := samples[i:]
	if len(win) < 3 || win[0].T > from+interval.Milliseconds()/2 || win[0].LagBytes < 0 {
		return false
	}
	rises := 0
	for j := 1; j < len(win); j++ {
		if win[j].LagBytes < win[j-1].LagBytes {
			return false
		}
		if win[j].LagBytes > win[j-1].LagBytes {
			rises++
		}
	}
	return win[len(win)-1].LagBytes > win[0].LagBytes && rises*2 >= len(win)-1
}
