// Package postgres is io.debezium.connector.postgresql.PostgresConnector:
// pgoutput logical replication with an exported-snapshot initial snapshot,
// emitting Debezium 3.6 change events, offsets and schemas.
//
// Files: config.go (keys, defaults, validation), connector.go, task.go
// (lifecycle, slot/publication checks, Poll/Commit), snapshot.go (parallel
// cursor reads, progress), snapshotter.go (snapshot.mode decisions), stream.go
// (the only owner of the replication receive loop, keepalives and standby
// status), stream_spool.go (in-progress streamed transactions), decode.go
// (pure pgoutput decoding, fuzzed), catalog.go (tables, partitions, keys),
// types.go (type mapping from PostgreSQL text
// under decimal/time/binary/interval/hstore handling modes), temporal.go and
// textparse.go (allocation-light parsers of date/time, array, hstore and
// interval text), registry.go (pg_type: domains, enums, arrays, extension
// types), schema.go (per-table schemas), source.go (source block), offsets.go.
//
// Type mapping is locked against Debezium 3.6.1 captures for every handling
// mode (types_golden_test.go, testdata/debezium/pg_types_*.jsonl). Where the
// reference loses data connectd differs, on purpose: values of type name
// while streaming, BC dates and date ±infinity in the snapshot (connectd
// gives the streaming value in both phases), int2vector.
//
// Invariants:
//   - The flush LSN sent to the server is only ever the one derived from an
//     offset the worker passed to Commit (lsn_commit, else lsn_proc, else lsn,
//     as Debezium), never the received position (DESIGN.md invariant 1).
//   - The snapshot reads inside the slot's exported snapshot and the stream
//     starts at the slot's consistent point (invariant 2). With an existing
//     slot, a temporary slot exports the snapshot and the kept slot streams
//     from the temporary slot's consistent point; every snapshot.max.threads
//     reader imports the same snapshot (SET TRANSACTION SNAPSHOT), also
//     when a table is read in primary-key chunks
//     (snapshot.max.threads.multiplier).
//   - Snapshot and streaming values go through the same text conversion.
//
// Replica identity, TOAST placeholders, truncate, skipped.operations,
// column options and logical decoding messages are locked against Debezium
// 3.6.1 captures by scenario_golden_test.go (testdata/debezium/pg_<name>.jsonl,
// reference/debezium/run-pg-scenario.sh), records and per-record offsets.
//
// Schema changes while streaming, transaction metadata and heartbeats are
// locked the same way (schema_changes, transactions, heartbeat). Each event
// is decoded with the columns of the Relation message pgoutput sent before
// it, also after a restart from an offset older than the DDL. Deviations, on
// purpose: an enum label added by ALTER TYPE … ADD VALUE refreshes the
// enum's "allowed" parameter at the first event that uses it (Debezium keeps
// the labels loaded at start); a heartbeat's offset carries the server's WAL
// position from keepalives received between transactions (lsn = lsn_proc =
// lsn_commit), so committing it advances the slot while the captured tables
// are idle — Debezium needs heartbeat.action.query for that.
//
// Partitioned tables: the publication's publish_via_partition_root
// (publish.via.partition.root for an autocreated one) decides whether a
// partition's changes carry the partition's name (topic per partition,
// PostgreSQL's and Debezium's default) or the root's (one topic); the
// snapshot reads exactly the tables the stream names (catalog.go
// listTables), and table.include.list filters those names, as Debezium
// filters the Relation message's table. Partitions created or attached later
// are captured without a restart: FOR ALL TABLES covers them, and a filtered
// publication lists a captured partitioned table itself (its partitions are
// published implicitly). Debezium lists the captured tables and updates a
// filtered publication (ALTER PUBLICATION … SET TABLE) only when it starts.
//
// Large transactions: on PostgreSQL 14+ pgoutput runs protocol version 2
// with streaming 'on' (pgoutput.streaming); stream_spool.go keeps an
// in-progress transaction in bounded memory, then a temp file, and
// stream.go replays it at its Stream Commit as a non-streamed transaction,
// so events and offsets are identical and only committed data leaves.
//
// Limits: multi-dimensional arrays fail the task; arrays of range or
// geometric types and PostGIS geometry/geography are not decoded; a
// restart in the middle of a transaction does not restore its event
// counts; logical decoding messages carry no transaction block; only the
// pgoutput plugin (no decoderbufs).
package postgres
