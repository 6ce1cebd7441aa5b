package registry

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSchemasTopicLayoutAndRestart registers schemas through a registry on
// a Kafka-protocol broker, checks the `_schemas` records are Confluent's
// layout byte for byte, then opens a second registry on the same topic (a
// restart, or another worker): it answers the same ids and continues the
// id sequence.
func TestSchemasTopicLayoutAndRestart(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(-1, "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r1, err := Open(ctx, c.ListenAddrs(), Topic)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := r1.Register(ctx, "users-value", schemaV1); err != nil || id != 1 {
		t.Fatalf("register: %d %v", id, err)
	}
	if id, err := r1.Register(ctx, "users-value", schemaV2); err != nil || id != 2 {
		t.Fatalf("register v2: %d %v", id, err)
	}
	if _, err := r1.SetCompatibility(ctx, "users-value", "full"); err != nil {
		t.Fatal(err)
	}
	if _, err := r1.DeleteVersion(ctx, "users-value", 2, false); err != nil {
		t.Fatal(err)
	}
	r1.Close()

	// The records, as Confluent's KafkaStore writes them.
	cl, _ := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	var got []string
	for len(got) < 4 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records", len(got))
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Key)+" => "+string(r.Value)) })
	}
	want := []string{
		`{"keytype":"SCHEMA","subject":"users-value","version":1,"magic":1} => {"subject":"users-value","version":1,"id":1,"schema":"` + strings.ReplaceAll(schemaV1, `"`, `\"`) + `","deleted":false}`,
		`{"keytype":"SCHEMA","subject":"users-value","version":2,"magic":1} => {"subject":"users-value","version":2,"id":2,"schema":"` + strings.ReplaceAll(schemaV2, `"`, `\"`) + `","deleted":false}`,
		`{"keytype":"CONFIG","subject":"users-value","magic":0} => {"subject":"users-value","compatibilityLevel":"FULL"}`,
		`{"keytype":"SCHEMA","subject":"users-value","version":2,"magic":1} => {"subject":"users-value","version":2,"id":2,"schema":"` + strings.ReplaceAll(schemaV2, `"`, `\"`) + `","deleted":true}`,
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}

	r2, err := Open(ctx, c.ListenAddrs(), Topic)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if s, err := r2.SchemaByID(2); err != nil || s != schemaV2 {
		t.Fatalf("id 2 after restart: %q %v", s, err)
	}
	if lvl, _ := r2.Compatibility("users-value", false); lvl != "FULL" {
		t.Fatalf("config after restart: %s", lvl)
	}
	if vs, _ := r2.Versions("users-value", false); len(vs) != 1 {
		t.Fatalf("versions after restart: %v", vs)
	}
	if id, err := r2.Register(ctx, "other-value", `"string"`); err != nil || id != 3 {
		t.Fatalf("next id after restart: %d %v", id, err)
	}
}

