package postgres

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
)

// Decoding of pgoutput messages into change events: pure functions over
// bytes, no I/O, so they can be fuzzed. stream.go owns the connection and
// feeds every XLogData payload to walDecoder.decode.
//
// Protocol version 2 (PostgreSQL 14+, streaming 'on') adds the messages of
// in-progress transactions: Stream Start (xid, first segment), Stream Stop,
// Stream Commit (xid, flags, commit LSN, end LSN, commit time) and Stream
// Abort (xid, subxid). Between Stream Start and Stop every Relation, Type,
// Insert, Update, Delete, Truncate and Message carries the xid of its
// (sub)transaction after the message type; decode returns those as
// itemSpool with the xid removed, i.e. as the protocol version 1 message
// that stream.go replays through decode after the Stream Commit. Outside
// streams, version 2 messages are version 1's.

// itemKind says what one pgoutput message meant.
type itemKind int

const (
	itemNone     itemKind = iota // nothing to do (origin, type, truncate, message…)
	itemBegin                    // a transaction starts
	itemCommit                   // the transaction committed
	itemRelation                 // a table's structure was (re)sent
	itemChange                   // a row changed
	itemTruncate                 // tables were truncated (rels)
	itemMessage                  // a logical decoding message (pg_logical_emit_message)

	itemStreamStart  // a block of an in-progress transaction starts (xid, first)
	itemStreamStop   // the block ends
	itemSpool        // a message inside a block: keep raw (v1 bytes) of subxid for the commit
	itemStreamCommit // the streamed transaction xid committed (finalLSN, commitTime; lsn its end)
	itemStreamAbort  // subtransaction subxid of xid (the whole of it when subxid == xid) aborted
)

// Debezium's ReplicationMessage.Operation names, written to offsets as messageType.
const (
	msgInsert   = "INSERT"
	msgUpdate   = "UPDATE"
	msgDelete   = "DELETE"
	msgTruncate = "TRUNCATE"
	msgMessage  = "MESSAGE"
)

// walItem is one decoded message.
type walItem struct {
	kind itemKind
	lsn  int64 // XLogData WALStart: the change's LSN; for COMMIT the transaction end LSN

	// itemBegin
	xid        uint32
	finalLSN   int64 // LSN of the commit record
	commitTime time.Time

	// itemRelation, itemChange
	rel *pglogrepl.RelationMessage

	// itemChange
	op          string // envelope op: c, u, d
	messageType string // INSERT, UPDATE, DELETE
	before      []cell // nil when the server sent no old tuple
	after       []cell
	oldIsKey    bool // before is the replica identity only ('K'), not the whole old row ('O')

	// itemTruncate: the truncated relations, in message order
	rels []*pglogrepl.RelationMessage

	// itemStreamStart, itemSpool, itemStreamAbort
	first  bool   // itemStreamStart: first block of xid
	subxid uint32 // itemSpool: the message's (sub)transaction; itemStreamAbort: the aborted one
	raw    []byte // itemSpool: the message as protocol version 1 (a copy)

	// itemMessage
	transactional bool
	prefix        string
	content       []byte
}

// walDecoder keeps the state pgoutput messages depend on: the relations seen
// so far and the current transaction.
type walDecoder struct {
	relations map[uint32]*pglogrepl.RelationMessage
	inTx      bool
	xid       uint32
	commit    time.Time
	inStream  bool   // between Stream Start and Stream Stop
	streamXid uint32 // the streamed transaction of the current block
}

func newWALDecoder() *walDecoder {
	return &walDecoder{relations: map[uint32]*pglogrepl.RelationMessage{}}
}

