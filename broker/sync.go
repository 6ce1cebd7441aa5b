package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
)

// logSyncer makes what the embedded broker wrote durable on request, for
// a broker that does not fsync each batch (embedded.kafka.sync.writes=false,
// the default).
//
// The broker writes every batch to its segment file (one write, no
// buffering) before it acknowledges it, so an acknowledged record survives
// a crash of the process (SIGKILL): it is in the operating system's page
// cache. A crash of the machine can still lose it, as it can with Apache
// Kafka's defaults (the broker leaves flushing to the OS,
// log.flush.interval.messages is unbounded; replication is its durability,
// and a single broker has none). The worker therefore syncs where a lost
// record could not be read again: before a source task stores offsets and
// again before it confirms a position upstream (workerSourceTask.flush,
// DESIGN.md invariant 1), around the commit of an exactly-once source
// transaction and of a flinklite checkpoint, before a sink task commits
// its consumer offsets, and at shutdown before the log is marked clean.
// Between those points the broker acknowledges batches as fast as it
// writes them, instead of fsyncing each one (two fsyncs per batch cost the
// 1M-row snapshot of bench/postgres about a third of its rate, issue 3).
type logSyncer struct {
	dir string
	// syncFile fsyncs one path (syncPath; tests record the calls).
	syncFile func(path string) error

	requested atomic.Int64
	mu        sync.Mutex
	done      int64 // the last request covered by a finished pass
	passes    int   // passes run
	// synced is what each path looked like when a finished pass synced
	// it: a path whose stamp is unchanged has nothing unsynced. Stamps,
	// not a time cutoff, so that a clock stepped back skips nothing.
	synced map[string]fileStamp
	// failed is the error of a failed fsync: it stays. After an fsync
	// error Linux may mark the lost pages clean, and a later fsync of the
	// same file succeeds without writing them, so no later pass can be
	// trusted (PostgreSQL panics on an fsync failure for the same reason).
	failed error
}

// fileStamp identifies the state of a file or directory: an append,
// truncation, rename over it or entry added to or removed from it changes
// one of these (kfake only appends to its files, and rewrites them
// through a new file renamed over the old one; an overwrite in place of
// the same size within one tick of the file system's clock would not
// show).
type fileStamp struct {
	ino, size          int64
	mtimeNs, ctimeNs   int64
	mtimeSec, ctimeSec int64
}

func stampOf(info fs.FileInfo) fileStamp {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{size: info.Size(), mtimeNs: info.ModTime().UnixNano()}
	}
	return fileStamp{ino: int64(st.Ino), size: st.Size, mtimeSec: st.Mtim.Sec, mtimeNs: st.Mtim.Nsec,
		ctimeSec: st.Ctim.Sec, ctimeNs: st.Ctim.Nsec}
}

// newLogSyncer syncs the files under dir (the broker's log directory).
func newLogSyncer(dir string) *logSyncer {
	return &logSyncer{dir: dir, syncFile: syncPath, synced: map[string]fileStamp{}}
}

// Sync fsyncs every file and directory under the log directory that
// changed since a previous pass synced it (all of them the first time, and
// the log directory's parent, which holds its entry), directories after
// the entries in them, so that everything the broker wrote before Sync was
// called is on stable storage when it returns nil. Concurrent callers
// share one pass that started after they called (group commit). A path
// removed during the pass (a segment deleted by retention or compaction)
// is skipped. After an fsync error every call returns that error.
func (s *logSyncer) Sync() error {
	ticket := s.requested.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	if s.done >= ticket {
		return nil // a pass that began after this call has finished
	}
	covers := s.requested.Load()
	first := s.passes == 0
	s.passes++
	if err := s.pass(); err != nil {
		s.failed = fmt.Errorf("embedded broker: syncing its log (no offset is stored until the worker restarts): %w", err)
		return s.failed
	}
	if first {
		if err := s.syncFile(filepath.Dir(s.dir)); err != nil {
			s.failed = fmt.Errorf("embedded broker: syncing its log (no offset is stored until the worker restarts): %w", err)
			return s.failed
		}
	}
	s.done = covers
	return nil
}

// pass syncs what changed under s.dir.
func (s *logSyncer) pass() error {
	var dirs []string
	var dirStamps []fileStamp
	seen := make(map[string]bool, len(s.synced))
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != s.dir {
				return nil
			}
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		seen[path] = true
		stamp := stampOf(info)
		if d.IsDir() {
			// Synced after the entries in it (below), so its stamp is
			// the one read before them.
			dirs, dirStamps = append(dirs, path), append(dirStamps, stamp)
			return nil
		}
		if old, ok := s.synced[path]; ok && old == stamp {
			return nil
		}
		if err := s.syncFile(path); err != nil {
			return err
		}
		s.synced[path] = stamp
		return nil
	})
	if err != nil {
		return err
	}
	// Deepest first: a new directory's entry in its parent is synced
	// after the directory itself.
	for i := len(dirs) - 1; i >= 0; i-- {
		if old, ok := s.synced[dirs[i]]; ok && old == dirStamps[i] {
			continue
		}
		if err := s.syncFile(dirs[i]); err != nil {
			return err
		}
		s.synced[dirs[i]] = dirStamps[i]
	}
	for p := range s.synced {
		if !seen[p] {
			delete(s.synced, p)
		}
	}
	return nil
}

// syncPath fsyncs one file or directory; one that no longer exists is
// skipped.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
