package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// orderEvent is a Debezium change event of a table (id int32, status
// string) in the JSON converter's schema envelope.
func orderEvent(id int, status, op string) *kgo.Record {
	row := `{"type":"struct","optional":true,"fields":[{"field":"id","type":"int32","optional":false},{"field":"status","type":"string","optional":true}]}`
	key := fmt.Sprintf(`{"schema":{"type":"struct","fields":[{"field":"id","type":"int32","optional":false}]},"payload":{"id":%d}}`, id)
	after := "null"
	if op != "d" {
		after = fmt.Sprintf(`{"id":%d,"status":%q}`, id, status)
	}
	val := fmt.Sprintf(`{"schema":{"type":"struct","fields":[%s,%s,{"field":"op","type":"string","optional":false}]},"payload":{"before":null,"after":%s,"op":%q}}`,
		strings.Replace(row, `"type":"struct"`, `"field":"before","type":"struct"`, 1),
		strings.Replace(row, `"type":"struct"`, `"field":"after","type":"struct"`, 1), after, op)
	return &kgo.Record{Topic: "shop.public.orders", Key: []byte(key), Value: []byte(val)}
}

// TestSQLJobSurvivesSIGKILL: a SQL job submitted with POST /sql is
// persisted: after a SIGKILL of connectd the restarted worker runs it
// again (without a new POST), it processes the changes made after the
// restart, and its upsert topic read compacted and read_committed is the
// GROUP BY of every change; DELETE removes it durably (not back after
// another SIGKILL).
func TestSQLJobSurvivesSIGKILL(t *testing.T) {
	d := newDaemon(t)
	d.start()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	produce := func(recs ...*kgo.Record) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(d.kafka))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, "shop.public.orders"); err != nil && !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// waitTable reads the output topic compacted (read_committed) until it
	// equals want.
	waitTable := func(want map[string]string) {
		t.Helper()
		deadline := time.Now().Add(45 * time.Second)
		var got map[string]string
		for time.Now().Before(deadline) {
			got = map[string]string{}
			rd, err := kgo.NewClient(kgo.SeedBrokers(d.kafka), kgo.ConsumeTopics("status_counts"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
				kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			if err != nil {
				t.Fatal(err)
			}
			for {
				pctx, pcancel := context.WithTimeout(ctx, time.Second)
				fs := rd.PollFetches(pctx)
				pcancel()
				if fs.NumRecords() == 0 {
					break
				}
				fs.EachRecord(func(r *kgo.Record) {
					if r.Value == nil {
						delete(got, string(r.Key))
					} else {
						got[string(r.Key)] = string(r.Value)
					}
				})
			}
			rd.Close()
			if fmt.Sprint(got) == fmt.Sprint(want) {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("status_counts: got %v, want %v\n%s", got, want, d.log.String())
	}
	jobs := func() []map[string]any {
		code, body := d.do("GET", "/sql/jobs", nil)
		var out []map[string]any
		if code != 200 || json.Unmarshal(body, &out) != nil {
			t.Fatalf("GET /sql/jobs: %d %s", code, body)
		}
		return out
	}

	produce(orderEvent(1, "new", "r"), orderEvent(2, "new", "c"), orderEvent(3, "paid", "c"))
	stmt := map[string]any{"statement": "CREATE TABLE status_counts AS SELECT status, COUNT(*) AS n FROM `shop.public.orders` GROUP BY status",
		"configuration": map[string]string{"execution.checkpointing.interval": "200 ms"}}
	if code, body := d.do("POST", "/sql", stmt); code != 201 {
		t.Fatalf("POST /sql: %d %s", code, body)
	}
	if code, body := d.do("POST", "/sql", map[string]any{"statement": "CREATE TABLE x AS SELECT status FROM `shop.public.orders`",
		"configuration": map[string]string{"table.exec.state.ttl": "soon"}}); code != 400 || !strings.Contains(string(body), "table.exec.state.ttl") {
		t.Fatalf("POST /sql with a bad TTL: %d %s", code, body)
	}
	waitTable(map[string]string{`{"status":"new"}`: `{"status":"new","n":2}`, `{"status":"paid"}`: `{"status":"paid","n":1}`})

	checkpoint := func() int64 {
		t.Helper()
		js := jobs()
		if len(js) != 1 {
			t.Fatalf("jobs: %v", js)
		}
		c, _ := js[0]["last_checkpoint"].(map[string]any)
		id, _ := c["id"].(float64)
		return int64(id)
	}
	before := checkpoint()
	if before == 0 {
		t.Fatalf("no checkpoint before the kill: %v", jobs())
	}
	produce(orderEvent(3, "new", "u"))
	d.kill()
	d.start()
	// The first checkpoint of the restarted job goes on from the one
	// before the kill: it restored it rather than starting over.
	first := checkpoint()
	for deadline := time.Now().Add(20 * time.Second); first == 0; first = checkpoint() {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after the restart: %v", jobs())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if first <= before {
		t.Fatalf("the restarted job's first checkpoint %d does not go on from %d (the last seen before the kill): it did not restore it", first, before)
	}
	if js := jobs(); len(js) != 1 || js[0]["id"] != "status_counts" {
		t.Fatalf("after the SIGKILL: jobs %v, want status_counts", js)
	}
	// Changes after the restart reach the restarted job.
	produce(orderEvent(2, "", "d"), orderEvent(4, "shipped", "c"))
	waitTable(map[string]string{`{"status":"new"}`: `{"status":"new","n":2}`, `{"status":"shipped"}`: `{"status":"shipped","n":1}`})
	if js := jobs(); js[0]["state"] != "RUNNING" {
		t.Fatalf("job after the restart: %v", js)
	}

	if code, body := d.do("DELETE", "/sql/jobs/status_counts", nil); code != 204 {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	d.kill()
	d.start()
	if js := jobs(); len(js) != 0 {
		t.Fatalf("a deleted job is back after a restart: %v", js)
	}
}