// decode interprets one pgoutput message received at walStart. It never
// panics on malformed input; it returns an error instead.
func (d *walDecoder) decode(walStart uint64, data []byte) (it walItem, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("postgres: malformed pgoutput message: %v", r)
		}
	}()
	if walStart > 1<<63-1 {
		return it, fmt.Errorf("postgres: LSN %d out of range", walStart)
	}
	it.lsn = int64(walStart)
	if len(data) == 0 {
		return it, fmt.Errorf("postgres: empty pgoutput message")
	}
	if it, ok, err := d.streamMessage(it, data); ok || err != nil {
		return it, err
	}
	switch data[0] {
	case 'B', 'C', 'R', 'I', 'U', 'D':
	case 'T':
		// pglogrepl allocates RelationNum ids before reading them: check the
		// count against the message length first.
		if len(data) < 10 || uint64(binary.BigEndian.Uint32(data[1:]))*4 > uint64(len(data)-6) {
			return it, fmt.Errorf("postgres: malformed pgoutput truncate message")
		}
	case 'M':
	default:
		// Type and Origin messages carry nothing Debezium emits; they are not
		// parsed (a corrupt count would make pglogrepl allocate without bound).
		return it, nil
	}
	if err := checkTuples(data); err != nil {
		return it, err
	}
	if data[0] == 'I' && len(data) >= 6 && data[5] == 'N' {
		// The streaming hot path: an insert's cells straight from the
		// message (framing checked above), without pglogrepl's message,
		// tuple and per-column allocations (a quarter of the allocations
		// of each streamed row, bench/postgres, issue 3).
		return d.insert(it, binary.BigEndian.Uint32(data[1:]), data[6:])
	}
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return it, fmt.Errorf("postgres: parse pgoutput message: %w", err)
	}
	switch m := msg.(type) {
	case *pglogrepl.BeginMessage:
		d.inTx, d.xid, d.commit = true, m.Xid, m.CommitTime
		it.kind, it.xid, it.finalLSN, it.commitTime = itemBegin, m.Xid, int64(m.FinalLSN), m.CommitTime
	case *pglogrepl.CommitMessage:
		d.inTx = false
		it.kind, it.xid, it.commitTime = itemCommit, d.xid, m.CommitTime
	case *pglogrepl.RelationMessage:
		d.relations[m.RelationID] = m
		it.kind, it.rel = itemRelation, m
	case *pglogrepl.InsertMessage:
		return d.change(it, m.RelationID, "c", msgInsert, nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		it, err = d.change(it, m.RelationID, "u", msgUpdate, m.OldTuple, m.NewTuple)
		it.oldIsKey = m.OldTupleType == pglogrepl.UpdateMessageTupleTypeKey
		return it, err
	case *pglogrepl.DeleteMessage:
		it, err = d.change(it, m.RelationID, "d", msgDelete, m.OldTuple, nil)
		it.oldIsKey = m.OldTupleType == pglogrepl.DeleteMessageTupleTypeKey
		return it, err
	case *pglogrepl.TruncateMessage:
		if !d.inTx {
			return it, fmt.Errorf("postgres: truncate outside a transaction")
		}
		it.kind, it.xid, it.commitTime, it.messageType = itemTruncate, d.xid, d.commit, msgTruncate
		for _, id := range m.RelationIDs {
			rel, ok := d.relations[id]
			if !ok {
				return it, fmt.Errorf("postgres: truncate of unknown relation %d", id)
			}
			it.rels = append(it.rels, rel)
		}
	case *pglogrepl.LogicalDecodingMessage:
		it.kind, it.messageType, it.transactional, it.prefix, it.content = itemMessage, msgMessage, m.Transactional, m.Prefix, m.Content
		if m.Transactional {
			it.xid, it.commitTime = d.xid, d.commit
		}
	}
	return it, nil
}

// streamMessage decodes the protocol version 2 streaming messages and the
// messages inside a stream block; ok is false for any other message.
func (d *walDecoder) streamMessage(it walItem, data []byte) (_ walItem, ok bool, err error) {
	short := func(n int) error {
		if len(data) < n {
			return fmt.Errorf("postgres: malformed pgoutput %q message (%d bytes)", data[0], len(data))
		}
		return nil
	}
	u32 := func(off int) uint32 { return binary.BigEndian.Uint32(data[off:]) }
	u64 := func(off int) uint64 { return binary.BigEndian.Uint64(data[off:]) }
	switch data[0] {
	case 'S': // Stream Start: xid, first segment
		if d.inStream {
			return it, true, fmt.Errorf("postgres: stream start inside a stream")
		}
		if err := short(6); err != nil {
			return it, true, err
		}
		d.inStream, d.streamXid = true, u32(1)
		it.kind, it.xid, it.first = itemStreamStart, d.streamXid, data[5] == 1
		return it, true, nil
	case 'E': // Stream Stop
		if !d.inStream {
			return it, true, fmt.Errorf("postgres: stream stop outside a stream")
		}
		d.inStream = false
		it.kind, it.xid = itemStreamStop, d.streamXid
		return it, true, nil
	case 'c': // Stream Commit: xid, flags, commit LSN, end LSN, commit time
		if err := short(30); err != nil {
			return it, true, err
		}
		if d.inStream {
			return it, true, fmt.Errorf("postgres: stream commit inside a stream")
		}
		commit, ts := u64(6), int64(u64(22))
		if commit > 1<<63-1 {
			return it, true, fmt.Errorf("postgres: LSN %d out of range", commit)
		}
		it.kind, it.xid, it.finalLSN, it.commitTime = itemStreamCommit, u32(1), int64(commit), pgTime(ts)
		return it, true, nil
	case 'A': // Stream Abort: xid, subxid (PostgreSQL 16+ may add an LSN and time)
		if err := short(9); err != nil {
			return it, true, err
		}
		if d.inStream {
			return it, true, fmt.Errorf("postgres: stream abort inside a stream")
		}
		it.kind, it.xid, it.subxid = itemStreamAbort, u32(1), u32(5)
		return it, true, nil
	}
	if !d.inStream {
		return it, false, nil
	}
	switch data[0] {
	case 'R', 'I', 'U', 'D', 'T', 'M':
	case 'Y':
		if err := short(5); err != nil {
			return it, true, err
		}
		return it, true, nil // Type: nothing Debezium emits
	default:
		return it, false, nil // Origin and others carry no xid
	}
	if err := short(5); err != nil {
		return it, true, err
	}
	raw := make([]byte, len(data)-4)
	raw[0] = data[0]
	copy(raw[1:], data[5:])
	it.kind, it.xid, it.subxid, it.raw = itemSpool, d.streamXid, u32(1), raw
	return it, true, nil
}

