package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
)

// snapshot reads every captured table inside the slot's exported snapshot
// (invariant 2: the stream then starts at the slot's consistent point, so
// nothing is missed or duplicated at the boundary) and queues "r" records.
//
// Markers follow Debezium's RelationalSnapshotChangeEventSource: "first" for
// the first row of the first table, "first_in_data_collection" /
// "last_in_data_collection" for a table's first/last row, "true" otherwise;
// the last record of the whole snapshot is held back and emitted as "last"
// with last_snapshot_record=true and snapshot_completed=true in its offset.
func (t *Task) snapshot(ctx context.Context, p plan) error {
	tx, err := t.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return fmt.Errorf("postgres: snapshot: begin: %w", err)
	}
	defer tx.Rollback(context.Background())
	if p.snapshotName != "" {
		if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(p.snapshotName)); err != nil {
			return fmt.Errorf("postgres: snapshot: import %s: %w", p.snapshotName, err)
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
	tables, err := listTables(ctx, t.conn, t.cfg)
	if err != nil {
		return err
	}
	ts := t.now().Truncate(time.Microsecond)
	base := offset{lsn: i64(lsn), txID: i64(txID), tsUsec: i64(ts.UnixMicro()), snapshot: "INITIAL"}

	var held *connect.SourceRecord // the latest record, not yet queued
	flush := func() error {
		if held == nil {
			return nil
		}
		r := held
		held = nil
		return t.emit(ctx, r, nil)
	}
	for ti, tb := range tables {
		table, err := loadTable(ctx, t.conn, t.types, tb[0], tb[1])
		if err != nil {
			return err
		}
		sch := newTableSchema(t.cfg.topicPrefix, table, t.types)
		cols := make([]string, len(table.Columns))
		for i, c := range table.Columns {
			cols[i] = pgx.Identifier{c.Name}.Sanitize()
		}
		q := "SELECT " + joinComma(cols) + " FROM " + pgx.Identifier{tb[0], tb[1]}.Sanitize()
		// Text results (simple protocol) give exactly the text pgoutput sends,
		// so snapshot and stream share one conversion.
		rows, err := tx.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return fmt.Errorf("postgres: snapshot %s: %w", table.ID(), err)
		}
		n := 0
		var pending *connect.SourceRecord // this table's previous row
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
			r.Value.(*connect.Struct).Get("source").(*connect.Struct).Put("snapshot", m)
		}
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
			vals, err := sch.convert(cells)
			if err != nil {
				rows.Close()
				return err
			}
			src := sourceInfo{server: t.cfg.topicPrefix, db: t.cfg.dbname, schema: tb[0], table: tb[1],
				ts: ts, snapshot: snapTrue, txID: i64(txID), lsn: i64(lsn)}
			r := t.record(sch, envelope.OpRead, nil, vals, src, base)
			if pending != nil {
				mark(pending, n == 1, false)
				if err := flush(); err != nil {
					rows.Close()
					return err
				}
				held = pending
			}
			pending = r
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: snapshot %s: %w", table.ID(), err)
		}
		if pending != nil {
			mark(pending, n == 1, true)
			if err := flush(); err != nil {
				return err
			}
			held = pending
		}
	}
	if held != nil {
		held.Value.(*connect.Struct).Get("source").(*connect.Struct).Put("snapshot", snapLast)
		last := base
		last.lastSnapshotRecord, last.snapshotCompleted = true, true
		held.SourceOffset = last.toMap()
		if err := flush(); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
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
