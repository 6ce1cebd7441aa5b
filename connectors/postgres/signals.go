package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
	"github.com/connectd/connectd/connectors/internal/incsnap"
	"github.com/connectd/connectd/connectors/internal/signal"
)

// Signals and incremental snapshots (Debezium 3.6 "Sending signals to a
// Debezium connector", "Incremental snapshots"). The source channel is the
// signal table (signal.data.collection): its INSERTs, read from the
// replication stream like any change, are signals. The kafka channel's
// signals are handed to the stream reader, which processes every signal on
// its own goroutine, so the incremental snapshot (connectors/internal/incsnap)
// is driven by the stream alone: it reads chunks on the task's catalog
// connection between the watermark rows it inserts into the signal table.

// Configuration keys of incremental snapshots, as Debezium's
// CommonConnectorConfig / RelationalDatabaseConnectorConfig.
const (
	KeyIncrementalChunkSize    = "incremental.snapshot.chunk.size"
	KeyIncrementalWatermarking = "incremental.snapshot.watermarking.strategy"
)

// withSignalKeys defines the signal and incremental snapshot keys on d.
// signal.data.collection is a LIST with a null default, as Debezium's
// CommonConnectorConfig.SIGNAL_DATA_COLLECTION (the shared signal package
// defines it for MySQL too).
func withSignalKeys(d *connect.ConfigDef) *connect.ConfigDef {
	for _, k := range signal.ConfigKeys() {
		if k.Name == signal.KeyDataCollection {
			k.Type, k.Default, k.Optional = connect.TypeList, nil, true
		}
		d.Define(k)
	}
	d.Define(connect.ConfigKey{Name: KeyIncrementalChunkSize, Type: connect.TypeInt, Default: connect.Str(strconv.Itoa(incsnap.DefaultChunkSize)),
		Importance: connect.Medium, Validator: positiveInt,
		Doc: "Maximum number of rows an incremental snapshot reads per chunk (one window between watermarks)."})
	d.Define(connect.ConfigKey{Name: KeyIncrementalWatermarking, Type: connect.TypeString, Default: connect.Str("INSERT_INSERT"),
		Importance: connect.Low, Allowed: []string{"INSERT_INSERT", "INSERT_DELETE"},
		Doc: "How a chunk's window is closed: INSERT_INSERT inserts a snapshot-window-close row into the signal table; INSERT_DELETE deletes the window's open row instead (the signal table stays small). Case-insensitive."})
	return d
}

// streamSnapshot reports whether an offset's "snapshot" value is that of a
// snapshot taken while streaming (INCREMENTAL, BLOCKING): its lsn, lsn_proc
// and txId are stream positions, and a restart goes on streaming.
func streamSnapshot(s string) bool { return s == "INCREMENTAL" || s == "BLOCKING" }

// signalConfig is the parsed signal and incremental snapshot configuration.
type signalConfig struct {
	signal.Config
	table       [2]string // signal.data.collection as schema, table ("" = none)
	chunkSize   int
	deleteClose bool // insert_delete watermarking
}

func parseSignalConfig(p connect.Parsed, topicPrefix string) signalConfig {
	sc := signalConfig{Config: signal.ParseConfig(p, topicPrefix), chunkSize: p.Int(KeyIncrementalChunkSize),
		deleteClose: strings.EqualFold(p.String(KeyIncrementalWatermarking), "insert_delete")}
	if dc := sc.DataCollection; dc != "" {
		i := strings.LastIndex(dc, ".")
		sc.table = [2]string{dc[:i], dc[i+1:]}
	}
	return sc
}

// withSignalTable adds the signal table to a filtered publication's tables:
// its rows (signals, watermarks) must reach the stream.
func withSignalTable(tables [][2]string, sc signalConfig) [][2]string {
	if sc.table[1] == "" {
		return tables
	}
	for _, tb := range tables {
		if tb == sc.table {
			return tables
		}
	}
	return append(tables, sc.table)
}

