package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
	"github.com/connectd/connectd/connectors/internal/relational"
)

// streamer is the state of the replication receive loop. This file owns the
// loop, keepalives and standby status updates; decode.go interprets bytes.
type streamer struct {
	t              *Task
	dec            *walDecoder
	resume         resumeFilter
	schemas        map[uint32]*tableSchema
	excluded       map[uint32]bool // relations not captured (filters evaluated once per Relation message)
	lastCommit     *int64          // end LSN of the last COMMIT (source.sequence[0], lsn_commit)
	skipTx         bool
	sentFlush      int64
	lastCommitTime time.Time // commit time of the last transaction (non-transactional messages)
	lastProc       int64     // LSN of the last message processed completely (Debezium's lastCompletelyProcessedLsn)
}

// stream runs START_REPLICATION from p.startLSN and turns the pgoutput
// stream into records until ctx is done or an error occurs.
func (t *Task) stream(ctx context.Context, p plan) error {
	c := t.cfg
	args := []string{"proto_version '1'", "publication_names " + quoteLiteral(c.publicationName)}
	if major, _, _ := strings.Cut(t.repl.ParameterStatus("server_version"), "."); atoiOr0(major) >= 14 {
		// logical decoding messages (pg_logical_emit_message), as Debezium asks pgoutput
		args = append(args, "messages 'true'")
	}
	err := pglogrepl.StartReplication(ctx, t.repl, c.slotName, pglogrepl.LSN(p.startLSN), pglogrepl.StartReplicationOptions{PluginArgs: args})
	if err != nil {
		return fmt.Errorf("postgres: START_REPLICATION slot %s at %s: %w", c.slotName, pglogrepl.LSN(p.startLSN), err)
	}
	s := &streamer{t: t, dec: newWALDecoder(), resume: p.resume, schemas: map[uint32]*tableSchema{}, excluded: map[uint32]bool{}, lastCommit: p.lastCommit, lastProc: p.startLSN}
	interval := time.Duration(c.statusUpdateIntervalMs) * time.Millisecond
	next := time.Now().Add(interval)
	for {
		if ctx.Err() != nil {
			return nil
		}
		if time.Now().After(next) || t.confirmed.Load() != s.sentFlush {
			if err := s.sendStatus(ctx, false); err != nil {
				return err
			}
			next = time.Now().Add(interval)
		}
		rctx, cancel := context.WithDeadline(ctx, next)
		t.wake.Store(&cancel)
		msg, err := t.repl.ReceiveMessage(rctx)
		t.wake.Store(nil)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if pgconn.Timeout(err) || rctx.Err() != nil {
				continue
			}
			return fmt.Errorf("postgres: replication stream: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if len(m.Data) == 0 {
				continue
			}
			switch m.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(m.Data[1:])
				if err != nil {
					return fmt.Errorf("postgres: keepalive: %w", err)
				}
				if ka.ReplyRequested {
					if err := s.sendStatus(ctx, false); err != nil {
						return err
					}
					next = time.Now().Add(interval)
				}
			case pglogrepl.XLogDataByteID:
				xld, err := pglogrepl.ParseXLogData(m.Data[1:])
				if err != nil {
					return fmt.Errorf("postgres: XLogData: %w", err)
				}
				if err := s.handle(ctx, xld); err != nil {
					return err
				}
			}
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("postgres: replication stream: %w", pgconn.ErrorResponseToPgError(m))
		case *pgproto3.CopyDone:
			return fmt.Errorf("postgres: replication stream ended by the server")
		}
	}
}

// sendStatus sends a standby status update.
func (s *streamer) sendStatus(ctx context.Context, reply bool) error {
	lsn := s.t.confirmed.Load()
	// invariant 1: confirm only after Kafka ack + durable offset. The only
	// position ever reported is the one Commit received from the worker, never
	// the received one, so the slot cannot advance past undelivered changes.
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.t.repl, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: pglogrepl.LSN(lsn),
		WALFlushPosition: pglogrepl.LSN(lsn),
		WALApplyPosition: pglogrepl.LSN(lsn),
		ClientTime:       time.Now(),
		ReplyRequested:   reply,
	})
	if err != nil {
		return fmt.Errorf("postgres: standby status update: %w", err)
	}
	s.sentFlush = lsn
	return nil
}

func (s *streamer) keepalive() error { return s.sendStatus(context.Background(), false) }

