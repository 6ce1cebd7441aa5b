package postgres

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
)

// snapshotTable is one table the snapshot reads.
type snapshotTable struct {
	index    int // position in snapshot order (by "schema.table", or snapshot.tables.order.by.row.count)
	sch      *tableSchema
	query    string
	override bool // query is a snapshot.select.statement.overrides statement
	counter  *tableCounter
	est      int64 // pg_class.reltuples (0 when never analyzed), for snapshot.tables.order.by.row.count

	// The table's records from all its chunks pass through feed, which
	// keeps the latest back so the table's first and last records get
	// their markers in the order they are queued.
	mu         sync.Mutex
	pending    *connect.SourceRecord
	n          int64 // records queued or pending
	chunksLeft int
	started    bool // the table's IN_PROGRESS notification is out
}

// snapshotChunk is one read of the snapshot: a whole table (where "") or a
// primary-key range of it (snapshot.max.threads.multiplier).
type snapshotChunk struct {
	st    *snapshotTable
	where string // appended to st.query
}

// mark sets the snapshot marker of one of the table's records: first and
// last say whether it is the table's first / last record.
func (st *snapshotTable) mark(r *connect.SourceRecord, first, last bool) {
	m := snapTrue
	switch {
	case first && st.index == 0:
		m = snapFirst
	case last:
		m = snapLastIn
	case first:
		m = snapFirstIn
	}
	setSnapshotMarker(r, m)
}

// push queues the table's previous record (marked) through send and keeps
// r back. The lock makes the queue order of the table's records the order
// of push calls, so the first and last markers are right across chunks.
func (st *snapshotTable) push(r *connect.SourceRecord, send func(*connect.SourceRecord) error) error {
	st.mu.Lock()
	if p := st.pending; p != nil {
		st.mark(p, st.n == 1, false)
		if err := send(p); err != nil {
			st.mu.Unlock()
			return err
		}
	}
	st.pending = r
	st.n++
	st.mu.Unlock()
	return nil
}

// startChunk runs first once per table (before any record of it is queued).
func (st *snapshotTable) startChunk(first func() error) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.started {
		return nil
	}
	st.started = true
	return first()
}

// finishChunk records that one chunk was read; after the table's last
// chunk it queues the table's last record (marked) and then runs done.
func (st *snapshotTable) finishChunk(send func(*connect.SourceRecord) error, done func() error) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.chunksLeft--
	if st.chunksLeft > 0 {
		return nil
	}
	if p := st.pending; p != nil {
		st.pending = nil
		st.mark(p, st.n == 1, true)
		if err := send(p); err != nil {
			return err
		}
	}
	st.counter.done.Store(true)
	return done()
}