// TestConcurrentRegistriesShareOneTopic runs two registries on one
// `_schemas` topic (two workers sharing the registry) that register at the
// same time: 50 different schemas each into one subject (every version
// number and every new id is contended), and one schema from both, under
// one subject and under two. Confluent serialises writes through an
// elected leader; ours are optimistic (write, read back, retry), and this
// proves the outcome is the same: every id unique and served by both with
// its text, one schema → one id, both agreeing on every version, and a
// registry opened afterwards (a restart) seeing the same.
func TestConcurrentRegistriesShareOneTopic(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	regs := make([]*Registry, 2)
	for i := range regs {
		if regs[i], err = Open(ctx, c.ListenAddrs(), Topic); err != nil {
			t.Fatal(err)
		}
		defer regs[i].Close()
	}
	// Different schemas in one subject: no compatibility between them.
	if _, err := regs[0].SetCompatibility(ctx, "", "NONE"); err != nil {
		t.Fatal(err)
	}
	if err := regs[1].store.ReadToEnd(ctx); err != nil {
		t.Fatal(err)
	}
	const perRegistry = 50
	shared := `{"type":"record","name":"Shared","fields":[{"name":"x","type":"long"}]}`
	type result struct {
		reg    int
		subj   string
		schema string
		id     int
		err    error
	}
	results := make(chan result, 2*perRegistry+8)
	var wg sync.WaitGroup
	for ri := range regs {
		for g := 0; g < 4; g++ { // 4 goroutines per registry
			wg.Add(1)
			go func(ri, g int) {
				defer wg.Done()
				for i := g; i < perRegistry; i += 4 {
					s := fmt.Sprintf(`{"type":"record","name":"R%d_%d","fields":[{"name":"f","type":"int"}]}`, ri, i)
					id, err := regs[ri].Register(ctx, "many-value", s)
					results <- result{ri, "many-value", s, id, err}
				}
			}(ri, g)
		}
		for _, subj := range []string{"same-value", fmt.Sprintf("same%d-value", ri)} {
			wg.Add(1)
			go func(ri int, subj string) {
				defer wg.Done()
				id, err := regs[ri].Register(ctx, subj, shared)
				results <- result{ri, subj, shared, id, err}
			}(ri, subj)
		}
	}
	wg.Wait()
	close(results)
	idOf := map[string]int{}     // schema → id
	schemaOf := map[int]string{} // id → schema
	n := 0
	for r := range results {
		n++
		if r.err != nil {
			t.Fatalf("registry %d, %s: %v", r.reg, r.subj, r.err)
		}
		if prev, ok := idOf[r.schema]; ok && prev != r.id {
			t.Errorf("schema %s got ids %d and %d", r.schema, prev, r.id)
		}
		if prev, ok := schemaOf[r.id]; ok && prev != r.schema {
			t.Errorf("id %d given to %s and %s", r.id, prev, r.schema)
		}
		idOf[r.schema], schemaOf[r.id] = r.id, r.schema
	}
	if n != 2*perRegistry+4 || len(schemaOf) != 2*perRegistry+1 {
		t.Fatalf("%d registrations, %d distinct ids; want %d and %d", n, len(schemaOf), 2*perRegistry+4, 2*perRegistry+1)
	}
	restarted, err := Open(ctx, c.ListenAddrs(), Topic)
	if err != nil {
		t.Fatal(err)
	}
	defer restarted.Close()
	for i, r := range append(regs, restarted) {
		if err := r.store.ReadToEnd(ctx); err != nil {
			t.Fatal(err)
		}
		for id, want := range schemaOf {
			if got, err := r.SchemaByID(id); err != nil || got != want {
				t.Errorf("registry %d: id %d = %q, %v; want %q", i, id, got, err, want)
			}
		}
		vs, err := r.Versions("many-value", false)
		if err != nil || len(vs) != 2*perRegistry {
			t.Fatalf("registry %d: many-value versions %v %v", i, vs, err)
		}
		seen := map[int]bool{}
		for _, v := range vs {
			ref, _ := r.Version("many-value", v, false)
			if idOf[ref.Schema] != ref.ID || seen[ref.ID] {
				t.Errorf("registry %d: many-value v%d = id %d %s", i, v, ref.ID, ref.Schema)
			}
			seen[ref.ID] = true
		}
		for _, subj := range []string{"same-value", "same0-value", "same1-value"} {
			if vs, _ := r.Versions(subj, false); len(vs) != 1 {
				t.Errorf("registry %d: %s versions %v, want one", i, subj, vs)
			}
		}
		r.mu.RLock()
		t.Logf("registry %d: %d records refused as conflicts", i, r.st.refused)
		if i == 0 && r.st.refused == 0 {
			t.Errorf("no write was contended: the test proves nothing")
		}
		if rep := r.st.repairs(); len(rep) > 0 {
			t.Errorf("registry %d: %d keys end on a refused record", i, len(rep))
		}
		r.mu.RUnlock()
	}
}

