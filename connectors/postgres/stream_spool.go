package postgres

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// Streamed transactions (pgoutput protocol version 2, streaming 'on').
//
// PostgreSQL 14+ sends a transaction larger than logical_decoding_work_mem
// while it is in progress, in blocks (Stream Start … Stream Stop) that may
// interleave with other transactions, and ends it with Stream Commit or
// Stream Abort (of one subtransaction, or of the whole). Debezium emits only
// committed changes and never asks pgoutput to stream (proto_version 1:
// PgOutputMessageDecoder.defaultOptions), so the walsender spills such a
// transaction to disk itself and sends it after its commit. connectd asks
// for streaming and keeps each in-progress transaction's messages here, as
// received, until its Stream Commit; then stream.go replays them through the
// same decoding as a non-streamed transaction, so the events (topics,
// source.lsn of each change, offsets, BEGIN/END) are the same.
//
// Memory is bounded: the messages of all in-progress transactions together
// take at most pgoutput.streaming.memory.bytes (plus one message); beyond
// it, the transaction that grows writes its messages to a temp file (created
// under TMPDIR and unlinked at once, so nothing is left behind after a
// crash) and reads them back one by one at its commit. Records then leave
// through the task's bounded queue (max.queue.size), so a transaction of
// any size goes through in bounded memory.
//
// Positions stay Debezium's: changes are emitted after the commit with the
// LSNs the server gave them, the transaction's commit is confirmed to the
// slot only once its records are durable (invariant 1), and a restart
// before that makes the server send the whole transaction again (its commit
// is past the confirmed position).

// spoolEntryOverhead is what one kept message costs besides its bytes
// (slice header, subxid, LSN), counted against the budget.
const spoolEntryOverhead = 48

// streamStats counts what streaming did (tests and diagnostics).
type streamStats struct {
	committed    atomic.Int64 // streamed transactions replayed at their Stream Commit
	aborted      atomic.Int64 // streamed transactions dropped by a Stream Abort
	subAborted   atomic.Int64 // subtransactions dropped by a Stream Abort
	spilledBytes atomic.Int64 // bytes written to temp files
}

// spoolSet holds the in-progress streamed transactions by xid. Reader
// goroutine only.
type spoolSet struct {
	budget int64 // bytes kept in memory over all transactions
	inMem  int64
	txs    map[uint32]*txSpool
	stats  *streamStats
}

func newSpoolSet(budget int64, stats *streamStats) *spoolSet {
	return &spoolSet{budget: budget, txs: map[uint32]*txSpool{}, stats: stats}
}

// txSpool is one streamed transaction's messages, in arrival order: in
// memory, or (once spilled) all of them in a temp file.
type txSpool struct {
	xid      uint32
	firstLSN int64 // WAL start of its first Stream Start: the transaction's first LSN, as a BEGIN's
	mem      []spoolEntry
	memBytes int64
	f        *os.File
	w        *bufio.Writer
	aborted  map[uint32]bool // subtransactions aborted after their messages were written to f
}

type spoolEntry struct {
	subxid uint32
	lsn    int64
	raw    []byte // protocol version 1 message
}

// start registers a block of transaction xid received at lsn.
func (s *spoolSet) start(xid uint32, lsn int64) {
	if s.txs[xid] == nil {
		s.txs[xid] = &txSpool{xid: xid, firstLSN: lsn}
	}
}

// add keeps one message of (sub)transaction subxid of xid.
func (s *spoolSet) add(xid, subxid uint32, lsn int64, raw []byte) error {
	sp := s.txs[xid]
	if sp == nil {
		return fmt.Errorf("postgres: streamed message of transaction %d outside its stream", xid)
	}
	size := int64(len(raw)) + spoolEntryOverhead
	if sp.f == nil && s.inMem+size > s.budget {
		if err := sp.spill(s.stats); err != nil {
			return err
		}
		s.inMem -= sp.memBytes
		sp.memBytes = 0
	}
	if sp.f != nil {
		return sp.write(spoolEntry{subxid: subxid, lsn: lsn, raw: raw}, s.stats)
	}
	sp.mem = append(sp.mem, spoolEntry{subxid: subxid, lsn: lsn, raw: raw})
	sp.memBytes += size
	s.inMem += size
	return nil
}

