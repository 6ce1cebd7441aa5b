package postgres

import (
	"context"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
)

// Logical decoding messages (pg_logical_emit_message), emitted as Debezium
// 3.6's PostgreSQL connector does ("Logical decoding message events"): topic
// <topic.prefix>.message, key io.debezium.connector.postgresql.MessageKey
// {prefix}, value io.debezium.connector.postgresql.MessageValue {op "m",
// ts_ms, source (schema and table ""), transaction, message {prefix,
// content}}. Prefixes are filtered by message.prefix.include.list /
// message.prefix.exclude.list.

var messageKeySchema = connect.StructSchema().Name("io.debezium.connector.postgresql.MessageKey").Version(1).
	Field("prefix", connect.Prim(connect.String, true)).Build()

var messageBlockSchema = connect.StructSchema().Name("io.debezium.connector.postgresql.Message").Version(1).
	Field("prefix", connect.Prim(connect.String, true)).
	Field("content", connect.Prim(connect.Bytes, true)).Build()

var messageValueSchema = connect.StructSchema().Name("io.debezium.connector.postgresql.MessageValue").Version(1).
	Field("op", connect.Prim(connect.String, false)).
	Field("ts_ms", connect.Prim(connect.Int64, true)).
	Field("source", sourceSchema).
	Field("transaction", envelope.TransactionSchema()).
	Field("message", messageBlockSchema).Build()

// message emits one logical decoding message. A transactional message is
// part of its transaction (txId, commit time; lsn_proc stays at the last
// processed change); a non-transactional one stands alone: no txId, the last
// commit time seen, and its LSN becomes lsn_commit and lsn_proc, as
// Debezium records it.
func (s *streamer) message(ctx context.Context, it walItem) error {
	t := s.t
	if it.transactional && (s.skipTx || s.resume.skipChange(it.xid, it.lsn)) {
		return nil
	}
	if !t.cfg.messagePrefixIncluded(it.prefix) {
		return nil
	}
	src := sourceInfo{server: t.cfg.topicPrefix, db: t.cfg.dbname, snapshot: snapFalse, lsn: i64(it.lsn)}
	off := offset{lsn: i64(it.lsn), messageType: msgMessage}
	ts := it.commitTime
	if it.transactional {
		src.txID, src.lastCommitLSN = i64(int64(it.xid)), s.lastCommit
		off.txID, off.lsnCommit, off.lsnProc = i64(int64(it.xid)), s.lastCommit, i64(s.lastProc)
	} else {
		ts = s.lastCommitTime
		s.lastCommit, s.lastProc = i64(it.lsn), it.lsn
		src.lastCommitLSN = s.lastCommit
		off.lsnCommit, off.lsnProc = s.lastCommit, i64(it.lsn)
	}
	src.ts = ts
	off.tsUsec = i64(ts.UnixMicro())
	key := connect.NewStruct(messageKeySchema)
	key.Values[0] = it.prefix
	msg := connect.NewStruct(messageBlockSchema)
	msg.Values[0], msg.Values[1] = it.prefix, append([]byte(nil), it.content...)
	val := connect.NewStruct(messageValueSchema)
	val.Values[0], val.Values[1], val.Values[2], val.Values[4] = envelope.OpMessage, t.now().UnixMilli(), src.build(), msg
	rec := &connect.SourceRecord{SourcePartition: t.partition, SourceOffset: off.toMap(),
		Topic: t.cfg.topicPrefix + ".message", KeySchema: messageKeySchema, Key: key,
		ValueSchema: messageValueSchema, Value: val}
	return t.emit(ctx, rec, s.keepalive)
}
