// Package jdbc is io.debezium.connector.jdbc.JdbcSinkConnector: it writes
// Debezium change events (raw envelopes or records flattened by
// ExtractNewRecordState) into PostgreSQL (pgx) or MySQL/MariaDB
// (go-sql-driver/mysql) with Debezium's JDBC sink configuration keys.
//
// Invariants:
//   - Each Put's batch is written in one database transaction, alone or
//     with the batches put while the previous transaction was being
//     written (group commit, pipeline.go: one writer, at most
//     txRowsMax × batch.size rows queued). Put prepares it while the
//     writer runs and Flush returns only once every batch put so far is
//     committed, so the runtime, which commits consumer offsets only after
//     Flush, never commits an unwritten record (no loss). A batch whose
//     write failed with a retriable error after its Put returned nil is
//     kept and written again before anything else.
//   - Within a batch the changes of one key are applied in Kafka order;
//     consecutive changes of a key collapse to the last one, which is
//     equivalent because each upsert writes the whole row (a column
//     carrying Debezium's unavailable value placeholder keeps the last
//     real value seen in the batch, or is left out of the write).
//   - Writes are idempotent (upsert / delete by primary key), so replaying
//     a topic from any offset converges to the same tables.
package jdbc