// TestStateConflictRulesSurviveCompaction replays, record by record, the
// interleavings two leaderless registries can produce, and checks that
// (1) the first record in the topic wins an id and a live (subject,
// version), the same way for every reader, and (2) after the
// repair records, compacting the topic (Kafka keeps the last record of
// each key) and replaying it gives the same registry. Without the repair
// a refused record that came last would win after compaction.
func TestStateConflictRulesSurviveCompaction(t *testing.T) {
	a := `{"type":"record","name":"A","fields":[]}`
	b := `{"type":"record","name":"B","fields":[]}`
	rec := func(subj string, ver, id int, schema string) kafkalog.Record {
		return kafkalog.Record{Key: schemaKeyBytes(subj, ver), Value: marshal(schemaValue{Subject: subj, Version: ver, ID: id, Schema: schema})}
	}
	log := []kafkalog.Record{
		rec("s", 1, 1, a), // accepted
		rec("s", 1, 2, b), // same live version, another id: refused (2)
		rec("t", 1, 1, b), // id 1 is A's: refused (1)
		rec("s", 2, 2, b), // the loser's retry: accepted
	}
	st := newState()
	for i, r := range log {
		st.apply(r.Key, r.Value, int64(i))
	}
	if st.refused != 2 {
		t.Fatalf("%d refused, want 2", st.refused)
	}
	check := func(st *state, when string) {
		t.Helper()
		if s := st.subjects["s"]; s == nil || len(s.versions) != 2 || s.versions[1].ID != 1 || s.versions[2].ID != 2 {
			t.Fatalf("%s: subject s = %+v", when, st.subjects["s"])
		}
		if len(st.subjects) != 1 || st.ids[1] != a || st.ids[2] != b || len(st.ids) != 2 || st.byText[a] != 1 {
			t.Fatalf("%s: subjects %v ids %v", when, st.subjects, st.ids)
		}
	}
	check(st, "replay")
	repairs := st.repairs()
	if len(repairs) != 2 { // s/1 gets A again; t/1 a tombstone
		t.Fatalf("%d repairs, want 2", len(repairs))
	}
	for i, r := range repairs {
		st.apply(r.Key, r.Value, int64(len(log)+i))
	}
	if len(st.repairs()) != 0 {
		t.Fatal("repairs left after repairing")
	}
	check(st, "after repair")
	// Compaction keeps the last record of each key, in offset order.
	full := append(append([]kafkalog.Record{}, log...), repairs...)
	last := map[string]int{}
	for i, r := range full {
		last[string(r.Key)] = i
	}
	compacted := newState()
	for i, r := range full {
		if last[string(r.Key)] == i {
			compacted.apply(r.Key, r.Value, int64(i))
		}
	}
	check(compacted, "after compaction")
	// Without the repairs, compaction would have kept s/1 = B (id 2)
	// and A's version would be gone: the repair is what prevents it.
	broken := newState()
	lastNoRepair := map[string]int{}
	for i, r := range log {
		lastNoRepair[string(r.Key)] = i
	}
	for i, r := range log {
		if lastNoRepair[string(r.Key)] == i {
			broken.apply(r.Key, r.Value, int64(i))
		}
	}
	if v := broken.subjects["s"].versions[1]; v == nil || v.ID != 2 {
		t.Fatalf("the unrepaired compacted topic was expected to lose A's version: %+v", v)
	}
}

// TestImportSurvivesRestart: versions imported with explicit ids (IMPORT
// mode, as a migration from another registry does) are read back by a
// registry opened later on the same topic, and new ids continue above the
// largest imported one (Confluent's id generator: max id + 1).
func TestImportSurvivesRestart(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r1, err := Open(ctx, c.ListenAddrs(), Topic)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r1.SetMode(ctx, "", "IMPORT", false); err != nil {
		t.Fatal(err)
	}
	if id, err := r1.RegisterAs(ctx, "m-value", schemaV1, 500, 7); err != nil || id != 500 {
		t.Fatalf("import: %d %v", id, err)
	}
	if _, err := r1.SetMode(ctx, "", "READWRITE", false); err != nil {
		t.Fatal(err)
	}
	r1.Close()
	r2, err := Open(ctx, c.ListenAddrs(), Topic)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if ref, err := r2.Version("m-value", -1, false); err != nil || ref.ID != 500 || ref.Version != 7 {
		t.Fatalf("after restart: %+v %v", ref, err)
	}
	if id, err := r2.Register(ctx, "m-value", schemaV2); err != nil || id != 501 {
		t.Fatalf("next id after the import: %d %v", id, err)
	}
	if vs, _ := r2.Versions("m-value", false); fmt.Sprint(vs) != "[7 8]" {
		t.Fatalf("versions %v, want [7 8]", vs)
	}
}
