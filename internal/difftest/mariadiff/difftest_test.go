package mariadiff

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/difftest"
	"github.com/connectd/connectd/internal/testenv"
)

// ciSeeds run in `make test`; MARIADIFF_SEEDS=N runs seeds 1..N instead
// (MARIADIFF_SEEDS=A-B seeds A..B; make difftest SEEDS=N),
// MARIADIFF_SEED=a,b,c exactly those. MARIADIFF_REPLAY=dir compares the
// files an earlier run left in dir (DIFFTEST_OUT) again without running
// anything.
var ciSeeds = []int64{1, 3}

// TestGenerateReproducible: a seed always gives the same workload.
func TestGenerateReproducible(t *testing.T) {
	for _, s := range []int64{1, 7, 42} {
		a, b := Generate(s), Generate(s)
		if a.SetupSQL() != b.SetupSQL() || a.ChangesSQL() != b.ChangesSQL() || a.ConfigText() != b.ConfigText() {
			t.Fatalf("seed %d: two generations differ", s)
		}
	}
	if Generate(1).SetupSQL() == Generate(2).SetupSQL() {
		t.Fatal("seeds 1 and 2 gave the same schema")
	}
}

// TestDifferential runs each seed's workload through the real Debezium
// MariaDbConnector 3.5.0 (reference/debezium, capture-mysql.sh) and
// connectd's MariaDB task on one MariaDB and compares every record: topic,
// key and value (wall clocks and the connector version masked), headers
// (the run id masked), source partition and offset (ts_sec masked), and
// the schema history records. A difference that no entry of Deviations
// explains fails the seed, with a reproduction (server settings, SQL,
// config, both records); a deviation that occurred in none of its Seeds
// run fails too.
func TestDifferential(t *testing.T) {
	seeds, err := difftest.Seeds("MARIADIFF", ciSeeds)
	if err != nil {
		t.Fatal(err)
	}
	replay := os.Getenv("MARIADIFF_REPLAY")
	var env *Env
	if replay == "" {
		m := testenv.MariaDBT(t)
		repo, err := filepath.Abs("../../..")
		if err != nil {
			t.Fatal(err)
		}
		dir := os.Getenv("DIFFTEST_OUT")
		if dir == "" {
			dir = t.TempDir()
		} else {
			dir = filepath.Join(dir, "mariadb")
		}
		env = &Env{M: m, Repo: repo, Dir: dir}
	}
	hits := map[*Deviation]int{}
	examples := map[*Deviation]*Diff{}
	ran := map[int64]bool{}
	records, unlisted, clean := 0, 0, 0
	for _, seed := range seeds {
		seed := seed
		ran[seed] = true
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w := Generate(seed)
			var res *Result
			var err error
			if replay != "" {
				res, err = Replay(filepath.Join(replay, fmt.Sprintf("seed-%d", seed)))
			} else {
				res, err = env.Run(context.Background(), w)
			}
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, repro(w, nil, nil))
			}
			if res.ReferenceErr != nil {
				d := &Diff{Seed: seed, W: w, Kind: "reference-error", Path: res.ReferenceErr.Error(), Index: [2]int{-1, -1}}
				v := Classify(d)
				if v == nil {
					t.Fatalf("seed %d: Debezium failed and no deviation explains it: %v\n%s", seed, res.ReferenceErr, repro(w, nil, nil))
				}
				hits[v]++
				if examples[v] == nil {
					examples[v] = d
				}
				t.Logf("seed %d: Debezium refused the workload (%s): %v", seed, v.ID, res.ReferenceErr)
				return
			}
			records += len(res.Debezium) + len(res.DebeziumHistory)
			diffs := Compare(w, res.Connectd, res.Debezium)
			diffs = append(diffs, CompareHistory(w, res.ConnectdHistory, res.DebeziumHistory)...)
			var failed *Deviation
			if res.ConnectdErr != nil {
				d := &Diff{Seed: seed, W: w, Kind: "connectd-error", Path: res.ConnectdErr.Error(), Index: [2]int{-1, -1}}
				failed = Classify(d)
				diffs = append([]*Diff{d}, diffs...)
			}
			for _, e := range res.ConvertErrs {
				d := &Diff{Seed: seed, W: w, Kind: "connectd-error", Path: "convert: " + e.Error(), Index: [2]int{-1, -1}}
				if failed == nil {
					failed = Classify(d)
				}
				diffs = append([]*Diff{d}, diffs...)
			}
			classify := func(d *Diff) *Deviation {
				v := Classify(d)
				// A worker fails the task at its first error: what follows
				// is that error's consequence.
				if v == nil && failed != nil {
					v = failed
				}
				return v
			}
			writeDiffs(filepath.Join(res.Dir, "diffs.jsonl"), diffs, classify)
			var bad []*Diff
			for _, d := range diffs {
				if v := classify(d); v != nil {
					hits[v]++
					if examples[v] == nil {
						examples[v] = d
					}
					continue
				}
				bad = append(bad, d)
			}
			t.Logf("seed %d: %d Debezium records + %d history records, %d connectd records + %d history records, %d differences, %d unlisted (files in %s)",
				seed, len(res.Debezium), len(res.DebeziumHistory), len(res.Connectd), len(res.ConnectdHistory), len(diffs), len(bad), res.Dir)
			if len(diffs) == 0 {
				clean++
			}
			if len(bad) > 0 {
				unlisted += len(bad)
				rep := repro(w, bad, res)
				os.WriteFile(filepath.Join(res.Dir, "repro.txt"), []byte(rep), 0o644)
				t.Errorf("seed %d: %d differences not on the deviation list:\n%s", seed, len(bad), difftest.Tail(rep, 20000))
			}
		})
	}
	var summary []string
	for _, v := range Deviations {
		if hits[v] > 0 {
			summary = append(summary, fmt.Sprintf("  %-32s %5d  e.g. seed %d %s", v.ID, hits[v], examples[v].Seed, examples[v]))
		}
	}
	for _, v := range difftest.Stale(Deviations, hits, ran, func(v *Deviation) []int64 { return v.Seeds }) {
		t.Errorf("deviation %s (%s) no longer occurs in its seeds %v: remove it from the list", v.ID, v.Reason, v.Seeds)
	}
	sort.Strings(summary)
	t.Logf("%d seeds, %d Debezium records compared (records + history), %d seeds without any difference, %d unlisted differences; deviations hit:\n%s",
		len(ran), records, clean, unlisted, strings.Join(summary, "\n"))
}

