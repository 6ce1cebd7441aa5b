package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/testenv"
)

// TestDDLGolden replays the "mariadb ddl" scenario (mariadb_inventory.sql,
// then reference/debezium/scenarios/mariadb_ddl_changes.sql while
// streaming: ADD COLUMN, DROP COLUMN, CREATE TABLE between row changes)
// and compares every record, its offset, and the schema history topic with
// what Debezium's MariaDbConnector produced (testdata/debezium/mariadb_ddl.jsonl,
// CHANGES=mariadb_ddl_changes.sql run-mariadb-inventory.sh). Masked as in
// TestInventoryGolden, plus the history records' ts_ms.
func TestDDLGolden(t *testing.T) {
	const golden = "../../testdata/debezium/mariadb_ddl.jsonl"
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory;\n"); err != nil {
		t.Fatal(err)
	}
	execFile(t, m, "inventory", inventorySQL)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	cfg := baseConfig(m)
	cfg[KeyHistoryTopic] = "schema-changes.inventory"
	cfg[KeyHistoryBootstrap] = strings.Join(kf.ListenAddrs(), ",")

	want := readLines(t, golden)
	wantOff := readLines(t, golden+".record-offsets.jsonl")
	nSnap := 0
	for _, l := range want {
		if strings.Contains(l, `"snapshot":"true"`) || strings.Contains(l, `"snapshot":"first"`) || strings.Contains(l, `"snapshot":"last"`) ||
			strings.Contains(l, `"snapshot":"first_in_data_collection"`) || strings.Contains(l, `"snapshot":"last_in_data_collection"`) {
			nSnap++
		}
	}
	task := startTask(t, cfg, nil)
	got := pollN(t, task, nSnap)
	execFile(t, m, "inventory", "../../reference/debezium/scenarios/mariadb_ddl_changes.sql")
	got = append(got, pollN(t, task, len(want)-nSnap)...)
	conv := converters.NewJSONConverter()
	for i, r := range got {
		if l := recordLine(t, conv, r); l != maskLine(want[i]) {
			t.Errorf("record %d differs at %s\n got: %s\nwant: %s", i+1, firstDiff(l, maskLine(want[i])), l, maskLine(want[i]))
		}
		if l := offsetLine(t, r); l != canonical(t, maskLine(wantOff[i])) {
			t.Errorf("offset of record %d:\n got: %s\nwant: %s", i+1, l, wantOff[i])
		}
	}

	// The schema history topic, record for record (keys sorted).
	wantHist := readLines(t, golden+".history.jsonl")
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.ConsumeTopics(cfg[KeyHistoryTopic]),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var hist []string
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for len(hist) < len(wantHist) && pctx.Err() == nil {
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { hist = append(hist, string(r.Value)) })
	}
	if len(hist) != len(wantHist) {
		t.Fatalf("%d history records, want %d", len(hist), len(wantHist))
	}
	for i := range hist {
		g, w := canonical(t, maskLine(hist[i])), canonical(t, maskLine(wantHist[i]))
		if g != w {
			t.Errorf("history record %d differs at %s\n got: %s\nwant: %s", i+1, firstDiff(g, w), g, w)
		}
	}
}
