package builtin

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/runtime"
)

func testHerder(t *testing.T) *runtime.Herder {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kafka := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := runtime.StartWorker(ctx, runtime.WorkerConfig{"data.dir": t.TempDir(), "embedded.kafka.listener": kafka,
		"listeners": "http://127.0.0.1:0", "schema.registry.listener": ""}, Plugins(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w.Herder
}

// properties reads a Java .properties file of key=value lines.
func properties(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if k, v, ok := strings.Cut(l, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// Every connector config the repository runs against the real Debezium
// (reference/debezium/scenarios) and every example config sets only keys
// connectd knows, so none of them gets the unknown-key WARN; a mistyped
// key does, by name, and keys passed on to clients, the JDBC driver,
// converters and transforms do not.
func TestUnknownConnectorKeys(t *testing.T) {
	h := testHerder(t)
	files, _ := filepath.Glob("../../reference/debezium/scenarios/*/*/connector.properties")
	more, _ := filepath.Glob("../../reference/debezium/scenarios/*/*.properties")
	files = append(files, more...)
	if len(files) < 40 {
		t.Fatalf("found only %d scenario configs", len(files))
	}
	for _, f := range files {
		cfg := properties(t, f)
		cfg["name"] = "c"
		if _, ok := cfg["connector.class"]; !ok {
			cfg["connector.class"] = "io.debezium.connector.postgresql.PostgresConnector"
			if strings.Contains(f, "mariadb") {
				cfg["connector.class"] = "io.debezium.connector.mariadb.MariaDbConnector"
			}
		}
		unknown, err := h.UnknownConnectorKeys(cfg)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(unknown) > 0 {
			t.Errorf("%s: keys taken as unknown: %v", f, unknown)
		}
	}
	examples, _ := filepath.Glob("../../examples/connectors/*.json")
	for _, f := range examples {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Name   string            `json:"name"`
			Config map[string]string `json:"config"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		body.Config["name"] = body.Name
		if unknown, err := h.UnknownConnectorKeys(body.Config); err != nil || len(unknown) > 0 {
			t.Errorf("%s: keys taken as unknown: %v (%v)", f, unknown, err)
		}
	}
	cfg := map[string]string{"name": "c", "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname": "h", "databse.user": "typo", "snapshot.mod": "never", "topic.prefix": "p",
		"producer.override.linger.ms": "5", "database.tcpKeepAlive": "true", "converters": "b", "b.type": "x.Y", "b.selector": "s",
		"transforms": "u", "transforms.u.type": "io.debezium.transforms.ExtractNewRecordState", "column.mask.with.5.chars": "t.c"}
	unknown, err := h.UnknownConnectorKeys(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"databse.user", "snapshot.mod"}; !slices.Equal(unknown, want) {
		t.Fatalf("unknown keys %v, want %v", unknown, want)
	}
}
