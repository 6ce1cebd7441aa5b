package postgres

import (
	"encoding/json"
	"fmt"
	"math"
)

// Offset keys, as io.debezium.connector.postgresql.PostgresOffsetContext and
// SourceInfo (Debezium 3.6). Numbers are JSON numbers (int64 here).
const (
	offLSN                = "lsn"
	offLSNProc            = "lsn_proc"   // last completely processed LSN
	offLSNCommit          = "lsn_commit" // end LSN of the last COMMIT seen
	offTxID               = "txId"
	offTsUsec             = "ts_usec"
	offMessageType        = "messageType"
	offSnapshot           = "snapshot" // "INITIAL" while the initial snapshot runs
	offLastSnapshotRecord = "last_snapshot_record"
	offSnapshotCompleted  = "snapshot_completed"
	offTransactionID      = "transaction_id" // only with transaction metadata (txmeta.Context.PutOffset)
	offXmin               = "xmin"           // the slot's catalog_xmin (xmin.fetch.interval.ms), as SourceInfo.XMIN_KEY
)

// offset is the decoded source offset of the partition {"server": topic.prefix}.
type offset struct {
	lsn, lsnProc, lsnCommit, txID, tsUsec *int64
	messageType                           string
	snapshot                              string
	lastSnapshotRecord, snapshotCompleted bool
	// tx, when set, holds the transaction's txId, ts_usec and lsn_commit
	// already boxed (streaming: shared by every row of a transaction).
	tx *boxedTx
	// xmin is the boxed catalog_xmin of source.xmin (nil = left out).
	xmin any
}

func i64(v int64) *int64 { return &v }

// toMap renders the offset as Debezium writes it. Keys whose value is unknown
// are left out, as Debezium does.
func (o offset) toMap() map[string]any {
	m := make(map[string]any, 6)
	put := func(k string, p *int64) {
		if p != nil {
			m[k] = *p
		}
	}
	if tx := o.tx; tx != nil && o.txID != nil && o.tsUsec != nil && tx.txID != nil &&
		*o.txID == tx.xid && *o.tsUsec == tx.tsUs.(int64) {
		m[offTsUsec], m[offTxID] = tx.tsUs, tx.txID
	} else {
		put(offTsUsec, o.tsUsec)
		put(offTxID, o.txID)
	}
	// lsn and lsn_proc are the same position for every streamed change:
	// one box serves both.
	var lsn any
	if o.lsn != nil {
		lsn = *o.lsn
		m[offLSN] = lsn
	}
	if o.snapshot != "" {
		m[offSnapshot] = o.snapshot
		m[offLastSnapshotRecord] = o.lastSnapshotRecord
		m[offSnapshotCompleted] = o.snapshotCompleted
	}
	if o.lsnProc != nil && o.lsn != nil && *o.lsnProc == *o.lsn {
		m[offLSNProc] = lsn
	} else {
		put(offLSNProc, o.lsnProc)
	}
	if o.lsnCommit != nil && o.tx != nil {
		m[offLSNCommit] = o.tx.commitOf(*o.lsnCommit)
	} else {
		put(offLSNCommit, o.lsnCommit)
	}
	if o.messageType != "" {
		m[offMessageType] = o.messageType
	}
	if o.xmin != nil {
		m[offXmin] = o.xmin
	}
	return m
}

// snapshotInProgress reports whether the offset was written by an initial
// snapshot that did not finish.
func (o offset) snapshotInProgress() bool {
	return o.snapshot != "" && !streamSnapshot(o.snapshot) && !o.snapshotCompleted && !o.lastSnapshotRecord
}

// confirmLSN is the LSN to confirm to the server once this offset is
// durable: lsn_commit, else lsn_proc, else lsn — as Debezium's
// PostgresStreamingChangeEventSource.commitOffset.
func (o offset) confirmLSN() (int64, bool) {
	for _, p := range []*int64{o.lsnCommit, o.lsnProc, o.lsn} {
		if p != nil {
			return *p, true
		}
	}
	return 0, false
}

// parseOffset decodes an offset map read back from the offset store (numbers
// may arrive as float64, json.Number or any Go integer type).
func parseOffset(m map[string]any) (offset, error) {
	var o offset
	num := func(k string) (*int64, error) {
		v, ok := m[k]
		if !ok || v == nil {
			return nil, nil
		}
		switch n := v.(type) {
		case int64:
			return &n, nil
		case int:
			return i64(int64(n)), nil
		case int32:
			return i64(int64(n)), nil
		case uint32:
			return i64(int64(n)), nil
		case uint64:
			if n > math.MaxInt64 {
				return nil, fmt.Errorf("offset %s=%d out of range", k, n)
			}
			return i64(int64(n)), nil
		case float64:
			if n != math.Trunc(n) {
				return nil, fmt.Errorf("offset %s=%v is not an integer", k, n)
			}
			return i64(int64(n)), nil
		case json.Number:
			x, err := n.Int64()
			if err != nil {
				return nil, fmt.Errorf("offset %s: %w", k, err)
			}
			return &x, nil
		}
		return nil, fmt.Errorf("offset %s has unexpected type %T", k, v)
	}
	var err error
	for _, f := range []struct {
		k string
		p **int64
	}{{offLSN, &o.lsn}, {offLSNProc, &o.lsnProc}, {offLSNCommit, &o.lsnCommit}, {offTxID, &o.txID}, {offTsUsec, &o.tsUsec}} {
		if *f.p, err = num(f.k); err != nil {
			return o, err
		}
	}
	o.messageType, _ = m[offMessageType].(string)
	switch s := m[offSnapshot].(type) {
	case string:
		o.snapshot = s
	case bool: // Debezium before 3.0 wrote "snapshot": true
		if s {
			o.snapshot = "INITIAL"
		}
	}
	o.lastSnapshotRecord, _ = m[offLastSnapshotRecord].(bool)
	o.snapshotCompleted, _ = m[offSnapshotCompleted].(bool)
	if o.lsn == nil && o.lsnProc == nil && o.lsnCommit == nil {
		return o, fmt.Errorf("offset has no lsn")
	}
	return o, nil
}
