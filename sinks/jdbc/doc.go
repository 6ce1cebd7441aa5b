// Package jdbc is io.debezium.connector.jdbc.JdbcSinkConnector: it writes
// Debezium change events (raw envelopes or records flattened by
// ExtractNewRecordState) into PostgreSQL (pgx) or MySQL/MariaDB
// (go-sql-driver/mysql) with Debezium's JDBC sink configuration keys.
//
// Invariants:
//   - Put writes a batch in one database transaction; when Put returns
//     nil the batch is committed, so Flush has nothing left to do and the
//     runtime may commit the consumer offsets (no loss).
//   - Within a batch the changes of one key are applied in Kafka order;
//     consecutive changes of a key collapse to the last one, which is
//     equivalent because each upsert writes the whole row (a column
//     carrying Debezium's unavailable value placeholder keeps the last
//     real value seen in the batch, or is left out of the write).
//   - Writes are idempotent (upsert / delete by primary key), so replaying
//     a topic from any offset converges to the same tables.
package jdbc