// beginReplay puts the decoder inside streamed transaction xid, which
// committed at commitTime, to decode its kept messages; endReplay leaves it.
func (d *walDecoder) beginReplay(xid uint32, commitTime time.Time) {
	d.inTx, d.xid, d.commit = true, xid, commitTime
}

func (d *walDecoder) endReplay() { d.inTx = false }

// pgTime converts a pgoutput timestamp (microseconds since 2000-01-01 UTC)
// as pglogrepl does for Begin and Commit (time.Unix, local location).
func pgTime(usec int64) time.Time { return time.Unix(0, (946684800*1000000+usec)*1000) }

func (d *walDecoder) change(it walItem, relID uint32, op, mt string, old, new *pglogrepl.TupleData) (walItem, error) {
	rel, ok := d.relations[relID]
	if !ok {
		return it, fmt.Errorf("postgres: change for unknown relation %d", relID)
	}
	if !d.inTx {
		return it, fmt.Errorf("postgres: change outside a transaction")
	}
	var err error
	it.kind, it.rel, it.op, it.messageType, it.xid, it.commitTime = itemChange, rel, op, mt, d.xid, d.commit
	if old != nil {
		if it.before, err = tupleCells(rel, old); err != nil {
			return it, err
		}
	}
	if new != nil {
		if it.after, err = tupleCells(rel, new); err != nil {
			return it, err
		}
	}
	return it, nil
}

// insert is change for an Insert message whose new tuple (TupleData as
// pgoutput writes it: Int16 column count, then per column 'n', 'u', or 't'
// / 'b' with an Int32 length and the bytes) starts at tuple; checkTuples
// has checked its framing.
func (d *walDecoder) insert(it walItem, relID uint32, tuple []byte) (walItem, error) {
	rel, ok := d.relations[relID]
	if !ok {
		return it, fmt.Errorf("postgres: change for unknown relation %d", relID)
	}
	if !d.inTx {
		return it, fmt.Errorf("postgres: change outside a transaction")
	}
	var err error
	it.kind, it.rel, it.op, it.messageType, it.xid, it.commitTime = itemChange, rel, "c", msgInsert, d.xid, d.commit
	it.after, err = rawTupleCells(rel, tuple)
	return it, err
}

// rawTupleCells is tupleCells reading the TupleData bytes of a message
// directly: the same cells and errors, with two allocations (the cells and
// one string holding every text value).
func rawTupleCells(rel *pglogrepl.RelationMessage, b []byte) ([]cell, error) {
	n := int(binary.BigEndian.Uint16(b))
	if n != len(rel.Columns) {
		return nil, fmt.Errorf("postgres: tuple of %s.%s has %d columns, relation has %d",
			rel.Namespace, rel.RelationName, n, len(rel.Columns))
	}
	b = b[2:]
	size := 0
	for i, p := 0, b; i < n; i++ {
		var kind byte
		var data []byte
		kind, data, p = nextColumn(p)
		switch kind {
		case pglogrepl.TupleDataTypeNull, pglogrepl.TupleDataTypeToast:
		case pglogrepl.TupleDataTypeText:
			size += len(data)
		case pglogrepl.TupleDataTypeBinary:
			return nil, fmt.Errorf("postgres: binary tuple data is not supported")
		default:
			return nil, fmt.Errorf("postgres: unknown tuple data type %q", kind)
		}
	}
	var all strings.Builder
	all.Grow(size)
	for i, p := 0, b; i < n; i++ {
		var kind byte
		var data []byte
		if kind, data, p = nextColumn(p); kind == pglogrepl.TupleDataTypeText {
			all.Write(data)
		}
	}
	cells := make([]cell, n)
	text, pos := all.String(), 0
	for i, p := 0, b; i < n; i++ {
		var kind byte
		var data []byte
		switch kind, data, p = nextColumn(p); kind {
		case pglogrepl.TupleDataTypeNull:
			cells[i].null = true
		case pglogrepl.TupleDataTypeToast:
			cells[i].unchanged = true
		case pglogrepl.TupleDataTypeText:
			cells[i].text = text[pos : pos+len(data)]
			pos += len(data)
		}
	}
	return cells, nil
}

