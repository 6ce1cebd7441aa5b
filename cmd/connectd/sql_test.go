package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/rest"
	"github.com/connectd/connectd/runtime"
)

// connectd sql -f runs a file's statements on a real worker (embedded
// broker, REST server): EXPLAIN prints the plan, CREATE TABLE … AS SELECT
// starts a job; an unsupported clause stops the script with the file's
// line and column.
func TestSQLCommand(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kafka := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := runtime.StartWorker(ctx, runtime.WorkerConfig{"data.dir": t.TempDir(), "embedded.kafka.listener": kafka, "listeners": "http://127.0.0.1:0"},
		connect.NewPlugins(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rs, err := rest.New(w, connect.NewPlugins())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rs.Handler())
	defer srv.Close()
	defer rs.Shutdown(ctx)
	cl, err := kgo.NewClient(kgo.SeedBrokers(w.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, "shop.public.orders"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "views.sql")
	os.WriteFile(good, []byte("-- live totals\nEXPLAIN INSERT INTO totals SELECT status, COUNT(*) AS n FROM `shop.public.orders` GROUP BY status;\n"+
		"CREATE TABLE totals AS SELECT status, COUNT(*) AS n FROM `shop.public.orders` GROUP BY status;\n"), 0o644)
	var out bytes.Buffer
	if err := sqlCmd([]string{"-f", good, "--url", srv.URL}, &out); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Count(s, "GroupAggregate") != 2 || !strings.Contains(s, "started SQL job totals: upsert topic totals (key status) from shop.public.orders") {
		t.Fatalf("output:\n%s", s)
	}
	bad := filepath.Join(dir, "bad.sql")
	os.WriteFile(bad, []byte("EXPLAIN SELECT status FROM `shop.public.orders`;\n\nCREATE TABLE t2 AS SELECT status\n  FROM `shop.public.orders` ORDER BY status;\n"), 0o644)
	out.Reset()
	err = sqlCmd([]string{"-f", bad, "--url", srv.URL}, &out)
	if err == nil || err.Error() != bad+":4:38: unsupported: ORDER BY (a streaming result has no order)" {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(out.String(), "Calc(select=[`status`])") {
		t.Fatalf("the EXPLAIN before the error: %s", out.String())
	}
	if err := sqlCmd([]string{"-e", "SELECT FROM", "--url", srv.URL}, &out); err == nil || err.Error() != `-e:1:8: syntax error near "FROM"` {
		t.Fatalf("syntax error: %v", err)
	}
}
