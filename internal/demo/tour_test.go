package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// tourChecks is what each runnable block of README.md's tour must print, in
// order (the block must also exit 0). A new block needs its check here.
var tourChecks = []string{
	`"state":"RUNNING"`,                           // 1. status, tail, psql UPDATE
	`"subject":"avro1.inventory.customers-value"`, // 2. Avro connector, registry
	"gbailey@foobar.com",                          // 3. JDBC sink table
	`"purchaser-qty"`,                             // 4. flinklite job
	`"qty":`,                                      // 5. streaming SQL join + GROUP BY
	"inventory-connector",                         // 6. connectd status
	"CONSISTENT",                                  // 7. kill -9, then verify
}

var runnableRE = regexp.MustCompile("(?s)<!-- runnable -->\n```sh\n(.*?)\n```")

// TestTour runs every block of README.md marked <!-- runnable --> as it is
// written, against the demo (real PostgreSQL 15, the real connectd binary,
// started by the demo as `make demo` does), with only the ports and the env
// file's path changed to free ones. Block 7 kills connectd with SIGKILL; the
// demo restarts it and connectd verify must find nothing lost.
func TestTour(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range runnableRE.FindAllStringSubmatch(string(readme), -1) {
		blocks = append(blocks, m[1])
	}
	if len(blocks) != len(tourChecks) {
		t.Fatalf("README.md has %d runnable blocks, tourChecks %d", len(blocks), len(tourChecks))
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][2]string{{"demo", "."}, {"bin/connectd", "../../cmd/connectd"}} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1]).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	port := func() int {
		p, err := testenv.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	rest, kafka, registry := port(), port(), port()
	envFile := filepath.Join(dir, "demo.env")
	cmd := exec.Command(filepath.Join(dir, "demo"), "--connectd", filepath.Join(dir, "bin/connectd"),
		"--rest", fmt.Sprintf("127.0.0.1:%d", rest), "--kafka", fmt.Sprintf("127.0.0.1:%d", kafka),
		"--registry", fmt.Sprintf("127.0.0.1:%d", registry), "--env-file", envFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Error("demo still running 60 s after SIGINT")
		}
		if _, err := os.Stat(envFile); !os.IsNotExist(err) {
			t.Errorf("the demo left %s behind", envFile)
		}
	}()
	lines := make(chan string, 1024)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // the test reads only until the events start
			}
		}
	}()
	deadline := time.After(120 * time.Second)
wait:
	for {
		select {
		case l := <-lines:
			if strings.HasPrefix(l, "== change events") {
				break wait
			}
		case <-deadline:
			t.Fatal("the demo did not start within 120 s")
		}
	}
	env, err := os.ReadFile(envFile)
	if err != nil || !strings.Contains(string(env), "PGPORT=") || !strings.Contains(string(env), "CONNECTD_PID=") {
		t.Fatalf("env file %s: %q, %v", envFile, env, err)
	}
	subst := strings.NewReplacer("/tmp/connectd-demo.env", envFile,
		"localhost:8083", fmt.Sprintf("127.0.0.1:%d", rest), "127.0.0.1:8081", fmt.Sprintf("127.0.0.1:%d", registry),
		"localhost:8081", fmt.Sprintf("127.0.0.1:%d", registry))
	for i, b := range blocks {
		script := subst.Replace(b)
		ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
		sh := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
		sh.Dir = dir
		// connectd's commands (topics tail, status, verify) find the demo's
		// broker and REST API as the README's would find the defaults.
		sh.Env = append(os.Environ(), fmt.Sprintf("CONNECTD_LISTENERS=http://127.0.0.1:%d", rest),
			fmt.Sprintf("CONNECTD_EMBEDDED_KAFKA_LISTENER=127.0.0.1:%d", kafka))
		got, err := sh.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("tour block %d failed: %v\n--- script\n%s\n--- output\n%s", i+1, err, script, got)
		}
		if !strings.Contains(string(got), tourChecks[i]) {
			t.Fatalf("tour block %d printed no %q\n--- script\n%s\n--- output\n%s", i+1, tourChecks[i], script, got)
		}
		t.Logf("tour block %d ok (%d bytes of output)", i+1, len(got))
	}
}