// nextColumn reads one column of a TupleData whose framing checkTuples
// has checked: its kind, its bytes ('t' and 'b'), and what follows it.
func nextColumn(p []byte) (kind byte, data, rest []byte) {
	kind, p = p[0], p[1:]
	if kind == 't' || kind == 'b' {
		l := binary.BigEndian.Uint32(p)
		return kind, p[4 : 4+l], p[4+l:]
	}
	return kind, nil, p
}

// tupleCells converts a pgoutput tuple (text format) to cells in relation
// column order.
func tupleCells(rel *pglogrepl.RelationMessage, t *pglogrepl.TupleData) ([]cell, error) {
	if len(t.Columns) != len(rel.Columns) {
		return nil, fmt.Errorf("postgres: tuple of %s.%s has %d columns, relation has %d",
			rel.Namespace, rel.RelationName, len(t.Columns), len(rel.Columns))
	}
	cells := make([]cell, len(t.Columns))
	// One string holds every text value of the tuple (the message's bytes
	// are reused by the next receive); the cells' texts are slices of it.
	size := 0
	for _, c := range t.Columns {
		if c.DataType == pglogrepl.TupleDataTypeText {
			size += len(c.Data)
		}
	}
	var all strings.Builder
	all.Grow(size)
	for _, c := range t.Columns {
		if c.DataType == pglogrepl.TupleDataTypeText {
			all.Write(c.Data)
		}
	}
	text, pos := all.String(), 0
	for i, c := range t.Columns {
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
			cells[i].null = true
		case pglogrepl.TupleDataTypeToast:
			cells[i].unchanged = true
		case pglogrepl.TupleDataTypeText:
			cells[i].text = text[pos : pos+len(c.Data)]
			pos += len(c.Data)
		case pglogrepl.TupleDataTypeBinary:
			return nil, fmt.Errorf("postgres: binary tuple data is not supported")
		default:
			return nil, fmt.Errorf("postgres: unknown tuple data type %q", c.DataType)
		}
	}
	return cells, nil
}

// resumeFilter drops what a restarted task already delivered, as Debezium
// does with lsn_commit/lsn_proc: whole transactions that committed before
// the last seen commit, and, in the transaction that was in progress at the
// committed offset (same txId), changes at or below lsn_proc.
type resumeFilter struct {
	lsnCommit *int64
	txID      *int64
	lsnProc   *int64
}

func newResumeFilter(o *offset) resumeFilter {
	if o == nil || o.snapshot != "" && !streamSnapshot(o.snapshot) {
		return resumeFilter{}
	}
	return resumeFilter{lsnCommit: o.lsnCommit, txID: o.txID, lsnProc: o.lsnProc}
}

// skipTx reports whether the transaction whose commit record is at finalLSN
// was fully delivered before.
func (f resumeFilter) skipTx(finalLSN int64) bool {
	return f.lsnCommit != nil && finalLSN < *f.lsnCommit
}

// skipChange reports whether the change at lsn of transaction xid was delivered.
func (f resumeFilter) skipChange(xid uint32, lsn int64) bool {
	return f.txID != nil && f.lsnProc != nil && int64(xid) == *f.txID && lsn <= *f.lsnProc
}

// checkTuples validates the tuple framing of I/U/D messages before pglogrepl
// decodes them: every column length must fit in the message, so a corrupt
// length cannot make the decoder allocate gigabytes.
func checkTuples(data []byte) error {
	// Built only when needed: this runs once per change (a fmt.Errorf per
	// row was about 4% of the reader's CPU while streaming).
	bad := func() error { return fmt.Errorf("postgres: malformed pgoutput %q message", data[0]) }
	tupleAt := func(b []byte) ([]byte, bool) {
		if len(b) < 2 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint16(b))
		b = b[2:]
		for i := 0; i < n; i++ {
			if len(b) < 1 {
				return nil, false
			}
			kind := b[0]
			b = b[1:]
			switch kind {
			case 'n', 'u':
			case 't', 'b':
				if len(b) < 4 {
					return nil, false
				}
				l := binary.BigEndian.Uint32(b)
				b = b[4:]
				if uint64(l) > uint64(len(b)) {
					return nil, false
				}
				b = b[l:]
			default:
				return nil, false
			}
		}
		return b, true
	}
	switch data[0] {
	case 'I', 'U', 'D':
	default:
		return nil
	}
	b := data[1:]
	if len(b) < 5 {
		return bad()
	}
	b = b[4:]
	for len(b) > 0 {
		switch b[0] {
		case 'K', 'O', 'N':
			rest, ok := tupleAt(b[1:])
			if !ok {
				return bad()
			}
			b = rest
		default:
			return bad()
		}
	}
	return nil
}
