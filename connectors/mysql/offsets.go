package mysql

import (
	"encoding/json"
	"fmt"
	"math"
)

// Offset keys, as Debezium's BinlogOffsetContext / BinlogSourceInfo.
const (
	offFile     = "file"
	offPos      = "pos"
	offGTIDs    = "gtids"
	offRow      = "row"
	offEvent    = "event"
	offServerID = "server_id"
	offTsSec    = "ts_sec"
	offSnapshot = "snapshot"
)

// offset is the source offset of the partition {"server": topic.prefix}.
//
// While streaming, file/pos is where the current transaction starts (its
// GTID or BEGIN event), gtids the GTID set of the transactions completed
// before it, event the number of its events already fully processed and row
// the number of rows of the next event already emitted: a restart reads from
// file/pos and skips event events and row rows, as Debezium does.
type offset struct {
	file           string
	pos            int64
	gtids          string
	event, row     int64
	serverID       int64
	tsSec          int64
	snapshot       bool // written by an unfinished initial snapshot
	snapshotRecord bool // has server_id/row/event (a streamed record)
	noRow          bool // a DDL's offset: server_id/event without row
}

// toMap renders the offset as Debezium writes it.
func (o offset) toMap() map[string]any {
	m := make(map[string]any, 8) // every key below: no growth
	m[offTsSec], m[offFile], m[offPos] = o.tsSec, o.file, o.pos
	if o.gtids != "" {
		m[offGTIDs] = o.gtids
	}
	if o.snapshot {
		m[offSnapshot] = "INITIAL"
	}
	if o.snapshotRecord {
		if !o.noRow {
			m[offRow] = o.row
		}
		m[offServerID] = o.serverID
		m[offEvent] = o.event
	}
	return m
}

// parseOffset decodes an offset map read back from the offset store.
func parseOffset(m map[string]any) (offset, error) {
	var o offset
	num := func(k string) (int64, error) {
		switch n := m[k].(type) {
		case nil:
			return 0, nil
		case int64:
			return n, nil
		case int:
			return int64(n), nil
		case int32:
			return int64(n), nil
		case float64:
			if n != math.Trunc(n) {
				return 0, fmt.Errorf("offset %s=%v is not an integer", k, n)
			}
			return int64(n), nil
		case json.Number:
			return n.Int64()
		default:
			return 0, fmt.Errorf("offset %s has unexpected type %T", k, n)
		}
	}
	var err error
	o.file, _ = m[offFile].(string)
	if o.file == "" {
		return o, fmt.Errorf("offset has no binlog file")
	}
	if o.pos, err = num(offPos); err != nil {
		return o, err
	}
	if o.event, err = num(offEvent); err != nil {
		return o, err
	}
	if o.row, err = num(offRow); err != nil {
		return o, err
	}
	if o.serverID, err = num(offServerID); err != nil {
		return o, err
	}
	if o.tsSec, err = num(offTsSec); err != nil {
		return o, err
	}
	o.gtids, _ = m[offGTIDs].(string)
	switch s := m[offSnapshot].(type) {
	case string:
		o.snapshot = s != ""
	case bool:
		o.snapshot = s
	}
	_, o.snapshotRecord = m[offEvent]
	_, hasRow := m[offRow]
	o.noRow = o.snapshotRecord && !hasRow
	return o, nil
}
