// Package metrics holds a worker's monitoring state: per source task
// counters fed by small hooks in the runtime (SourceTask), the connector's
// own view read through connect.SourceTaskMetricsProvider, a 15-minute
// history per connector, and the two ways out: Prometheus exposition
// (Registry.Gatherer, served at /metrics) and the dashboard summary
// (Registry.Summary, served at /ui/api/summary and printed by
// `connectd status`).
//
// Names follow Prometheus conventions (base units, _seconds, _bytes,
// _total; labels connector, task, table, op); each HELP text names the
// Debezium or Kafka Connect metric it carries, e.g.
// connectd_streaming_behind_source_seconds is Debezium's
// MilliSecondsBehindSource / 1000.
//
// Invariants: hooks are lock-free (atomics) except the transaction
// tracker; a scrape and a summary read the same counters, so the numbers
// the dashboard shows are the numbers /metrics exports at that moment.
// The Registry owns one sampler goroutine (Start/Close).
package metrics
