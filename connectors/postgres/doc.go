// Package postgres is io.debezium.connector.postgresql.PostgresConnector:
// pgoutput logical replication with an exported-snapshot initial snapshot,
// emitting Debezium 3.6 change events, offsets and schemas.
//
// Files: config.go (keys, defaults, validation), connector.go, task.go
// (lifecycle, Poll/Commit), snapshot.go, stream.go (the only owner of the
// replication receive loop, keepalives and standby status), decode.go (pure
// pgoutput decoding, fuzzed), types.go (type mapping from PostgreSQL text),
// schema.go (per-table schemas), source.go (source block), offsets.go.
//
// Invariants:
//   - The flush LSN sent to the server is only ever the one derived from an
//     offset the worker passed to Commit (lsn_commit, else lsn_proc, else lsn,
//     as Debezium), never the received position (DESIGN.md invariant 1).
//   - The snapshot reads inside the slot's exported snapshot and the stream
//     starts at the slot's consistent point (invariant 2).
//   - Snapshot and streaming values go through the same text conversion.
//
// Not implemented yet (values are emitted as Debezium would not): types
// other than the mapped ones are strings of their PostgreSQL text (Debezium
// maps time, interval, money, arrays, bit, hstore, geometry, … differently);
// infinity dates/timestamps and numeric NaN fail the task; topic/schema name
// sanitising; truncate and logical-decoding messages; transaction metadata;
// heartbeats; signals and incremental snapshots; REPLICA IDENTITY FULL
// before images are emitted but not compared with Debezium; decoderbufs.
package postgres
