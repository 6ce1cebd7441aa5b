package registry

import (
	"context"
	"strings"
	"testing"
	"time"

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
