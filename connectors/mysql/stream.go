package mysql

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"time"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
	"github.com/connectd/connectd/connectors/internal/headers"
	"github.com/connectd/connectd/connectors/internal/heartbeat"
)

// txState follows the binlog position as Debezium's BinlogOffsetContext.
type txState struct {
	file        string
	txStart     int64  // position of the current transaction's first event
	gtidsBefore string // GTID set of the transactions completed before it
	gtid        string // the current transaction's GTID ("" = none)
	// grouped: the current MariaDB GTID event is not standalone: its
	// statements end at a COMMIT/XID, not at a DDL (CREATE TABLE … SELECT
	// logs the CREATE, then the rows)
	grouped    bool
	events     int64                    // events of the current transaction fully processed
	skipEvents int64                    // on resume: events of the first transaction already emitted
	skipRows   int64                    // on resume: rows of event skipEvents already emitted
	serverID   int64                    // server_id of the last event read
	tsSec      int64                    // timestamp (s) of the last event read
	keep       func(source string) bool // gtid.source.includes/excludes
}

// heartbeat runs heartbeat.action.query, if set, and queues a heartbeat
// record (connectors/internal/heartbeat) carrying the position reached
// between transactions: file/pos of the next transaction, the GTID set
// completed, server_id and ts_sec of the last event and no event/row to
// skip, as Debezium's BinlogOffsetContext after a commit. Debezium's
// BinlogStreamingChangeEventSource also checks the interval after every
// binlog event (so its heartbeats may carry a mid-transaction offset with
// event/row) and on server heartbeat events; connectd checks it on a timer
// and waits for the transaction's end, so every heartbeat offset is a
// transaction boundary.
func (t *Task) heartbeat(ctx context.Context, s *txState) error {
	if q := t.cfg.heartbeatQuery; q != "" {
		if _, err := t.conn.Execute(q); err != nil {
			return fmt.Errorf("mysql: %s: %w", KeyHeartbeatActionQuery, err)
		}
	}
	off := offset{file: s.file, pos: s.txStart, gtids: s.gtidsBefore, tsSec: s.tsSec}.toMap()
	if s.serverID != 0 {
		off[offServerID] = s.serverID
	}
	return t.emit(ctx, heartbeat.Record(t.cfg.heartbeatTopic, t.cfg.topicPrefix, t.partition, off, t.now()))
}