// writeDiffs writes every difference as a JSON line (for grouping).
func writeDiffs(path string, diffs []*Diff, classify func(*Diff) *Deviation) {
	var b strings.Builder
	for _, d := range diffs {
		id := ""
		if v := classify(d); v != nil {
			id = v.ID
		}
		l, _ := json.Marshal(map[string]any{"seed": d.Seed, "kind": d.Kind, "path": d.Path, "got": d.Got, "want": d.Want,
			"table": d.Table, "op": d.Op, "column": d.Column(), "index": d.Index, "deviation": id})
		b.Write(l)
		b.WriteByte('\n')
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
}

// repro is a reproduction: server settings, the SQL, the config and the
// differing records with their field differences.
func repro(w *Workload, diffs []*Diff, res *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- seed %d: database %s\n-- setup (before the connectors start)\n%s\n-- changes (while streaming; mariadb client script)\n%s\n-- connector config\n%s\n",
		w.Seed, quote(w.DB), w.SetupSQL(), w.ChangesSQL(), w.ConfigText())
	shown := map[[2]int]bool{}
	for i, d := range diffs {
		if i == 40 {
			fmt.Fprintf(&b, "… %d more\n", len(diffs)-i)
			break
		}
		fmt.Fprintf(&b, "DIFF %s\n", d)
		if strings.HasPrefix(d.Kind, "history") {
			if res != nil && !shown[d.Index] {
				shown[d.Index] = true
				if i := d.Index[0]; i >= 0 && i < len(res.ConnectdHistory) {
					fmt.Fprintf(&b, "  connectd history #%d: %s\n", i, clip2(res.ConnectdHistory[i]))
				}
				if j := d.Index[1]; j >= 0 && j < len(res.DebeziumHistory) {
					fmt.Fprintf(&b, "  debezium history #%d: %s\n", j, clip2(res.DebeziumHistory[j]))
				}
			}
			continue
		}
		if !shown[d.Index] {
			shown[d.Index] = true
			if d.got != nil {
				fmt.Fprintf(&b, "  connectd #%d: %s\n    offset %s\n", d.Index[0], clip2(d.got.Line()), difftest.JSONText(d.got.Offset))
			}
			if d.want != nil {
				fmt.Fprintf(&b, "  debezium #%d: %s\n    offset %s\n", d.Index[1], clip2(d.want.Line()), difftest.JSONText(d.want.Offset))
			}
		}
	}
	return b.String()
}

func clip2(line string) string {
	if len(line) > 3000 {
		return line[:3000] + "…"
	}
	return line
}
