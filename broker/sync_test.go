package broker

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The first Sync fsyncs every file and directory of the log (and the
// log directory's entry in its parent); later ones only what changed
// since, directories after their entries; a failed fsync fails that call
// and every later one.
func TestLogSyncerSyncsWhatChanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kafka")
	part := filepath.Join(dir, "partitions", "t-0")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	seg, idx, groups := filepath.Join(part, "0.dat"), filepath.Join(part, "0.idx"), filepath.Join(dir, "groups.log")
	appendTo := func(path string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("x"))
		f.Close()
	}
	appendTo(seg)
	appendTo(idx)
	appendTo(groups)
	var synced []string
	var fail error
	s := newLogSyncer(dir)
	s.syncFile = func(p string) error {
		synced = append(synced, p)
		return fail
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	want := []string{groups, seg, idx, part, filepath.Dir(part), dir, filepath.Dir(dir)}
	slices.Sort(synced[:3])
	slices.Sort(want[:3])
	if !slices.Equal(synced, want) {
		t.Fatalf("first sync: %q, want every file, then the directories deepest first, then the parent %q", synced, want)
	}

	synced = nil
	if err := s.Sync(); err != nil || len(synced) != 0 {
		t.Fatalf("nothing changed: synced %q (%v)", synced, err)
	}

	appendTo(seg)
	synced = nil
	if err := s.Sync(); err != nil || !slices.Equal(synced, []string{seg}) {
		t.Fatalf("one segment appended to: synced %q (%v), want only it", synced, err)
	}

	seg2 := filepath.Join(part, "7.dat")
	appendTo(seg2)
	synced = nil
	if err := s.Sync(); err != nil || !slices.Equal(synced, []string{seg2, part}) {
		t.Fatalf("a new segment: synced %q (%v), want it and then its directory", synced, err)
	}

	fail = errors.New("EIO")
	appendTo(idx)
	if err := s.Sync(); err == nil {
		t.Fatal("an fsync error must fail Sync")
	}
	fail, synced = nil, nil
	if err := s.Sync(); err == nil || len(synced) != 0 {
		t.Fatalf("after an fsync error every Sync must fail without trying again: %v, synced %q", err, synced)
	}
}

// Concurrent callers share a pass that began after they called (group
// commit): 20 callers blocked behind one pass need one more, not 20.
func TestLogSyncerGroupCommit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newLogSyncer(dir)
	release := make(chan struct{})
	var once sync.Once
	s.syncFile = func(p string) error {
		once.Do(func() { <-release })
		return nil
	}
	done := make(chan error, 21)
	go func() { done <- s.Sync() }()
	for s.requested.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	for i := 0; i < 20; i++ {
		go func() { done <- s.Sync() }()
	}
	for s.requested.Load() != 21 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	for i := 0; i < 21; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if s.passes != 2 {
		t.Fatalf("%d passes for 21 callers, want 2 (the first, and one for the 20 that waited)", s.passes)
	}
}

// With embedded.kafka.sync.writes=false the broker still writes every
// batch to its segment before acknowledging it (a SIGKILL loses nothing,
// integration TestSIGKILLMidStreamLosesNothing), and Sync fsyncs it: a
// produced record is in a segment file on disk once Produce returns, and
// Sync succeeds on the live log.
func TestEmbeddedBrokerWithoutSyncWritesSyncsOnRequest(t *testing.T) {
	dir := t.TempDir()
	b, err := Start(freeAddr(t), dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.syncer == nil {
		t.Fatal("a broker without sync writes must sync on request")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation(), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	marker := "record-that-must-be-on-disk"
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "synced", Value: []byte(marker)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	found := false
	filepath.WalkDir(filepath.Join(dir, "kafka"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".dat" {
			raw, _ := os.ReadFile(p)
			found = found || bytes.Contains(raw, []byte(marker))
		}
		return nil
	})
	if !found {
		t.Fatal("the acknowledged record is in no segment file")
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	var nilBroker *Broker
	if err := nilBroker.Sync(); err != nil {
		t.Fatal(err)
	}
}

// UncleanShutdown: no log yet is a first start; a log a clean Close marked
// is clean; a copy of a running broker's data dir (what a SIGKILL leaves)
// is not — and asking changes nothing.
func TestUncleanShutdown(t *testing.T) {
	dir := t.TempDir()
	if UncleanShutdown(dir) {
		t.Fatal("an empty data dir is a first start, not a crash")
	}
	b, err := Start(freeAddr(t), dir, false)
	if err != nil {
		t.Fatal(err)
	}
	crashed := crashCopy(t, dir)
	b.Close()
	if UncleanShutdown(dir) {
		t.Fatal("a cleanly closed broker's log counts as a crash")
	}
	if !UncleanShutdown(crashed) || !UncleanShutdown(crashed) {
		t.Fatal("a running broker's copy must count as a crash, every time it is asked")
	}
}