// signaller is a task's signal channels and incremental snapshot. Reader
// goroutine only, except kafkaCh (written by the kafka channel goroutine).
type signaller struct {
	t       *Task
	cfg     signalConfig
	snap    *incsnap.Snapshotter
	log     *slog.Logger
	s       *streamer // set when streaming starts
	kafka   *signal.KafkaChannel
	kafkaCh chan signal.Signal
	stopK   context.CancelFunc
	kdone   chan struct{}

	// position of the watermark row being processed: snapshot records of
	// the window it closes carry it.
	pos walItem
	// blocking snapshots requested, run by between() once the signal's own
	// change event was emitted
	blocking []pendingBlocking
}

// pendingBlocking is a requested blocking snapshot and the stream position
// its records carry (lsn, lsn_proc, txId, messageType of the signal).
type pendingBlocking struct {
	colls []incsnap.Collection
	off   offset
}

// initSignals sets up signalling from the configuration and restores an
// incremental snapshot recorded in the stored offset.
func (t *Task) initSignals(ctx context.Context, tc connect.SourceTaskContext) error {
	g := &signaller{t: t, cfg: t.cfg.signals, log: slog.Default().With("connector", "postgres", "server", t.cfg.topicPrefix)}
	g.snap = incsnap.New(g, g.cfg.chunkSize, func(f string, a ...any) { g.log.Info(fmt.Sprintf(f, a...)) })
	if t.notifying() {
		g.snap.Notify = g.notify
	}
	t.sig = g
	if tc != nil && tc.OffsetReader() != nil {
		m, err := tc.OffsetReader().Offset(ctx, t.partition)
		if err != nil {
			return fmt.Errorf("postgres: read offset: %w", err)
		}
		if m != nil {
			if err := g.snap.Load(m); err != nil {
				return fmt.Errorf("postgres: stored offset: %w", err)
			}
		}
	}
	if g.cfg.Kafka {
		k, err := signal.OpenKafka(ctx, g.cfg.Config, t.cfg.topicPrefix)
		if err != nil {
			return err
		}
		g.kafka, g.kafkaCh, g.kdone = k, make(chan signal.Signal, 64), make(chan struct{})
		kctx, cancel := context.WithCancel(context.Background())
		g.stopK = cancel
		go func() {
			defer close(g.kdone)
			err := k.Run(kctx, func(s signal.Signal) {
				select {
				case g.kafkaCh <- s:
				case <-kctx.Done():
					return
				}
				if w := t.wake.Load(); w != nil {
					(*w)() // interrupt the stream's receive: the signal is processed now
				}
			})
			if err != nil {
				g.log.Error("kafka signal channel stopped", "err", err)
			}
		}()
	}
	return nil
}

// notify sends an incremental snapshot notification (Debezium's
// IncrementalSnapshotNotificationService): id is the execute-snapshot
// signal's id, or a fresh UUID. The sink record carries no offset: it is
// queued between the stream's records, whose offsets it must not move.
func (g *signaller) notify(ctx context.Context, id, typ string, data map[string]string) error {
	if id == "" {
		id = uuid.NewString() // random (version 4), as Debezium's UUID.randomUUID
	}
	var keepalive func() error
	if g.s != nil {
		keepalive = g.s.keepalive
	}
	n := notification{id: id, aggregateType: aggIncrementalSnapshot, typ: typ, data: data}
	return g.t.notify(ctx, n, nil, func(r *connect.SourceRecord) error { return g.t.emit(ctx, r, keepalive) })
}

// close stops the kafka channel.
func (g *signaller) close() {
	if g == nil || g.kafka == nil {
		return
	}
	g.stopK()
	<-g.kdone
	g.kafka.Close()
	g.kafka = nil
}

