package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Under exactly.once.source.support=enabled the records and their offsets
// are committed in transactions of the task's transactional.id: a
// read_committed consumer sees them, the offsets topic holds the last
// offset, Commit follows the commit, and a restarted worker resumes right
// after it.
func TestExactlyOnceSourceTransactions(t *testing.T) {
	dir, kafka := t.TempDir(), freeAddr(t)
	shared := &counterShared{}
	w := startTestWorker(t, dir, kafka, shared, "exactly.once.source.support", "enabled", "group.id", "eosgroup")
	ctx := context.Background()
	if _, err := w.Herder.CreateConnector(ctx, "c1", map[string]string{"connector.class": "test.CounterSource", "topic": "t1", "count": "250"}); err != nil {
		t.Fatal(err)
	}
	got := consumeCommitted(t, kafka, "t1", 250)
	waitFor(t, func() bool {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		return len(shared.committed) > 0 && shared.committed[len(shared.committed)-1] == 249
	})
	offs, err := w.Herder.ConnectorOffsets(ctx, "c1")
	if err != nil || len(offs) != 1 || offs[0].Offset["seq"] != int64(249) {
		t.Fatalf("offsets %+v %v", offs, err)
	}
	w.Close()

	w2 := startTestWorker(t, dir, kafka, shared, "exactly.once.source.support", "enabled", "group.id", "eosgroup")
	defer w2.Close()
	got = consumeCommitted(t, kafka, "t1", 500)
	for i, v := range got {
		if want := fmt.Sprintf(`{"schema":{"type":"string","optional":false},"payload":"record-%d"}`, i); v != want {
			t.Fatalf("record %d = %s, want %s", i, v, want)
		}
	}
	if transactionalID("eosgroup", TaskID{"c1", 0}) != "eosgroup-c1-0" {
		t.Fatal("transactional.id")
	}
}

func consumeCommitted(t *testing.T, broker, topic string, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("got %d of %d committed records from %s", len(out), want, topic)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}
