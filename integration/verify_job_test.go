package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/runtime"
)

// connectd verify --against JOB (issue 21): SQL jobs (POST /sql) over a
// PostgreSQL connector's topics — a join, a GROUP BY and a projection of
// floats — are CONSISTENT with their SELECTs run on PostgreSQL, after
// changes made while they run; then records produced into a result topic
// by hand are found and named: a wrong value for one key (different, with
// its columns) and a tombstone of another (missing), in the projection and
// in the join (its key nested by alias). A job whose result has a date
// column, --table with a job and an unknown --against are errors naming
// what cannot be checked (exit 2).
func TestVerifyAgainstSQLJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pg := startInventory(t)
	d := newDaemon(t)
	d.start()
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "src", "config": pgConnector(pg, nil)}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitSnapshotDone("src")
	jobs := map[string]string{
		"order_lines":  "SELECT o.id AS oid, c.last_name AS name, o.quantity * 2 AS q2 FROM `dbserver1.inventory.orders` o JOIN `dbserver1.inventory.customers` c ON o.purchaser = c.id",
		"per_customer": "SELECT o.purchaser AS purchaser, COUNT(*) AS n, SUM(o.quantity) AS total, MAX(o.product_id) AS top FROM `dbserver1.inventory.orders` o GROUP BY o.purchaser HAVING COUNT(*) > 0",
		"weights":      "SELECT id, name, weight * 2 AS w2, description IS NULL AS nodesc FROM `dbserver1.inventory.products` WHERE weight > 1",
		"dated":        "SELECT id, order_date AS d FROM `dbserver1.inventory.orders`",
	}
	for name, sel := range jobs {
		postSQLJob(t, d, "CREATE TABLE "+name+" AS "+sel)
	}
	mustExec(t, pg, `UPDATE inventory.orders SET quantity = quantity + 5 WHERE id = 2;
		DELETE FROM inventory.orders WHERE id = 3;
		INSERT INTO inventory.orders (order_date, purchaser, quantity, product_id) VALUES ('2026-01-02', 3, 7, 2), ('2026-01-03', 1, 4, 3);
		INSERT INTO inventory.products (name, description, weight) VALUES ('drill', NULL, 2.5);
		UPDATE inventory.products SET weight = 1.25, description = NULL WHERE id = 3;
		UPDATE inventory.customers SET last_name = 'Renamed' WHERE id = 2`)

	verify := func(job string, wantCode int, extra ...string) (runtime.VerifyResult, string) {
		t.Helper()
		args := append([]string{"verify", "src", "--against", job, "--url", d.rest, "--rounds", "5", "--settle", "20s"}, extra...)
		out, errOut, code := runCLIFor(t, 3*time.Minute, args...)
		if code != wantCode {
			t.Fatalf("connectd verify --against %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", job, code, wantCode, out, errOut)
		}
		var res runtime.VerifyResult
		if wantCode != 2 && len(extra) > 0 && extra[0] == "--json" {
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("verify --json output: %v\n%s", err, out)
			}
			if res.Job != job || len(res.Tables) != 1 || res.Tables[0].Topic != job || res.SourcePosition["lsn"] == nil {
				t.Fatalf("against %s: %+v", job, res)
			}
		}
		return res, out + errOut
	}
	wantRows := map[string]int64{"order_lines": 4, "per_customer": 3, "weights": 4}
	for job, n := range wantRows {
		res, _ := verify(job, 0, "--json")
		if tr := res.Tables[0]; res.State != runtime.VerifyConsistent || tr.SourceRows != n || tr.TopicKeys != n || tr.Missing+tr.Extra+tr.Different != 0 {
			t.Fatalf("against %s: %s %+v", job, res.State, tr)
		}
	}

	// The result topics damaged by hand: a wrong value and a tombstone.
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx,
		&kgo.Record{Topic: "weights", Key: []byte(`{"id":1}`), Value: []byte(`{"id":1,"name":"scooter","w2":6.3,"nodesc":false}`)},
		&kgo.Record{Topic: "weights", Key: []byte(`{"id":3}`)},
		&kgo.Record{Topic: "order_lines", Key: []byte(`{"o":{"id":1},"c":{"id":1}}`), Value: []byte(`{"oid":1,"name":"Thomas","q2":3}`)},
	).FirstErr(); err != nil {
		t.Fatal(err)
	}
	res, _ := verify("weights", 1, "--json")
	tr := res.Tables[0]
	if res.State != runtime.VerifyDifferent || tr.Different != 1 || tr.Missing != 1 || tr.Extra != 0 || tr.SourceRows != 4 || tr.TopicKeys != 3 {
		t.Fatalf("against weights after damage: %s %+v", res.State, tr)
	}
	kinds := map[string]runtime.VerifyExample{}
	for _, ex := range tr.Examples {
		kinds[ex.Kind] = ex
	}
	if ex := kinds["different"]; compact(ex.Key) != `{"id":1}` || strings.Join(ex.Columns, ",") != "w2" ||
		!strings.Contains(compact(ex.Topic), `"w2":6.3`) || !strings.Contains(compact(ex.Source), `"w2":6.28`) {
		t.Fatalf("different example: %+v", ex)
	}
	if ex := kinds["missing"]; compact(ex.Key) != `{"id":3}` || ex.Topic != nil || !strings.Contains(compact(ex.Source), `"name":"hammer"`) {
		t.Fatalf("missing example: key %s source %s topic %s", ex.Key, ex.Source, ex.Topic)
	}
	res, _ = verify("order_lines", 1, "--json")
	if tr := res.Tables[0]; tr.Table != "inventory.orders, inventory.customers" || tr.Different != 1 || tr.Missing != 0 || tr.Extra != 0 || len(tr.Examples) != 1 ||
		compact(tr.Examples[0].Key) != `{"o":{"id":1},"c":{"id":1}}` || strings.Join(tr.Examples[0].Columns, ",") != "q2" {
		t.Fatalf("against order_lines after damage: %+v", tr)
	}
	// The text output names the table's counts and the examples.
	_, text := verify("weights", 1)
	for _, want := range []string{"against SQL job weights", "weights different key {\"id\":1} columns w2", "weights missing key {\"id\":3}"} {
		if !strings.Contains(text, want) {
			t.Fatalf("text output lacks %q:\n%s", want, text)
		}
	}
	verify("per_customer", 0, "--json") // undamaged

	// What cannot be checked.
	if _, out := verify("dated", 2); !strings.Contains(out, "column d is of type date") {
		t.Fatalf("against dated: %s", out)
	}
	if _, out := verify("weights", 2, "--table", "inventory.products"); !strings.Contains(out, "--table does not apply to a SQL job") {
		t.Fatalf("against weights --table: %s", out)
	}
	if _, out := verify("nosuch", 2); !strings.Contains(out, "neither a connector nor a SQL job") {
		t.Fatalf("against nosuch: %s", out)
	}
}

