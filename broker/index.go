package broker

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
)

// Repair of kfake's segment indexes after a crash.
//
// kfake (franz-go pkg/kfake persist.go, persistBatchToSegment) stores each
// partition as segment files <base>.dat, the batches in wire format, and
// beside each an index <base>.idx of one 15-byte entry per batch, in
// order: version (1), checksum (low byte of the CRC-32C of the next 13
// bytes), partition leader epoch (int32 little-endian), max earlier
// timestamp (int64 little-endian), flags (bit 0: the batch was produced in
// a transaction). It writes the batch and then its entry, two writes, so a
// crash between them leaves a batch without an entry. kfake's load
// (loadSegmentBatches) reads entry i for batch i and only truncates
// surplus entries: with one entry missing, every entry appended after the
// restart belongs to the next batch. Its log replay
// (loadPartitionFullReplay) takes a transaction's extent from the flag, so
// a transactional batch read with its neighbour's cleared flag is left out
// of the aborted range that its ABORT marker closes, and read_committed
// consumers get the aborted records (integration
// TestExactlyOnceSourceSurvivesSIGKILL saw them as duplicates; unit test
// TestEmbeddedBrokerRepairsIndexCutByCrash).
//
// Every field of an entry follows from its batch: kfake sets the batch's
// PartitionLeaderEpoch to the epoch it indexes (data.go pushBatch), flags
// a batch in a transaction exactly when it is transactional and not a
// control batch (produce passes the batch's transactional bit, markers
// pass false), and recomputes the max earlier timestamp at load
// (rebuildMaxTimestampMeta). repairSegmentIndexes rewrites an index that
// disagrees with its segment from the segment.

const (
	indexEntrySize    = 15 // kfake persist.go indexEntrySize
	indexEntryVersion = 1  // kfake persist.go currentPersistVersion
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// repairSegmentIndexes checks every segment under dir (<data.dir>/kafka)
// against its index and rewrites (durably: temporary file, fsync, rename)
// the indexes that miss entries, have surplus ones or disagree on a
// batch's leader epoch or transaction flag. It returns the paths of the
// indexes it rewrote. Batches are read as kfake reads them: up to the
// first incomplete batch or the first whose CRC does not match (kfake
// truncates the segment there at load).
func repairSegmentIndexes(dir string) ([]string, error) {
	var repaired []string
	err := filepath.WalkDir(filepath.Join(dir, "partitions"), func(p string, d os.DirEntry, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".dat") {
			return nil
		}
		seg, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		idxPath := strings.TrimSuffix(p, ".dat") + ".idx"
		idx, err := os.ReadFile(idxPath)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		want := segmentIndex(seg)
		if indexAgrees(idx, want) {
			return nil
		}
		if err := writeFileDurably(idxPath, want); err != nil {
			return err
		}
		repaired = append(repaired, idxPath)
		return nil
	})
	return repaired, err
}

// segmentIndex returns the index kfake writes for the batches of seg.
func segmentIndex(seg []byte) []byte {
	var out []byte
	var maxTS int64
	for pos := 0; pos+12 <= len(seg); {
		// Batch: base offset (8), length (4) of what follows; then leader
		// epoch (4), magic (1), CRC (4) of the bytes from attributes on,
		// attributes (2), last offset delta (4), first timestamp (8), max
		// timestamp (8), ...
		n := int(binary.BigEndian.Uint32(seg[pos+8 : pos+12]))
		end := pos + 12 + n
		if n < 61-12 || n > 1<<30 || end > len(seg) {
			break
		}
		b := seg[pos:end]
		if binary.BigEndian.Uint32(b[17:21]) != crc32.Checksum(b[21:], castagnoli) {
			break
		}
		attrs := binary.BigEndian.Uint16(b[21:23])
		inTx := attrs&0x10 != 0 && attrs&0x20 == 0 // transactional, not control
		if ts := int64(binary.BigEndian.Uint64(b[35:43])); ts > maxTS {
			maxTS = ts
		}
		var e [indexEntrySize]byte
		e[0] = indexEntryVersion
		binary.LittleEndian.PutUint32(e[2:6], binary.BigEndian.Uint32(b[12:16]))
		binary.LittleEndian.PutUint64(e[6:14], uint64(maxTS))
		if inTx {
			e[14] = 1
		}
		e[1] = byte(crc32.Checksum(e[2:], castagnoli))
		out = append(out, e[:]...)
		pos = end
	}
	return out
}

// indexAgrees reports whether idx has want's entries, ignoring the max
// earlier timestamp (recomputed by kfake at load, and a running value over
// earlier segments that a single segment does not give).
func indexAgrees(idx, want []byte) bool {
	if len(idx) != len(want) {
		return false
	}
	for i := 0; i < len(want); i += indexEntrySize {
		got, w := idx[i:i+indexEntrySize], want[i:i+indexEntrySize]
		if got[0] != w[0] || got[1] != byte(crc32.Checksum(got[2:], castagnoli)) ||
			!bytes.Equal(got[2:6], w[2:6]) || got[14] != w[14] {
			return false
		}
	}
	return true
}

// writeFileDurably replaces path with data: a temporary file in the same
// directory, fsynced, renamed over path, and the directory fsynced.
func writeFileDurably(path string, data []byte) error {
	tmp := path + ".repair"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}
