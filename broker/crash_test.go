package broker

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// A SIGKILL kills the embedded broker together with the worker, so a
// transaction that a task had open is never ended by its producer. Kafka's
// transaction coordinator ends such a transaction with an ABORT control
// record (on the producer's next InitProducerId or at
// transaction.timeout.ms; KIP-98), and read_committed consumers rely on
// that record: kgo's and the Java consumer's aborted-transaction filter
// drops every batch of the producer id from the aborted transaction's
// first offset until that producer's ABORT marker. This test crashes the
// embedded broker (its data dir is copied while it runs, as a SIGKILL
// leaves it) with a transaction open, reopens it, and checks that:
//   - the offsets-style log reads to its end read_committed (it hung: the
//     open transaction's batches end the log and no marker follows);
//   - a later transaction of the same transactional.id (same producer id,
//     bumped epoch) is visible read_committed (it was dropped: rows
//     missing);
//   - after a second crash the aborted transaction stays aborted (kfake's
//     replay closed it with the next COMMIT marker of the producer id:
//     aborted rows came back, duplicated).
func TestEmbeddedBrokerAbortsTransactionOpenAtCrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	addr := freeAddr(t)
	b, err := Start(addr, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	const topic = "t"
	// Created explicitly, as topicCreator does (an auto-created topic is
	// not persisted before a clean shutdown).
	createTopic(t, addr, topic)
	produceTxn(t, addr, topic, "a", true)
	produceTxn(t, addr, topic, "b", false) // left open by the "crash"
	dir2 := crashCopy(t, dir)
	b.Close()

	b2, err := Start(addr, dir2, false)
	if err != nil {
		t.Fatal(err)
	}
	// The index is intact: the repair (index.go) must agree with
	// every entry kfake wrote, or it would rewrite them at each crash.
	if len(b2.repairedIndexes) != 0 {
		t.Fatalf("indexes rewritten after a crash that left them intact: %q", b2.repairedIndexes)
	}
	if want := (openTxn{topic: topic, partition: 0, producer: b2.recovered[0].producer, epoch: b2.recovered[0].epoch, first: 2}); len(b2.recovered) != 1 || b2.recovered[0] != want {
		t.Fatalf("aborted at start: %+v, want [%+v] (a: offset 0, its COMMIT: 1, b: 2)", b2.recovered, want)
	}
	var seen []string
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	l, err := kafkalog.Open(rctx, []string{addr}, topic, kafkalog.TopicSpec{Partitions: 1, ReadCommitted: true},
		func(r kafkalog.Record) { seen = append(seen, string(r.Value)) })
	cancel()
	if err != nil {
		t.Fatalf("reading the log read_committed to its end after the crash: %v", err)
	}
	l.Close()
	if !slices.Equal(seen, []string{"a"}) {
		t.Fatalf("read_committed after the crash: %q, want [a]", seen)
	}
	produceTxn(t, addr, topic, "c", true)
	if got := readCommitted(t, addr, topic, 2); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("read_committed after a new transaction of the same transactional.id: %q, want [a c]", got)
	}
	dir3 := crashCopy(t, dir2)
	b2.Close()

	b3, err := Start(addr, dir3, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b3.Close()
	if len(b3.recovered) != 0 {
		t.Fatalf("aborted at the second start: %+v, want none", b3.recovered)
	}
	produceTxn(t, addr, topic, "d", true)
	if got := readCommitted(t, addr, topic, 3); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Fatalf("read_committed after a second crash: %q, want [a c d]", got)
	}
}

func createTopic(t *testing.T, addr, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
}

