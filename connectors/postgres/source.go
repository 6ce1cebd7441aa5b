package postgres

import (
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
)

// DebeziumVersion is written to source.version. connectd emits the version of
// the Debezium release whose output it reproduces, so consumers that branch on
// it see the same value as with Debezium.
const DebeziumVersion = "3.6.1.Final"

// Snapshot markers of source.snapshot (io.debezium.connector.SnapshotRecord).
const (
	snapTrue     = "true"
	snapFirst    = "first"
	snapFirstIn  = "first_in_data_collection"
	snapLastIn   = "last_in_data_collection"
	snapLast     = "last"
	snapFalse    = "false"
	snapIncremen = "incremental"
)

// snapshotSchema is io.debezium.data.Enum for source.snapshot, as
// SchemaFactory.snapshotRecordSchema: every SnapshotRecord in declaration
// order, default "false", optional.
var snapshotSchema = connect.NewSchema(connect.String).Name("io.debezium.data.Enum").Version(1).
	Param("allowed", "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental").
	Default(snapFalse).Optional().Build()

// sourceSchema is io.debezium.connector.postgresql.Source (version 1), field
// order as Debezium 3.6.1 (SchemaFactory.sourceInfoSchemaBuilder +
// PostgresSourceInfoStructMaker).
var sourceSchema = connect.StructSchema().Name("io.debezium.connector.postgresql.Source").Version(1).
	Field("version", connect.Prim(connect.String, false)).
	Field("connector", connect.Prim(connect.String, false)).
	Field("name", connect.Prim(connect.String, false)).
	Field("ts_ms", connect.Prim(connect.Int64, false)).
	Field("snapshot", snapshotSchema).
	Field("db", connect.Prim(connect.String, false)).
	Field("sequence", connect.Prim(connect.String, true)).
	Field("ts_us", connect.Prim(connect.Int64, true)).
	Field("ts_ns", connect.Prim(connect.Int64, true)).
	Field("schema", connect.Prim(connect.String, false)).
	Field("table", connect.Prim(connect.String, false)).
	Field("txId", connect.Prim(connect.Int64, true)).
	Field("lsn", connect.Prim(connect.Int64, true)).
	Field("xmin", connect.Prim(connect.Int64, true)).
	Field("origin", connect.Prim(connect.String, true)).
	Field("origin_lsn", connect.Prim(connect.Int64, true)).
	Build()

// SourceSchema returns the schema of the envelope's source block.
func SourceSchema() *connect.Schema { return sourceSchema }

// sourceInfo is what one event's source block says.
type sourceInfo struct {
	server, db, schema, table string
	ts                        time.Time // commit time (stream) or snapshot time
	snapshot                  string
	txID                      *int64
	lsn                       *int64
	lastCommitLSN             *int64 // first element of sequence
	// tx, when set, holds ts_ms, ts_us, ts_ns and txId already boxed for
	// ts and *txID (streaming: the same for every row of a transaction).
	tx *boxedTx
	// xmin is source.xmin, boxed (xmin.fetch.interval.ms); nil = null.
	xmin any
}

// boxedTx is the part of the source block that every row of one streamed
// transaction shares (ts_ms, ts_us, ts_ns from the commit time, txId),
// boxed once per transaction instead of once per row: four of the
// allocations of each streamed row (bench/postgres, issue 3). The boxes
// are never mutated, so records may share them.
type boxedTx struct {
	ts                     time.Time
	xid                    int64
	tsMs, tsUs, tsNs, txID any
	// commitBox is commit (the offset's lsn_commit) boxed; nil until set.
	commit    int64
	commitBox any
}

// commitOf returns lsn boxed, reusing the last box when lsn is the same
// (lsn_commit changes once per transaction).
func (b *boxedTx) commitOf(lsn int64) any {
	if b.commitBox == nil || b.commit != lsn {
		b.commit, b.commitBox = lsn, lsn
	}
	return b.commitBox
}

// of returns b set for commit time ts and transaction xid, re-boxing only
// when either changed since the last call.
func (b *boxedTx) of(ts time.Time, xid int64) *boxedTx {
	if b.txID == nil || b.xid != xid || !b.ts.Equal(ts) {
		us := ts.UnixMicro()
		*b = boxedTx{ts: ts, xid: xid, tsMs: us / 1000, tsUs: us, tsNs: us * 1000, txID: xid,
			commit: b.commit, commitBox: b.commitBox}
	}
	return b
}

// sequence formats Debezium's PostgreSQL source.sequence: a JSON array of
// [last commit LSN, this LSN] as strings, null when unknown.
func sequence(lastCommit, lsn *int64) string {
	b := make([]byte, 0, 48)
	b = append(b, '[')
	for i, p := range [2]*int64{lastCommit, lsn} {
		if i > 0 {
			b = append(b, ',')
		}
		if p == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, *p, 10)
		b = append(b, '"')
	}
	return string(append(b, ']'))
}

// build makes the source struct. It is on the hot path (one per event), so
// it fills the values in sourceSchema's field order instead of by name.
func (s sourceInfo) build() *connect.Struct {
	return &connect.Struct{Schema: sourceSchema, Values: s.values()}
}

// values returns the source block's field values in sourceSchema's order.
func (s sourceInfo) values() []any {
	var lsn any
	if s.lsn != nil {
		lsn = *s.lsn
	}
	if b := s.tx; b != nil && s.txID != nil && *s.txID == b.xid && s.ts.Equal(b.ts) {
		return []any{
			DebeziumVersion, "postgresql", s.server, b.tsMs, s.snapshot, s.db,
			sequence(s.lastCommitLSN, s.lsn), b.tsUs, b.tsNs, s.schema, s.table,
			b.txID, lsn, s.xmin, nil, nil,
		}
	}
	us := s.ts.UnixMicro()
	var txID any
	if s.txID != nil {
		txID = *s.txID
	}
	return []any{
		DebeziumVersion, "postgresql", s.server, us / 1000, s.snapshot, s.db,
		sequence(s.lastCommitLSN, s.lsn), us, us * 1000, s.schema, s.table,
		txID, lsn, s.xmin, nil, nil,
	}
}

// sourceTemplate is the source block of events that share one sourceInfo
// (the rows of one table's snapshot), built once: build gives every event
// the same struct, which nothing may change in place; setSnapshotMarker
// gives the few events with another marker (first, last) a copy of their
// own. One struct instead of one per row: 280 bytes a row less garbage in
// the 1M-row snapshot of bench/postgres (issue 3).
type sourceTemplate struct{ shared *connect.Struct }

func newSourceTemplate(values []any) sourceTemplate {
	return sourceTemplate{(&connect.Struct{Schema: sourceSchema, Values: values}).Freeze()}
}

func (tmpl sourceTemplate) build() *connect.Struct { return tmpl.shared }

// setSnapshotMarker sets source.snapshot of change event r to m, on a copy
// of its source block (which may be shared with other events, see
// sourceTemplate).
func setSnapshotMarker(r *connect.SourceRecord, m string) {
	env := r.Value.(*connect.Struct)
	src := env.Get("source").(*connect.Struct)
	if src.Get("snapshot") == m {
		return
	}
	own := &connect.Struct{Schema: src.Schema, Values: append([]any(nil), src.Values...)}
	env.Put("source", own.Put("snapshot", m))
}
