package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// migrateChecks is what each runnable block of
// docs/migrating-from-debezium.md must print, in order (the block must also
// exit 0). A new block needs its check here.
var migrateChecks = []string{
	`"lsn_commit"`,                       // 1. config and offset from Kafka Connect
	"",                                   // 2. worker.properties (prints nothing)
	`"tasks":[{"id":0,"state":"RUNNING"`, // 3. connectd started, connector running
	"CONSISTENT",                         // 4. connectd verify
}

var docRunnableRE = regexp.MustCompile("(?s)<!-- runnable -->\n```sh\n(.*?)\n```")

// TestMigrateFromKafkaConnect follows docs/migrating-from-debezium.md on a
// real Kafka 4.3 with a stock Kafka Connect 4.3 worker running the real
// Debezium 3.6.1 PostgreSQL connector: Debezium snapshots and streams,
// the guide's blocks run as written (only the REST port changed to a free
// one), connectd takes the connector over from the config and offsets
// topics while the database keeps changing, then the way back to Kafka
// Connect. Every change must arrive exactly once across both switches, and
// the snapshot only once.
func TestMigrateFromKafkaConnect(t *testing.T) {
	guide, err := os.ReadFile("../docs/migrating-from-debezium.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range docRunnableRE.FindAllStringSubmatch(string(guide), -1) {
		blocks = append(blocks, m[1])
	}
	if len(blocks) != len(migrateChecks) {
		t.Fatalf("the guide has %d runnable blocks, migrateChecks %d", len(blocks), len(migrateChecks))
	}
	pg := startInventory(t)
	kafka := startKafka(t)
	connect := startKafkaConnectWorker(t, kafka, "connect-cluster")
	cfg := pgConnector(pg, nil)
	body, _ := json.Marshal(cfg)
	if code, b := httpDo(t, "PUT", connect.base+"/connectors/inventory-connector/config", body); code != 201 {
		t.Fatalf("register on Kafka Connect: %d %s", code, b)
	}
	var snapshotRows int
	for _, tb := range []string{"customers", "products", "orders"} {
		snapshotRows += countRows(t, pg, "inventory."+tb)
	}
	c := newConsumer(t, kafka, `dbserver1\.inventory\..*`)
	c.until(snapshotRows, 3*time.Minute)

	// changes while Debezium runs
	want := 0
	change := func(phase string, n int) {
		for i := 1; i <= n; i++ {
			mustExec(t, pg, fmt.Sprintf(`INSERT INTO inventory.customers (first_name, last_name, email) VALUES ('%s', '%d', '%s%d@example.com')`, phase, i, phase, i))
		}
		mustExec(t, pg, fmt.Sprintf(`UPDATE inventory.customers SET last_name = 'updated' WHERE email = '%s1@example.com'`, phase))
		mustExec(t, pg, fmt.Sprintf(`DELETE FROM inventory.customers WHERE email = '%s2@example.com'`, phase))
		want += n + 1 + 2 // inserts, the update, the delete and its tombstone
	}
	change("debezium", 5)
	c.until(snapshotRows+want, time.Minute)
	// Kafka Connect commits the offset every second (offset.flush.interval.ms)
	waitFor(t, time.Minute, "Kafka Connect committed the last change's offset", func() bool {
		_, b := httpDo(t, "GET", connect.base+"/connectors/inventory-connector/offsets", nil)
		return bytes.Contains(b, []byte(`"lsn_commit"`)) && bytes.Contains(b, []byte(`"txId"`)) && !bytes.Contains(b, []byte(`"snapshot"`))
	})

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binPath, filepath.Join(dir, "bin", "connectd")); err != nil {
		t.Fatal(err)
	}
	rest := freeAddr(t)
	subst := strings.NewReplacer("localhost:8083", rest)
	env := append(os.Environ(), "CONNECT="+connect.base, "KAFKA="+kafka, "CONNECTD_LISTENERS=http://"+rest)
	run := func(i int) {
		t.Helper()
		script := subst.Replace(blocks[i])
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		sh := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
		sh.Dir, sh.Env = dir, env
		got, err := sh.CombinedOutput()
		if err != nil || !strings.Contains(string(got), migrateChecks[i]) {
			log, _ := os.ReadFile(filepath.Join(dir, "connectd.log"))
			t.Fatalf("guide block %d: %v, want output with %q\n--- script\n%s\n--- output\n%s\n--- connectd.log\n%s", i+1, err, migrateChecks[i], script, got, log)
		}
		t.Logf("guide block %d ok (%d bytes of output)", i+1, len(got))
	}
	run(0)
	run(1)
	connect.stop() // step 3
	change("between", 4)
	run(2)
	pidText, err := os.ReadFile(filepath.Join(dir, "connectd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatal(err)
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Kill() })
	change("connectd", 4)
	c.until(snapshotRows+want, time.Minute)
	run(3)

	// the way back: connectd stops (SIGTERM), Kafka Connect takes over again
	proc.Signal(syscall.SIGTERM)
	waitFor(t, time.Minute, "connectd exited after SIGTERM", func() bool { return proc.Signal(syscall.Signal(0)) != nil })
	change("back", 3)
	connect = startKafkaConnectWorker(t, kafka, "connect-cluster")
	change("connect", 3)
	c.until(snapshotRows+want, 3*time.Minute)
	// nothing more may come: a replay would show up as extra events
	evs := c.drain(10 * time.Second)
	snapshots, ops := 0, map[string]int{}
	for _, e := range evs {
		switch {
		case e.Op == "r":
			snapshots++
		case e.Tombstone:
			ops[fmt.Sprintf("tombstone %v", e.Key["id"])]++
		case e.Op == "d":
			ops[fmt.Sprintf("d %v", e.Before["id"])]++
		default:
			ops[fmt.Sprintf("%s %v %v", e.Op, e.After["email"], e.After["last_name"])]++
		}
	}
	if snapshots != snapshotRows {
		t.Errorf("%d snapshot records, want %d (one snapshot, by Debezium)", snapshots, snapshotRows)
	}
	for k, n := range ops {
		if n != 1 {
			t.Errorf("%q arrived %d times", k, n)
		}
	}
	if got := len(evs) - snapshots; got != want {
		t.Errorf("%d change records, want %d:\n%v", got, want, ops)
	}
	for _, phase := range []string{"debezium", "between", "connectd", "back", "connect"} {
		if ops[fmt.Sprintf("u %s1@example.com updated", phase)] != 1 {
			t.Errorf("the %s phase's update is missing: %v", phase, ops)
		}
	}
}

// httpDo sends body (JSON, may be nil) and returns status and body.
func httpDo(t *testing.T, method, url string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes()
}

// countRows returns the number of rows of table in the inventory database.
func countRows(t *testing.T, pg *testenv.Postgres, table string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pg.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls cond every 200 ms until it holds, or fails the test.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
