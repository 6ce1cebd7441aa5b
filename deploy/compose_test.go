package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is the part of ../docker-compose.yml these tests read.
type composeFile struct {
	Services map[string]struct {
		Image   string   `yaml:"image"`
		Volumes []string `yaml:"volumes"`
		Ports   []string `yaml:"ports"`
	} `yaml:"services"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// mountOf returns the host path (relative to the repository root) that
// service svc mounts at target, or fails.
func mountOf(t *testing.T, c composeFile, svc, target string) string {
	t.Helper()
	for _, v := range c.Services[svc].Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == target {
			return filepath.Join("..", parts[0])
		}
	}
	t.Fatalf("service %s mounts nothing at %s: %v", svc, target, c.Services[svc].Volumes)
	return ""
}

// Every image in docker-compose.yml is a variable with a public default
// (the "${POSTGRES_IMAGE:-postgres:16}" form), and every variable
// but Grafana's is one scripts/images.sh builds and exports.
func TestComposeImagesAreVariables(t *testing.T) {
	var c composeFile
	readYAML(t, "../docker-compose.yml", &c)
	script, err := os.ReadFile("../scripts/images.sh")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^\$\{([A-Z_]+_IMAGE):-([a-z0-9./-]+:[A-Za-z0-9.-]+)\}$`)
	for name, s := range c.Services {
		m := re.FindStringSubmatch(s.Image)
		if m == nil {
			t.Errorf("service %s: image %q is not ${NAME_IMAGE:-public/default:tag}", name, s.Image)
			continue
		}
		if m[1] != "GRAFANA_IMAGE" && !strings.Contains(string(script), m[1]) {
			t.Errorf("service %s: scripts/images.sh does not build %s", name, m[1])
		}
	}
	for _, want := range []string{"postgres", "mariadb", "kafka", "connectd", "prometheus", "grafana"} {
		if _, ok := c.Services[want]; !ok {
			t.Errorf("docker-compose.yml has no %s service", want)
		}
	}
}

// Prometheus (as mounted by docker-compose.yml) scrapes connectd's REST
// listener at /metrics and loads the alert rules; promtool checks the
// config with the rule path mapped to this folder.
func TestComposePrometheusConfig(t *testing.T) {
	var c composeFile
	readYAML(t, "../docker-compose.yml", &c)
	dir := mountOf(t, c, "prometheus", "/etc/prometheus")
	var p struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			MetricsPath   string `yaml:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	readYAML(t, cfgPath, &p)
	if len(p.ScrapeConfigs) != 1 || p.ScrapeConfigs[0].MetricsPath != "/metrics" ||
		len(p.ScrapeConfigs[0].StaticConfigs) != 1 || strings.Join(p.ScrapeConfigs[0].StaticConfigs[0].Targets, ",") != "connectd:8083" {
		t.Fatalf("scrape config %+v: want connectd:8083/metrics (the Dockerfile's CONNECTD_LISTENERS)", p.ScrapeConfigs)
	}
	if len(p.RuleFiles) != 1 || p.RuleFiles[0] != "/etc/prometheus/connectd-alerts.yml" {
		t.Fatalf("rule_files %v", p.RuleFiles)
	}
	raw, _ := os.ReadFile(cfgPath)
	abs, _ := filepath.Abs(filepath.Join(dir, "connectd-alerts.yml"))
	tmp := filepath.Join(t.TempDir(), "prometheus.yml")
	os.WriteFile(tmp, []byte(strings.ReplaceAll(string(raw), "/etc/prometheus/connectd-alerts.yml", abs)), 0o644)
	pt, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: run scripts/setup.sh (installs Debian's prometheus package)")
	}
	if out, err := exec.Command(pt, "check", "config", tmp).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
	dockerfile, _ := os.ReadFile("../Dockerfile")
	if !strings.Contains(string(dockerfile), "CONNECTD_LISTENERS=http://0.0.0.0:8083") {
		t.Fatal("the Dockerfile's REST listener is not :8083, which prometheus.yml scrapes")
	}
}

// Grafana (as mounted by docker-compose.yml) gets a Prometheus data source
// at the compose service and a file provider whose path holds the dashboard.
func TestComposeGrafanaProvisioning(t *testing.T) {
	var c composeFile
	readYAML(t, "../docker-compose.yml", &c)
	prov := mountOf(t, c, "grafana", "/etc/grafana/provisioning")
	var ds struct {
		Datasources []struct {
			Type, URL string
			IsDefault bool `yaml:"isDefault"`
		}
	}
	readYAML(t, filepath.Join(prov, "datasources", "prometheus.yml"), &ds)
	if len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" || ds.Datasources[0].URL != "http://prometheus:9090" || !ds.Datasources[0].IsDefault {
		t.Fatalf("data sources %+v", ds.Datasources)
	}
	var dp struct {
		Providers []struct {
			Type    string
			Options struct{ Path string }
		}
	}
	readYAML(t, filepath.Join(prov, "dashboards", "connectd.yml"), &dp)
	if len(dp.Providers) != 1 || dp.Providers[0].Type != "file" {
		t.Fatalf("dashboard providers %+v", dp.Providers)
	}
	dash := mountOf(t, c, "grafana", dp.Providers[0].Options.Path)
	var d struct{ UID string }
	b, err := os.ReadFile(filepath.Join(dash, "connectd-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil || d.UID != "connectd-cdc" {
		t.Fatalf("dashboard in the provider's folder: uid %q, %v", d.UID, err)
	}
}

// The example connectors name a registered class and reach the databases
// by their compose service names.
func TestExampleConnectors(t *testing.T) {
	files, _ := filepath.Glob("../examples/connectors/*.json")
	if len(files) < 3 {
		t.Fatalf("examples: %v", files)
	}
	for _, f := range files {
		var c struct {
			Name   string
			Config map[string]string
		}
		b, _ := os.ReadFile(f)
		if err := json.Unmarshal(b, &c); err != nil || c.Name == "" || !strings.HasPrefix(c.Config["connector.class"], "io.debezium.connector.") {
			t.Errorf("%s: name %q class %q: %v", f, c.Name, c.Config["connector.class"], err)
		}
		host := c.Config["database.hostname"]
		if host == "" {
			host = regexp.MustCompile(`^jdbc:\w+://([^:/]+)`).FindStringSubmatch(c.Config["connection.url"] + " ")[1]
		}
		if host != "postgres" && host != "mariadb" {
			t.Errorf("%s: host %q is not a compose service", f, host)
		}
	}
}