// abort drops subtransaction subxid of xid, or all of xid when subxid == xid.
func (s *spoolSet) abort(xid, subxid uint32) {
	sp := s.txs[xid]
	if sp == nil {
		return
	}
	if subxid == xid {
		s.inMem -= sp.memBytes
		sp.close()
		delete(s.txs, xid)
		s.stats.aborted.Add(1)
		return
	}
	s.stats.subAborted.Add(1)
	if sp.f != nil {
		if sp.aborted == nil {
			sp.aborted = map[uint32]bool{}
		}
		sp.aborted[subxid] = true
		return
	}
	kept := sp.mem[:0]
	for _, e := range sp.mem {
		if e.subxid == subxid {
			size := int64(len(e.raw)) + spoolEntryOverhead
			sp.memBytes -= size
			s.inMem -= size
			continue
		}
		kept = append(kept, e)
	}
	clear(sp.mem[len(kept):])
	sp.mem = kept
}

// take removes transaction xid from the set for its replay (nil if none of
// its messages was received). The caller closes it.
func (s *spoolSet) take(xid uint32) *txSpool {
	sp := s.txs[xid]
	if sp != nil {
		delete(s.txs, xid)
		s.inMem -= sp.memBytes
	}
	return sp
}

// closeAll drops every transaction (the stream ended).
func (s *spoolSet) closeAll() {
	for xid, sp := range s.txs {
		sp.close()
		delete(s.txs, xid)
	}
	s.inMem = 0
}

// spill moves the transaction's messages to a new temp file.
func (sp *txSpool) spill(stats *streamStats) error {
	f, err := os.CreateTemp("", "connectd-pgoutput-stream-*")
	if err != nil {
		return fmt.Errorf("postgres: spill streamed transaction %d: %w", sp.xid, err)
	}
	// Unlinked at once: the open descriptor keeps the data, a crash leaves
	// nothing behind.
	os.Remove(f.Name())
	sp.f, sp.w = f, bufio.NewWriterSize(f, 64<<10)
	for _, e := range sp.mem {
		if err := sp.write(e, stats); err != nil {
			return err
		}
	}
	sp.mem = nil
	return nil
}

// write appends one entry to the file: subxid (4 bytes), LSN (8), length
// (4), message.
func (sp *txSpool) write(e spoolEntry, stats *streamStats) error {
	var h [16]byte
	binary.BigEndian.PutUint32(h[0:], e.subxid)
	binary.BigEndian.PutUint64(h[4:], uint64(e.lsn))
	binary.BigEndian.PutUint32(h[12:], uint32(len(e.raw)))
	if _, err := sp.w.Write(h[:]); err != nil {
		return fmt.Errorf("postgres: spill streamed transaction %d: %w", sp.xid, err)
	}
	if _, err := sp.w.Write(e.raw); err != nil {
		return fmt.Errorf("postgres: spill streamed transaction %d: %w", sp.xid, err)
	}
	stats.spilledBytes.Add(int64(len(h) + len(e.raw)))
	return nil
}

// each calls fn with every kept message not in an aborted subtransaction,
// in arrival order, releasing each one before the next.
func (sp *txSpool) each(fn func(lsn int64, raw []byte) error) error {
	if sp.f == nil {
		for i := range sp.mem {
			e := sp.mem[i]
			sp.mem[i] = spoolEntry{}
			if err := fn(e.lsn, e.raw); err != nil {
				return err
			}
		}
		sp.mem = nil
		return nil
	}
	if err := sp.w.Flush(); err != nil {
		return fmt.Errorf("postgres: spill streamed transaction %d: %w", sp.xid, err)
	}
	if _, err := sp.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("postgres: read back streamed transaction %d: %w", sp.xid, err)
	}
	r := bufio.NewReaderSize(sp.f, 64<<10)
	var h [16]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("postgres: read back streamed transaction %d: %w", sp.xid, err)
		}
		raw := make([]byte, binary.BigEndian.Uint32(h[12:]))
		if _, err := io.ReadFull(r, raw); err != nil {
			return fmt.Errorf("postgres: read back streamed transaction %d: %w", sp.xid, err)
		}
		if sp.aborted[binary.BigEndian.Uint32(h[0:])] {
			continue
		}
		if err := fn(int64(binary.BigEndian.Uint64(h[4:])), raw); err != nil {
			return err
		}
	}
}

func (sp *txSpool) close() {
	sp.mem = nil
	if sp.f != nil {
		sp.f.Close()
		sp.f, sp.w = nil, nil
	}
}
