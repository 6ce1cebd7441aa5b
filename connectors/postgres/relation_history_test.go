package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/testenv"
)

// memStore is an in-memory offset storage of every partition, read and
// written as a worker's (connect.OffsetReader and connect.OffsetWriter),
// round-tripped through JSON as the offsets topic does.
type memStore struct {
	mu     sync.Mutex
	m      map[string][]byte
	writes int
}

func partitionKey(p map[string]any) string { b, _ := json.Marshal(p); return string(b) }

func (s *memStore) Offset(ctx context.Context, p map[string]any) (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[partitionKey(p)]
	if !ok {
		return nil, nil
	}
	var out map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return out, d.Decode(&out)
}

func (s *memStore) WriteOffsets(ctx context.Context, offs []connect.PartitionOffset) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	for _, o := range offs {
		if o.Offset == nil {
			delete(s.m, partitionKey(o.Partition))
			continue
		}
		b, err := json.Marshal(o.Offset)
		if err != nil {
			return err
		}
		s.m[partitionKey(o.Partition)] = b
	}
	s.writes++
	return nil
}

type storeCtx struct{ s *memStore }

func (c storeCtx) OffsetReader() connect.OffsetReader { return c.s }
func (c storeCtx) WriteOffsets(ctx context.Context, offs []connect.PartitionOffset) error {
	return c.s.WriteOffsets(ctx, offs)
}

var _ connect.OffsetWriter = storeCtx{}

func TestRelationHistoryFindAndPrune(t *testing.T) {
	ctx := context.Background()
	st := &memStore{}
	h := newRelationHistory(storeCtx{st}, "srv")
	if h == nil {
		t.Fatal("no history with an OffsetWriter")
	}
	if newRelationHistory(taskCtx{&memOffsets{}}, "srv") != nil {
		t.Fatal("a history without an OffsetWriter")
	}
	wal := func(lsn int64) func(context.Context) (int64, error) {
		return func(context.Context) (int64, error) { return lsn, nil }
	}
	if err := h.begin(ctx, wal(1000)); err != nil {
		t.Fatal(err)
	}
	if h.replayUntil != 0 {
		t.Fatal("first run: something to replay")
	}
	a := []relShape{{"id", 23, -1}}
	ab := []relShape{{"id", 23, -1}, {"b", 25, -1}}
	f1 := &catalogFacts{Columns: []factColumn{{Name: "id", TypeOID: 23, Default: "1"}}}
	f2 := &catalogFacts{Columns: []factColumn{{Name: "id", TypeOID: 23, Default: "2"}, {Name: "b", TypeOID: 25}}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.record(ctx, 7, histKey{100, 90}, a, f1, 0))
	must(h.record(ctx, 7, histKey{300, 250}, ab, f2, 0))

	// a restarted task after a kill: the stored state says "not clean"
	h2 := newRelationHistory(storeCtx{st}, "srv")
	must(h2.begin(ctx, wal(1000)))
	if h2.replayUntil != 1000 {
		t.Fatalf("after a run that did not finish: replay until %d, want 1000", h2.replayUntil)
	}
	find := func(k histKey, shape []relShape, first bool) *catalogFacts {
		t.Helper()
		f, err := h2.find(ctx, 7, k, shape, first)
		must(err)
		return f
	}
	if f := find(histKey{100, 90}, a, false); f == nil || f.Columns[0].Default != "1" {
		t.Fatalf("exact key: %+v", f)
	}
	// a later transaction with a smaller change LSN still comes after
	if f := find(histKey{200, 50}, a, true); f == nil || f.Columns[0].Default != "1" {
		t.Fatalf("first rebuild of the session after a kill: %+v", f)
	}
	if f := find(histKey{200, 50}, a, false); f != nil {
		t.Fatalf("a later rebuild not recorded reads the catalog, got %+v", f)
	}
	if f := find(histKey{400, 10}, a, true); f != nil {
		t.Fatalf("a version of other columns is not used, got %+v", f)
	}
	if f := find(histKey{50, 10}, a, true); f != nil {
		t.Fatalf("before the first version: %+v", f)
	}
	if f := find(histKey{300, 250}, ab, false); f == nil || len(f.Columns) != 2 {
		t.Fatalf("second version: %+v", f)
	}
	if f := find(histKey{1000, 0}, ab, true); f != nil {
		t.Fatalf("a transaction that commits after the WAL position at the start reads the catalog, got %+v", f)
	}
	// a stop with everything committed, but short of the replay: not clean
	must(h2.finish(true, 999))
	h3 := newRelationHistory(storeCtx{st}, "srv")
	must(h3.begin(ctx, wal(1200)))
	if h3.replayUntil != 1200 {
		t.Fatalf("after a stop short of the replay: replay until %d, want 1200", h3.replayUntil)
	}
	must(h3.finish(false, 5000)) // records queued and not committed
	// a clean finish: the next run reads the catalog at its first rebuild
	h3 = newRelationHistory(storeCtx{st}, "srv")
	must(h3.begin(ctx, wal(1300)))
	must(h3.finish(true, 1300))
	h3 = newRelationHistory(storeCtx{st}, "srv")
	must(h3.begin(ctx, wal(1400)))
	if h3.replayUntil != 0 {
		t.Fatal("after a clean finish: something to replay")
	}
	if f, _ := h3.find(ctx, 7, histKey{500, 400}, ab, true); f != nil {
		t.Fatalf("after a clean finish the first rebuild reads the catalog, got %+v", f)
	}
	// versions superseded before the confirmed LSN go
	must(h3.record(ctx, 7, histKey{600, 590}, a, f1, 400))
	vs, _ := newRelationHistory(storeCtx{st}, "srv").load(ctx, 7)
	if len(vs) != 2 || vs[0].Commit != 300 || vs[1].Commit != 600 {
		t.Fatalf("after pruning at 400: %+v", vs)
	}
}