// stream reads the binlog from start (file/pos, skipping start.event events
// and start.row rows of the first transaction) and queues change records.
// It is the only owner of the binlog connection.
func (t *Task) stream(ctx context.Context, start offset) error {
	c := t.cfg
	fl := gmysql.MySQLFlavor
	if t.flavor == flavorMariaDB {
		fl = gmysql.MariaDBFlavor
	}
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: c.serverID, Flavor: fl, Host: c.host, Port: uint16(c.port),
		User: c.user, Password: c.password, Charset: "utf8mb4",
		TimestampStringLocation: time.UTC, HeartbeatPeriod: 10 * time.Second,
		// DATETIME(n) from 1970 on and TIMESTAMP(n) other than zero come as
		// a time.Time, exact to the microsecond, instead of a string
		// formatted with fmt.Sprintf that fromBinlog parsed again (5% of
		// connectd's CPU on bench/mysql's backlog); earlier and zero dates
		// stay strings (colType.fromBinlog takes both).
		ParseTime: true,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		// Decoded events buffered ahead of the reader. go-mysql's default
		// (10240) holds ~10k decoded rows events on a backlog (hundreds of
		// MB with 100-row events); the task's own queue (max.queue.size)
		// already buffers records, so a short read-ahead is enough.
		EventCacheCount: eventReadAhead,
		// Row data of tables that are not captured is left undecoded: less
		// work, and a table whose columns go-mysql cannot decode (MariaDB
		// COMPRESSED columns, binlog types 140/141) stops the stream only
		// when it is captured.
		RowsEventDecodeFunc: func(re *replication.RowsEvent, data []byte) error {
			pos, err := re.DecodeHeader(data)
			if err != nil {
				return err
			}
			if re.Table != nil && !c.included(string(re.Table.Schema), string(re.Table.Table)) {
				return nil
			}
			return re.DecodeData(pos, data)
		},
	})
	defer syncer.Close()
	var st *replication.BinlogStreamer
	var err error
	if start.gtids != "" {
		// As Debezium: an offset with GTIDs resumes by GTID (MariaDB
		// @slave_connect_state, MySQL COM_BINLOG_DUMP_GTID), so the
		// position survives binlog rotation and file renumbering; file/pos
		// are still tracked for the offsets.
		gset, err := t.restartGTIDSet(start.gtids)
		if err != nil {
			return err
		}
		t.log.Info("Registering binlog reader with GTID set", "gtids", gset.String(), "offset_gtids", start.gtids)
		if st, err = syncer.StartSyncGTID(gset); err != nil {
			return fmt.Errorf("mysql: start binlog dump at GTID set %s: %w", gset, err)
		}
	} else if st, err = syncer.StartSync(gmysql.Position{Name: start.file, Pos: uint32(start.pos)}); err != nil {
		return fmt.Errorf("mysql: start binlog dump at %s:%d: %w", start.file, start.pos, err)
	}
	s := txState{file: start.file, txStart: start.pos, gtidsBefore: c.filterGTIDs(start.gtids), keep: c.gtidSourceIncluded,
		skipEvents: start.event, skipRows: start.row, serverID: start.serverID, tsSec: start.tsSec}
	tables := map[uint64]*replication.TableMapEvent{}
	beat := time.Duration(c.heartbeatIntervalMs) * time.Millisecond
	nextBeat := time.Now().Add(beat)
	for {
		// Heartbeats leave only between transactions (and not while the
		// first transaction after a restart is being skipped): their offset
		// is then a clean restart point.
		between := s.events == 0 && s.skipEvents == 0
		if beat > 0 && between && !time.Now().Before(nextBeat) {
			if err := t.heartbeat(ctx, &s); err != nil {
				return err
			}
			nextBeat = time.Now().Add(beat)
		}
		gctx, cancel := ctx, context.CancelFunc(func() {})
		if beat > 0 && between {
			gctx, cancel = context.WithDeadline(ctx, nextBeat)
		}
		ev, err := st.GetEvent(gctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if gctx.Err() != nil {
				continue // a heartbeat is due
			}
			if strings.Contains(err.Error(), "1236") {
				return fmt.Errorf("%w: binlog %s:%d (gtids %q): take a new snapshot (delete the offsets) or use snapshot.mode=when_needed: %w", ErrBinlogUnavailable, start.file, start.pos, start.gtids, err)
			}
			if strings.Contains(err.Error(), "unsupport type 140") || strings.Contains(err.Error(), "unsupport type 141") {
				// MYSQL_TYPE_VARCHAR_COMPRESSED / MYSQL_TYPE_BLOB_COMPRESSED
				return fmt.Errorf("mysql: read binlog: a row of a table with MariaDB COMPRESSED columns, which the binlog decoder (go-mysql) cannot read; "+
					"drop the COMPRESSED attribute or exclude the table: %w", err)
			}
			return fmt.Errorf("mysql: read binlog: %w", err)
		}
		h := ev.Header
		evStart := int64(h.LogPos) - int64(h.EventSize)
		if h.Timestamp != 0 {
			s.serverID, s.tsSec = int64(h.ServerID), int64(h.Timestamp)
		}
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			s.file = string(e.NextLogName)
			if h.Timestamp != 0 || h.LogPos != 0 {
				// a real rotation: the next file starts a new transaction
				s.txStart, s.events = int64(e.Position), 0
			}
			continue
		case *replication.FormatDescriptionEvent, *replication.GenericEvent, *replication.MariadbGTIDListEvent,
			*replication.MariadbBinlogCheckPointEvent, *replication.PreviousGTIDsEvent:
			continue // between transactions; not counted
		case *replication.MariadbGTIDEvent:
			if s.gtid != "" {
				// the previous transaction ended without a COMMIT event
				s.commit(evStart)
			}
			s.grouped = !e.IsStandalone()
			s.txStart = evStart
			s.gtid = mariaGTID(ev, e)
			s.events = 1
			continue
		case *replication.GTIDEvent:
			s.txStart = evStart
			s.gtid = gtidOf(e)
			s.events = 1
			continue
		case *replication.TableMapEvent:
			tables[e.TableID] = e
		case *replication.RowsEvent:
			if err := t.rows(ctx, &s, h, e); err != nil {
				return err
			}
		case *replication.XIDEvent:
			s.commit(int64(h.LogPos))
			continue
		case *replication.QueryEvent:
			q := strings.TrimSpace(string(e.Query))
			switch {
			case strings.EqualFold(q, "BEGIN"):
				if s.gtid == "" {
					s.txStart = evStart
				}
			case strings.EqualFold(q, "COMMIT"):
				s.commit(int64(h.LogPos))
				continue
			case savepointQuery.MatchString(q):
				// SAVEPOINT / ROLLBACK TO inside a transaction (MariaDB
				// binlogs the savepoint): an event of the transaction, as in
				// Debezium's event count, not a statement that ends it
			case truncateQuery.MatchString(q):
				// TRUNCATE TABLE: no schema change and no history record,
				// as Debezium; a truncate event (op "t") of a captured
				// table unless skipped.operations has t (its default)
				if err := t.truncate(ctx, &s, h, evStart, string(e.Schema), q); err != nil {
					return err
				}
				s.commit(int64(h.LogPos))
				continue
			default:
				if err := t.ddl(ctx, &s, h, evStart, string(e.Schema), q); err != nil {
					return err
				}
				if s.grouped {
					// CREATE TABLE … SELECT: its rows follow in the same
					// transaction (GTID, CREATE, rows, COMMIT)
					break
				}
				s.commit(int64(h.LogPos))
				continue
			}
		}
		s.events++
		if s.skipEvents > 0 && s.events > s.skipEvents {
			s.skipEvents, s.skipRows = 0, 0
		}
	}
}

