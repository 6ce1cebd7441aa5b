package jdbc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/testenv"
)

// captureRecords reads the records of topic from a Debezium 3.6.1 capture
// (ref.Capture lines) as sink records, through the JsonConverter.
func captureRecords(t *testing.T, path, topic string) []*connect.SinkRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	conv := converters.NewJSONConverter()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	var out []*connect.SinkRecord
	for sc.Scan() {
		var l struct {
			Topic      string
			Key, Value json.RawMessage
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Topic != topic {
			continue
		}
		r := &connect.SinkRecord{Topic: l.Topic, Offset: int64(len(out))}
		if r.KeySchema, r.Key, err = conv.ToConnect(topic, l.Key); err != nil {
			t.Fatal(err)
		}
		if string(l.Value) != "null" {
			if r.ValueSchema, r.Value, err = conv.ToConnect(topic, l.Value); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, r)
	}
	return out
}

// TestJdbcSinkPostgresArraysAndPlaceholders replays the real Debezium
// 3.6.1 events of table toast_default (testdata/debezium/
// pg_replica_identity.jsonl: text[], integer[], bigint[], uuid[], bytea,
// jsonb, json, xml, hstore, all TOASTed) into PostgreSQL: arrays land in
// native array columns (Debezium's JDBC sink PostgreSQL dialect), and an
// update whose unchanged TOASTed columns carry Debezium's unavailable
// value placeholders — [placeholder] for text[], the placeholder's name
// UUID for uuid[], its bytes as numbers for integer[]/bigint[] — leaves
// those columns out of the UPDATE, keeping the values already written.
func TestJdbcSinkPostgresArraysAndPlaceholders(t *testing.T) {
	ctx := context.Background()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "arrays"); err != nil {
		t.Fatal(err)
	}
	recs := captureRecords(t, "../../testdata/debezium/pg_replica_identity.jsonl", "dbserver1.public.toast_default")
	if len(recs) < 4 {
		t.Fatalf("%d records of toast_default in the capture", len(recs))
	}
	url := fmt.Sprintf("jdbc:postgresql://%s:%d/arrays?sslmode=disable", pg.Host, pg.Port)
	cfg := sinkCfg(url)
	cfg["connection.username"] = pg.User
	// records: r id=1, c id=2, u id=1 (n=1, every big column unchanged), …
	for _, per := range []int{1, 100} {
		runPuts(t, cfg, recs[:3], per)
		conn, err := pg.Connect(ctx, "arrays")
		if err != nil {
			t.Fatal(err)
		}
		var types string
		if err := conn.QueryRow(ctx, `SELECT string_agg(column_name||':'||udt_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name='public_toast_default_copy'`).Scan(&types); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(types, "ta:_text,ia:_int4,ba:_int8,ua:_uuid") {
			t.Fatalf("column types %s: want native arrays", types)
		}
		var got string
		if err := conn.QueryRow(ctx, `SELECT string_agg(concat_ws('|', id, n, length(t), length(v), length(b), cardinality(ta), ta[1], cardinality(ia), ia[600],
			cardinality(ba), ba[1], cardinality(ua), ua[150]), ';' ORDER BY id) FROM public_toast_default_copy`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		const one = "|2100|2100|2100|700|abc|600|7|300|8|150|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
		if want := "1|1" + one + ";2|0" + one; got != want {
			t.Fatalf("per=%d rows\n%s\nwant\n%s", per, got, want)
		}
		conn.Close(ctx)
	}
}