// maskEnvelopeTime zeroes the envelope's ts_ms/ts_us/ts_ns (the time of
// processing) in a JsonConverter value.
var envelopeTime = regexp.MustCompile(`"ts_ms":\d+,"ts_us":\d+,"ts_ns":\d+}}$`)

func recordBytes(t *testing.T, r *connect.SourceRecord) (key, value []byte) {
	t.Helper()
	kc, vc := converters.NewJSONConverter(), converters.NewJSONConverter()
	if err := kc.Configure(map[string]string{}, true); err != nil {
		t.Fatal(err)
	}
	if err := vc.Configure(map[string]string{}, false); err != nil {
		t.Fatal(err)
	}
	key, err := kc.FromConnect(r.Topic, r.KeySchema, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	value, err = vc.FromConnect(r.Topic, r.ValueSchema, r.Value)
	if err != nil {
		t.Fatal(err)
	}
	return key, envelopeTime.ReplaceAll(value, []byte(`"ts_ms":0,"ts_us":0,"ts_ns":0}}`))
}

// A task stopped with records not committed (as a kill leaves it) replays
// them with the defaults of their first emission; a task stopped after
// everything was committed reads the catalog again at its restart, as it
// always did.
func TestRelationHistoryReplayAndCleanRestart(t *testing.T) {
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), "hist"); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, "hist", `CREATE TABLE public.item (id int PRIMARY KEY, note text DEFAULT 'a')`)
	cfg := baseConfig(pg, "hist")
	cfg["snapshot.mode"] = "no_data"
	cfg["table.include.list"] = `public\.item`
	st := &memStore{}
	main := map[string]any{"server": "dbserver1"}
	start := func() *Task {
		t.Helper()
		task := NewTask()
		if err := task.Start(context.Background(), storeCtx{st}, cfg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { task.Stop() })
		return task
	}
	commit := func(task *Task, r *connect.SourceRecord) {
		t.Helper()
		if err := st.WriteOffsets(context.Background(), []connect.PartitionOffset{{Partition: main, Offset: r.SourceOffset}}); err != nil {
			t.Fatal(err)
		}
		if err := task.Commit(context.Background(), task.partition, r.SourceOffset); err != nil {
			t.Fatal(err)
		}
	}
	noteDefault := func(r *connect.SourceRecord) any {
		return r.ValueSchema.Field("after").Schema.Field("note").Schema.Default
	}

	task := start()
	exec(t, pg, "hist", `INSERT INTO item VALUES (1)`)
	r1 := pollN(t, task, 1)[0]
	if d := noteDefault(r1); d != "a" {
		t.Fatalf("first run: default %v, want a", d)
	}
	commit(task, r1)
	task.Stop() // everything queued was committed: a clean stop

	exec(t, pg, "hist", `ALTER TABLE item ALTER COLUMN note SET DEFAULT 'b'`)
	exec(t, pg, "hist", `INSERT INTO item VALUES (2)`)
	task = start()
	first := pollN(t, task, 1)
	if d := noteDefault(first[0]); d != "b" {
		t.Fatalf("after a clean stop: default %v, want b (the catalog is read again)", d)
	}
	// not committed from here on; the default changes again
	exec(t, pg, "hist", `ALTER TABLE item ALTER COLUMN note SET DEFAULT 'c'`)
	exec(t, pg, "hist", `INSERT INTO item VALUES (3)`)
	first = append(first, pollN(t, task, 1)...)
	task.Stop() // records queued and not committed: as after a kill

	writes := st.writes
	task = start()
	replay := pollN(t, task, 2)
	for i := range replay {
		fk, fv := recordBytes(t, first[i])
		rk, rv := recordBytes(t, replay[i])
		if !bytes.Equal(fk, rk) || !bytes.Equal(fv, rv) {
			t.Errorf("replayed record %d differs from its first emission:\n%s\n%s\nfirst:\n%s\n%s", i, rk, rv, fk, fv)
		}
		if d := noteDefault(replay[i]); d != "b" {
			t.Errorf("replayed record %d: default %v, want b", i, d)
		}
	}
	// the replay took the stored version: only the state was written
	if st.writes != writes+1 {
		t.Errorf("%d history writes during the replay, want 1 (the run state)", st.writes-writes)
	}

	// commit the replayed insert 2 only and stop (3 is not committed): the
	// next run's first change is insert 3, where no version starts; the
	// version in effect there (b) is used, not today's catalog (c)
	commit(task, replay[0])
	task.Stop()
	task = start()
	again := pollN(t, task, 1)
	fk, fv := recordBytes(t, first[1])
	rk, rv := recordBytes(t, again[0])
	if !bytes.Equal(fk, rk) || !bytes.Equal(fv, rv) {
		t.Errorf("insert 3 replayed again differs from its first emission:\n%s\n%s\nfirst:\n%s\n%s", rk, rv, fk, fv)
	}
	pollQuiet(t, task, 300*time.Millisecond)
}
