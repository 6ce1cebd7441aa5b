package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/connectd/connectd/metrics"
)

// promtool (Prometheus' own checker) parses the rules and their PromQL and
// runs the unit tests in connectd-alerts.test.yml: each alert fires on the
// series meant to fire it, with the expected labels and annotations, and
// not on the healthy ones.
func TestAlertRulesPromtool(t *testing.T) {
	pt, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: run scripts/setup.sh (installs Debian's prometheus package)")
	}
	for _, args := range [][]string{{"check", "rules", "connectd-alerts.yml"}, {"test", "rules", "connectd-alerts.test.yml"}} {
		cmd := exec.Command(pt, args...)
		cmd.Dir = "prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

var metricName = regexp.MustCompile(`\bconnectd_[a-z_]+`)

// usedNames returns the connectd_* metric names text refers to, histogram
// series suffixes removed.
func usedNames(text string) []string {
	var out []string
	for _, n := range metricName.FindAllString(text, -1) {
		for _, suf := range []string{"_bucket", "_count", "_sum"} {
			if strings.HasSuffix(n, "_seconds"+suf) {
				n = strings.TrimSuffix(n, suf)
			}
		}
		out = append(out, n)
	}
	return out
}

// Every metric the rules and the dashboard query is one connectd exports
// (a renamed metric would silently empty a panel or mute an alert).
func TestDeployMetricNamesExist(t *testing.T) {
	known := metrics.MetricNames()
	rules, err := os.ReadFile("prometheus/connectd-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("grafana/connectd-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana dashboard: %v", err)
	}
	if len(dash.Panels) < 8 {
		t.Fatalf("dashboard has %d panels", len(dash.Panels))
	}
	exprs := string(rules)
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if len(usedNames(tg.Expr)) == 0 {
				t.Errorf("panel %q queries no connectd metric: %s", p.Title, tg.Expr)
			}
			exprs += "\n" + tg.Expr
		}
	}
	used := usedNames(exprs)
	if len(used) == 0 {
		t.Fatal("no metric names found")
	}
	for _, n := range used {
		if !slices.Contains(known, n) {
			t.Errorf("%s is not a metric connectd exports (%v)", n, known)
		}
	}
}
