package rest

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

// debeziumRecord is a Debezium change event of a table (id int32, status
// string) in the JSON converter's schema envelope.
func debeziumRecord(id int, status, op string) *kgo.Record {
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

// POST /sql: errors in a statement are 400 with their line and column,
// EXPLAIN answers the plan, CREATE TABLE … AS SELECT starts a job whose
// upsert topic gets the live GROUP BY (an update moves a row between
// groups, a delete empties one: a tombstone), a second job on the same
// topic is 409, DELETE /sql/jobs/{id} stops it; a job started again over
// sources changed meanwhile deletes the rows the previous run left.
func TestSQLAPI(t *testing.T) {
	e := startEnv(t)
	code, body := e.do("POST", "/sql", "SELECT status FROM t\nORDER BY status")
	if code != 400 || !strings.Contains(string(body), `"line":2,"column":10`) || !strings.Contains(string(body), "ORDER BY") {
		t.Fatalf("ORDER BY: %d %s", code, body)
	}
	code, body = e.do("POST", "/sql", map[string]string{"statement": "SELECT FROM WHERE"})
	if code != 400 || !strings.Contains(string(body), `"line":1,"column":`) || !strings.Contains(string(body), "syntax error") {
		t.Fatalf("syntax error: %d %s", code, body)
	}
	code, body = e.do("POST", "/sql", "SELECT status FROM t")
	if code != 400 || !strings.Contains(string(body), "ad-hoc SELECT") {
		t.Fatalf("ad-hoc SELECT: %d %s", code, body)
	}
	const stmt = "CREATE TABLE totals AS SELECT status, COUNT(*) AS n FROM `shop.public.orders` GROUP BY status"
	code, body = e.do("POST", "/sql", "EXPLAIN INSERT INTO totals SELECT status, COUNT(*) AS n FROM `shop.public.orders` GROUP BY status")
	if code != 200 || !strings.Contains(string(body), "GroupAggregate") || !strings.Contains(string(body), "ChangelogScan(table=shop.public.orders") {
		t.Fatalf("EXPLAIN: %d %s", code, body)
	}
	code, body = e.do("POST", "/sql", stmt)
	if code != 400 || !strings.Contains(string(body), "does not exist") {
		t.Fatalf("a missing source topic: %d %s", code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.w.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, "shop.public.orders"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, debeziumRecord(1, "new", "r"), debeziumRecord(2, "new", "c"), debeziumRecord(3, "paid", "c"),
		debeziumRecord(3, "new", "u"), debeziumRecord(2, "", "d")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	code, body = e.do("POST", "/sql", stmt)
	if code != 201 || !strings.Contains(string(body), `"state":"RUNNING"`) || !strings.Contains(string(body), `"key":["status"]`) {
		t.Fatalf("POST /sql: %d %s", code, body)
	}
	if code, body := e.do("POST", "/sql", stmt); code != 409 {
		t.Fatalf("POST /sql twice: %d %s", code, body)
	}
	rd, err := kgo.NewClient(kgo.SeedBrokers(e.w.Brokers...), kgo.ConsumeTopics("totals"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	table := map[string]string{}
	want := map[string]string{`{"status":"new"}`: `{"status":"new","n":2}`}
	for fmt.Sprint(table) != fmt.Sprint(want) {
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("totals: got %v, want %v", table, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Value == nil {
				delete(table, string(r.Key))
			} else {
				table[string(r.Key)] = string(r.Value)
			}
		})
	}
	code, body = e.do("GET", "/sql/jobs", nil)
	var jobs []SQLJobInfo
	// restarts 0: the job does not end with the request that started it
	if code != 200 || json.Unmarshal(body, &jobs) != nil || len(jobs) != 1 || jobs[0].ID != "totals" || jobs[0].State != "RUNNING" || jobs[0].Restarts != 0 {
		t.Fatalf("GET /sql/jobs: %d %s", code, body)
	}
	if code, body := e.do("DELETE", "/sql/jobs/totals", nil); code != 204 {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if code, body := e.do("GET", "/sql/jobs", nil); code != 200 || string(body) != "[]" {
		t.Fatalf("GET /sql/jobs after DELETE: %d %s", code, body)
	}
	if code, body := e.do("DELETE", "/sql/jobs/totals", nil); code != 404 {
		t.Fatalf("DELETE twice: %d %s", code, body)
	}

	// While no job runs, every row is deleted; a job started again replays
	// the sources (in one batch it never writes "new") and deletes what
	// the previous run left.
	if err := cl.ProduceSync(ctx, debeziumRecord(1, "", "d"), debeziumRecord(3, "", "d")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if code, body := e.do("POST", "/sql", stmt); code != 201 {
		t.Fatalf("POST /sql again: %d %s", code, body)
	}
	want = map[string]string{}
	for len(table) != 0 {
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("totals after the restart: got %v, want it empty", table)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Value == nil {
				delete(table, string(r.Key))
			} else {
				table[string(r.Key)] = string(r.Value)
			}
		})
	}
}
