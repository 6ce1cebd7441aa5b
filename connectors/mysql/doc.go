// Package mysql is io.debezium.connector.mysql.MySqlConnector and
// io.debezium.connector.mariadb.MariaDbConnector: a consistent initial
// snapshot, then the binary log (row events) read with go-mysql's
// replication.BinlogSyncer, emitting Debezium's change events, source block
// and offsets.
//
// Files: config.go (keys, defaults, validation), connector.go (the two
// classes), task.go (lifecycle, Poll/Commit), snapshot.go (FLUSH TABLES WITH
// READ LOCK, binlog coordinates, consistent-snapshot transaction), stream.go
// (the only owner of the binlog connection), catalog.go (table model from
// information_schema), ddl.go (DDL parsed with the TiDB parser go-mysql
// uses, applied to the table model), history.go (the schema history topic
// in Debezium's HistoryRecord format), schema_change.go (schema change
// events on <topic.prefix>), types.go (column mapping under every
// handling mode: decimal, time precision, BIGINT UNSIGNED, binary; zero
// dates; spatial types), charset.go (binlog text in single-byte character
// sets such as latin1), source.go (source block), offsets.go. Heartbeats
// (heartbeat.interval.ms) leave from stream.go between transactions.
//
// Invariants:
//   - The snapshot reads inside a START TRANSACTION WITH CONSISTENT SNAPSHOT
//     opened while every table is read-locked, and the binlog coordinates
//     (file, position, GTID set) are read under that same lock; streaming
//     starts at exactly those coordinates (DESIGN.md invariant 2).
//   - Streaming offsets are Debezium's: file/pos of the start of the current
//     transaction, plus the number of events and rows of it already emitted
//     (event, row), so a restart skips exactly what was emitted. MySQL needs
//     no confirmation upstream (invariant 1 holds by construction: the
//     position lives only in the worker's offset store).
//   - Snapshot and streaming values go through the same text conversion.
//   - Binlog events are decoded with the table structures of their
//     position: the snapshot reads them under its lock, every DDL read from
//     the binlog is applied to them, and both are written to the schema
//     history topic (acknowledged by Kafka) before any later event is
//     emitted; a restart recovers the structures of the stored offset from
//     the topic. Without schema.history.internal.kafka.topic (connectd
//     only; Debezium requires it) a restart reads information_schema.
//
// Snapshot modes (snapshot_mode.go) decide as Debezium 3.6's snapshotters;
// a stored position whose binlog file was purged fails Start with
// ErrBinlogUnavailable unless the mode allows a new snapshot (when_needed).
//
// An offset with gtids resumes by GTID (gtid.go: MariaDB
// @slave_connect_state, MySQL COM_BINLOG_DUMP_GTID) with the GTID source
// filters applied as Debezium's filterGtidSet; file/pos are tracked from
// the events for the offsets.
//
// MariaDB-only DDL (CREATE OR REPLACE, system versioning, periods, Aria
// options, INVISIBLE/COMPRESSED columns, UUID/INET4/INET6) is rewritten by
// ddl_mariadb.go before the TiDB parser sees it.
//
// Limits: MySQL 8 servers are untested (none can be installed on the build
// machine; TestMySQLGTIDStreamTracking covers the MySQL GTID path without
// one); rows of COMPRESSED columns fail the task (go-mysql cannot decode
// column types 140/141); PARTITION BY SYSTEM_TIME … AUTO is unparseable.
package mysql
