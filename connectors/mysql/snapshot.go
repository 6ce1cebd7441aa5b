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
// first_in_data_collection, true, last_in_data_collection, last); the last
// record's offset no longer carries "snapshot", so a restart streams.
func (t *Task) snapshot(ctx context.Context) (offset, error) {
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
	tables, err := listTables(c, t.cfg)
	if err != nil {
		return offset{}, err
	}
	schemas := make([]*tableSchema, len(tables))
	for i, tb := range tables {
		if schemas[i], err = t.tableSchema(c, tb[0], tb[1]); err != nil {
			return offset{}, err
		}
	}
	if t.cfg.lockingMode == "minimal" {
		if err := unlock(); err != nil {
			return offset{}, err
		}
	}

	ts := t.now().Truncate(1e9) // Debezium's snapshot ts_sec has second precision
	base := offset{file: pos.file, pos: pos.pos, gtids: pos.gtids, tsSec: ts.Unix(), snapshot: true}
	baseMap := base.toMap()

	var held *connect.SourceRecord
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
	for ti, sch := range schemas {
		cols := make([]string, len(sch.table.cols))
		for i, col := range sch.table.cols {
			cols[i] = quoteIdent(col.Name)
		}
		q := "SELECT " + strings.Join(cols, ", ") + " FROM " + quoteIdent(tables[ti][0]) + "." + quoteIdent(tables[ti][1])
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
	if held != nil {
		setMark(held, snapLast)
		done := base
		done.snapshot = false
		held.SourceOffset = done.toMap()
		if err := flush(); err != nil {
			return offset{}, err
		}
	}
	if _, err := c.Execute("COMMIT"); err != nil {
		return offset{}, fmt.Errorf("mysql: snapshot: COMMIT: %w", err)
	}
	pos.tsSec = ts.Unix()
	return pos, nil
}

// snapshotConv converts a text-protocol value: strings (and BIT, binary)
// as bytes, integers and floats as go-mysql parsed them.
func snapshotConv(ct *colType, v any) (any, error) {
	if b, ok := v.([]byte); ok {
		return ct.fromText(b)
	}
	return ct.fromBinlog(v)
}