// handle processes one XLogData message.
func (s *streamer) handle(ctx context.Context, xld pglogrepl.XLogData) error {
	it, err := s.dec.decode(uint64(xld.WALStart), xld.WALData)
	if err != nil {
		return err
	}
	switch it.kind {
	case itemBegin:
		s.skipTx = s.resume.skipTx(it.finalLSN)
	case itemCommit:
		s.lastCommit, s.lastCommitTime = i64(it.lsn), it.commitTime
	case itemRelation:
		return s.relation(ctx, it.rel)
	case itemChange:
		err = s.change(ctx, it)
	case itemTruncate:
		return s.truncate(ctx, it)
	case itemMessage:
		return s.message(ctx, it)
	}
	if it.kind == itemCommit || it.kind == itemChange {
		// as Debezium's lastCompletelyProcessedLsn (not moved by BEGIN)
		s.lastProc = it.lsn
	}
	return err
}

// schemaOf returns the schema of a captured relation (nil if not captured).
func (s *streamer) schemaOf(ctx context.Context, rel *pglogrepl.RelationMessage) (*tableSchema, error) {
	sch := s.schemas[rel.RelationID]
	if sch == nil {
		if s.excluded[rel.RelationID] {
			return nil, nil
		}
		if err := s.relation(ctx, rel); err != nil {
			return nil, err
		}
		sch = s.schemas[rel.RelationID]
	}
	return sch, nil
}

// change emits the records of one insert, update or delete.
func (s *streamer) change(ctx context.Context, it walItem) error {
	t := s.t
	if s.skipTx || s.resume.skipChange(it.xid, it.lsn) {
		return nil
	}
	sch, err := s.schemaOf(ctx, it.rel)
	if sch == nil || err != nil {
		return err
	}
	if it.before != nil && !it.oldIsKey {
		// REPLICA IDENTITY FULL: an unchanged TOASTed value missing from the
		// new tuple is in the old one (Debezium fills it in the same way).
		for i := range it.after {
			if it.after[i].unchanged && i < len(it.before) {
				it.after[i] = it.before[i]
			}
		}
	}
	var before, after []any
	if it.before != nil {
		if before, err = sch.convert(it.before); err != nil {
			return err
		}
	}
	if it.after != nil {
		if after, err = sch.convert(it.after); err != nil {
			return err
		}
	}
	lsn := it.lsn
	src := sourceInfo{server: t.cfg.topicPrefix, db: t.cfg.dbname, schema: it.rel.Namespace, table: it.rel.RelationName,
		ts: it.commitTime, snapshot: snapFalse, txID: i64(int64(it.xid)), lsn: i64(lsn), lastCommitLSN: s.lastCommit}
	off := offset{lsnProc: i64(lsn), messageType: it.messageType, lsnCommit: s.lastCommit, lsn: i64(lsn),
		txID: i64(int64(it.xid)), tsUsec: i64(it.commitTime.UnixMicro())}
	switch it.op {
	case envelope.OpCreate:
		return s.emit(ctx, t.record(sch, it.op, nil, after, src, off))
	case envelope.OpUpdate:
		if before != nil && !sch.sameKey(before, after) {
			// The key changed: Debezium's RelationalChangeRecordEmitter emits
			// a delete (+ tombstone) of the old key with header
			// __debezium.newkey, then a create with __debezium.oldkey.
			del := t.record(sch, envelope.OpDelete, before, nil, src, off)
			cre := t.record(sch, envelope.OpCreate, nil, after, src, off)
			del.Headers = []connect.Header{{Key: "__debezium.newkey", Value: headerValue(cre.Key)}}
			cre.Headers = []connect.Header{{Key: "__debezium.oldkey", Value: headerValue(del.Key)}}
			if err := s.emit(ctx, del); err != nil {
				return err
			}
			return s.emit(ctx, cre)
		}
		return s.emit(ctx, t.record(sch, it.op, before, after, src, off))
	case envelope.OpDelete:
		return s.emit(ctx, t.record(sch, it.op, before, nil, src, off))
	}
	return nil
}

