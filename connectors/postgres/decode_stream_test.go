package postgres

import (
	"encoding/binary"
	"testing"
	"time"
)

// Protocol version 2 streaming messages, laid out as PostgreSQL 15's
// logicalrep_write_stream_* write them (protocol-logicalrep-message-formats).
func msgStreamStart(xid uint32, first bool) []byte {
	b := binary.BigEndian.AppendUint32([]byte{'S'}, xid)
	if first {
		return append(b, 1)
	}
	return append(b, 0)
}

func msgStreamCommit(xid uint32, commit, end uint64, usec int64) []byte {
	b := binary.BigEndian.AppendUint32([]byte{'c'}, xid)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint64(b, commit)
	b = binary.BigEndian.AppendUint64(b, end)
	return binary.BigEndian.AppendUint64(b, uint64(usec))
}

func msgStreamAbort(xid, subxid uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{'A'}, xid), subxid)
}

// inStream inserts the (sub)transaction xid after the message type.
func inStream(xid uint32, v1 []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{v1[0]}, xid), v1[1:]...)
}

func TestWALDecoderStreamMessages(t *testing.T) {
	d := newWALDecoder()
	ins := func(id string) []byte {
		b := append(binary.BigEndian.AppendUint32([]byte{'I'}, 7), 'N')
		return append(b, tuple(sp(id), nil)...)
	}
	it, err := d.decode(50, msgStreamStart(42, true))
	if err != nil || it.kind != itemStreamStart || it.xid != 42 || !it.first {
		t.Fatalf("stream start = %+v, %v", it, err)
	}
	// messages inside the block come back as version 1 bytes of their subxid
	rel := msgRelation(7, "public", "item", "id", "qty")
	if it, err = d.decode(51, inStream(42, rel)); err != nil || it.kind != itemSpool || it.subxid != 42 || string(it.raw) != string(rel) {
		t.Fatalf("in-stream relation = %+v, %v", it, err)
	}
	if it, err = d.decode(60, inStream(43, ins("5"))); err != nil || it.kind != itemSpool || it.subxid != 43 || it.xid != 42 || string(it.raw) != string(ins("5")) {
		t.Fatalf("in-stream insert = %+v, %v", it, err)
	}
	if it, err = d.decode(61, []byte{'E'}); err != nil || it.kind != itemStreamStop {
		t.Fatalf("stream stop = %+v, %v", it, err)
	}
	if it, err = d.decode(70, msgStreamAbort(42, 43)); err != nil || it.kind != itemStreamAbort || it.xid != 42 || it.subxid != 43 {
		t.Fatalf("stream abort = %+v, %v", it, err)
	}
	it, err = d.decode(90, msgStreamCommit(42, 80, 90, 1_000_000))
	if err != nil || it.kind != itemStreamCommit || it.xid != 42 || it.finalLSN != 80 || it.lsn != 90 ||
		!it.commitTime.Equal(time.Date(2000, 1, 1, 0, 0, 1, 0, time.UTC)) {
		t.Fatalf("stream commit = %+v, %v", it, err)
	}
	// the kept bytes decode as a change of the replayed transaction
	d.decode(0, rel)
	d.beginReplay(42, it.commitTime)
	if ch, err := d.decode(60, ins("5")); err != nil || ch.kind != itemChange || ch.xid != 42 || ch.after[0].text != "5" {
		t.Fatalf("replayed insert = %+v, %v", ch, err)
	}
	d.endReplay()

	// out-of-place and truncated stream messages are errors, not panics
	for name, msg := range map[string][]byte{
		"stop outside":     {'E'},
		"short start":      {'S', 0, 0},
		"short commit":     msgStreamCommit(1, 1, 1, 1)[:20],
		"short abort":      {'A', 0, 0, 0, 1},
		"huge commit LSN":  msgStreamCommit(1, 1<<63, 1, 1),
		"truncated insert": {'I', 0},
	} {
		if _, err := newWALDecoder().decode(1, msg); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	d2 := newWALDecoder()
	d2.decode(1, msgStreamStart(9, true))
	for name, msg := range map[string][]byte{"start inside": msgStreamStart(9, false), "short in-stream": {'I', 0, 0}} {
		if _, err := d2.decode(2, msg); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// TestSpoolSetBudget keeps messages in memory up to the budget, spills the
// transaction that crosses it to a temp file, and replays both without the
// aborted subtransactions, in arrival order.
func TestSpoolSetBudget(t *testing.T) {
	st := &streamStats{}
	s := newSpoolSet(3*(10+spoolEntryOverhead), st)
	msg := func(c byte) []byte { return []byte{c, c, c, c, c, c, c, c, c, c} }
	s.start(1, 100)
	s.start(2, 200)
	for i, e := range []struct {
		xid, sub uint32
		c        byte
	}{{1, 1, 'a'}, {2, 2, 'b'}, {1, 11, 'c'}, {1, 1, 'd'}, {1, 12, 'e'}, {2, 2, 'f'}} {
		if err := s.add(e.xid, e.sub, int64(i), msg(e.c)); err != nil {
			t.Fatal(err)
		}
	}
	// a, b, c fit; d crosses the budget: transaction 1 spills (a, c, d, e)
	if s.txs[1].f == nil || s.txs[2].f != nil || st.spilledBytes.Load() != 4*(16+10) {
		t.Fatalf("spilled: tx1 file %v, tx2 file %v, %d bytes", s.txs[1].f != nil, s.txs[2].f != nil, st.spilledBytes.Load())
	}
	if s.inMem != 2*(10+spoolEntryOverhead) {
		t.Fatalf("in memory %d", s.inMem)
	}
	s.abort(1, 11)
	s.abort(2, 3) // a subtransaction with nothing kept
	got := func(sp *txSpool) string {
		var out string
		if err := sp.each(func(lsn int64, raw []byte) error { out += string(raw[0]); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	tx1 := s.take(1)
	if tx1.firstLSN != 100 || got(tx1) != "ade" {
		t.Fatalf("tx1 first %d", tx1.firstLSN)
	}
	tx1.close()
	s.start(3, 300)
	s.add(3, 31, 9, msg('g'))
	s.add(3, 3, 10, msg('h'))
	s.abort(3, 31) // in memory: dropped at once
	tx3 := s.take(3)
	if got(tx3) != "h" {
		t.Fatal("tx3")
	}
	s.abort(2, 2)
	if len(s.txs) != 0 || s.inMem != 0 || st.aborted.Load() != 1 || st.subAborted.Load() != 3 {
		t.Fatalf("after aborts: %d txs, %d bytes in memory, %d aborted, %d sub-aborted", len(s.txs), s.inMem, st.aborted.Load(), st.subAborted.Load())
	}
}

func FuzzWALDecoderStream(f *testing.F) {
	f.Add(msgStreamStart(3, true))
	f.Add(inStream(4, msgRelation(8, "public", "t", "id")))
	f.Add([]byte{'E'})
	f.Add(msgStreamCommit(3, 10, 20, 0))
	f.Add(msgStreamAbort(3, 4))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := newWALDecoder()
		d.decode(1, msgStreamStart(3, true))
		it, err := d.decode(2, data) // must not panic
		if err == nil && it.kind == itemSpool && (len(it.raw) != len(data)-4 || it.raw[0] != data[0]) {
			t.Fatalf("kept %d bytes of a %d-byte message", len(it.raw), len(data))
		}
	})
}
