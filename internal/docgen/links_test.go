package docgen

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// slug is GitHub's heading anchor: lower case, punctuation other than '-'
// and '_' removed, spaces as '-'.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func anchors(md string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			continue
		}
		if m := headingRE.FindStringSubmatch(l); m != nil && !fence {
			out[slug(m[1])] = true
		}
	}
	return out
}

// TestDocLinks: every relative link of README.md and docs/ names a file of
// the repository, and every #anchor a heading of its page.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	pages := []string{filepath.Join(root, "README.md")}
	filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return nil
	})
	if len(pages) < 10 {
		t.Fatalf("only %d pages found", len(pages))
	}
	checked := 0
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(src), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(link, "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: link %s: %v", page, link, err)
					continue
				}
			}
			if anchor != "" {
				body, err := os.ReadFile(target)
				if err != nil {
					t.Errorf("%s: link %s: %v", page, link, err)
					continue
				}
				if !anchors(string(body))[anchor] {
					t.Errorf("%s: link %s: no heading #%s in %s", page, link, anchor, target)
				}
			}
			checked++
		}
	}
	t.Logf("%d links in %d pages resolve", checked, len(pages))
}

var helpRefRE = regexp.MustCompile(`docs/[a-z/_-]+\.md(#[a-z0-9_-]+)?`)

// TestHelpPagesExist: every docs page (and #anchor) that connectd's help
// texts name (cmd/connectd) exists.
func TestHelpPagesExist(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "cmd", "connectd", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range helpRefRE.FindAllString(string(src), -1) {
			file, anchor, _ := strings.Cut(ref, "#")
			body, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				t.Errorf("%s names %s: %v", f, ref, err)
				continue
			}
			if anchor != "" && !anchors(string(body))[anchor] {
				t.Errorf("%s names %s: no such heading", f, ref)
			}
			checked++
		}
	}
	if checked < 5 {
		t.Fatalf("only %d docs references found in cmd/connectd", checked)
	}
	t.Logf("%d docs references in cmd/connectd resolve", checked)
}