// snapshot reads the tables selected for the snapshot inside one snapshot
// of the database and queues "r" records.
//
// Invariant 2: every reader runs in a REPEATABLE READ transaction that
// imports the same snapshot (SET TRANSACTION SNAPSHOT): the one the slot
// exported at its consistent point (p.snapshotName), from which the stream
// then starts, so nothing is missed or duplicated at the boundary. Without a
// slot snapshot (nothing streamed afterwards) the first transaction exports
// its own (pg_export_snapshot) for the others.
//
// snapshot.max.threads readers, each on its own connection, read chunks
// with a cursor fetching snapshot.fetch.size rows at a time. As Debezium
// 3.4+, with more than one thread a table with a primary key is split into
// up to snapshot.max.threads x snapshot.max.threads.multiplier primary-key
// ranges (chunkTable), so a table's rows may interleave across chunks; with
// legacy.snapshot.max.threads, or one thread, every table is one chunk and
// its rows stay in table order. Rows of different tables interleave.
//
// Markers follow Debezium's RelationalSnapshotChangeEventSource: "first" for
// the first row of the first table, "first_in_data_collection" /
// "last_in_data_collection" for a table's first/last row, "true" otherwise;
// the last record of the whole snapshot is held back and emitted as "last"
// with last_snapshot_record=true and snapshot_completed=true in its offset
// (Debezium's BufferingSnapshotChangeRecordReceiver), so a restart after it
// never repeats the snapshot and a restart before it always does.
func (t *Task) snapshot(ctx context.Context, p plan) error {
	if t.beforeSnapshot != nil {
		t.beforeSnapshot()
	}
	opts, shared := snapshotTxOptions(t.cfg.conn.isolation, p.snapshotName != "")
	tx, err := t.conn.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("postgres: snapshot: begin: %w", err)
	}
	defer tx.Rollback(context.Background())
	snapName := p.snapshotName
	if !shared {
		snapName = "" // read_committed: each query sees the latest commits
	}
	if snapName != "" {
		if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(snapName)); err != nil {
			return fmt.Errorf("postgres: snapshot: import %s: %w", snapName, err)
		}
	}
	lsn := p.snapshotLSN
	if p.snapshotName == "" {
		var cur pglogrepl.LSN
		if err := tx.QueryRow(ctx, "SELECT pg_current_wal_lsn()").Scan(&cur); err != nil {
			return fmt.Errorf("postgres: snapshot: read WAL position: %w", err)
		}
		lsn = int64(cur)
	}
	// Debezium records the snapshot transaction's id as txId.
	var txID int64
	if err := tx.QueryRow(ctx, "SELECT txid_current()").Scan(&txID); err != nil {
		return fmt.Errorf("postgres: snapshot: txid_current: %w", err)
	}
	all, err := listTables(ctx, tx.Conn(), t.cfg)
	if err != nil {
		return err
	}
	all = t.cfg.snapshotOrder(all)
	var tables []*snapshotTable
	if t.notifying() {
		n := initialSnapshotNotification(notifStarted, nil)
		if err := t.notify(ctx, n, nil, nil); err != nil {
			return err
		}
	}
	for _, tb := range all {
		if !t.cfg.snapshotIncluded(tb[0], tb[1]) {
			continue
		}
		table, err := loadTable(ctx, t.conn, t.types, tb[0], tb[1])
		if err != nil {
			return err
		}
		st := &snapshotTable{sch: newTableSchema(t.cfg.topicPrefix, table, t.types)}
		st.query = t.cfg.selectOverrides[tb[0]+"."+tb[1]]
		st.override = st.query != ""
		if st.query == "" {
			cols := make([]string, len(table.Columns))
			for i, c := range table.Columns {
				cols[i] = pgx.Identifier{c.Name}.Sanitize()
			}
			st.query = "SELECT " + joinComma(cols) + " FROM " + pgx.Identifier{tb[0], tb[1]}.Sanitize()
		}
		var est float64
		if err := tx.QueryRow(ctx, `SELECT c.reltuples FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
			tb[0], tb[1]).Scan(&est); err != nil {
			return fmt.Errorf("postgres: snapshot: estimate rows of %s: %w", table.ID(), err)
		}
		st.counter = &tableCounter{table: table.ID(), estimated: int64(est)}
		st.est = int64(max(est, 0))
		if est < 0 { // never analyzed (PostgreSQL 14+ says -1)
			st.counter.estimated = -1
		}
		tables = append(tables, st)
	}
	// snapshot.tables.order.by.row.count, as Debezium's
	// RelationalSnapshotChangeEventSource.sortByRowCount: a table without an
	// estimate counts 0; the sort is stable (ties keep the name order).
	switch t.cfg.snap.orderByRows {
	case orderAscending:
		sort.SliceStable(tables, func(i, j int) bool { return tables[i].est < tables[j].est })
	case orderDescending:
		sort.SliceStable(tables, func(i, j int) bool { return tables[i].est > tables[j].est })
	}
	for i, st := range tables {
		st.index = i
	}
	if t.cfg.conn.lockShared && len(tables) > 0 {
		if err := lockTables(ctx, tx, tables, t.cfg.conn.lockTimeoutMs); err != nil {
			return err
		}
	}
	for name := range t.cfg.selectOverrides {
		if !hasTable(tables, name) {
			t.log.Warn("snapshot.select.statement.overrides names a table the snapshot does not read", "table", name)
		}
	}
	var chunks []*snapshotChunk
	for _, st := range tables {
		wheres, err := t.chunkTable(ctx, tx, st)
		if err != nil {
			return err
		}
		st.chunksLeft = len(wheres)
		for _, w := range wheres {
			chunks = append(chunks, &snapshotChunk{st: st, where: w})
		}
	}
	t.progress.start(tables)
	t.log.Info("snapshot starting", "tables", len(tables), "chunks", len(chunks), "lsn", pglogrepl.LSN(lsn).String(), "threads", min(t.cfg.snapshotMaxThreads, max(len(chunks), 1)))

	ts := t.now().Truncate(time.Microsecond)
	base := offset{lsn: i64(lsn), txID: i64(txID), tsUsec: i64(ts.UnixMicro()), snapshot: "INITIAL"}
	src := func(st *snapshotTable) sourceInfo {
		return sourceInfo{server: t.cfg.topicPrefix, db: t.cfg.dbname, schema: st.sch.table.Schema, table: st.sch.table.Name,
			ts: ts, snapshot: snapTrue, txID: i64(txID), lsn: i64(lsn)}
	}

	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows := make(chan *connect.SourceRecord, 256) // readers → emitter
	jobs := make(chan *snapshotChunk, len(chunks))
	for _, ch := range chunks {
		jobs <- ch
	}
	close(jobs)
	threads := min(t.cfg.snapshotMaxThreads, len(chunks))
	var wg sync.WaitGroup
	var errOnce sync.Once
	var readErr error
	fail := func(err error) {
		errOnce.Do(func() { readErr = err })
		cancel()
	}
	// Reader 0 uses the task's transaction; the others open a connection
	// each and import the same snapshot.
	if snapName == "" && threads > 1 && shared {
		if err := tx.QueryRow(ctx, "SELECT pg_export_snapshot()").Scan(&snapName); err != nil {
			return fmt.Errorf("postgres: snapshot: pg_export_snapshot: %w", err)
		}
	}
	var extra []*pgx.Conn
	defer func() {
		for _, c := range extra {
			c.Close(context.Background())
		}
	}()
	readers := []pgx.Tx{tx}
	for i := 1; i < threads; i++ {
		pc, err := t.connConfig()
		if err != nil {
			return err
		}
		c, err := pgx.ConnectConfig(ctx, pc)
		if err != nil {
			return fmt.Errorf("postgres: snapshot: open reader connection %d: %w", i, err)
		}
		extra = append(extra, c)
		wtx, err := c.BeginTx(ctx, opts)
		if err != nil {
			return fmt.Errorf("postgres: snapshot: begin reader %d: %w", i, err)
		}
		if shared {
			if _, err := wtx.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(snapName)); err != nil {
				return fmt.Errorf("postgres: snapshot: reader %d: import %s: %w", i, snapName, err)
			}
		}
		readers = append(readers, wtx)
	}
	for i, rtx := range readers {
		wg.Add(1)
		go func(i int, rtx pgx.Tx) {
			defer wg.Done()
			for ch := range jobs {
				if rctx.Err() != nil {
					return
				}
				if err := t.readChunk(rctx, rtx, i, ch, src(ch.st), base, tables, rows); err != nil {
					fail(err)
					return
				}
			}
		}(i, rtx)
	}
	go func() {
		wg.Wait()
		close(rows)
	}()

	// The emitter: holds back the latest record so the final one can carry
	// the snapshot's completion.
	// Notification records that arrive after it stay behind it.
	var held *connect.SourceRecord
	var heldNotes []*connect.SourceRecord
	emitHeld := func(c context.Context) error {
		if held != nil {
			if err := t.emit(c, held, nil); err != nil {
				return err
			}
		}
		for _, n := range heldNotes {
			if err := t.emit(c, n, nil); err != nil {
				return err
			}
		}
		heldNotes = heldNotes[:0]
		return nil
	}
	tick := time.NewTicker(t.progressLogInterval)
	defer tick.Stop()
	var emitErr error
loop:
	for {
		select {
		case r, ok := <-rows:
			if !ok {
				break loop
			}
			if isNotification(r) {
				if held == nil {
					emitErr = t.emit(rctx, r, nil)
				} else {
					heldNotes = append(heldNotes, r)
				}
			} else {
				emitErr = emitHeld(rctx)
				held = r
			}
			if emitErr != nil {
				cancel()
				break loop
			}
		case <-tick.C:
			t.progress.log(t.log)
		}
	}
	if emitErr != nil {
		for range rows { // let the readers see the cancellation and finish
		}
	}
	// rows is closed: every reader returned, readErr is final. A reader's
	// error is the cause when both failed (it cancelled the emitter).
	if readErr != nil {
		return readErr
	}
	if emitErr != nil {
		return emitErr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for _, rtx := range readers[1:] {
		rtx.Commit(ctx)
	}
	last := base
	last.lastSnapshotRecord, last.snapshotCompleted = true, true
	lastOff := last.toMap()
	if held != nil {
		setSnapshotMarker(held, snapLast)
		held.SourceOffset = lastOff
	}
	if err := emitHeld(ctx); err != nil {
		return err
	}
	if t.notifying() {
		if err := t.notify(ctx, initialSnapshotNotification(notifCompleted, nil), lastOff, nil); err != nil {
			return err
		}
	}
	t.progress.finish()
	t.progress.log(t.log)
	t.log.Info("snapshot completed", "tables", len(tables), "rows", t.progress.rows())
	return tx.Commit(ctx)
}

func hasTable(tables []*snapshotTable, id string) bool {
	for _, st := range tables {
		if st.sch.table.Schema+"."+st.sch.table.Name == id {
			return true
		}
	}
	return false
}

// readChunk reads one chunk of a table through a cursor
// (snapshot.fetch.size rows per FETCH) in rtx and sends its records to out
// through the table's feed (push), which sets the per-table snapshot
// markers. tables are the snapshot's tables, named by the notifications.
func (t *Task) readChunk(ctx context.Context, rtx pgx.Tx, reader int, ch *snapshotChunk, src sourceInfo, base offset, tables []*snapshotTable, out chan<- *connect.SourceRecord) error {
	st := ch.st
	id := st.sch.table.ID()
	query := st.query + ch.where
	cursor := "connectd_snapshot_" + strconv.Itoa(reader)
	send := func(r *connect.SourceRecord) error {
		select {
		case out <- r:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if t.notifying() {
		// Debezium's notifyTableInProgress, before the table's first row.
		err := st.startChunk(func() error {
			n := initialSnapshotNotification(notifInProgress, map[string]string{
				"current_collection_in_progress": id, "data_collections": tableList(tables)})
			return t.notify(ctx, n, base.toMap(), send)
		})
		if err != nil {
			return err
		}
	}
	if _, err := rtx.Exec(ctx, "DECLARE "+cursor+" NO SCROLL CURSOR FOR "+query); err != nil {
		return fmt.Errorf("postgres: snapshot %s: %s: %w", id, query, err)
	}
	fetch := "FETCH FORWARD " + strconv.Itoa(t.cfg.snapshotFetchSize) + " FROM " + cursor
	cols := st.sch.table.Columns
	var colIdx []int // result column → table column
	// The table's rows share their source block (but for the snapshot
	// marker, which mark sets on each row's own copy) and their offset: both
	// are built once. Nothing changes the shared offset map (the snapshot's
	// last record gets a map of its own).
	srcTmpl := newSourceTemplate(src.values())
	offMap := base.toMap()
	cells := make([]cell, len(cols)) // reused: convert keeps no cell
	var rowText []byte
	for {
		// Text results (simple protocol) give exactly the text pgoutput
		// sends, so snapshot and stream share one conversion.
		rows, err := rtx.Query(ctx, fetch, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return fmt.Errorf("postgres: snapshot %s: %w", id, err)
		}
		if colIdx == nil {
			colIdx, err = resultColumns(st, rows.FieldDescriptions())
			if err != nil {
				rows.Close()
				return err
			}
		}
		got := 0
		for rows.Next() {
			got++
			// One string per row: the cells' texts are slices of it.
			raw := rows.RawValues()
			rowText = rowText[:0]
			for _, b := range raw {
				rowText = append(rowText, b...)
			}
			text := string(rowText)
			for i := range cells {
				cells[i] = cell{null: true}
			}
			pos := 0
			for i, b := range raw {
				if b != nil {
					cells[colIdx[i]] = cell{text: text[pos : pos+len(b)]}
					pos += len(b)
				}
			}
			row, vals, err := st.sch.convertRow(cells)
			if err != nil {
				rows.Close()
				return err
			}
			r := t.recordOf(st.sch, envelope.OpRead, nil, row, vals, srcTmpl.build(), offMap)
			st.counter.rows.Add(1)
			if err := st.push(r, send); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: snapshot %s: %w", id, err)
		}
		if got < t.cfg.snapshotFetchSize {
			break
		}
	}
	if _, err := rtx.Exec(ctx, "CLOSE "+cursor); err != nil {
		return fmt.Errorf("postgres: snapshot %s: close cursor: %w", id, err)
	}
	return st.finishChunk(send, func() error {
		if !t.notifying() {
			return nil
		}
		// Debezium's notifyCompletedTableSuccessfully, after the table's last row.
		n := initialSnapshotNotification(notifTableScanCompleted, map[string]string{
			"scanned_collection": id, "data_collections": tableList(tables),
			"total_rows_scanned": strconv.FormatInt(st.counter.rows.Load(), 10), "status": "SUCCEEDED"})
		return t.notify(ctx, n, base.toMap(), send)
	})
}

// tableList is the data_collections of a notification: the tables'
// "schema.table" ids joined by ',' (Debezium's LIST_DELIMITER).
func tableList(tables []*snapshotTable) string {
	ids := make([]string, len(tables))
	for i, st := range tables {
		ids[i] = st.sch.table.ID()
	}
	return strings.Join(ids, ",")
}

// chunkTable returns the WHERE clauses of the chunks st is read in, [""]
// for one read of the whole table. As Debezium 3.4+'s chunked snapshot
// (RelationalSnapshotChangeEventSource.createChunkedDataEvents,
// calculateChunkCount and ChunkBoundaryCalculator): with more than one
// snapshot thread and not legacy.snapshot.max.threads, a table with a
// primary key is split into min(threads x multiplier, rows) ranges of its
// primary key, rows counted with COUNT(1) and the boundaries taken at the
// positions i x rows / chunks of the key order (chunkBounds), all in tx,
// the snapshot's transaction, so every chunk sees the rows of the same
// snapshot. Tables without a primary key, and tables with a
// snapshot.select.statement.overrides statement (Debezium's chunked
// snapshot ignores overrides), are read whole.
func (t *Task) chunkTable(ctx context.Context, tx pgx.Tx, st *snapshotTable) ([]string, error) {
	c := t.cfg
	pk := st.sch.table.PrimaryKey
	if c.snapshotMaxThreads <= 1 || c.snap.legacy || st.override || len(pk) == 0 {
		return []string{""}, nil
	}
	name := pgx.Identifier{st.sch.table.Schema, st.sch.table.Name}.Sanitize()
	var rowCount int64
	if err := tx.QueryRow(ctx, "SELECT count(1) FROM "+name).Scan(&rowCount); err != nil {
		return nil, fmt.Errorf("postgres: snapshot: count the rows of %s: %w", st.sch.table.ID(), err)
	}
	// The snapshot's exact row count replaces the planner's estimate in
	// the progress (the counters are published later, by progress.start).
	st.counter.estimated = rowCount
	n := chunkCount(rowCount, c.snapshotMaxThreads, c.snap.multiplier)
	if n <= 1 {
		return []string{""}, nil
	}
	bounds, err := chunkBounds(ctx, tx, name, pk, rowCount, n)
	if err != nil {
		return nil, fmt.Errorf("postgres: snapshot: chunk boundaries of %s: %w", st.sch.table.ID(), err)
	}
	cols := make([]string, len(pk))
	for i, k := range pk {
		cols[i] = pgx.Identifier{k}.Sanitize()
	}
	key := "(" + strings.Join(cols, ", ") + ")"
	wheres := make([]string, 0, len(bounds)+1)
	for i := 0; i <= len(bounds); i++ {
		var cond []string
		if i > 0 {
			cond = append(cond, key+" >= "+bounds[i-1])
		}
		if i < len(bounds) {
			cond = append(cond, key+" < "+bounds[i])
		}
		wheres = append(wheres, " WHERE "+strings.Join(cond, " AND "))
	}
	return wheres, nil
}

// chunkQuerier is what chunkBounds needs of a connection or transaction.
type chunkQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// chunkBounds returns the n-1 boundaries of a table's n chunks, each the
// row-value literal "(k1::type1, k2::type2, ...)" of the primary key pk
// (column names, in key order) of the row at the 0-based position
// i x rows / n (i = 1..n-1) of the key order of table name (an already
// quoted identifier), consecutive equal boundaries merged. rows is the
// table's COUNT(1) in the same transaction. The literals are cast to the
// columns' types so a chunk's WHERE compares them with the operators
// ORDER BY uses. A position past the rows the query sees (a table shrunk
// since rows was counted, only possible without a shared snapshot) yields
// no boundary: the last chunk, unbounded above, reads what is left.
//
// All boundaries come from one pass over the key order:
//
//	SELECT <literals of k1..kN> FROM (SELECT <pk> AS k1.., row_number()
//	  OVER (ORDER BY <pk>) AS rn FROM t) s WHERE rn = ANY($1) AND rn <= $2
//
// $1 the positions + 1, $2 the last of them; rn <= $2 is a run condition
// (PostgreSQL 15+) that ends the scan after the last boundary. One query
// with OFFSET i x rows / n LIMIT 1 per boundary, as before, read up to the
// whole table per boundary: about n/2 table scans before the first row.
//
// Debezium 3.4+ (ChunkBoundaryCalculator.calculateBoundaries) also issues
// one query per boundary (JdbcConnection.buildSelectPrimaryKeyBoundaries,
// ORDER BY the key OFFSET p LIMIT 1; later versions start each query after
// the previous boundary and skip chunkSize rows, which still reads the
// table once per boundary query), with chunkSize = rows / n and positions
// i x chunkSize, so its last chunk takes the remainder rows % n. connectd
// takes i x rows / n, which spreads the remainder over the chunks: the
// same number of chunks, boundaries off by at most n-1 rows.
func chunkBounds(ctx context.Context, q chunkQuerier, name string, pk []string, rows int64, n int) ([]string, error) {
	if n <= 1 || rows <= 0 {
		return nil, nil
	}
	cols := make([]string, len(pk))
	aliases := make([]string, len(pk))
	lits := make([]string, len(pk))
	for i, k := range pk {
		cols[i] = pgx.Identifier{k}.Sanitize()
		// k1, k2, ...: a key column named rn does not clash with the row number.
		a := "k" + strconv.Itoa(i+1)
		aliases[i] = cols[i] + " AS " + a
		lits[i] = "quote_literal(" + a + "::text) || '::' || pg_typeof(" + a + ")::text"
	}
	pos := make([]int64, 0, n-1)
	for i := int64(1); i < int64(n); i++ {
		pos = append(pos, i*rows/int64(n)+1)
	}
	sql := "SELECT rn, " + strings.Join(lits, ", ") + " FROM (SELECT " + strings.Join(aliases, ", ") +
		", row_number() OVER (ORDER BY " + strings.Join(cols, ", ") + ") AS rn FROM " + name +
		") s WHERE rn = ANY($1::bigint[]) AND rn <= $2 ORDER BY rn"
	rs, err := q.Query(ctx, sql, pos, pos[len(pos)-1])
	if err != nil {
		return nil, err
	}
	at := make(map[int64]string, len(pos))
	vals := make([]string, len(pk))
	ptrs := make([]any, len(pk)+1)
	var rn int64
	ptrs[0] = &rn
	for j := range vals {
		ptrs[j+1] = &vals[j]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			rs.Close()
			return nil, err
		}
		at[rn] = "(" + strings.Join(vals, ", ") + ")"
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, err
	}
	var bounds []string
	for _, p := range pos {
		b, ok := at[p]
		if !ok {
			break
		}
		if len(bounds) == 0 || bounds[len(bounds)-1] != b {
			bounds = append(bounds, b)
		}
	}
	return bounds, nil
}

// chunkCount is Debezium's calculateChunkCount: threads x multiplier chunks,
// but no more than rows (at least one row per chunk); one for an empty
// table.
func chunkCount(rows int64, threads, multiplier int) int {
	if rows <= 0 {
		return 1
	}
	desired := int64(threads) * int64(multiplier)
	perChunk := max(1, rows/desired)
	return int(min(desired, max(1, rows/perChunk)))
}

// snapshotTxOptions returns the snapshot readers' transaction options for
// snapshot.isolation.mode and whether the readers share one database
// snapshot (SET TRANSACTION SNAPSHOT). slotSnapshot says whether the
// replication slot exported the snapshot the stream starts from.
//
//   - serializable (Debezium's default): with a slot snapshot, REPEATABLE
//     READ importing it (PostgreSQL refuses to import a snapshot exported
//     by a non-serializable transaction, as the walsender's is, into a
//     SERIALIZABLE one; the rows seen are the same); without one,
//     SERIALIZABLE READ ONLY DEFERRABLE, which waits for a snapshot free of
//     serialization anomalies, exported to the other readers.
//   - repeatable_read: REPEATABLE READ importing the slot's snapshot (or one
//     exported by the first reader).
//   - read_committed, read_uncommitted (PostgreSQL runs READ UNCOMMITTED as
//     READ COMMITTED): READ COMMITTED, no shared snapshot. The slot's
//     consistent point precedes every query, so nothing is lost, but a
//     change committed while the snapshot runs may be read by it and also
//     streamed (at-least-once, not an exact cut).
func snapshotTxOptions(isolation string, slotSnapshot bool) (pgx.TxOptions, bool) {
	switch isolation {
	case isolationReadCommitted:
		return pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, false
	case isolationReadUncommitted:
		return pgx.TxOptions{IsoLevel: pgx.ReadUncommitted}, false
	case isolationRepeatableRead:
		return pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, true
	}
	if slotSnapshot {
		return pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, true
	}
	return pgx.TxOptions{IsoLevel: pgx.Serializable, AccessMode: pgx.ReadOnly, DeferrableMode: pgx.Deferrable}, true
}

// lockTables takes ACCESS SHARE locks on the snapshot's tables in tx
// (snapshot.locking.mode=shared, as Debezium's PostgreSQL shared snapshot
// lock), held until the snapshot's transaction ends: DDL on them waits, DML
// does not. Waiting longer than timeoutMs (snapshot.lock.timeout.ms; 0 = no
// limit) fails the snapshot.
func lockTables(ctx context.Context, tx pgx.Tx, tables []*snapshotTable, timeoutMs int) error {
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = "+strconv.Itoa(timeoutMs)); err != nil {
		return fmt.Errorf("postgres: snapshot: set lock_timeout: %w", err)
	}
	names := make([]string, len(tables))
	for i, st := range tables {
		names[i] = pgx.Identifier{st.sch.table.Schema, st.sch.table.Name}.Sanitize()
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+joinComma(names)+" IN ACCESS SHARE MODE"); err != nil {
		return fmt.Errorf("postgres: snapshot: lock the tables (%s=shared, %s=%d): %w", KeySnapshotLocking, KeySnapshotLockTimeout, timeoutMs, err)
	}
	return nil
}

// resultColumns maps the columns of a snapshot query's result to the table's
// columns by name (an override may select them in any order, or a subset).
func resultColumns(st *snapshotTable, fds []pgconn.FieldDescription) ([]int, error) {
	idx := make([]int, len(fds))
	for i, fd := range fds {
		idx[i] = -1
		for j, c := range st.sch.table.Columns {
			if c.Name == fd.Name {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return nil, fmt.Errorf("postgres: snapshot %s: the snapshot query returns column %q, which the table does not have (query: %s)",
				st.sch.table.ID(), fd.Name, st.query)
		}
	}
	return idx, nil
}

// SnapshotProgress is the state of a task's snapshot at one moment, for
// monitoring (the data behind Debezium's snapshot metrics: TotalTableCount,
// RemainingTableCount, RowsScanned, SnapshotRunning, SnapshotCompleted).
type SnapshotProgress struct {
	Running   bool
	Completed bool
	Tables    []TableSnapshotProgress // in snapshot order
}

// TableSnapshotProgress is one table of a snapshot: rows read so far and
// the planner's estimate of the table's rows (pg_class.reltuples, -1 when
// the table was never analyzed).
type TableSnapshotProgress struct {
	Table         string // "schema.table"
	RowsScanned   int64
	EstimatedRows int64
	Done          bool
}

// SnapshotProgress returns the progress of the task's latest snapshot (zero
// when none ran). Safe to call from any goroutine.
func (t *Task) SnapshotProgress() SnapshotProgress { return t.progress.snapshot() }

type tableCounter struct {
	table     string
	estimated int64
	rows      atomic.Int64
	done      atomic.Bool
}

// snapshotProgress holds the counters of the running snapshot.
type snapshotProgress struct {
	mu        sync.Mutex
	running   bool
	completed bool
	tables    []*tableCounter
	startedAt time.Time // of the latest snapshot
	endedAt   time.Time // zero while it runs
}

// duration is how long the latest snapshot ran so far, or took (Debezium's
// SnapshotDurationInSeconds); zero when none ran.
func (p *snapshotProgress) duration() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.startedAt.IsZero():
		return 0
	case p.endedAt.IsZero():
		return time.Since(p.startedAt)
	}
	return p.endedAt.Sub(p.startedAt)
}

func (p *snapshotProgress) start(tables []*snapshotTable) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running, p.completed = true, false
	p.startedAt, p.endedAt = time.Now(), time.Time{}
	p.tables = p.tables[:0]
	for _, st := range tables {
		p.tables = append(p.tables, st.counter)
	}
}

func (p *snapshotProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running, p.completed = false, true
	p.endedAt = time.Now()
}

func (p *snapshotProgress) rows() int64 {
	var n int64
	for _, tp := range p.snapshot().Tables {
		n += tp.RowsScanned
	}
	return n
}

func (p *snapshotProgress) snapshot() SnapshotProgress {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := SnapshotProgress{Running: p.running, Completed: p.completed}
	for _, c := range p.tables {
		out.Tables = append(out.Tables, TableSnapshotProgress{Table: c.table, RowsScanned: c.rows.Load(), EstimatedRows: c.estimated, Done: c.done.Load()})
	}
	return out
}

// log writes one line per table that is not finished (and, at the end, per
// table): "rows done / estimated total". The caller bounds the rate.
func (p *snapshotProgress) log(l loggerLike) {
	s := p.snapshot()
	for _, tp := range s.Tables {
		if tp.Done && s.Running {
			continue
		}
		l.Info("snapshot progress", "table", tp.Table, "rows", tp.RowsScanned, "estimated", tp.EstimatedRows,
			"progress", fmt.Sprintf("%d / %d", tp.RowsScanned, tp.EstimatedRows))
	}
}

// loggerLike is the part of *slog.Logger progress logging uses.
type loggerLike interface {
	Info(msg string, args ...any)
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

func quoteLiteral(s string) string {
	out := "'"
	for _, r := range s {
		if r == '\'' {
			out += "''"
		} else {
			out += string(r)
		}
	}
	return out + "'"
}