// eventReadAhead is how many decoded binlog events go-mysql buffers
// ahead of the reader goroutine (bench/mysql: peak RSS 455 MiB with the
// default 10240 on a 1M-row backlog).
const eventReadAhead = 256

// dbCharset returns database db's default character set, read from the
// server once per database ("" when it cannot be read). A CREATE/ALTER/DROP
// DATABASE statement forgets what was read (dbCharsetsReset).
func (t *Task) dbCharset(db string) string {
	if cs, ok := t.dbCharsets[db]; ok {
		return cs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := t.connect(ctx)
	if err != nil {
		return ""
	}
	defer conn.Close()
	r, err := conn.Execute(`SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?`, db)
	if err != nil || len(r.Values) == 0 {
		return ""
	}
	cs, _ := r.GetString(0, 0)
	if t.dbCharsets == nil {
		t.dbCharsets = map[string]string{}
	}
	t.dbCharsets[db] = cs
	return cs
}

var (
	truncateQuery = regexp.MustCompile(`(?i)^TRUNCATE\b`)
)

var savepointQuery = regexp.MustCompile(`(?i)^(SAVEPOINT|ROLLBACK\s+(WORK\s+)?TO|RELEASE\s+SAVEPOINT)\b`)

var databaseDDL = regexp.MustCompile(`(?i)^\s*(CREATE|ALTER|DROP)\s+(DATABASE|SCHEMA)\b`)

// ddl applies a DDL statement read at the current position to the
// catalog and stores it in the schema history before any later event is
// decoded.
func (t *Task) ddl(ctx context.Context, s *txState, h *replication.EventHeader, evStart int64, db, q string) error {
	// After a restart the catalog holds the structures of the stored
	// offset, so a DDL after it is applied (and stored) again; storing a
	// structure twice is harmless.
	// touched: the statement names a table; capturedDB: one of those is
	// in a captured database. The changes describe every table whose
	// structure is tracked (config.schemaTracked), captured or not, as
	// Debezium's.
	var touched, capturedDB bool
	include := func(d, name string) bool {
		touched = true
		capturedDB = capturedDB || t.cfg.dbIncluded(d)
		return t.cfg.schemaTracked(d, name)
	}
	var changes []tableChange
	isDDL := true
	if databaseDDL.MatchString(q) {
		t.dbCharsets = nil
	}
	kind := classifyOther(q)
	switch kind {
	case otherIgnore:
		return nil
	case otherStore:
		if t.cfg.storeOnlyTables {
			// CREATE/ALTER/DROP EVENT under
			// schema.history.internal.store.only.captured.tables.ddl=true:
			// about no captured table, so Debezium neither stores it nor
			// emits a schema change event (mariadiff seed 142)
			return nil
		}
	default:
		var err error
		if changes, isDDL, err = t.catalog.applyDDL(t.parser, db, q, include, t.dbCharset); err != nil {
			if t.cfg.skipUnparseableDDL {
				t.log.Warn("skipping DDL the parser cannot handle ("+KeySkipUnparseableDDL+"=true)", "ddl", q, "file", s.file, "pos", evStart, "err", err)
				return nil
			}
			return fmt.Errorf("%w at binlog %s:%d (set %s=true to skip it)", err, s.file, evStart, KeySkipUnparseableDDL)
		}
	}
	for _, ch := range changes {
		t.stripComments(ch.table)
		delete(t.schemas, ch.db+"."+ch.name)
	}
	if !isDDL {
		return nil
	}
	// Debezium's position of a DDL: its transaction's start, the GTID
	// event counted, no row.
	pos := offset{file: s.file, pos: s.txStart, gtids: s.gtidsBefore, event: s.events, serverID: int64(h.ServerID),
		tsSec: int64(h.Timestamp), snapshotRecord: true, noRow: true}
	// schema.history.internal.store.only.captured.{tables,databases}.ddl:
	// a statement naming tables is stored and emitted when a table it
	// leaves is captured (tables: Debezium records a schema change whose
	// tables include a captured one, so RENAME of a captured table to a
	// name that is not captured, or CREATE TABLE … LIKE a captured table,
	// is neither stored nor emitted: mariadiff seed 32), or when one is in
	// a captured database (databases); one naming no table (CREATE
	// DATABASE, …) when the event's database is captured.
	if t.cfg.storeOnlyTables && len(changes) == 0 && indexDDL.MatchString(q) {
		// about a table without changing its structure (CREATE INDEX):
		// Debezium's event has no table (source.table ""), so under
		// store.only.captured.tables.ddl it neither stores it nor emits a
		// schema change event (mariadiff seed 185)
		return nil
	}
	keep := true
	switch {
	case !touched:
		keep = !(t.cfg.storeOnlyTables || t.cfg.storeOnlyDBs) || t.cfg.dbIncluded(db)
	case t.cfg.storeOnlyTables:
		keep = len(changes) > 0 // each part: its own changes (below)
	case t.cfg.storeOnlyDBs:
		keep = capturedDB
	}
	store := t.history != nil && keep
	// DROP TABLE: one statement per table, as Debezium signals each
	// dropped table (its history and schema change events carry
	// "DROP TABLE `db`.`t`", not the server's text).
	type stmt struct {
		ddl     string
		changes []tableChange
	}
	parts := []stmt{{q, changes}}
	if drops := dropTableStatements(t.parser, db, q); len(drops) > 0 {
		parts = parts[:0]
		for _, d := range drops {
			var chs []tableChange
			for _, ch := range changes {
				if strings.HasSuffix(d, "`"+ch.db+"`.`"+ch.name+"`") || strings.Contains(d, "`"+ch.db+"`.`"+ch.name+"` ") {
					chs = append(chs, ch)
				}
			}
			parts = append(parts, stmt{d, chs})
		}
	}
	for _, p := range parts {
		if t.cfg.storeOnlyTables && touched && len(p.changes) == 0 {
			continue // DROP TABLE of a table that is not captured
		}
		if store {
			if err := t.history.store(ctx, pos, db, p.ddl, p.changes, t.now()); err != nil {
				return err
			}
		}
		if !t.cfg.includeSchemaChanges || t.cfg.storeOnlyDBs && !keep {
			// store.only.captured.databases.ddl: neither stored nor
			// emitted (Debezium's skipSchemaChangeEvent)
			continue
		}
		src := sourceInfo{server: t.cfg.topicPrefix, db: db, ts: time.Unix(int64(h.Timestamp), 0),
			serverID: int64(h.ServerID), gtid: s.gtid, file: s.file, pos: evStart, emptyTable: kind == otherStore}
		if len(p.changes) > 0 {
			src.table = p.changes[0].name
		} else if !t.cfg.dbIncluded(db) {
			continue
		}
		if err := t.emit(ctx, t.schemaChangeRecord(src, db, p.ddl, p.changes, pos.toMap())); err != nil {
			return err
		}
	}
	return nil
}

// indexDDL is CREATE [UNIQUE|FULLTEXT|SPATIAL] INDEX or DROP INDEX.
var indexDDL = regexp.MustCompile(`(?is)^\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?INDEX|DROP\s+INDEX)\b`)

// commit ends the current transaction: next starts at nextPos.
func (s *txState) commit(nextPos int64) {
	if s.gtid != "" && (s.keep == nil || s.keep(gtidSource(s.gtid))) {
		s.gtidsBefore = mergeGTID(s.gtidsBefore, s.gtid)
	}
	s.gtid = ""
	s.txStart, s.events = nextPos, 0
	s.skipEvents, s.skipRows = 0, 0
}

// mergeGTID adds a MariaDB GTID (domain-server-seq) to a gtid_binlog_pos
// style set (one GTID per domain, sorted by domain), or a MySQL uuid:n to a
// MySQL GTID set.
func mergeGTID(set, gtid string) string {
	if strings.Contains(gtid, ":") {
		gs, err := gmysql.ParseMysqlGTIDSet(set)
		if err != nil {
			return set
		}
		if err := gs.Update(gtid); err != nil {
			return set
		}
		return gs.String()
	}
	dom, _, _ := strings.Cut(gtid, "-")
	var out []string
	replaced := false
	for _, g := range strings.Split(set, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		if d, _, _ := strings.Cut(g, "-"); d == dom {
			g, replaced = gtid, true
		}
		out = append(out, g)
	}
	if !replaced {
		out = append(out, gtid)
	}
	return strings.Join(out, ",")
}

// mariaGTID is the GTID (domain-server-seq) of MariaDB GTID event ev,
// read from the event's own bytes. go-mysql's BinlogSyncer (v1.13.0),
// resuming by GTID, adds the first GTID of a domain/server its set lacks
// to that set by pointer (MariadbGTIDSet.AddSet(&event.GTID)) and moves
// that pointer's sequence number forward with the domain's next GTID event,
// while the first event may still wait in the read-ahead queue: its decoded
// SequenceNumber then names a later transaction (a wrong source.gtid, and
// offsets whose gtids skip transactions of that domain on restart;
// TestGTIDNewDomainReadAhead). The raw event (a copy per packet) is not
// shared: seq_no is the first 8 bytes after the 19-byte header, domain_id
// the next 4, server_id the header's.
func mariaGTID(ev *replication.BinlogEvent, e *replication.MariadbGTIDEvent) string {
	const h = replication.EventHeaderSize
	if raw := ev.RawData; len(raw) >= h+12 {
		return fmt.Sprintf("%d-%d-%d", binary.LittleEndian.Uint32(raw[h+8:]), ev.Header.ServerID, binary.LittleEndian.Uint64(raw[h:]))
	}
	return fmt.Sprintf("%d-%d-%d", e.GTID.DomainID, e.GTID.ServerID, e.GTID.SequenceNumber)
}

func gtidOf(e *replication.GTIDEvent) string {
	u := fmt.Sprintf("%x", e.SID)
	if len(u) == 32 {
		u = u[0:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]
	}
	return fmt.Sprintf("%s:%d", u, e.GNO)
}

// truncate emits the truncate event of a TRUNCATE TABLE statement of a
// captured table, as Debezium's: the table's topic, no key, op "t" and
// neither before nor after, the source of the statement (its GTID, the
// query event's position, row 0) and the offset of a DDL (the
// transaction's start, the GTID event counted, no row).
func (t *Task) truncate(ctx context.Context, s *txState, h *replication.EventHeader, evStart int64, defaultDB, q string) error {
	if t.cfg.skipped.skip(envelope.OpTruncate) {
		return nil
	}
	stmts, _, err := t.parser.Parse(q, "", "")
	if err != nil || len(stmts) != 1 {
		return nil // not a statement the parser reads: nothing to attribute
	}
	tr, ok := stmts[0].(*ast.TruncateTableStmt)
	if !ok || tr.Table == nil {
		return nil
	}
	db, name := tr.Table.Schema.O, tr.Table.Name.O
	if db == "" {
		db = defaultDB
	}
	if !t.cfg.included(db, name) {
		return nil
	}
	ts, err := t.tableSchema(t.conn, db, name)
	if err != nil {
		return err
	}
	off := offset{file: s.file, pos: s.txStart, gtids: s.gtidsBefore, event: s.events, serverID: int64(h.ServerID),
		tsSec: int64(h.Timestamp), snapshotRecord: true, noRow: true}
	src := sourceInfo{server: t.cfg.topicPrefix, db: db, table: name, ts: time.Unix(int64(h.Timestamp), 0),
		serverID: int64(h.ServerID), gtid: s.gtid, file: s.file, pos: evStart}
	return t.emit(ctx, &connect.SourceRecord{
		SourcePartition: t.partition,
		SourceOffset:    off.toMap(),
		Topic:           ts.topic,
		ValueSchema:     ts.envelope,
		Value:           envelope.Value(ts.envelope, envelope.OpTruncate, nil, nil, t.source(src), t.now()),
	})
}

// rows emits the records of one row event.
func (t *Task) rows(ctx context.Context, s *txState, h *replication.EventHeader, e *replication.RowsEvent) error {
	db, name := string(e.Table.Schema), string(e.Table.Table)
	if !t.cfg.included(db, name) {
		return nil
	}
	if t.cfg.gtidFilterDML && s.gtid != "" && !t.cfg.gtidSourceIncluded(gtidSource(s.gtid)) {
		return nil // "Skipping DML event because this GTID source is filtered", as Debezium
	}
	ts, err := t.tableSchema(t.conn, db, name)
	if err != nil {
		return err
	}
	if ts.table.sequence {
		return nil
	}
	var op string
	step := 1
	switch h.EventType {
	// MariaDB's *_COMPRESSED_EVENT_V1 (log_bin_compress=ON) are the same
	// events, zlib-compressed; go-mysql inflates them.
	case replication.WRITE_ROWS_EVENTv0, replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2,
		replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1:
		op = envelope.OpCreate
	case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
		replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1:
		op, step = envelope.OpUpdate, 2
	case replication.DELETE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2,
		replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		op = envelope.OpDelete
	default:
		return nil
	}
	if t.cfg.skipped.skip(op) {
		// skipped.operations: Debezium registers no handler for the row
		// event type (a primary-key update is skipped with "u" as well).
		return nil
	}
	if err := fullRowImage(ts, s, h, e, op); err != nil {
		return err
	}
	skip := int64(0)
	if s.skipEvents > 0 {
		if s.events < s.skipEvents {
			return nil // emitted before the restart
		}
		skip = s.skipRows
	}
	conv := func(row []any) ([]any, error) {
		return ts.convert(len(row), func(i int) (any, bool) { return row[i], row[i] == nil }, binlogConv)
	}
	evStart := int64(h.LogPos) - int64(h.EventSize)
	for i, n := 0, int64(0); i+step <= len(e.Rows); i, n = i+step, n+1 {
		if n < skip {
			continue
		}
		off := offset{file: s.file, pos: s.txStart, gtids: s.gtidsBefore, event: s.events, row: n + 1,
			serverID: int64(h.ServerID), tsSec: int64(h.Timestamp), snapshotRecord: true}
		src := sourceInfo{server: t.cfg.topicPrefix, db: db, table: name, ts: time.Unix(int64(h.Timestamp), 0),
			serverID: int64(h.ServerID), gtid: s.gtid, file: s.file, pos: evStart, row: int32(n)}
		offMap := off.toMap()
		switch op {
		case envelope.OpCreate:
			after, err := conv(e.Rows[i])
			if err != nil {
				return err
			}
			if err := t.emit(ctx, t.record(ts, op, nil, after, src, offMap)); err != nil {
				return err
			}
		case envelope.OpDelete:
			before, err := conv(e.Rows[i])
			if err != nil {
				return err
			}
			if err := t.emitDelete(ctx, ts, before, src, offMap); err != nil {
				return err
			}
		case envelope.OpUpdate:
			before, err := conv(e.Rows[i])
			if err != nil {
				return err
			}
			after, err := conv(e.Rows[i+1])
			if err != nil {
				return err
			}
			if ts.key != nil && !keyEqual(ts.keyOf(before).Values, ts.keyOf(after).Values) {
				// A primary key change is a delete (+ tombstone) of the old key
				// with header __debezium.newkey, then a create with
				// __debezium.oldkey, as Debezium's RelationalChangeRecordEmitter.
				cre := t.record(ts, envelope.OpCreate, nil, after, src, offMap)
				del := t.record(ts, envelope.OpDelete, before, nil, src, offMap)
				del.Headers = []connect.Header{{Key: headers.NewKey, Value: headers.KeyValue(cre.Key)}}
				cre.Headers = []connect.Header{{Key: headers.OldKey, Value: headers.KeyValue(del.Key)}}
				if err := t.emitDeleteRecord(ctx, del); err != nil {
					return err
				}
				if err := t.emit(ctx, cre); err != nil {
					return err
				}
				continue
			}
			if err := t.emit(ctx, t.record(ts, op, before, after, src, offMap)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fullRowImage checks that every image of a row event holds every column
// of the table (binlog_row_image=FULL). A session with binlog_row_image
// MINIMAL or NOBLOB writes row events whose column bitmaps leave columns
// out; such a row cannot be told from other rows (a missing key column
// would become 0), so the task fails, as Debezium's
// BinlogStreamingChangeEventSource.validateChangeEventWithTable ("internal
// schema size 7, but row size 1"). The setting is per session, so every
// event is checked.
func fullRowImage(ts *tableSchema, s *txState, h *replication.EventHeader, e *replication.RowsEvent, op string) error {
	n := int(e.ColumnCount)
	check := func(image string, bm []byte) error {
		var missing []string
		for i := 0; i < n; i++ {
			if i/8 < len(bm) && bm[i/8]&(1<<(uint(i)%8)) != 0 {
				continue
			}
			name := fmt.Sprintf("#%d", i+1)
			if i < len(ts.table.cols) {
				name = ts.table.cols[i].Name
			}
			missing = append(missing, name)
		}
		if len(missing) == 0 {
			return nil
		}
		return fmt.Errorf("%w: %s row of %s at binlog %s:%d: the %s image lacks column(s) %s (the writing session's binlog_row_image is not FULL); "+
			"set binlog_row_image=FULL for every session writing captured tables (Debezium fails on such rows too)",
			ErrPartialRowImage, opName(op), ts.table.ID(), s.file, int64(h.LogPos)-int64(h.EventSize), image, strings.Join(missing, ", "))
	}
	first := "after"
	if op != envelope.OpCreate {
		first = "before"
	}
	if err := check(first, e.ColumnBitmap1); err != nil {
		return err
	}
	if op == envelope.OpUpdate {
		return check("after", e.ColumnBitmap2)
	}
	return nil
}

func opName(op string) string {
	switch op {
	case envelope.OpCreate:
		return "insert"
	case envelope.OpUpdate:
		return "update"
	}
	return "delete"
}

func (t *Task) emitDelete(ctx context.Context, ts *tableSchema, before []any, src sourceInfo, off map[string]any) error {
	return t.emitDeleteRecord(ctx, t.record(ts, envelope.OpDelete, before, nil, src, off))
}

// emitDeleteRecord queues a delete and, with tombstones.on.delete, its
// tombstone, which carries the delete's own headers (a key change's
// __debezium.newkey, as Debezium's) and the context headers.
func (t *Task) emitDeleteRecord(ctx context.Context, r *connect.SourceRecord) error {
	own := r.Headers
	if err := t.emit(ctx, r); err != nil {
		return err
	}
	// a table without a key gets its (null-key) tombstone too, as Debezium's
	if t.cfg.tombstonesOnDelete {
		tomb := envelope.Tombstone(r)
		tomb.Headers = own
		return t.emit(ctx, tomb)
	}
	return nil
}

func keyEqual(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if fmt.Sprint(a[i]) != fmt.Sprint(b[i]) {
			return false
		}
	}
	return true
}
