package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
	"github.com/connectd/connectd/connectors/internal/headers"
	"github.com/connectd/connectd/connectors/internal/heartbeat"
	"github.com/connectd/connectd/connectors/internal/relational"
	"github.com/connectd/connectd/connectors/internal/txmeta"
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
	lastCommitTime time.Time       // commit time of the last transaction (non-transactional messages)
	lastProc       int64           // LSN of the last message processed completely (Debezium's lastCompletelyProcessedLsn)
	tx             *txmeta.Context // transaction in progress (provide.transaction.metadata); nil when disabled or outside one
	txs            txmeta.Context  // reused by tx
	position       offset          // offset of the position reached between transactions (heartbeats)
	nextBeat       time.Time       // when the next heartbeat is due (heartbeat.interval.ms > 0)
	spools         *spoolSet       // in-progress streamed transactions (stream_spool.go)
	xid            uint32          // transaction being applied (its BEGIN's xid)
	boxed          boxedTx         // source values shared by the rows of the transaction being applied
	xmin           any             // source.xmin: the slot's catalog_xmin last read, boxed (xmin.fetch.interval.ms); nil = unknown
	relHist        relationReplay  // relation history of this session (relation_history.go)
	nextXmin       time.Time       // when catalog_xmin is read again
}

// stream runs START_REPLICATION from p.startLSN and turns the pgoutput
// stream into records until ctx is done or an error occurs.
func (t *Task) stream(ctx context.Context, p plan) error {
	c := t.cfg
	args := []string{"proto_version '1'", "publication_names " + quoteLiteral(c.publicationName)}
	if major, _, _ := strings.Cut(t.repl.ParameterStatus("server_version"), "."); atoiOr0(major) >= 14 {
		// logical decoding messages (pg_logical_emit_message), as Debezium asks pgoutput
		args = append(args, "messages 'true'")
		if c.streaming {
			// in-progress transactions (stream_spool.go); version 2 is version
			// 1 plus the streaming messages
			args[0] = "proto_version '2'"
			args = append(args, "streaming 'on'")
		}
	}
	args = t.streamArgs(args)
	err := pglogrepl.StartReplication(ctx, t.repl, c.slotName, pglogrepl.LSN(p.startLSN), pglogrepl.StartReplicationOptions{PluginArgs: args})
	if err != nil {
		if len(c.ext.streamParams) > 0 {
			return fmt.Errorf("postgres: START_REPLICATION slot %s at %s with options %s (%s adds options): %w", c.slotName, pglogrepl.LSN(p.startLSN), strings.Join(args, ", "), KeySlotStreamParams, err)
		}
		return fmt.Errorf("postgres: START_REPLICATION slot %s at %s: %w", c.slotName, pglogrepl.LSN(p.startLSN), err)
	}
	s := &streamer{t: t, dec: newWALDecoder(), resume: p.resume, schemas: map[uint32]*tableSchema{}, excluded: map[uint32]bool{}, lastCommit: p.lastCommit, lastProc: p.startLSN,
		spools: newSpoolSet(c.streamingMemory, &t.streamStats)}
	defer s.spools.closeAll()
	s.position = offset{lsn: i64(p.startLSN), lsnCommit: p.lastCommit}
	if p.lastCommit != nil {
		s.position.lsnProc = i64(p.startLSN)
	}
	if err := t.sig.streamStarted(ctx, s); err != nil {
		return err
	}
	beat := time.Duration(c.heartbeatIntervalMs) * time.Millisecond
	s.nextBeat = time.Now().Add(beat)
	interval := time.Duration(c.statusUpdateIntervalMs) * time.Millisecond
	next := time.Now().Add(interval)
	// The receive waits on the connection's read deadline, not on a
	// context: pgconn watches a receive's context with a callback and a
	// channel of its own (with one message per change, a context and a
	// watch per message were 8% of the stream's CPU). wake (Commit, Stop, a
	// Kafka signal, the end of ctx) sets woken and moves the deadline to
	// now; the loop sets woken's check after its own deadline, so a wake is
	// never lost: either the check sees it or the deadline it moves ends
	// the receive.
	nc := t.repl.Conn()
	var woken atomic.Bool
	wake := context.CancelFunc(func() {
		woken.Store(true)
		nc.SetReadDeadline(time.Now())
	})
	t.wake.Store(&wake)
	stopWake := context.AfterFunc(ctx, wake)
	defer func() {
		t.wake.Store(nil)
		stopWake()
		nc.SetReadDeadline(time.Time{})
	}()
	for {
		if ctx.Err() != nil {
			return nil
		}
		if err := t.sig.between(ctx); err != nil {
			return err
		}
		if time.Now().After(next) || t.flushPosition() != s.sentFlush {
			if err := s.sendStatus(ctx, false); err != nil {
				return err
			}
			next = time.Now().Add(interval)
		}
		deadline := next
		if beat > 0 {
			if !s.dec.inTx && !time.Now().Before(s.nextBeat) {
				if err := s.heartbeat(ctx); err != nil {
					return err
				}
				s.nextBeat = time.Now().Add(beat)
			}
			if s.nextBeat.Before(deadline) {
				deadline = s.nextBeat
			}
		}
		if err := nc.SetReadDeadline(deadline); err != nil {
			return fmt.Errorf("postgres: replication stream: %w", err)
		}
		if woken.Swap(false) {
			continue
		}
		// context.Background: pgconn then sets up no context watch.
		msg, err := t.repl.ReceiveMessage(context.Background())
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if pgconn.Timeout(err) {
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
				s.advance(int64(ka.ServerWALEnd))
				if s.driverFlush(int64(ka.ServerWALEnd)) || ka.ReplyRequested {
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
				if err := s.tolerate(ctx, s.handle(ctx, xld), int64(xld.WALStart)); err != nil {
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
	lsn := s.t.flushPosition()
	// invariant 1: confirm only after Kafka ack + durable offset. The only
	// position ever reported is the one Commit received from the worker
	// (or, with lsn.flush.mode=connector_and_driver, a keepalive's position
	// once every queued record was committed: driverFlush), never the
	// received one, so the slot cannot advance past undelivered changes.
	// lsn.flush.mode=manual reports 0: nothing is confirmed.
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
		return eventFailed(err)
	}
	switch it.kind {
	case itemStreamStart:
		s.spools.start(it.xid, it.lsn)
		return nil
	case itemSpool:
		return s.spools.add(it.xid, it.subxid, it.lsn, it.raw)
	case itemStreamAbort:
		s.spools.abort(it.xid, it.subxid)
		return nil
	case itemStreamCommit:
		return s.replay(ctx, it)
	}
	return s.apply(ctx, it)
}

// replay emits a streamed transaction at its Stream Commit c: its kept
// messages, decoded as the BEGIN … COMMIT of a non-streamed transaction
// (BEGIN at the transaction's first LSN, changes at their own LSNs, COMMIT
// at its end LSN, as the walsender positions them in both cases), minus the
// aborted subtransactions.
func (s *streamer) replay(ctx context.Context, c walItem) error {
	sp := s.spools.take(c.xid)
	if sp == nil {
		return fmt.Errorf("postgres: stream commit of transaction %d, which was never streamed", c.xid)
	}
	defer sp.close()
	s.t.streamStats.committed.Add(1)
	s.dec.beginReplay(c.xid, c.commitTime)
	begin := walItem{kind: itemBegin, lsn: sp.firstLSN, xid: c.xid, finalLSN: c.finalLSN, commitTime: c.commitTime}
	if err := s.apply(ctx, begin); err != nil {
		return err
	}
	interval := time.Duration(s.t.cfg.statusUpdateIntervalMs) * time.Millisecond
	nextStatus, n := time.Now().Add(interval), 0
	err := sp.each(func(lsn int64, raw []byte) error {
		it, err := s.dec.decode(uint64(lsn), raw)
		if err != nil {
			return s.tolerate(ctx, eventFailed(err), lsn)
		}
		if n++; n%256 == 0 && (time.Now().After(nextStatus) || s.t.flushPosition() != s.sentFlush) {
			// the receive loop is not running: keep the walsender from
			// timing out (wal_sender_timeout) and pass on confirmations
			if err := s.sendStatus(ctx, false); err != nil {
				return err
			}
			nextStatus = time.Now().Add(interval)
		}
		return s.tolerate(ctx, s.apply(ctx, it), lsn)
	})
	s.dec.endReplay()
	if err != nil {
		return err
	}
	return s.apply(ctx, walItem{kind: itemCommit, lsn: c.lsn, xid: c.xid, commitTime: c.commitTime})
}

// apply processes one decoded message of a transaction or between them.
func (s *streamer) apply(ctx context.Context, it walItem) (err error) {
	s.relHist.position(it)
	switch it.kind {
	case itemBegin:
		s.xid = it.xid
		s.skipTx = s.resume.skipTx(it.finalLSN)
		if s.t.cfg.txMetadata && !s.skipTx {
			return s.beginTx(ctx, it)
		}
	case itemCommit:
		s.lastCommit, s.lastCommitTime = i64(it.lsn), it.commitTime
		s.position = offset{lsnProc: i64(it.lsn), messageType: "COMMIT", lsnCommit: i64(it.lsn), lsn: i64(it.lsn),
			txID: i64(int64(it.xid)), tsUsec: i64(it.commitTime.UnixMicro())}
		if s.tx != nil {
			s.lastProc = it.lsn
			return s.endTx(ctx, it)
		}
	case itemRelation:
		return eventFailed(s.relation(ctx, it.rel))
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
	if err := t.sig.onSignalRow(ctx, it); err != nil {
		return err
	}
	sch, err := s.schemaOf(ctx, it.rel)
	if sch == nil || err != nil {
		return eventFailed(err)
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
	before, after, err := convertChange(sch, it)
	if errors.Is(err, errStaleEnum) {
		// ALTER TYPE … ADD VALUE sends no Relation message: reload pg_type,
		// rebuild the schemas, and convert again with the new labels.
		if err := s.refreshTypes(ctx); err != nil {
			return eventFailed(err)
		}
		if sch = s.schemas[it.rel.RelationID]; sch == nil {
			return nil
		}
		before, after, err = convertChange(sch, it)
	}
	if err != nil {
		return eventFailed(fmt.Errorf("postgres: %s of %s.%s: %w", it.messageType, it.rel.Namespace, it.rel.RelationName, err))
	}
	xmin, err := s.slotXmin(ctx)
	if err != nil {
		return err
	}
	lsn := it.lsn
	lsnP, xidP, tx := i64(lsn), i64(int64(it.xid)), s.boxed.of(it.commitTime, int64(it.xid))
	src := sourceInfo{server: t.cfg.topicPrefix, db: t.cfg.dbname, schema: it.rel.Namespace, table: it.rel.RelationName,
		ts: it.commitTime, snapshot: snapFalse, txID: xidP, lsn: lsnP, lastCommitLSN: s.lastCommit, tx: tx, xmin: xmin}
	off := offset{lsnProc: lsnP, messageType: it.messageType, lsnCommit: s.lastCommit, lsn: lsnP,
		txID: xidP, tsUsec: i64(it.commitTime.UnixMicro()), tx: tx, xmin: xmin}
	switch it.op {
	case envelope.OpCreate:
		// before and after are this change's own (convertChange): the
		// records' structs take them instead of copies.
		return s.emit(ctx, t.recordOf(sch, it.op, nil, sch.rowOwningOrNil(after), after, src.build(), off.toMap()), sch.table, lsn)
	case envelope.OpUpdate:
		if before != nil && !sch.sameKey(before, after) {
			// The key changed: Debezium's RelationalChangeRecordEmitter emits
			// a delete (+ tombstone) of the old key with header
			// __debezium.newkey, then a create with __debezium.oldkey.
			del := t.record(sch, envelope.OpDelete, before, nil, src, off)
			cre := t.record(sch, envelope.OpCreate, nil, after, src, off)
			del.Headers = []connect.Header{{Key: headers.NewKey, Value: headers.KeyValue(cre.Key)}}
			cre.Headers = []connect.Header{{Key: headers.OldKey, Value: headers.KeyValue(del.Key)}}
			if err := s.emit(ctx, del, sch.table, lsn); err != nil {
				return err
			}
			return s.emit(ctx, cre, sch.table, lsn)
		}
		keyVals := after
		if keyVals == nil {
			keyVals = before
		}
		return s.emit(ctx, t.recordOf(sch, it.op, sch.rowOwningOrNil(before), sch.rowOwningOrNil(after), keyVals, src.build(), off.toMap()), sch.table, lsn)
	case envelope.OpDelete:
		return s.emit(ctx, t.recordOf(sch, it.op, sch.rowOwningOrNil(before), nil, before, src.build(), off.toMap()), sch.table, lsn)
	}
	return nil
}

// convertChange converts the old and new tuples of a change with sch.
func convertChange(sch *tableSchema, it walItem) (before, after []any, err error) {
	if it.before != nil {
		if before, err = sch.convert(it.before); err != nil {
			return nil, nil, err
		}
	}
	if it.after != nil {
		if after, err = sch.convert(it.after); err != nil {
			return nil, nil, err
		}
	}
	return before, after, nil
}

// refreshTypes reloads pg_type (enum labels) and rebuilds the schema of
// every captured relation from its last Relation message.
// The catalog facts stay the ones in use (relation_history.go).
func (s *streamer) refreshTypes(ctx context.Context) error {
	if err := s.t.types.reg.load(ctx, s.t.conn); err != nil {
		return err
	}
	for id := range s.schemas {
		if rel := s.dec.relations[id]; rel != nil {
			if err := s.rebuild(ctx, rel, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// emit queues a change record of table (collection "<schema>.<table>") at
// lsn unless its op is in skipped.operations, and the tombstone that follows
// a delete (tombstones.on.delete). Inside a transaction with transaction
// metadata the record gets its transaction block and offset keys first.
func (s *streamer) emit(ctx context.Context, rec *connect.SourceRecord, table *relational.Table, lsn int64) error {
	t := s.t
	val := rec.Value.(*connect.Struct)
	op := val.Values[envelopeOpField].(string)
	if t.cfg.skipped.skip(op) {
		return nil
	}
	t.sig.dedup(table.Schema+"."+table.Name, rec)
	if s.tx != nil {
		val.Values[envelopeTransactionField] = s.tx.Event(table.Schema+"."+table.Name, s.tx.ID+":"+strconv.FormatInt(lsn, 10))
		s.tx.PutOffset(rec.SourceOffset)
	}
	own := rec.Headers
	if err := t.emit(ctx, rec, s.keepalive); err != nil {
		return err
	}
	if op == envelope.OpDelete && t.cfg.tombstonesOnDelete {
		// The tombstone carries the delete's own headers (a key change's
		// __debezium.newkey, as Debezium's RelationalChangeRecordEmitter
		// passes the same headers to both), then the context headers.
		tomb := envelope.Tombstone(rec)
		tomb.Headers = own
		return t.emit(ctx, tomb, s.keepalive)
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
			return eventFailed(err)
		}
		if sch != nil {
			schemas = append(schemas, sch)
		}
	}
	xmin, err := s.slotXmin(ctx)
	if err != nil {
		return err
	}
	for i, sch := range schemas {
		proc := s.lastProc
		if i == len(schemas)-1 {
			proc = it.lsn
		}
		src := sourceInfo{server: t.cfg.topicPrefix, db: t.cfg.dbname, schema: sch.table.Schema, table: sch.table.Name,
			ts: it.commitTime, snapshot: snapFalse, txID: i64(int64(it.xid)), lsn: i64(it.lsn), lastCommitLSN: s.lastCommit, xmin: xmin}
		off := offset{lsnProc: i64(proc), messageType: it.messageType, lsnCommit: s.lastCommit, lsn: i64(it.lsn),
			txID: i64(int64(it.xid)), tsUsec: i64(it.commitTime.UnixMicro()), xmin: xmin}
		rec := &connect.SourceRecord{SourcePartition: t.partition, SourceOffset: off.toMap(), Topic: sch.topic,
			ValueSchema: sch.envelope, Value: envelope.Value(sch.envelope, envelope.OpTruncate, nil, nil, src.build(), t.now())}
		if err := s.emit(ctx, rec, sch.table, it.lsn); err != nil {
			return err
		}
	}
	s.lastProc = it.lsn
	return nil
}

// relation (re)builds a table's schema from a Relation message: columns,
// types and modifiers from the message, nullability, defaults and primary key
// from the catalog (pgoutput does not carry them) or the relation history.
func (s *streamer) relation(ctx context.Context, rel *pglogrepl.RelationMessage) error {
	if !s.t.cfg.included(rel.Namespace, rel.RelationName) && !s.t.sig.isSignalTable(rel.Namespace, rel.RelationName) {
		s.excluded[rel.RelationID] = true
		delete(s.schemas, rel.RelationID)
		return nil
	}
	delete(s.excluded, rel.RelationID)
	cols := make([]relational.Column, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = relational.Column{Name: c.Name, Position: i + 1, TypeOID: c.DataType, TypeMod: c.TypeModifier, Optional: true}
	}
	if old := s.schemas[rel.RelationID]; old != nil && old.table.Schema == rel.Namespace && old.table.Name == rel.RelationName && sameShape(old.table.Columns, cols) {
		// unchanged; a table renamed (RENAME TO, SET SCHEMA) gets a new
		// schema: its topic, schema names, source block, transaction
		// metadata and offsets follow the new name, as Debezium's
		return nil
	}
	return s.rebuild(ctx, rel, false)
}

// rebuild builds a captured relation's schema from its Relation message
// and the catalog facts catalogOf gives (reuse: the ones in use).
func (s *streamer) rebuild(ctx context.Context, rel *pglogrepl.RelationMessage, reuse bool) error {
	cols := make([]relational.Column, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = relational.Column{Name: c.Name, Position: i + 1, TypeOID: c.DataType, TypeMod: c.TypeModifier, Optional: true}
	}
	facts, err := s.catalogOf(ctx, rel, reuse)
	if err != nil {
		return err
	}
	cat, err := facts.table(ctx, s.t.conn, s.t.types, rel.Namespace, rel.RelationName)
	if err != nil {
		return err
	}
	table := &relational.Table{Schema: rel.Namespace, Name: rel.RelationName}
	for _, c := range cols {
		if cc := cat.Column(c.Name); cc != nil && cc.TypeOID == c.TypeOID {
			c.TypeName, c.Optional, c.Default, c.Comment = cc.TypeName, cc.Optional, cc.Default, cc.Comment
		}
		table.Columns = append(table.Columns, c)
	}
	for _, k := range cat.PrimaryKey { // or the first unique index
		if table.Column(k) != nil {
			table.PrimaryKey = append(table.PrimaryKey, k)
		}
	}
	s.schemas[rel.RelationID] = newTableSchema(s.t.cfg.topicPrefix, table, s.t.types)
	return nil
}

// waitVisible waits (up to 5 s) until transaction xid is visible to new
// snapshots of conn. The walsender decodes a transaction as soon as its
// commit record is flushed, which is before the committing backend leaves
// the proc array: a catalog query made right after a Relation message could
// otherwise read the catalog as it was before the transaction's DDL (an
// added column then looked optional without its default; seen in
// TestSchemaChangesGolden when the reader ran fast). The 32-bit xid of
// pgoutput is widened to an xid8 with the epoch of the current snapshot's
// xmax. Servers without pg_visible_in_snapshot (before PostgreSQL 13) are
// not waited for.
func waitVisible(ctx context.Context, conn *pgx.Conn, xid uint32) error {
	if xid == 0 {
		return nil
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		visible, err := xidVisible(ctx, conn, xid)
		if err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "42883" { // undefined_function
				return nil
			}
			return fmt.Errorf("postgres: is transaction %d visible: %w", xid, err)
		}
		if visible || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// xidVisible says whether transaction xid (32 bits, as pgoutput sends it)
// is visible to a new snapshot of conn.
func xidVisible(ctx context.Context, conn *pgx.Conn, xid uint32) (bool, error) {
	const q = `SELECT pg_visible_in_snapshot(((((cur >> 32) - CASE WHEN $1::bigint > (cur & 4294967295) THEN 1 ELSE 0 END) << 32) | $1::bigint)::text::xid8, pg_current_snapshot())
FROM (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS cur) s`
	var visible bool
	err := conn.QueryRow(ctx, q, int64(xid)).Scan(&visible)
	return visible, err
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

// beginTx starts the transaction metadata of a transaction and emits its
// BEGIN event, as Debezium's TransactionMonitor: id "<txId>:<lsn>" (the
// BEGIN message's LSN), the offset of the BEGIN (lsn_proc unchanged,
// messageType BEGIN), ts_ms the commit time.
func (s *streamer) beginTx(ctx context.Context, it walItem) error {
	s.tx = &s.txs
	s.tx.Begin(strconv.FormatUint(uint64(it.xid), 10))
	off := offset{lsnProc: i64(s.lastProc), messageType: "BEGIN", lsnCommit: s.lastCommit, lsn: i64(it.lsn),
		txID: i64(int64(it.xid)), tsUsec: i64(it.commitTime.UnixMicro())}
	return s.txRecord(ctx, txmeta.StatusBegin, it, off)
}

// endTx emits the END event of the transaction (event_count and the count
// per table) with the offset of its COMMIT.
func (s *streamer) endTx(ctx context.Context, it walItem) error {
	off := offset{lsnProc: i64(it.lsn), messageType: "COMMIT", lsnCommit: i64(it.lsn), lsn: i64(it.lsn),
		txID: i64(int64(it.xid)), tsUsec: i64(it.commitTime.UnixMicro())}
	err := s.txRecord(ctx, txmeta.StatusEnd, it, off)
	s.tx = nil
	return err
}

func (s *streamer) txRecord(ctx context.Context, status string, it walItem, off offset) error {
	t := s.t
	m := off.toMap()
	s.tx.PutOffset(m)
	key, val := s.tx.Record(status, s.tx.ID+":"+strconv.FormatInt(it.lsn, 10), it.commitTime.UnixMilli())
	rec := &connect.SourceRecord{SourcePartition: t.partition, SourceOffset: m, Topic: t.cfg.txTopic,
		KeySchema: txmeta.KeySchema(), Key: key, ValueSchema: txmeta.ValueSchema(), Value: val}
	return t.emit(ctx, rec, s.keepalive)
}

// advance moves the heartbeat position to walEnd, the server's WAL position
// of a keepalive, when no transaction is being received: the walsender sends
// a keepalive only between decoded records, and every transaction that
// committed before walEnd has been received in full, so a restart from
// walEnd (lsn_commit) loses nothing. This is what lets the slot's confirmed
// LSN, and its retained WAL, move forward while other databases write and
// the captured tables stay idle (Debezium needs heartbeat.action.query for
// that).
func (s *streamer) advance(walEnd int64) {
	if s.dec.inTx || s.position.lsn == nil || walEnd <= *s.position.lsn {
		return
	}
	// Only the heartbeat position moves: change events keep Debezium's
	// lsn_commit / lsn_proc (the last COMMIT and change received).
	s.position.lsn, s.position.lsnProc, s.position.lsnCommit = i64(walEnd), i64(walEnd), i64(walEnd)
}

// heartbeat runs heartbeat.action.query, if set, and queues a heartbeat
// record carrying the current position, as Debezium's HeartbeatImpl.
func (s *streamer) heartbeat(ctx context.Context) error {
	t := s.t
	if q := t.cfg.heartbeatQuery; q != "" {
		if _, err := t.conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("postgres: heartbeat.action.query: %w", err)
		}
	}
	rec := heartbeat.Record(t.cfg.heartbeatTopic, t.cfg.topicPrefix, t.partition, s.position.toMap(), t.now())
	return t.emit(ctx, rec, s.keepalive)
}
