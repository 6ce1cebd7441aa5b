package mariadiff

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/connectd/connectd/internal/testenv"
)

// runWritten runs a written workload w through Debezium's MariaDbConnector
// and connectd on a real MariaDB and returns every difference (records and
// schema history) and the number of Debezium records, which must be at
// least min.
func runWritten(t *testing.T, w *Workload, min int) ([]*Diff, int) {
	t.Helper()
	m := testenv.MariaDBT(t)
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{M: m, Repo: repo, Dir: t.TempDir()}
	res, err := env.Run(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if res.ReferenceErr != nil || res.ConnectdErr != nil {
		t.Fatalf("Debezium: %v; connectd: %v", res.ReferenceErr, res.ConnectdErr)
	}
	if len(res.Debezium) < min {
		t.Fatalf("Debezium emitted %d records, want at least %d", len(res.Debezium), min)
	}
	return append(Compare(w, res.Connectd, res.Debezium), CompareHistory(w, res.ConnectdHistory, res.DebeziumHistory)...), len(res.Debezium)
}

// TestFloatsAgainstDebezium runs a written workload of FLOAT, FLOAT(M,D),
// DOUBLE and DOUBLE(M,D) values no generated seed has (more than 6
// significant digits, 2^24+1, tiny and huge doubles), snapshotted and
// streamed, through Debezium's MariaDbConnector and connectd: every
// difference must be listed, and the snapshot's plain FLOAT values must be
// the deviation debezium-snapshot-float-digits (Debezium's rounded text),
// so the test cannot pass without comparing them.
func TestFloatsAgainstDebezium(t *testing.T) {
	rows := func(a, b, c int) string {
		return "INSERT INTO f VALUES " +
			"(" + strconv.Itoa(a) + ", 1234.567, 1234.567, 123456.7891, 1234.5678901234567, 1234.567), " +
			"(" + strconv.Itoa(b) + ", 0.001, 3.14159265, 0.0001, 1e-300, 0.001), " +
			"(" + strconv.Itoa(c) + ", NULL, 16777217, NULL, 0.1, NULL);"
	}
	w := &Workload{Seed: -1, DB: "floats", Server: Server{Charset: "utf8mb4", TimeZone: "+00:00"},
		Setup:   []string{"CREATE TABLE f (id INT PRIMARY KEY, f FLOAT(7,3), g FLOAT, h FLOAT(10,4), d DOUBLE, r DOUBLE(10,3));", rows(1, 2, 3)},
		Changes: []string{rows(4, 5, 6), "UPDATE f SET g = g + 1, r = r * 2;"},
		Config:  map[string]string{"topic.prefix": "dbserver1", "database.include.list": "floats"},
		Columns: map[string]string{"floats.f.f": "`f` FLOAT(7,3)", "floats.f.g": "`g` FLOAT", "floats.f.h": "`h` FLOAT(10,4)", "floats.f.d": "`d` DOUBLE", "floats.f.r": "`r` DOUBLE(10,3)"},
	}
	diffs, n := runWritten(t, w, 12)
	rounded := 0
	for _, d := range diffs {
		v := Classify(d)
		switch {
		case v == nil:
			t.Errorf("unlisted: %s", d)
		case v.ID == "debezium-snapshot-float-digits":
			rounded++
		}
	}
	if rounded != 3 {
		t.Errorf("%d snapshot FLOAT values differ as Debezium's rounded text, want 3 (1234.567, 3.14159265, 16777217)", rounded)
	}
	t.Logf("%d Debezium records compared, %d differences (all listed)", n, len(diffs))
}