// emit queues a change record unless its op is in skipped.operations, and
// the tombstone that follows a delete (tombstones.on.delete).
func (s *streamer) emit(ctx context.Context, rec *connect.SourceRecord) error {
	t := s.t
	op := rec.Value.(*connect.Struct).Values[envelopeOpField].(string)
	if t.cfg.skipped.skip(op) {
		return nil
	}
	if err := t.emit(ctx, rec, s.keepalive); err != nil {
		return err
	}
	if op == envelope.OpDelete && t.cfg.tombstonesOnDelete {
		return t.emit(ctx, envelope.Tombstone(rec), s.keepalive)
	}
	return nil
}

// truncate emits one "t" record per captured truncated table, as Debezium's
// PgOutputMessageDecoder: key null, before and after null. Only the last
// table's offset advances lsn_proc (the others keep the previous one: they
// are not the last event at that LSN).
func (s *streamer) truncate(ctx context.Context, it walItem) error {
	t := s.t
	if s.skipTx || s.resume.skipChange(it.xid, it.lsn) {
		return nil
	}
	var schemas []*tableSchema
	for _, rel := range it.rels {
		sch, err := s.schemaOf(ctx, rel)
		if err != nil {
			return err
		}
		if sch != nil {
			schemas = append(schemas, sch)
		}
	}
	for i, sch := range schemas {
		proc := s.lastProc
		if i == len(schemas)-1 {
			proc = it.lsn
		}
		src := sourceInfo{server: t.cfg.topicPrefix, db: t.cfg.dbname, schema: sch.table.Schema, table: sch.table.Name,
			ts: it.commitTime, snapshot: snapFalse, txID: i64(int64(it.xid)), lsn: i64(it.lsn), lastCommitLSN: s.lastCommit}
		off := offset{lsnProc: i64(proc), messageType: it.messageType, lsnCommit: s.lastCommit, lsn: i64(it.lsn),
			txID: i64(int64(it.xid)), tsUsec: i64(it.commitTime.UnixMicro())}
		rec := &connect.SourceRecord{SourcePartition: t.partition, SourceOffset: off.toMap(), Topic: sch.topic,
			ValueSchema: sch.envelope, Value: envelope.Value(sch.envelope, envelope.OpTruncate, nil, nil, src.build(), t.now())}
		if err := s.emit(ctx, rec); err != nil {
			return err
		}
	}
	s.lastProc = it.lsn
	return nil
}

// relation (re)builds a table's schema from a Relation message: columns,
// types and modifiers from the message, nullability, defaults and primary key
// from the catalog (pgoutput does not carry them).
func (s *streamer) relation(ctx context.Context, rel *pglogrepl.RelationMessage) error {
	if !s.t.cfg.included(rel.Namespace, rel.RelationName) {
		s.excluded[rel.RelationID] = true
		delete(s.schemas, rel.RelationID)
		return nil
	}
	delete(s.excluded, rel.RelationID)
	cols := make([]relational.Column, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = relational.Column{Name: c.Name, Position: i + 1, TypeOID: c.DataType, TypeMod: c.TypeModifier, Optional: true}
	}
	if old := s.schemas[rel.RelationID]; old != nil && sameShape(old.table.Columns, cols) {
		return nil
	}
	cat, err := loadTable(ctx, s.t.conn, s.t.types, rel.Namespace, rel.RelationName)
	if err != nil {
		return err
	}
	table := &relational.Table{Schema: rel.Namespace, Name: rel.RelationName}
	for _, c := range cols {
		if cc := cat.Column(c.Name); cc != nil && cc.TypeOID == c.TypeOID {
			c.TypeName, c.Optional, c.Default = cc.TypeName, cc.Optional, cc.Default
		}
		table.Columns = append(table.Columns, c)
	}
	key := cat.PrimaryKey
	if len(key) == 0 {
		if key, err = uniqueIndexKey(ctx, s.t.conn, rel.Namespace, rel.RelationName); err != nil {
			return err
		}
	}
	for _, k := range key {
		if table.Column(k) != nil {
			table.PrimaryKey = append(table.PrimaryKey, k)
		}
	}
	s.schemas[rel.RelationID] = newTableSchema(s.t.cfg.topicPrefix, table, s.t.types)
	return nil
}

func sameShape(a, b []relational.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].TypeOID != b[i].TypeOID || a[i].TypeMod != b[i].TypeMod {
			return false
		}
	}
	return true
}

func atoiOr0(s string) int {
	n, _ := strconv.Atoi(strings.TrimFunc(s, func(r rune) bool { return r < '0' || r > '9' }))
	return n
}