// produceTxn writes value in one transaction of transactional.id "tx" and
// commits it, or leaves it open (flushed to the broker) when !commit.
func produceTxn(t *testing.T, addr, topic, value string, commit bool) {
	t.Helper()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("tx"), kgo.AllowAutoTopicCreation(),
		kgo.TransactionTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if !commit {
		return // the client is abandoned, as a killed process's
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	cl.Close()
}

// readCommitted reads topic read_committed from the start until it has
// want records, then 500 ms more (a record that should not be there comes
// late).
func readCommitted(t *testing.T, addr, topic string, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	deadline := time.Now().Add(5 * time.Second)
	var settle time.Time
	for time.Now().Before(deadline) && (settle.IsZero() || time.Now().Before(settle)) {
		pctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		cancel()
		if len(got) >= want && settle.IsZero() {
			settle = time.Now().Add(500 * time.Millisecond)
		}
	}
	return got
}

// crashCopy copies the data dir of a running broker: what a SIGKILL leaves
// on disk (batches are written before they are acknowledged; nothing is
// saved at shutdown). The brokers here run as the worker's default,
// without per-batch fsync.
func crashCopy(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// A crash between the control records of one transaction (kfake's EndTxn
// writes them partition by partition) leaves it committed in some
// partitions and open in others. Kafka's coordinator completes such a
// commit after a restart (it logged PrepareCommit first); the embedded
// broker does the same from the COMMIT marker of the same producer id and
// epoch (transaction version 2, KIP-890). An interrupted abort stays
// aborted. Otherwise a task's records and its offsets, written in one
// transaction, part ways: rows duplicated or missing.
func TestEmbeddedBrokerCompletesTransactionInterruptedByCrash(t *testing.T) {
	for _, commit := range []bool{true, false} {
		ctx := context.Background()
		dir, addr := t.TempDir(), freeAddr(t)
		b, err := Start(addr, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		createTopic(t, addr, "x")
		createTopic(t, addr, "y")
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("tx"), kgo.TransactionTimeout(60*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "x", Value: []byte("x1")}, &kgo.Record{Topic: "y", Value: []byte("y1")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		pid, epoch, err := cl.ProducerID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The crash hits after EndTxn wrote its marker to x, before y.
		resp, err := kadm.NewClient(cl).WriteTxnMarkers(ctx, kadm.TxnMarkers{ProducerID: pid, ProducerEpoch: epoch, Commit: commit, Topics: kadm.TopicsSet{"x": {0: {}}}})
		if err == nil {
			err = markerErrors(resp)
		}
		if err != nil {
			t.Fatal(err)
		}
		dir2 := crashCopy(t, dir)
		b.Close()

		b2, err := Start(addr, dir2, false)
		if err != nil {
			t.Fatal(err)
		}
		want := []openTxn{{topic: "y", partition: 0, producer: pid, epoch: epoch, first: 0, commit: commit}}
		if !slices.Equal(b2.recovered, want) {
			t.Fatalf("commit=%v: ended at start %+v, want %+v", commit, b2.recovered, want)
		}
		for topic, want := range map[string][]string{"x": {"x1"}, "y": {"y1"}} {
			if !commit {
				want = nil
			}
			var seen []string
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			l, err := kafkalog.Open(rctx, []string{addr}, topic, kafkalog.TopicSpec{Partitions: 1, ReadCommitted: true},
				func(r kafkalog.Record) { seen = append(seen, string(r.Value)) })
			cancel()
			if err != nil {
				t.Fatalf("commit=%v: reading %s read_committed to its end: %v", commit, topic, err)
			}
			l.Close()
			if !slices.Equal(seen, want) {
				t.Fatalf("commit=%v: %s read_committed: %q, want %q", commit, topic, seen, want)
			}
		}
		b2.Close()
	}
}

// A producer from before KIP-890 (EndTxn below v5; Kafka 3.x clients) keeps
// its epoch across transactions, so a COMMIT marker of its epoch in
// another partition may end an older transaction: the open one is
// aborted, as kfake's own replay does.
func TestEmbeddedBrokerAbortsOpenTransactionOfProducerReusingEpochs(t *testing.T) {
	ctx := context.Background()
	dir, addr := t.TempDir(), freeAddr(t)
	b, err := Start(addr, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	createTopic(t, addr, "x")
	createTopic(t, addr, "y")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("tx"), kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		topic  string
		commit bool
	}{{"x", true}, {"x", true}, {"y", false}} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: r.topic, Value: []byte(r.topic)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if r.commit {
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
		}
	}
	dir2 := crashCopy(t, dir)
	b.Close()
	b2, err := Start(addr, dir2, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if len(b2.recovered) != 1 || b2.recovered[0].topic != "y" || b2.recovered[0].commit || !b2.recovered[0].epochReused {
		t.Fatalf("ended at start %+v, want y aborted (epoch reused)", b2.recovered)
	}
	if got := readCommitted(t, addr, "y", 0); len(got) != 0 {
		t.Fatalf("y read_committed: %q, want nothing", got)
	}
}

// kfake writes each batch to its segment file (<base>.dat) and then its
// index entry (<base>.idx: leader epoch and the in-transaction flag that
// its log replay uses to find transactions), in two writes. A SIGKILL
// between them leaves a batch without its entry, and every entry appended
// after the restart lands one slot early: the replay then reads a
// transactional batch's flag from the control batch before it, takes the
// batch as non-transactional and no longer counts it in the aborted range
// its ABORT marker closes. Aborted records become visible to read_committed
// consumers: under exactly-once source support the records of a
// transaction that the crash left open (aborted at start) and re-sent by
// the restarted task appear twice (integration
// TestExactlyOnceSourceSurvivesSIGKILL: "duplicated: [3375×2 3376×2
// 3377×2 5669×2 … 5674×2]"). This test leaves that state (the data dir
// of a crash with the last index entry cut off) and checks that aborted
// transactions stay invisible across two more crashes.
func TestEmbeddedBrokerRepairsIndexCutByCrash(t *testing.T) {
	// b's entry lost whole, or written in part (a write cut by the kill).
	for _, cut := range []int64{2 * 15, 2*15 + 7} {
		t.Run(strconv.FormatInt(cut, 10), func(t *testing.T) { testRepairsIndexCutByCrash(t, cut) })
	}
}

func testRepairsIndexCutByCrash(t *testing.T, cut int64) {
	dir, addr := t.TempDir(), freeAddr(t)
	b, err := Start(addr, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	const topic = "t"
	createTopic(t, addr, topic)
	produceTxn(t, addr, topic, "a", true)
	produceTxn(t, addr, topic, "b", false) // open at the crash
	dir2 := crashCopy(t, dir)
	b.Close()
	// a, its COMMIT, b: three batches, three 15-byte entries; the crash
	// hit after b's batch was written and before its entry.
	idx := filepath.Join(dir2, "kafka", "partitions", topic+"-0", "0.idx")
	fi, err := os.Stat(idx)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 3*15 {
		t.Fatalf("%s: %d bytes, want 3 entries of 15", idx, fi.Size())
	}
	if err := os.Truncate(idx, cut); err != nil {
		t.Fatal(err)
	}

	b2, err := Start(addr, dir2, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(b2.recovered) != 1 || b2.recovered[0].commit {
		t.Fatalf("ended at start: %+v, want b aborted", b2.recovered)
	}
	if !slices.Equal(b2.repairedIndexes, []string{idx}) {
		t.Fatalf("indexes rewritten at start: %q, want [%s]", b2.repairedIndexes, idx)
	}
	if fi, err := os.Stat(idx); err != nil || fi.Size() != 4*15 {
		t.Fatalf("%s after the start: %v, %v; want 4 entries (b's restored, ABORT)", idx, fi, err)
	}
	produceTxn(t, addr, topic, "c", true)
	abortTxn(t, addr, topic, "d")
	produceTxn(t, addr, topic, "e", true)
	if got := readCommitted(t, addr, topic, 3); !slices.Equal(got, []string{"a", "c", "e"}) {
		t.Fatalf("read_committed after the crash: %q, want [a c e]", got)
	}
	for i := range 2 { // each start after a crash replays the whole log
		dir3 := crashCopy(t, dir2)
		b2.Close()
		if b2, err = Start(addr, dir3, false); err != nil {
			t.Fatal(err)
		}
		dir2 = dir3
		if len(b2.repairedIndexes) != 0 {
			t.Fatalf("crash %d more: indexes rewritten %q, want none (intact)", i+1, b2.repairedIndexes)
		}
		if got := readCommitted(t, addr, topic, 3); !slices.Equal(got, []string{"a", "c", "e"}) {
			t.Fatalf("read_committed after crash %d more: %q, want [a c e] (b and d aborted)", i+1, got)
		}
	}
	b2.Close()
}

// abortTxn writes value in one transaction of transactional.id "tx" and
// aborts it.
func abortTxn(t *testing.T, addr, topic, value string) {
	t.Helper()
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID("tx"), kgo.TransactionTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}
