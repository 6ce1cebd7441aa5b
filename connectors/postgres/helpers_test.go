package postgres

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// memOffsets is an in-memory OffsetReader.
type memOffsets struct {
	mu sync.Mutex
	m  map[string]any
}

func (o *memOffsets) Offset(ctx context.Context, partition map[string]any) (map[string]any, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		return nil, nil
	}
	// round-trip through JSON as the offsets topic does
	b, _ := json.Marshal(o.m)
	var out map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return out, d.Decode(&out)
}

type taskCtx struct{ r connect.OffsetReader }

func (c taskCtx) OffsetReader() connect.OffsetReader { return c.r }

func baseConfig(pg *testenv.Postgres, db string) map[string]string {
	return map[string]string{
		"connector.class":           ClassName,
		"database.hostname":         pg.Host,
		"database.port":             itoa(pg.Port),
		"database.user":             pg.User,
		"database.password":         "postgres",
		"database.dbname":           db,
		"topic.prefix":              "dbserver1",
		"plugin.name":               "pgoutput",
		"poll.interval.ms":          "100",
		"status.update.interval.ms": "200",
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func startTask(t *testing.T, cfg map[string]string, off *memOffsets) *Task {
	t.Helper()
	task := NewTask()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := task.Start(ctx, taskCtx{off}, cfg); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { task.Stop() })
	return task
}

// pollN polls until n records arrived (or fails after timeout).
func pollN(t *testing.T, task *Task, n int) []*connect.SourceRecord {
	t.Helper()
	var out []*connect.SourceRecord
	deadline := time.Now().Add(30 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d records, want %d", len(out), n)
		}
		b, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		out = append(out, b...)
	}
	if len(out) != n {
		t.Fatalf("got %d records, want %d", len(out), n)
	}
	return out
}

// pollQuiet asserts nothing more arrives for d.
func pollQuiet(t *testing.T, task *Task, d time.Duration) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		b, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("Poll: %v", err)
		}
		if len(b) > 0 {
			t.Fatalf("unexpected records: %v", jsonRecords(b))
		}
	}
}

// execScript runs the statements of a SQL file one by one (so that
// autocommit statements stay separate transactions).
func execScript(t *testing.T, pg *testenv.Postgres, db, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			lines = append(lines, l)
		}
	}
	c, err := pg.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, stmt := range strings.Split(strings.Join(lines, "\n"), ";\n") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := c.Exec(context.Background(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

func exec(t *testing.T, pg *testenv.Postgres, db, sql string) {
	t.Helper()
	if err := pg.Exec(context.Background(), db, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// schemaJSON renders a schema the way Kafka Connect's JsonConverter does
// (test-only; field order is irrelevant because comparisons decode).
func schemaJSON(s *connect.Schema, field string) map[string]any {
	if s == nil {
		return nil
	}
	m := map[string]any{"type": string(s.Type), "optional": s.Optional}
	if s.Name != "" {
		m["name"] = s.Name
	}
	if s.Version != 0 {
		m["version"] = float64(s.Version)
	}
	if s.Doc != "" {
		m["doc"] = s.Doc
	}
	if len(s.ParamKeys()) > 0 {
		p := map[string]any{}
		for _, k := range s.ParamKeys() {
			p[k], _ = s.Param(k)
		}
		m["parameters"] = p
	}
	if s.Default != nil {
		m["default"] = valueJSON(s, s.Default)
	}
	if field != "" {
		m["field"] = field
	}
	if s.Type == connect.StructT {
		var fs []any
		for _, f := range s.Fields {
			fs = append(fs, schemaJSON(f.Schema, f.Name))
		}
		m["fields"] = fs
	}
	return m
}

// valueJSON renders a value as JsonConverter would, then normalises numbers.
func valueJSON(s *connect.Schema, v any) any {
	if v == nil {
		return nil
	}
	switch x := v.(type) {
	case *connect.Struct:
		m := map[string]any{}
		for i, f := range x.Schema.Fields {
			m[f.Name] = valueJSON(f.Schema, x.Values[i])
		}
		return m
	case connect.Decimal:
		return base64.StdEncoding.EncodeToString(x.TwosComplement())
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return json.Number(itoa64(x))
	case float32:
		return float64(x)
	}
	return v
}

func itoa64(n int64) string { b, _ := json.Marshal(n); return string(b) }

// normalize decodes JSON with exact integers (json.Number for int64 beyond
// float precision, float64 otherwise).
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			if float64(i) == float64(int64(float64(i))) && i < 1<<53 && i > -(1<<53) {
				return float64(i)
			}
			return json.Number(itoa64(i))
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

func roundTrip(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		panic(err)
	}
	return normalize(out)
}

// golden is one line of testdata/debezium/*.jsonl.
type golden struct {
	Topic string `json:"topic"`
	Key   *struct {
		Schema  any `json:"schema"`
		Payload any `json:"payload"`
	} `json:"key"`
	Value *struct {
		Schema  any `json:"schema"`
		Payload any `json:"payload"`
	} `json:"value"`
}

func readGolden(t *testing.T, path string) []golden {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []golden
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var g golden
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.UseNumber()
		if err := d.Decode(&g); err != nil {
			t.Fatal(err)
		}
		if g.Key != nil {
			g.Key.Schema, g.Key.Payload = normalize(g.Key.Schema), normalize(g.Key.Payload)
		}
		if g.Value != nil {
			g.Value.Schema, g.Value.Payload = normalize(g.Value.Schema), normalize(g.Value.Payload)
		}
		out = append(out, g)
	}
	return out
}

func recordJSON(r *connect.SourceRecord) map[string]any {
	m := map[string]any{"topic": r.Topic, "key": nil, "value": nil}
	if r.KeySchema != nil {
		m["key"] = map[string]any{"schema": schemaJSON(r.KeySchema, ""), "payload": valueJSON(r.KeySchema, r.Key)}
	}
	if r.Value != nil {
		m["value"] = map[string]any{"schema": schemaJSON(r.ValueSchema, ""), "payload": valueJSON(r.ValueSchema, r.Value)}
	}
	return roundTrip(m).(map[string]any)
}

func jsonRecords(rs []*connect.SourceRecord) string {
	var sb strings.Builder
	for _, r := range rs {
		b, _ := json.Marshal(recordJSON(r))
		sb.Write(b)
		sb.WriteByte('\n')
	}
	return sb.String()
}
