package mysql

import (
	"context"
	"fmt"
	"strings"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
)

// snapshot reads every captured table in one consistent-snapshot
// transaction and returns the binlog coordinates streaming starts from.
//
// Invariant 2 (DESIGN.md): under FLUSH TABLES WITH READ LOCK no transaction
// can commit, so the binlog position and GTID set read under it are exactly
// the state that START TRANSACTION WITH CONSISTENT SNAPSHOT, opened under
// the same lock, sees. With snapshot.locking.mode=minimal the lock is
// released as soon as the transaction is open (and the table structures
// are read), as Debezium's minimal mode; extended keeps it to the end; none
// takes no lock (the position is then only as exact as the server's
// concurrency allows).
//
// Markers follow Debezium's RelationalSnapshotChangeEventSource (first,
// first_in_data_collection, true, last_in_data_collection, last); the
// snapshot's last record, a data record or the last schema change event
// when no row follows, is marked last and its offset no longer carries
// "snapshot", so a restart streams.
//
// With data=false (snapshot.mode=no_data) only the structures are
// recorded (schema history, schema change events), as Debezium's no_data.
//
// With at set (snapshot.mode=recovery) the structures are recorded at that
// stored offset instead of the current binlog position, as Debezium's
// BinlogSnapshotChangeEventSource when streaming does not start from the
// snapshot; every record then carries that offset unchanged.
func (t *Task) snapshot(ctx context.Context, data bool, at *offset) (offset, error) {
	c := t.conn
	locked := false
	unlock := func() error {
		if !locked {
			return nil
		}
		locked = false
		if _, err := c.Execute("UNLOCK TABLES"); err != nil {
			return fmt.Errorf("mysql: snapshot: UNLOCK TABLES: %w", err)
		}
		return nil
	}
	defer unlock()
	if t.cfg.lockingMode != "none" {
		if _, err := c.Execute("FLUSH TABLES WITH READ LOCK"); err != nil {
			return offset{}, fmt.Errorf("mysql: snapshot: FLUSH TABLES WITH READ LOCK (needs RELOAD): %w", err)
		}
		locked = true
	}
	pos, err := t.binlogPosition()
	if err != nil {
		return offset{}, err
	}
	if _, err := c.Execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err != nil {
		return offset{}, fmt.Errorf("mysql: snapshot: %w", err)
	}
	if _, err := c.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return offset{}, fmt.Errorf("mysql: snapshot: START TRANSACTION WITH CONSISTENT SNAPSHOT: %w", err)
	}
	defer c.Execute("ROLLBACK")
	tables, schemaTables, err := listTables(c, t.cfg)
	if err != nil {
		return offset{}, err
	}
	ts := t.now().Truncate(1e9) // Debezium's snapshot ts_sec has second precision
	base := offset{file: pos.file, pos: pos.pos, gtids: pos.gtids, tsSec: ts.Unix(), snapshot: true}
	if at != nil {
		pos, base = *at, *at
	}
	// The structures are read under the lock, so they are those of the
	// binlog position; they start the schema history. Every tracked
	// table's (captured or not, as Debezium's snapshot reads every
	// eligible table), so that a later CREATE TABLE … LIKE or RENAME of a
	// table that is not captured finds its structure.
	for _, tb := range schemaTables {
		m, err := loadTable(c, tb[0], tb[1])
		if err != nil {
			return offset{}, err
		}
		t.stripComments(m)
		t.catalog[tb[0]+"."+tb[1]] = m
		delete(t.schemas, tb[0]+"."+tb[1])
	}
	schemas := make([]*tableSchema, len(tables))
	for i, tb := range tables {
		// loaded above: every captured table is tracked
		if schemas[i], err = t.tableSchema(c, tb[0], tb[1]); err != nil {
			return offset{}, err
		}
	}
	// held is the snapshot's last record so far, not yet emitted: the
	// one the snapshot ends with is marked last (below).
	held, err := t.snapshotSchema(ctx, schemaTables, base)
	if err != nil {
		return offset{}, err
	}
	if t.cfg.lockingMode == "minimal" || !data {
		if err := unlock(); err != nil {
			return offset{}, err
		}
	}
	flush := func() error {
		if held == nil {
			return nil
		}
		r := held
		held = nil
		return t.emit(ctx, r)
	}
	setMark := func(r *connect.SourceRecord, m string) {
		r.Value.(*connect.Struct).Get("source").(*connect.Struct).Put("snapshot", m)
	}
	// markLast marks the snapshot's last record, whichever it is (a data
	// record, or a schema change event when no captured table has a row
	// or no data is read), as Debezium's
	// BinlogSnapshotChangeEventSource.postSnapshot does with the record
	// its queue buffers: source.snapshot "last", and its offset without
	// "snapshot", so a restart streams.
	markLast := func() error {
		if held == nil {
			return nil
		}
		setMark(held, snapLast)
		done := base
		done.snapshot = false
		held.SourceOffset = done.toMap()
		return flush()
	}
	if !data {
		if err := markLast(); err != nil {
			return offset{}, err
		}
		pos.tsSec = ts.Unix()
		return pos, nil
	}

	baseMap := base.toMap()
	for ti, sch := range schemas {
		cols := make([]string, len(sch.table.cols))
		for i, col := range sch.table.cols {
			cols[i] = snapshotColumn(col)
		}
		q := "SELECT " + strings.Join(cols, ", ") + " FROM " + quoteIdent(tables[ti][0]) + "." + quoteIdent(tables[ti][1])
		if o, ok := t.cfg.selectOverrides[tables[ti][0]+"."+tables[ti][1]]; ok {
			q = o
		}
		var pending *connect.SourceRecord
		n := 0
		mark := func(r *connect.SourceRecord, first, last bool) {
			m := snapTrue
			switch {
			case first && ti == 0:
				m = snapFirst
			case last:
				m = snapLastIn
			case first:
				m = snapFirstIn
			}
			setMark(r, m)
		}
		var res gmysql.Result
		err := c.ExecuteSelectStreaming(q, &res, func(row []gmysql.FieldValue) error {
			vals, err := sch.convert(len(row), func(i int) (any, bool) {
				fv := &row[i]
				switch fv.Type {
				case gmysql.FieldValueTypeNull:
					return nil, true
				case gmysql.FieldValueTypeString:
					return fv.AsString(), false
				}
				return fv.Value(), false
			}, snapshotConv)
			if err != nil {
				return err
			}
			src := sourceInfo{server: t.cfg.topicPrefix, db: tables[ti][0], table: tables[ti][1], ts: ts,
				snapshot: snapTrue, file: pos.file, pos: pos.pos}
			r := t.record(sch, envelope.OpRead, nil, vals, src, baseMap)
			if pending != nil {
				mark(pending, n == 1, false)
				if err := flush(); err != nil {
					return err
				}
				held = pending
			}
			pending = r
			n++
			return ctx.Err()
		}, nil)
		if err != nil {
			return offset{}, fmt.Errorf("mysql: snapshot %s.%s: %w", tables[ti][0], tables[ti][1], err)
		}
		if pending != nil {
			mark(pending, n == 1, true)
			if err := flush(); err != nil {
				return offset{}, err
			}
			held = pending
		}
	}
	if err := markLast(); err != nil {
		return offset{}, err
	}
	if _, err := c.Execute("COMMIT"); err != nil {
		return offset{}, fmt.Errorf("mysql: snapshot: COMMIT: %w", err)
	}
	pos.tsSec = ts.Unix()
	return pos, nil
}

