package docgen

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestReferenceCurrent fails when a committed page of docs/reference is not
// what Generate writes (or is not generated at all). CONNECTD_WRITE_DOCS=1
// (make docs) rewrites them.
func TestReferenceCurrent(t *testing.T) {
	pages, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "docs", "reference")
	if os.Getenv("CONNECTD_WRITE_DOCS") == "1" {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for p, c := range pages {
			path := filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %d pages to %s", len(pages), dir)
	}
	var stale []string
	for p, c := range pages {
		got, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || string(got) != c {
			stale = append(stale, p)
		}
	}
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if _, ok := pages[filepath.ToSlash(rel)]; !ok {
			stale = append(stale, rel+" (not generated)")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Fatalf("docs/reference is stale (run make docs): %s", strings.Join(stale, ", "))
	}
}

// TestReferenceHasEveryKey checks the pages name every key of the worker
// and of the PostgreSQL connector, so a generator change cannot drop keys.
func TestReferenceHasEveryKey(t *testing.T) {
	pages, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ page, key string }{
		{"worker.md", "`bootstrap.servers`"}, {"worker.md", "`embedded.kafka.sync.writes`"},
		{"connectors/postgresql.md", "`slot.name`"}, {"connectors/postgresql.md", "`transforms`"},
		{"connectors/mariadb.md", "`database.server.id`"}, {"sinks/jdbc.md", "`connection.url`"},
		{"transforms.md", "## ExtractNewRecordState"},
	} {
		if !strings.Contains(pages[want.page], want.key) {
			t.Errorf("%s does not name %s", want.page, want.key)
		}
	}
}
