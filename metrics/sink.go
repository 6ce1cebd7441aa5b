package metrics

import (
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// SinkTask is the monitoring state of one sink task: the hooks a sink
// runtime calls. Methods are safe for concurrent use and no-ops on nil.
type SinkTask struct {
	Connector string
	Task      int

	read, sent, errs, dlq atomic.Int64

	mu  sync.Mutex
	lag map[topicPartition]int64
}

type topicPartition struct {
	topic     string
	partition int32
}

// SinkTask returns the monitoring state of a sink task, created on first
// use and kept across restarts.
func (r *Registry) SinkTask(connector string, task int) *SinkTask {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sinks == nil {
		r.sinks = map[taskKey]*SinkTask{}
	}
	k := taskKey{connector, task}
	t, ok := r.sinks[k]
	if !ok {
		t = &SinkTask{Connector: connector, Task: task, lag: map[topicPartition]int64{}}
		r.sinks[k] = t
	}
	return t
}

// Read records n records consumed (Kafka Connect's sink-record-read-total).
func (t *SinkTask) Read(n int) {
	if t != nil {
		t.read.Add(int64(n))
	}
}

// Sent records n records put to the sink (sink-record-send-total).
func (t *SinkTask) Sent(n int) {
	if t != nil {
		t.sent.Add(int64(n))
	}
}

// Error records a record error (total-record-errors).
func (t *SinkTask) Error() {
	if t != nil {
		t.errs.Add(1)
	}
}

// DeadLetter records n records written to the dead letter queue
// (deadletterqueue-produce-requests).
func (t *SinkTask) DeadLetter(n int) {
	if t != nil {
		t.dlq.Add(int64(n))
	}
}

// ConsumerLag sets the records between the task's position and the end of
// topic/partition (high watermark - committed or fetched offset).
func (t *SinkTask) ConsumerLag(topic string, partition int32, lag int64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.lag[topicPartition{topic, partition}] = lag
	t.mu.Unlock()
}

// ForgetPartitions drops the consumer lag of partitions the task no longer
// consumes (revoked or lost in a rebalance): another task reports them.
func (t *SinkTask) ForgetPartitions(parts map[string][]int32) {
	if t == nil {
		return
	}
	t.mu.Lock()
	for topic, ps := range parts {
		for _, p := range ps {
			delete(t.lag, topicPartition{topic, p})
		}
	}
	t.mu.Unlock()
}

// sinkSnapshot is a SinkTask's counters at one moment.
type sinkSnapshot struct {
	connector             string
	task                  int
	read, sent, errs, dlq int64
	lag                   map[topicPartition]int64
	lagTotal              int64
}

func (t *SinkTask) snapshot() sinkSnapshot {
	s := sinkSnapshot{connector: t.Connector, task: t.Task, read: t.read.Load(), sent: t.sent.Load(), errs: t.errs.Load(), dlq: t.dlq.Load(), lag: map[topicPartition]int64{}}
	t.mu.Lock()
	for k, v := range t.lag {
		s.lag[k] = v
		s.lagTotal += v
	}
	t.mu.Unlock()
	return s
}

func (r *Registry) sinkSnapshots() []sinkSnapshot {
	r.mu.Lock()
	ts := make([]*SinkTask, 0, len(r.sinks))
	for _, t := range r.sinks {
		ts = append(ts, t)
	}
	r.mu.Unlock()
	out := make([]sinkSnapshot, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.snapshot())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].connector != out[j].connector {
			return out[i].connector < out[j].connector
		}
		return out[i].task < out[j].task
	})
	return out
}

var (
	dSinkRead = desc("connectd_sink_record_read_total", "Records the sink task consumed: Kafka Connect's sink-record-read-total.", ct...)
	dSinkSent = desc("connectd_sink_record_send_total", "Records put to the sink: Kafka Connect's sink-record-send-total.", ct...)
	dSinkErrs = desc("connectd_sink_task_errors_total", "Sink record errors: Kafka Connect's total-record-errors.", ct...)
	dSinkDLQ  = desc("connectd_sink_deadletterqueue_produce_requests_total", "Sink records written to the dead letter queue: Kafka Connect's deadletterqueue-produce-requests.", ct...)
	dSinkLag  = desc("connectd_sink_consumer_lag", "Records between the sink task's position and the partition's end (high watermark), per topic partition.", "connector", "task", "topic", "partition")
)

func collectSinks(r *Registry, ch chan<- prometheus.Metric) {
	for _, s := range r.sinkSnapshots() {
		lv := []string{s.connector, strconv.Itoa(s.task)}
		ch <- prometheus.MustNewConstMetric(dSinkRead, prometheus.CounterValue, float64(s.read), lv...)
		ch <- prometheus.MustNewConstMetric(dSinkSent, prometheus.CounterValue, float64(s.sent), lv...)
		ch <- prometheus.MustNewConstMetric(dSinkErrs, prometheus.CounterValue, float64(s.errs), lv...)
		ch <- prometheus.MustNewConstMetric(dSinkDLQ, prometheus.CounterValue, float64(s.dlq), lv...)
		for tp, v := range s.lag {
			ch <- prometheus.MustNewConstMetric(dSinkLag, prometheus.GaugeValue, float64(v), s.connector, lv[1], tp.topic, strconv.Itoa(int(tp.partition)))
		}
	}
}