// snapshotColumn is col's expression in the snapshot's SELECT. A FLOAT
// is read as its DOUBLE: the text protocol prints a FLOAT with 6
// significant digits (16777217 is stored as 16777216 and printed
// 16777200; 1234.567 prints 1234.57), the DOUBLE of the stored float
// exactly, so the snapshot's value is the float the binlog has. Debezium
// reads the printed digits (the deviation snapshot-float-digits).
func snapshotColumn(col column) string {
	if col.dataType == "float" {
		return "CAST(" + quoteIdent(col.Name) + " AS DOUBLE)"
	}
	return quoteIdent(col.Name)
}

// snapshotConv converts a text-protocol value: strings (and BIT, binary)
// as bytes, integers and floats as go-mysql parsed them.
func snapshotConv(ct *colType, v any) (any, error) {
	if b, ok := v.([]byte); ok {
		return ct.fromText(b)
	}
	return ct.fromBinlog(v)
}

// snapshotSchema records the structures of tables (listTables' schema
// tables) as Debezium's snapshot does (BinlogSnapshotChangeEventSource
// readTableStructure), in the schema history and as schema change events:
// the server's character set, a DROP TABLE IF EXISTS per table, then per
// database (in the order of its first table) DROP DATABASE IF EXISTS,
// CREATE DATABASE, USE and SHOW CREATE TABLE of each of its tables. With
// schema.history.internal.store.only.captured.databases.ddl the
// statements of a database that is not captured are neither stored nor
// emitted (Debezium's skipSchemaChangeEvent). Every one carries the
// snapshot's offset. The last schema change event is returned, not
// emitted: the snapshot's last record is marked last, and it is this one
// when no data record follows.
func (t *Task) snapshotSchema(ctx context.Context, tables [][2]string, base offset) (*connect.SourceRecord, error) {
	if t.history == nil && !t.cfg.includeSchemaChanges {
		return nil, nil
	}
	c := t.conn
	off := base.toMap()
	var held *connect.SourceRecord
	event := func(db, table, ddl string, changes []tableChange) error {
		if t.cfg.storeOnlyDBs && db != "" && !t.cfg.dbIncluded(db) {
			return nil
		}
		// With schema.history.internal.store.only.captured.tables.ddl
		// Debezium's snapshot keeps the database statements (DROP
		// DATABASE, CREATE DATABASE, USE) out of the history (they are
		// still schema change events): mariadiff seeds 30, 31.
		dbStmt := db != "" && table == "" && changes == nil
		if t.history != nil && !(dbStmt && t.cfg.storeOnlyTables) {
			if err := t.history.store(ctx, base, db, ddl, changes, t.now()); err != nil {
				return err
			}
		}
		if !t.cfg.includeSchemaChanges {
			return nil
		}
		src := sourceInfo{server: t.cfg.topicPrefix, db: db, table: table, ts: t.now(), snapshot: snapTrue,
			file: base.file, pos: base.pos}
		if held != nil {
			if err := t.emit(ctx, held); err != nil {
				return err
			}
		}
		held = t.schemaChangeRecord(src, db, ddl, changes, off)
		return nil
	}
	r, err := c.Execute("SELECT @@character_set_server, @@collation_server")
	if err != nil {
		return nil, fmt.Errorf("mysql: snapshot: read the server character set: %w", err)
	}
	cs, _ := r.GetString(0, 0)
	coll, _ := r.GetString(0, 1)
	if err := event("", "", "SET character_set_server="+cs+", collation_server="+coll, nil); err != nil {
		return nil, err
	}
	var dbs []string
	byDB := map[string][][2]string{}
	for _, tb := range tables {
		if _, ok := byDB[tb[0]]; !ok {
			dbs = append(dbs, tb[0])
		}
		byDB[tb[0]] = append(byDB[tb[0]], tb)
		ddl := "DROP TABLE IF EXISTS " + quoteIdent(tb[0]) + "." + quoteIdent(tb[1])
		if err := event(tb[0], tb[1], ddl, []tableChange{{typ: "DROP", db: tb[0], name: tb[1]}}); err != nil {
			return nil, err
		}
	}
	for _, db := range dbs {
		r, err := c.Execute("SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db)
		if err != nil {
			return nil, fmt.Errorf("mysql: snapshot: read the character set of %s: %w", db, err)
		}
		dcs, _ := r.GetString(0, 0)
		dcoll, _ := r.GetString(0, 1)
		for _, ddl := range []string{"DROP DATABASE IF EXISTS " + quoteIdent(db),
			"CREATE DATABASE " + quoteIdent(db) + " CHARSET " + dcs + " COLLATE " + dcoll, "USE " + quoteIdent(db)} {
			if err := event(db, "", ddl, nil); err != nil {
				return nil, err
			}
		}
		for _, tb := range byDB[db] {
			id := tb[0] + "." + tb[1]
			r, err := c.Execute("SHOW CREATE TABLE " + quoteIdent(tb[0]) + "." + quoteIdent(tb[1]))
			if err != nil {
				return nil, fmt.Errorf("mysql: snapshot: SHOW CREATE TABLE %s: %w", id, err)
			}
			ddl, _ := r.GetString(0, 1)
			if err := event(tb[0], tb[1], ddl, []tableChange{{typ: "CREATE", db: tb[0], name: tb[1], table: t.catalog[id]}}); err != nil {
				return nil, err
			}
		}
	}
	return held, nil
}
