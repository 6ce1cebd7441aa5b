package integration

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The embedded broker's data.dir fills up (a 24 MiB tmpfs, issue 21): the
// task ends FAILED with a trace that says so (not only the produce
// response's UNKNOWN_SERVER_ERROR); nothing it could not store is
// confirmed to PostgreSQL, so once there is room again (the tmpfs grown)
// and the task is restarted, every row arrives, none missing.
func TestEmbeddedBrokerDiskFull(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a 24 MiB tmpfs for data.dir: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.big (id int PRIMARY KEY, pad text)`)
	d := newDaemon(t)
	d.dataDir = dir
	d.start()
	if code, b := d.do("POST", "/connectors", map[string]any{"name": "big", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.big"})}); code != 201 {
		t.Fatalf("create: %d %s", code, b)
	}
	d.waitTaskState("big", "RUNNING")
	d.waitSnapshotDone("big")
	// 4000 rows of 9.6 KB of hex digits (incompressible enough: the
	// events need about 2.5 times the tmpfs), 100 a transaction.
	const rows = 4000
	for i := 0; i < rows/100; i++ {
		mustExec(t, pg, fmt.Sprintf(`INSERT INTO inventory.big SELECT g, (SELECT string_agg(md5(random()::text || g || h), '') FROM generate_series(1, 300) h) FROM generate_series(%d, %d) g`, i*100, i*100+99))
	}
	st := d.waitTaskState("big", "FAILED")
	if tr := st.Tasks[0].Trace; !strings.Contains(tr, "no space left on device") || !strings.Contains(tr, "the embedded broker could not store it") {
		t.Fatalf("FAILED task's trace does not say the data.dir is full:\n%s", tr)
	}
	t.Logf("trace: %s", st.Tasks[0].Trace)
	stored := distinctIDs(newConsumer(t, d.kafka, `^dbserver1\.inventory\.big$`).drain(3 * time.Second))
	if len(stored) == 0 || len(stored) >= rows {
		t.Fatalf("%d of %d rows stored before the disk was full: the test did not fill it", len(stored), rows)
	}
	// Room again; the operator restarts the failed task.
	if out, err := exec.Command("mount", "-o", "remount,size=256m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	if code, b := d.do("POST", "/connectors/big/restart?includeTasks=true&onlyFailed=true", nil); code/100 != 2 {
		t.Fatalf("restart: %d %s", code, b)
	}
	d.waitTaskState("big", "RUNNING")
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.big$`)
	deadline := time.Now().Add(90 * time.Second)
	var ids map[int]bool
	for {
		ids = distinctIDs(c.drain(2 * time.Second))
		if len(ids) >= rows || time.Now().After(deadline) {
			break
		}
	}
	var missing []int
	for id := 0; id < rows; id++ {
		if !ids[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("after the restart %d rows never arrived (first %v); %d were stored before the disk was full", len(missing), missing[:min(10, len(missing))], len(stored))
	}
	t.Logf("%d rows stored before the disk was full, all %d after the restart", len(stored), rows)
}

// distinctIDs is the set of after.id of evs.
func distinctIDs(evs []event) map[int]bool {
	ids := map[int]bool{}
	for _, e := range evs {
		if e.After != nil {
			ids[int(e.After["id"].(float64))] = true
		}
	}
	return ids
}