// storeOffset gives a record the offset with the incremental snapshot state
// while a snapshot runs. The map is copied: records may share one (a delete
// and its tombstone), and a queued record belongs to the poller.
func (g *signaller) storeOffset(r *connect.SourceRecord) error {
	if g == nil || r.SourceOffset == nil || !g.snap.Running() {
		return nil
	}
	m := make(map[string]any, len(r.SourceOffset)+4)
	for k, v := range r.SourceOffset {
		m[k] = v
	}
	if err := g.snap.Store(m); err != nil {
		return err
	}
	r.SourceOffset = m
	return nil
}

// streamStarted resumes an incremental snapshot restored from the offset.
func (g *signaller) streamStarted(ctx context.Context, s *streamer) error {
	if g == nil {
		return nil
	}
	g.s = s
	return g.snap.Init(ctx)
}

// between runs, between two replication messages, the blocking snapshots
// requested so far and the signals the kafka channel delivered.
func (g *signaller) between(ctx context.Context) error {
	if g == nil {
		return nil
	}
	for len(g.blocking) > 0 {
		b := g.blocking[0]
		g.blocking = g.blocking[1:]
		if err := g.blockingSnapshot(ctx, b); err != nil {
			return err
		}
	}
	if g.kafkaCh == nil {
		return nil
	}
	for {
		select {
		case sg := <-g.kafkaCh:
			if err := g.process(ctx, sg, false); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// isSignalTable reports whether schema.table is signal.data.collection.
func (g *signaller) isSignalTable(schema, table string) bool {
	return g != nil && g.cfg.table[1] != "" && g.cfg.table[0] == schema && g.cfg.table[1] == table
}

// onSignalRow handles a change of the signal table: an INSERT is a signal
// (source channel, columns id, type, data in that order); with insert_delete
// watermarking the DELETE of a window's open row closes it.
func (g *signaller) onSignalRow(ctx context.Context, it walItem) error {
	if g == nil || it.rel == nil || !g.isSignalTable(it.rel.Namespace, it.rel.RelationName) {
		return nil
	}
	text := func(cells []cell, i int) string {
		if i < len(cells) && !cells[i].null {
			return cells[i].text
		}
		return ""
	}
	g.pos = it
	switch it.op {
	case envelope.OpCreate:
		sg := signal.Signal{ID: text(it.after, 0), Type: text(it.after, 1), Data: text(it.after, 2)}
		if sg.Type == signal.TypeWindowOpen || sg.Type == signal.TypeWindowClose || g.cfg.Source {
			return g.process(ctx, sg, true)
		}
	case envelope.OpDelete:
		if id := text(it.before, 0); g.cfg.deleteClose && strings.HasSuffix(id, "-open") {
			return g.snap.CloseWindow(ctx, id)
		}
	}
	return nil
}

// process executes one signal; fromStream says it is a signal table row (at
// g.pos), else it came from kafka. A signal with invalid data is logged and
// ignored, as Debezium's SignalProcessor does; database errors fail the task.
func (g *signaller) process(ctx context.Context, sg signal.Signal, fromStream bool) error {
	switch sg.Type {
	case signal.TypeWindowOpen:
		g.snap.OpenWindow(sg.ID)
	case signal.TypeWindowClose:
		if !g.cfg.deleteClose {
			return g.snap.CloseWindow(ctx, sg.ID)
		}
	case signal.TypeExecuteSnapshot:
		ex, err := signal.ParseExecuteSnapshot(sg.Data)
		if err != nil {
			g.log.Warn("ignoring signal", "id", sg.ID, "err", err)
			return nil
		}
		tables, err := listTables(ctx, g.t.conn, g.t.cfg)
		if err != nil {
			return err
		}
		blocking := ex.Type == signal.SnapshotBlocking
		var colls []incsnap.Collection
		for _, tb := range tables {
			id := tb[0] + "." + tb[1]
			if ex.Matches(id) && !g.isSignalTable(tb[0], tb[1]) {
				// Debezium stores (and applies) an incremental snapshot's
				// filter in parentheses.
				cond := ex.FilterFor(id)
				if cond != "" && !blocking {
					cond = "(" + cond + ")"
				}
				colls = append(colls, incsnap.Collection{ID: id, AdditionalCondition: cond, SurrogateKey: ex.SurrogateKey})
			}
		}
		if len(colls) == 0 {
			g.log.Warn("execute-snapshot matches no captured table", "id", sg.ID, "data", sg.Data)
			return nil
		}
		if blocking {
			b := pendingBlocking{colls: colls}
			if fromStream {
				b.off = offset{lsnProc: i64(g.pos.lsn), messageType: g.pos.messageType, lsn: i64(g.pos.lsn), txID: i64(int64(g.pos.xid))}
			} else if g.s != nil {
				b.off = g.s.position
				b.off.snapshot, b.off.lastSnapshotRecord, b.off.snapshotCompleted = "", false, false
			}
			g.blocking = append(g.blocking, b)
			return nil
		}
		return g.snap.Add(ctx, sg.ID, colls)
	case signal.TypeStopSnapshot:
		st, err := signal.ParseStopSnapshot(sg.Data)
		if err != nil {
			g.log.Warn("ignoring signal", "id", sg.ID, "err", err)
			return nil
		}
		return g.snap.Stop(ctx, st.DataCollections)
	case signal.TypePauseSnapshot:
		return g.snap.Pause(ctx)
	case signal.TypeResumeSnapshot:
		return g.snap.Resume(ctx)
	case signal.TypeLog:
		msg, err := signal.ParseLog(sg.Data)
		if err != nil {
			g.log.Warn("ignoring signal", "id", sg.ID, "err", err)
			return nil
		}
		g.log.Info("Signal message " + msg)
	default:
		g.log.Warn("unknown signal type", "id", sg.ID, "type", sg.Type)
	}
	return nil
}

// dedup removes a streamed change's key from the open window.
func (g *signaller) dedup(table string, rec *connect.SourceRecord) {
	if g == nil || !g.snap.WindowOpen() || rec.Key == nil {
		return
	}
	if k, ok := rec.Key.(*connect.Struct); ok {
		g.snap.Dedup(table, keyIdent(k.Values))
	}
}

// keyIdent identifies a row by its key values (types included, so 1 and "1"
// differ).
func keyIdent(vals []any) string {
	var b strings.Builder
	for _, v := range vals {
		fmt.Fprintf(&b, "%T:%v\x00", v, v)
	}
	return b.String()
}

// --- incsnap.Source ---

// chunkTable is what chunk queries need of one table.
type chunkTable struct {
	sch     *tableSchema
	keyCols []int // table column indexes of the chunk key
}

func (g *signaller) chunkTable(ctx context.Context, c incsnap.Collection) (*chunkTable, error) {
	schema, name, _ := strings.Cut(c.ID, ".")
	table, err := loadTable(ctx, g.t.conn, g.t.types, schema, name)
	if err != nil {
		return nil, err
	}
	ct := &chunkTable{sch: newTableSchema(g.t.cfg.topicPrefix, table, g.t.types)}
	key := table.PrimaryKey
	if c.SurrogateKey != "" {
		key = []string{c.SurrogateKey}
	}
	for _, k := range key {
		for i, col := range table.Columns {
			if col.Name == k {
				ct.keyCols = append(ct.keyCols, i)
			}
		}
	}
	if len(ct.keyCols) == 0 || len(ct.keyCols) != len(key) {
		return nil, nil
	}
	return ct, nil
}

// keyValue converts a key column's text to the Java type Debezium reads it
// as over JDBC (int2 Short, int4 Integer, int8 Long, bool Boolean, others
// their text).
func keyValue(typ, text string) (any, error) {
	switch typ {
	case "int2":
		n, err := strconv.ParseInt(text, 10, 16)
		return int16(n), err
	case "int4":
		n, err := strconv.ParseInt(text, 10, 32)
		return int32(n), err
	case "int8":
		return strconv.ParseInt(text, 10, 64)
	case "bool":
		return text == "t", nil
	}
	return text, nil
}

func keyText(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "t"
		}
		return "f"
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func (ct *chunkTable) keyList(alias string) (cols, casts []string) {
	t := ct.sch.table
	for _, i := range ct.keyCols {
		cols = append(cols, pgx.Identifier{t.Columns[i].Name}.Sanitize())
		casts = append(casts, "::"+pgx.Identifier{t.Columns[i].TypeName}.Sanitize())
	}
	return cols, casts
}

// MaxKey reads the largest chunk key (SELECT key ORDER BY key DESC LIMIT 1).
func (g *signaller) MaxKey(ctx context.Context, c incsnap.Collection) ([]any, error) {
	ct, err := g.chunkTable(ctx, c)
	if err != nil || ct == nil {
		if err == nil {
			g.log.Warn("incremental snapshot skips a table without primary key or surrogate key", "table", c.ID)
		}
		return nil, err
	}
	cols, _ := ct.keyList("")
	desc := make([]string, len(cols))
	for i, c := range cols {
		desc[i] = c + " DESC"
	}
	schema, name, _ := strings.Cut(c.ID, ".")
	q := "SELECT " + joinComma(cols) + " FROM " + pgx.Identifier{schema, name}.Sanitize()
	if c.AdditionalCondition != "" {
		q += " WHERE " + c.AdditionalCondition
	}
	q += " ORDER BY " + joinComma(desc) + " LIMIT 1"
	rows, err := g.t.conn.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, fmt.Errorf("postgres: incremental snapshot %s: %s: %w", c.ID, q, err)
	}
	defer rows.Close()
	var key []any
	for rows.Next() {
		key = make([]any, len(cols))
		for i, b := range rows.RawValues() {
			if key[i], err = keyValue(ct.sch.table.Columns[ct.keyCols[i]].TypeName, string(b)); err != nil {
				return nil, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: incremental snapshot %s: %w", c.ID, err)
	}
	return key, nil
}

// chunkRow is a Row's Value: the converted row and its schema.
type chunkRow struct {
	sch  *tableSchema
	vals []any
}

// Chunk reads the next rows in key order: WHERE (key) > (after) AND (key) <=
// (max) [AND (condition)] ORDER BY key LIMIT limit, as Debezium's
// DefaultChunkQueryBuilder (PostgreSQL compares row values the same way as
// its expanded OR form).
func (g *signaller) Chunk(ctx context.Context, c incsnap.Collection, after, max []any, limit int) ([]incsnap.Row, error) {
	ct, err := g.chunkTable(ctx, c)
	if err != nil || ct == nil {
		return nil, err
	}
	cols, casts := ct.keyList("")
	t := ct.sch.table
	all := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		all[i] = pgx.Identifier{col.Name}.Sanitize()
	}
	var args []any
	bound := func(k []any) string {
		ps := make([]string, len(k))
		for i, v := range k {
			args = append(args, keyText(v))
			ps[i] = "$" + strconv.Itoa(len(args)) + casts[i]
		}
		return "(" + joinComma(ps) + ")"
	}
	key := "(" + joinComma(cols) + ")"
	var where []string
	if after != nil {
		where = append(where, key+" > "+bound(after))
	}
	where = append(where, key+" <= "+bound(max))
	if c.AdditionalCondition != "" {
		where = append(where, "("+c.AdditionalCondition+")")
	}
	q := "SELECT " + joinComma(all) + " FROM " + pgx.Identifier{t.Schema, t.Name}.Sanitize() +
		" WHERE " + strings.Join(where, " AND ") + " ORDER BY " + joinComma(cols) + " LIMIT " + strconv.Itoa(limit)
	rows, err := g.t.conn.Query(ctx, q, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("postgres: incremental snapshot %s: %s: %w", c.ID, q, err)
	}
	defer rows.Close()
	var out []incsnap.Row
	for rows.Next() {
		raw := rows.RawValues()
		cells := make([]cell, len(raw))
		for i, b := range raw {
			if b == nil {
				cells[i].null = true
			} else {
				cells[i].text = string(b)
			}
		}
		vals, err := ct.sch.convert(cells)
		if err != nil {
			return nil, err
		}
		r := incsnap.Row{Key: make([]any, len(ct.keyCols)), Value: chunkRow{ct.sch, vals}}
		for i, ci := range ct.keyCols {
			if r.Key[i], err = keyValue(t.Columns[ci].TypeName, cells[ci].text); err != nil {
				return nil, err
			}
		}
		if k := ct.sch.keyOf(vals); k != nil {
			r.Ident = keyIdent(k.Values)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: incremental snapshot %s: %w", c.ID, err)
	}
	return out, nil
}

// Watermark inserts a window row into the signal table (autocommit), as
// SignalBasedIncrementalSnapshotChangeEventSource: INSERT INTO <table>
// VALUES (id, type, data). With insert_delete, closing deletes the open row.
func (g *signaller) Watermark(ctx context.Context, id, typ, data string) error {
	if g.cfg.table[1] == "" {
		return fmt.Errorf("postgres: incremental snapshot needs %s (the watermark rows are written there)", signal.KeyDataCollection)
	}
	tbl := pgx.Identifier{g.cfg.table[0], g.cfg.table[1]}.Sanitize()
	var err error
	if typ == signal.TypeWindowClose && g.cfg.deleteClose {
		_, err = g.t.conn.Exec(ctx, "DELETE FROM "+tbl+" WHERE id = $1", strings.TrimSuffix(id, "-close")+"-open")
	} else {
		_, err = g.t.conn.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, $2, $3)", id, typ, data)
	}
	if err != nil {
		return fmt.Errorf("postgres: write %s watermark to %s: %w", typ, tbl, err)
	}
	return nil
}

// Emit queues a snapshot record as Debezium 3.6.1 emits it (capture
// testdata/debezium/pg_incremental_snapshot.jsonl): op "r", source.snapshot
// "incremental", source.ts the time of reading, source.txId and source.lsn
// null but source.sequence that of the close watermark; the offset is the
// close watermark's stream position with snapshot "INCREMENTAL",
// last_snapshot_record and snapshot_completed true, ts_usec the source ts.
func (g *signaller) Emit(ctx context.Context, c incsnap.Collection, row incsnap.Row) error {
	t, s, cr := g.t, g.s, row.Value.(chunkRow)
	it := g.pos
	var lastCommit *int64
	var keepalive func() error
	if s != nil {
		lastCommit, keepalive = s.lastCommit, s.keepalive
	}
	tbl := cr.sch.table
	now := t.now()
	src := sourceInfo{server: t.cfg.topicPrefix, db: t.cfg.dbname, schema: tbl.Schema, table: tbl.Name,
		ts: now, snapshot: snapIncremen, lsn: i64(it.lsn), lastCommitLSN: lastCommit}
	off := offset{lsnProc: i64(it.lsn), messageType: it.messageType, lsnCommit: lastCommit, lsn: i64(it.lsn),
		txID: i64(int64(it.xid)), tsUsec: i64(now.UnixMicro()),
		snapshot: "INCREMENTAL", lastSnapshotRecord: true, snapshotCompleted: true}
	rec := t.record(cr.sch, envelope.OpRead, nil, cr.vals, src, off)
	rec.Value.(*connect.Struct).Get("source").(*connect.Struct).Put("lsn", nil)
	return t.emit(ctx, rec, keepalive)
}

// blockingSnapshot runs a blocking snapshot (execute-snapshot type
// blocking), as Debezium 3.6.1 does it (capture testdata/debezium/
// pg_blocking_snapshot.jsonl): after the signal's own change event,
// streaming waits while the listed tables are read in one REPEATABLE READ
// transaction and emitted as "r" records with the snapshot markers of an
// initial snapshot (first / first_in_data_collection / true /
// last_in_data_collection / last); source.lsn, source.txId and the offset
// are the signal's stream position, the offset with snapshot "BLOCKING"
// (last_snapshot_record and snapshot_completed true on the last record
// only). A table's additional condition is, for a blocking snapshot, a whole
// SELECT statement (a bare condition is accepted as its WHERE clause). A
// restart during a blocking snapshot resumes streaming after the signal; the
// blocking snapshot is not repeated.
func (g *signaller) blockingSnapshot(ctx context.Context, b pendingBlocking) error {
	t := g.t
	g.log.Info("blocking snapshot started", "tables", len(b.colls))
	tx, err := t.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres: blocking snapshot: begin: %w", err)
	}
	defer tx.Rollback(context.Background())
	var lastCommit *int64
	var keepalive func() error
	if g.s != nil {
		lastCommit, keepalive = g.s.lastCommit, g.s.keepalive
	}
	ts := t.now().Truncate(time.Microsecond)
	off := b.off
	off.lsnCommit, off.tsUsec, off.snapshot = lastCommit, i64(ts.UnixMicro()), "BLOCKING"
	var held *connect.SourceRecord
	mark := setSnapshotMarker
	flush := func(next *connect.SourceRecord) error {
		if held != nil {
			if err := t.emit(ctx, held, keepalive); err != nil {
				return err
			}
		}
		held = next
		return nil
	}
	first := true
	for _, c := range b.colls {
		schema, name, _ := strings.Cut(c.ID, ".")
		table, err := loadTable(ctx, t.conn, t.types, schema, name)
		if err != nil {
			return err
		}
		sch := newTableSchema(t.cfg.topicPrefix, table, t.types)
		cols := make([]string, len(table.Columns))
		for i, col := range table.Columns {
			cols[i] = pgx.Identifier{col.Name}.Sanitize()
		}
		q := "SELECT " + joinComma(cols) + " FROM " + pgx.Identifier{schema, name}.Sanitize()
		switch f := strings.TrimSpace(c.AdditionalCondition); {
		case len(f) > 7 && strings.EqualFold(f[:7], "select "):
			// the statement's columns must be the table's, in table order (SELECT *)
			q = f
		case f != "":
			q += " WHERE " + f
		}
		rows, err := tx.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return fmt.Errorf("postgres: blocking snapshot %s: %s: %w", c.ID, q, err)
		}
		n := 0
		var prev *connect.SourceRecord
		for rows.Next() {
			raw := rows.RawValues()
			cells := make([]cell, len(raw))
			for i, b := range raw {
				cells[i] = cell{text: string(b), null: b == nil}
			}
			vals, err := sch.convert(cells)
			if err != nil {
				rows.Close()
				return err
			}
			src := sourceInfo{server: t.cfg.topicPrefix, db: t.cfg.dbname, schema: schema, table: name,
				ts: ts, snapshot: snapTrue, txID: b.off.txID, lsn: b.off.lsn, lastCommitLSN: lastCommit}
			r := t.record(sch, envelope.OpRead, nil, vals, src, off)
			if prev != nil {
				switch {
				case first:
					mark(prev, snapFirst)
					first = false
				case n == 1:
					mark(prev, snapFirstIn)
				}
				if err := flush(prev); err != nil {
					rows.Close()
					return err
				}
			}
			prev = r
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: blocking snapshot %s: %w", c.ID, err)
		}
		if prev != nil {
			if first {
				mark(prev, snapFirst)
				first = false
			} else {
				mark(prev, snapLastIn)
			}
			if err := flush(prev); err != nil {
				return err
			}
		}
	}
	if held != nil {
		mark(held, snapLast)
		last := off
		last.lastSnapshotRecord, last.snapshotCompleted = true, true
		held.SourceOffset = last.toMap()
		if err := flush(nil); err != nil {
			return err
		}
	}
	g.log.Info("blocking snapshot completed")
	return tx.Commit(ctx)
}

var _ incsnap.Source = (*signaller)(nil)
