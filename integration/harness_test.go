// Package integration runs connectd end to end: the real binary as a
// separate process (so that it can be SIGKILLed), a real PostgreSQL 15
// (internal/testenv), the embedded broker, and the REST API, as a user
// would. Nothing is mocked.
package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/twmb/franz-go/pkg/kgo"
)

var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "connectd-bin-")
	if err != nil {
		panic(err)
	}
	binPath = filepath.Join(dir, "connectd")
	build := exec.Command("go", "build", "-o", binPath, "../cmd/connectd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building connectd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// daemon is one connectd process.
type daemon struct {
	registryRetries int // starts retried after the registry's port was taken
	starts          int // processes started so far
	t               *testing.T
	cmd             *exec.Cmd
	dataDir         string
	rest            string // http://host:port
	kafka           string // host:port
	schemaRegistry  string // host:port of the embedded schema registry
	log             *syncBuffer
	exited          chan struct{}
	args            []string // extra arguments, e.g. -o key=value
	// problemsOnly prints, on failure, only each start's WARN and ERROR
	// lines (at most 40 a start) and the last start's last 60 lines: a
	// soak restarts connectd dozens of times, and whole logs bury the
	// test's own messages past what CI keeps of the output.
	problemsOnly bool
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// problemLines is log's WARN and ERROR lines (at most limit, then a count
// of the rest) and, when tail is set, its last 60 lines.
func problemLines(log string, limit int, tail bool) string {
	var out []string
	n := 0
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	for _, l := range lines {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") || strings.Contains(l, " WARN ") || strings.Contains(l, " ERROR ") || strings.Contains(l, "panic") {
			if n++; n <= limit {
				out = append(out, l)
			}
		}
	}
	if n > limit {
		out = append(out, fmt.Sprintf("… %d more WARN/ERROR lines", n-limit))
	}
	if tail {
		out = append(out, "last lines:")
		out = append(out, lines[max(0, len(lines)-60):]...)
	}
	return strings.Join(out, "\n")
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	p, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", p)
}

// newDaemon prepares (does not start) a daemon with its own data dir and ports.
func newDaemon(t *testing.T) *daemon {
	return &daemon{t: t, dataDir: t.TempDir(), rest: "http://" + freeAddr(t), kafka: freeAddr(t), schemaRegistry: freeAddr(t)}
}

func (d *daemon) start() {
	d.t.Helper()
	d.log = &syncBuffer{}
	d.cmd = exec.Command(binPath, append([]string{
		"-o", "listeners=" + d.rest,
		"-o", "embedded.kafka.listener=" + d.kafka,
		"-o", "data.dir=" + d.dataDir,
		"-o", "schema.registry.listener=" + d.schemaRegistry,
		"-o", "offset.flush.interval.ms=500"}, d.args...)...)
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.exited = make(chan struct{})
	go func() { d.cmd.Wait(); close(d.exited) }()
	// Each start's log is printed on failure (a restart's log alone does
	// not show what the killed process did).
	d.starts++
	n, lb, cmd, exited := d.starts, d.log, d.cmd, d.exited
	d.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
		if d.t.Failed() {
			if d.problemsOnly {
				d.t.Logf("connectd log (start %d), its WARN and ERROR lines:\n%s", n, problemLines(lb.String(), 40, n == d.starts))
			} else {
				d.t.Logf("connectd log (start %d):\n%s", n, lb.String())
			}
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(d.rest + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case <-d.exited:
			// The registry's free port can be taken between choosing it
			// and connectd's bind (CI saw it once): choose another.
			if l := d.log.String(); strings.Contains(l, "schema registry listener") && strings.Contains(l, "address already in use") && d.registryRetries < 3 {
				d.registryRetries++
				d.schemaRegistry = freeAddr(d.t)
				d.start()
				return
			}
			d.t.Fatalf("connectd exited at start:\n%s", d.log.String())
		default:
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("connectd REST did not come up: %v\n%s", err, d.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (d *daemon) kill() {
	d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.exited
}

// stop sends SIGTERM and waits for a clean exit.
func (d *daemon) stop() {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(60 * time.Second):
		d.t.Fatalf("connectd did not stop on SIGTERM:\n%s", d.log.String())
	}
	if code := d.cmd.ProcessState.ExitCode(); code != 0 {
		d.t.Fatalf("connectd exit code %d after SIGTERM:\n%s", code, d.log.String())
	}
}

// do sends a JSON request and returns status and body.
func (d *daemon) do(method, path string, body any) (int, []byte) {
	d.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.rest+path, r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

type connectorStatus struct {
	Name      string `json:"name"`
	Connector struct {
		State string `json:"state"`
		Trace string `json:"trace"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"tasks"`
}

func (d *daemon) status(name string) connectorStatus {
	d.t.Helper()
	code, b := d.do("GET", "/connectors/"+name+"/status", nil)
	var st connectorStatus
	if code == 200 {
		json.Unmarshal(b, &st)
	}
	return st
}

func (d *daemon) waitTaskState(name, state string) connectorStatus {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := d.status(name)
		if len(st.Tasks) > 0 && st.Tasks[0].State == state {
			return st
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("task of %s not %s: %+v\n%s", name, state, st, d.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitSnapshotDone waits until task 0 of the source connector name has
// completed its initial snapshot (/metrics connectd_snapshot_completed = 1):
// RUNNING is reported before the task has created its slot and taken its
// snapshot, so a change written right after RUNNING may arrive inside the
// snapshot (op r, collapsed with earlier changes of its row) instead of as
// its own change event. Tests that assert on streamed change events call
// this before writing (CI saw both under load).
func (d *daemon) waitSnapshotDone(name string) {
	d.t.Helper()
	key := fmt.Sprintf("connectd_snapshot_completed{connector=%s,task=0}", name)
	deadline := time.Now().Add(60 * time.Second)
	for d.scrape()[key] != 1 {
		if time.Now().After(deadline) {
			d.t.Fatalf("%s: snapshot not completed within 60 s (%s)\n%s", name, key, d.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pgConnector returns a connector config for pg's inventory database.
func pgConnector(pg *testenv.Postgres, extra map[string]string) map[string]string {
	cfg := map[string]string{
		"connector.class":   "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname": pg.Host,
		"database.port":     fmt.Sprint(pg.Port),
		"database.user":     pg.User,
		"database.password": "",
		"database.dbname":   "inventory",
		"topic.prefix":      "dbserver1",
		"plugin.name":       "pgoutput",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// event is one change event as read from Kafka.
type event struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       map[string]any // key payload; nil for tombstone-less null keys
	Tombstone bool
	Op        string
	Before    map[string]any
	After     map[string]any
	Source    map[string]any
	Raw       []byte
	RawKey    []byte // the record key's bytes
}

// consumer reads every topic matching a regex from the start.
type consumer struct {
	t  *testing.T
	cl *kgo.Client
	mu sync.Mutex
	ev []event
}

func newConsumer(t *testing.T, broker, topicRegex string) *consumer {
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeRegex(), kgo.ConsumeTopics(topicRegex),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(500*time.Millisecond),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	c := &consumer{t: t, cl: cl}
	t.Cleanup(cl.Close)
	return c
}

// until polls until n events have been read in total, or fails the test.
func (c *consumer) until(n int, timeout time.Duration) []event {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		c.mu.Lock()
		have := len(c.ev)
		c.mu.Unlock()
		if have >= n {
			break
		}
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			c.t.Fatalf("read %d of %d events within %s", have, n, timeout)
		}
		fs.EachRecord(func(r *kgo.Record) {
			c.mu.Lock()
			c.ev = append(c.ev, decodeEvent(c.t, r))
			c.mu.Unlock()
		})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event(nil), c.ev...)
}

func decodeEvent(t *testing.T, r *kgo.Record) event {
	e := event{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Raw: r.Value, RawKey: r.Key}
	var k struct {
		Payload map[string]any `json:"payload"`
	}
	if r.Key != nil {
		if err := json.Unmarshal(r.Key, &k); err != nil {
			t.Fatalf("key of %s@%d is not JSON: %v", r.Topic, r.Offset, err)
		}
		e.Key = k.Payload
	}
	if r.Value == nil {
		e.Tombstone = true
		return e
	}
	var v struct {
		Payload struct {
			Op     string         `json:"op"`
			Before map[string]any `json:"before"`
			After  map[string]any `json:"after"`
			Source map[string]any `json:"source"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(r.Value, &v); err != nil {
		t.Fatalf("value of %s@%d is not JSON: %v", r.Topic, r.Offset, err)
	}
	e.Op, e.Before, e.After, e.Source = v.Payload.Op, v.Payload.Before, v.Payload.After, v.Payload.Source
	return e
}

func keyString(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

func mustExec(t *testing.T, pg *testenv.Postgres, sql string) {
	t.Helper()
	if err := pg.Exec(context.Background(), "inventory", sql); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func contains(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// drain keeps reading for d and returns every event read so far.
func (c *consumer) drain(d time.Duration) []event {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for ctx.Err() == nil {
		fs := c.cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			c.mu.Lock()
			c.ev = append(c.ev, decodeEvent(c.t, r))
			c.mu.Unlock()
		})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event(nil), c.ev...)
}
