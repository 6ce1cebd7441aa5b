// Package pgdiff is the PostgreSQL differential suite (DESIGN.md §8, layer
// 2): a seeded generator of workloads (gen*.go: schemas with mixed-case,
// quoted, non-ASCII and keyword identifiers in several schemas; the type
// matrix with and without typmods, arrays with NULL elements, enums,
// domains, identity columns, defaults of many kinds; no/single/composite
// keys; REPLICA IDENTITY DEFAULT/FULL/NOTHING/INDEX; TOASTed values;
// multi-table transactions, key changes, savepoints rolled back,
// TRUNCATE, ADD/DROP/RENAME COLUMN, tables created and renamed while
// streaming, large transactions; connector configs drawn from the keys
// users set most), a runner (run.go) that streams one workload through
// the real Debezium 3.6.1 embedded engine (reference/debezium) and
// connectd's PostgreSQL task on one PostgreSQL 15, each with its own slot
// and publication, and a record-by-record comparison (compare.go) of
// topic, key and value bytes, headers, source partition and offset.
//
// Masked, and only these: wall clocks (ts_ms, ts_us, ts_ns), the
// snapshot transaction's own LSN/txId/sequence (each side's slot has its
// own consistent point), the run id header, and the snapshot LSN where a
// streamed offset still names it.
//
// Every other difference must match an entry of Deviations
// (deviations.go: matcher, reason, docs page); one that does not fails the
// seed with a reproduction (SQL, config, both records, field diffs), and a
// deviation that matched nothing in a run of one of its Seeds fails too.
//
// The same seed always generates the same workload; LSNs and txIds depend
// on the cluster, so a seed's comparison, not its bytes, is reproducible.
package pgdiff
