package postgres

import (
	"context"
	"fmt"
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
	t          *Task
	dec        *walDecoder
	resume     resumeFilter
	schemas    map[uint32]*tableSchema
	lastCommit *int64 // end LSN of the last COMMIT (source.sequence[0], lsn_commit)
	skipTx     bool
	sentFlush  int64
}

// stream runs START_REPLICATION from p.startLSN and turns the pgoutput
// stream into records until ctx is done or an error occurs.
func (t *Task) stream(ctx context.Context, p plan) error {
	c := t.cfg
	err := pglogrepl.StartReplication(ctx, t.repl, c.slotName, pglogrepl.LSN(p.startLSN), pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names " + quoteLiteral(c.publicationName)},
	})
	if err != nil {
		return fmt.Errorf("postgres: START_REPLICATION slot %s at %s: %w", c.slotName, pglogrepl.LSN(p.startLSN), err)
	}
	s := &streamer{t: t, dec: newWALDecoder(), resume: p.resume, schemas: map[uint32]*tableSchema{}, lastCommit: p.lastCommit}
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
	t := s.t
	switch it.kind {
	case itemBegin:
		s.skipTx = s.resume.skipTx(it.finalLSN)
	case itemCommit:
		s.lastCommit = i64(it.lsn)
	case itemRelation:
		return s.relation(ctx, it.rel)
	case itemChange:
		if s.skipTx || s.resume.skipChange(it.xid, it.lsn) {
			return nil
		}
		if !t.cfg.included(it.rel.Namespace, it.rel.RelationName) {
			return nil
		}
		sch := s.schemas[it.rel.RelationID]
		if sch == nil {
			if err := s.relation(ctx, it.rel); err != nil {
				return err
			}
			sch = s.schemas[it.rel.RelationID]
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
		var rec *connect.SourceRecord
		switch it.op {
		case envelope.OpCreate:
			rec = t.record(sch, it.op, nil, after, src, off)
		case envelope.OpUpdate:
			rec = t.record(sch, it.op, before, after, src, off)
		case envelope.OpDelete:
			rec = t.record(sch, it.op, before, nil, src, off)
		}
		if err := t.emit(ctx, rec, s.keepalive); err != nil {
			return err
		}
		if it.op == envelope.OpDelete && t.cfg.tombstonesOnDelete {
			return t.emit(ctx, envelope.Tombstone(rec), s.keepalive)
		}
	}
	return nil
}

// relation (re)builds a table's schema from a Relation message: columns,
// types and modifiers from the message, nullability, defaults and primary key
// from the catalog (pgoutput does not carry them).
func (s *streamer) relation(ctx context.Context, rel *pglogrepl.RelationMessage) error {
	if !s.t.cfg.included(rel.Namespace, rel.RelationName) {
		return nil
	}
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
	for _, k := range cat.PrimaryKey {
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
