package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/metrics"
)

// Worker properties of the dashboard's amber thresholds and history
// (connectd's own; Kafka Connect has none). Defaults: metrics.DefaultThresholds.
const (
	ConfigLagThresholdBytes  = "dashboard.lag.threshold.bytes"
	ConfigLagThresholdMs     = "dashboard.lag.threshold.ms"
	ConfigLagThresholdEvents = "dashboard.lag.threshold.events"
	ConfigLagGrowthMs        = "dashboard.lag.growth.window.ms"
	ConfigSampleIntervalMs   = "dashboard.sample.interval.ms"
)

// newMetrics builds the worker's metrics registry from its properties and
// starts the history sampler (stopped by Herder.Close). Errors name the key.
func newMetrics(cfg WorkerConfig) (*metrics.Registry, error) {
	th := metrics.DefaultThresholds
	num := func(key string, set func(int64)) error {
		v := strings.TrimSpace(cfg.Get(key))
		if v == "" {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("worker config %s: %q is not a non-negative integer", key, v)
		}
		set(n)
		return nil
	}
	interval := 5 * time.Second
	for _, e := range []error{
		num(ConfigLagThresholdBytes, func(n int64) { th.LagBytes = n }),
		num(ConfigLagThresholdMs, func(n int64) { th.BehindSource = time.Duration(n) * time.Millisecond }),
		num(ConfigLagThresholdEvents, func(n int64) { th.LagEvents = n }),
		num(ConfigLagGrowthMs, func(n int64) { th.GrowthWindow = time.Duration(n) * time.Millisecond }),
		num(ConfigSampleIntervalMs, func(n int64) {
			if n > 0 {
				interval = time.Duration(n) * time.Millisecond
			}
		}),
	} {
		if e != nil {
			return nil, e
		}
	}
	r := metrics.New(metrics.WithThresholds(th), metrics.WithSampleInterval(interval))
	return r, nil
}

// Metrics is the worker's metrics registry (served at /metrics and /ui).
func (h *Herder) Metrics() *metrics.Registry { return h.metrics }

// startMetrics wires the registry to the herder's statuses and starts its
// sampler.
func (h *Herder) startMetrics() {
	h.metrics.SetStatus(h.metricsStatus)
	h.metrics.Start(context.Background())
}

// metricsStatus is every connector's status, for the registry.
func (h *Herder) metricsStatus() []metrics.ConnectorState {
	var out []metrics.ConnectorState
	for _, name := range h.Connectors() {
		cs, err := h.ConnectorStatus(name)
		if err != nil {
			continue
		}
		s := metrics.ConnectorState{Name: name, Type: cs.Type, State: cs.Connector.State, Trace: cs.Connector.Trace}
		for _, t := range cs.Tasks {
			s.Tasks = append(s.Tasks, metrics.TaskState{ID: t.ID, State: t.State, Trace: t.Trace, WorkerID: t.WorkerID})
		}
		out = append(out, s)
	}
	return out
}
