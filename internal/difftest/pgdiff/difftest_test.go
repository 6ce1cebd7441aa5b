package pgdiff

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

// ciSeeds run in `make test`; DIFFTEST_SEEDS=N runs seeds 1..N instead
// (DIFFTEST_SEEDS=A-B seeds A..B; make difftest SEEDS=N), DIFFTEST_SEED=a,b,c
// exactly those.
// DIFFTEST_REPLAY=dir compares the files an earlier run left in dir
// (DIFFTEST_OUT) again without running anything.
var ciSeeds = []int64{1, 2, 4, 11} // 11: a partitioned table (publish.via.partition.root) and two-phase commit

func seeds(t *testing.T) []int64 {
	out, err := difftest.Seeds("DIFFTEST", ciSeeds)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

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
// 3.6.1 (reference/debezium) and connectd's PostgreSQL task on one
// PostgreSQL 15 and compares every record: topic, key and value bytes
// (wall clocks and the snapshot transaction's LSN/txId masked), headers,
// source partition and offset. A difference that no entry of Deviations
// explains fails the seed, with a reproduction (SQL, config, both
// records); a deviation that occurred in none of its Seeds run fails too.
func TestDifferential(t *testing.T) {
	pg := testenv.PostgresT(t)
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("DIFFTEST_OUT")
	if dir == "" {
		dir = t.TempDir()
	}
	env := &Env{PG: pg, Repo: repo, Dir: dir}
	hits := map[*Deviation]int{}
	examples := map[*Deviation]*Diff{}
	ran := map[int64]bool{}
	records, unlisted := 0, 0
	for _, seed := range seeds(t) {
		seed := seed
		ran[seed] = true
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w := Generate(seed)
			var res *Result
			var err error
			if rd := os.Getenv("DIFFTEST_REPLAY"); rd != "" {
				// compare an earlier run's files again (after a change to the deviation list)
				res, err = Replay(filepath.Join(rd, fmt.Sprintf("seed-%d", seed)))
			} else {
				res, err = env.Run(context.Background(), w)
			}
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, repro(w, nil))
			}
			if res.ReferenceErr != nil {
				d := &Diff{Seed: seed, W: w, Kind: "reference-error", Path: res.ReferenceErr.Error(), Index: [2]int{-1, -1}}
				v := Classify(d)
				if v == nil {
					t.Fatalf("seed %d: Debezium failed and no deviation explains it: %v\n%s", seed, res.ReferenceErr, repro(w, nil))
				}
				hits[v]++
				if examples[v] == nil {
					examples[v] = d
				}
				t.Logf("seed %d: Debezium refused the workload (%s): %v", seed, v.ID, res.ReferenceErr)
				return
			}
			records += len(res.Debezium)
			var bad []*Diff
			diffs := Compare(w, res.Connectd, res.Debezium)
			// A failed task (or a record connectd's converter refused).
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
				// A worker fails the task at its first error: what follows is
				// not comparable and counts as that error's consequence.
				if v == nil && failed != nil {
					v = failed
				}
				return v
			}
			writeDiffs(filepath.Join(res.Dir, "diffs.jsonl"), diffs, classify)
			for _, d := range diffs {
				v := classify(d)
				if v != nil {
					hits[v]++
					if examples[v] == nil {
						examples[v] = d
					}
					continue
				}
				bad = append(bad, d)
			}
			t.Logf("seed %d: %d Debezium records, %d connectd records, %d unlisted differences (files in %s)",
				seed, len(res.Debezium), len(res.Connectd), len(bad), res.Dir)
			if len(bad) > 0 {
				unlisted += len(bad)
				rep := repro(w, bad)
				os.WriteFile(filepath.Join(res.Dir, "repro.txt"), []byte(rep), 0o644)
				t.Errorf("seed %d: %d differences not on the deviation list:\n%s", seed, len(bad), tail(rep, 20000))
			}
		})
	}
	var summary []string
	for _, v := range Deviations {
		if hits[v] > 0 {
			summary = append(summary, fmt.Sprintf("  %-28s %5d  e.g. seed %d %s", v.ID, hits[v], examples[v].Seed, examples[v]))
			continue
		}
		for _, s := range v.Seeds {
			if ran[s] {
				t.Errorf("deviation %s (%s) no longer occurs in seed %d: remove it from the list", v.ID, v.Reason, s)
				break
			}
		}
	}
	sort.Strings(summary)
	t.Logf("%d seeds, %d Debezium records compared, %d unlisted differences; deviations hit:\n%s", len(ran), records, unlisted, strings.Join(summary, "\n"))
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

// repro is a minimal reproduction: the SQL, the config and the differing
// records with their field differences.
func repro(w *Workload, diffs []*Diff) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- seed %d: setup (before the connectors start)\n%s\n-- changes (while streaming)\n%s\n-- connector config\n%s\n",
		w.Seed, w.SetupSQL(), w.ChangesSQL(), w.ConfigText())
	shown := map[[2]int]bool{}
	for i, d := range diffs {
		if i == 40 {
			fmt.Fprintf(&b, "… %d more\n", len(diffs)-i)
			break
		}
		fmt.Fprintf(&b, "DIFF %s\n", d)
		if !shown[d.Index] {
			shown[d.Index] = true
			if d.got != nil {
				fmt.Fprintf(&b, "  connectd #%d: %s\n", d.Index[0], clip2(d.got.Line(), d.got.Offset))
			}
			if d.want != nil {
				fmt.Fprintf(&b, "  debezium #%d: %s\n", d.Index[1], clip2(d.want.Line(), d.want.Offset))
			}
		}
	}
	return b.String()
}

func clip2(line string, off map[string]any) string {
	if len(line) > 3000 {
		line = line[:3000] + "…"
	}
	return line + "\n    offset " + jsonText(off)
}