// With exactly.once.source.support=enabled the connector's topics end in
// transaction markers, which a job's checkpoint never passes (it stops
// after the last record it read): verify --against JOB counts such a
// partition as caught up (job_lag 0) instead of waiting out --settle and
// reporting the markers as lag.
func TestVerifyAgainstSQLJobExactlyOnce(t *testing.T) {
	pg := startInventory(t)
	d := newDaemon(t)
	d.args = []string{"-o", "exactly.once.source.support=enabled"}
	d.start()
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "src", "config": pgConnector(pg, nil)}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitSnapshotDone("src")
	postSQLJob(t, d, "CREATE TABLE per_product AS SELECT product_id, SUM(quantity) AS qty FROM `dbserver1.inventory.orders` GROUP BY product_id")
	mustExec(t, pg, `UPDATE inventory.orders SET quantity = 9 WHERE id = 1;
		INSERT INTO inventory.orders (order_date, purchaser, quantity, product_id) VALUES ('2026-01-02', 3, 7, 3)`)
	out, errOut, code := runCLIFor(t, 3*time.Minute, "verify", "src", "--against", "per_product", "--url", d.rest, "--json", "--rounds", "5", "--settle", "30s")
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s\n%s", code, out, errOut)
	}
	var res runtime.VerifyResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if tr := res.Tables[0]; res.JobLag != 0 || tr.SourceRows != 3 || tr.TopicKeys != 3 {
		t.Fatalf("job_lag %d, %+v", res.JobLag, tr)
	}
	// The job is on /metrics: running, checkpointing, its records read,
	// nothing but a marker left to read.
	m := d.scrape()
	for key, ok := range map[string]func(float64) bool{
		"connectd_job_status{job=per_product,kind=sql,state=RUNNING}": func(v float64) bool { return v == 1 },
		"connectd_job_checkpoints_total{job=per_product,kind=sql}":    func(v float64) bool { return v > 0 },
		"connectd_job_records_in_total{job=per_product,kind=sql}":     func(v float64) bool { return v >= 5 },
		// at most the exactly-once source's last transaction marker,
		// which flinklite's lag (high watermark - next offset) counts
		"connectd_job_records_lag{job=per_product,kind=sql}":                 func(v float64) bool { return v <= 1 },
		"connectd_job_last_checkpoint_age_seconds{job=per_product,kind=sql}": func(v float64) bool { return v >= 0 && v < 60 },
	} {
		if v, found := m[key]; !found || !ok(v) {
			t.Errorf("/metrics %s = %v (present %v)", key, v, found)
		}
	}
}

// postSQLJob starts a SQL job (checkpoints every 200 ms), waiting up to
// 30 s for its source topics to appear (the snapshot's records may still be
// in flight when its metric says it completed).
func postSQLJob(t *testing.T, d *daemon, stmt string) {
	t.Helper()
	body := map[string]any{"statement": stmt, "configuration": map[string]string{"execution.checkpointing.interval": "200 ms"}}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		code, out := d.do("POST", "/sql", body)
		if code == 201 {
			return
		}
		if !strings.Contains(string(out), "does not exist") || time.Now().After(deadline) {
			t.Fatalf("POST /sql %s: %d %s", stmt, code, out)
		}
	}
}
