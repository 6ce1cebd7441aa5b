package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/jackc/pgx/v5"
)

// TestCtrlCWithClosedStdout: Ctrl-C on "make demo | tee …" signals the demo
// and ends its stdout's reader at once. The demo must still stop its
// PostgreSQL and remove connectd's data dir; before it ignored SIGPIPE, its
// next write killed it first and both were left behind. Real PostgreSQL 15
// and the real connectd binary.
func TestCtrlCWithClosedStdout(t *testing.T) {
	dir := t.TempDir()
	for _, b := range [][2]string{{"demo", "."}, {"connectd", "../../cmd/connectd"}} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1]).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	addr := func() string {
		p, err := testenv.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("127.0.0.1:%d", p)
	}
	cmd := exec.Command(filepath.Join(dir, "demo"), "--connectd", filepath.Join(dir, "connectd"), "--rest", addr(), "--kafka", addr(), "--registry", addr(), "--changes=false")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var dsn, dataDir string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l := sc.Text()
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "psql: "); ok {
			dsn = v
		}
		if _, v, ok := strings.Cut(l, "(connectd log: "); ok {
			dataDir = strings.TrimSuffix(strings.TrimSuffix(v, ")"), ".log")
		}
		if strings.HasPrefix(l, "== change events") {
			break
		}
	}
	if dsn == "" || dataDir == "" {
		cmd.Process.Kill()
		t.Fatalf("demo output lacks the psql URL (%q) or the connectd log (%q)", dsn, dataDir)
	}
	r.Close() // the reader is gone, as tee after Ctrl-C
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Errorf("demo killed by %v (%v) instead of cleaning up", ws.Signal(), err)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("demo still running 60 s after SIGINT")
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		os.RemoveAll(dataDir)
		t.Errorf("connectd's data dir %s left behind: %v", dataDir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, dsn); err == nil {
		conn.Close(ctx)
		t.Errorf("the demo's PostgreSQL (%s) still answers after the demo ended", dsn)
	}
}
