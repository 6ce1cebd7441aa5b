package pgdiff

import (
	"context"
	"errors"
	"fmt"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/difftest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connectors/postgres"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/testenv"
)

// Env is where workloads run: one PostgreSQL 15 and the repository (for
// reference/debezium/capture.sh). Dir keeps each seed's files.
type Env struct {
	PG   *testenv.Postgres
	Repo string
	Dir  string
	// Idle is how long the reference waits without a new record before it
	// stops (after the changes ran).
	Idle time.Duration
}

// Result is both connectors' output for one workload.
type Result struct {
	Debezium, Connectd []Record
	Dir                string // the seed's files: setup.sql, changes.sql, reference output and log
	// ConnectdErr is the error that failed connectd's task (its records
	// up to then are in Connectd).
	ConnectdErr error
	// ConvertErrs are connectd records its JsonConverter refused (left out
	// of Connectd).
	ConvertErrs []error
	// ReferenceErr is the cause when Debezium's engine failed on the
	// workload (then nothing is compared).
	ReferenceErr error
}

func referenceFailure(log string) string { return difftest.ReferenceFailure(log) }

// Run loads w's schema and seed rows into a new database, starts connectd's
// PostgreSQL task (its own slot and publication) and then the real Debezium
// 3.6.1 embedded engine (its own slot and publication), which runs w's
// changes once its snapshot is over; both stream the same WAL. It returns
// when Debezium went idle and connectd has been quiet for 3 s.
func (e *Env) Run(ctx context.Context, w *Workload) (*Result, error) {
	dir := filepath.Join(e.Dir, fmt.Sprintf("seed-%d", w.Seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res := &Result{Dir: dir}
	db := fmt.Sprintf("difftest_%d", w.Seed)
	if err := e.PG.CreateDatabase(ctx, db); err != nil {
		return nil, err
	}
	defer e.dropDatabase(db)
	for _, f := range []struct{ name, text string }{
		{"setup.sql", w.SetupSQL()}, {"changes.sql", w.ChangesSQL()}, {"connector.properties", w.ConfigText()},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.text), 0o644); err != nil {
			return nil, err
		}
	}
	if err := e.exec(ctx, db, w.Setup); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}

	// connectd
	cfg := e.connConfig(db, w, "cd")
	conn := postgres.New()
	if errs := conn.Validate(cfg); len(errs) > 0 {
		return nil, fmt.Errorf("connectd rejects the config: %v", errs)
	}
	tcs, err := conn.TaskConfigs(cfg, 1)
	if err != nil {
		return nil, err
	}
	task := conn.NewTask()
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	err = task.Start(sctx, taskCtx{}, tcs[0])
	cancel()
	if err != nil {
		return nil, fmt.Errorf("connectd task start: %w", err)
	}
	col := &collector{Task: task}
	pctx, stopPoll := context.WithCancel(ctx)
	go col.Run(pctx)
	defer func() { stopPoll(); col.Wait(); task.Stop() }()
	if err := e.waitSlot(ctx, "cd_"+slotSuffix(w)); err != nil {
		return nil, err
	}

	// Debezium: its hook runs the changes after its snapshot.
	props := e.connConfig(db, w, "dbz")
	props["name"] = "difftest"
	props["offset.storage"] = "org.apache.kafka.connect.storage.FileOffsetBackingStore"
	props["offset.storage.file.filename"] = filepath.Join(dir, "offsets.dat")
	props["offset.flush.interval.ms"] = "0"
	props["converter.schemas.enable"] = "true"
	os.Remove(filepath.Join(dir, "offsets.dat"))
	if err := os.WriteFile(filepath.Join(dir, "debezium.properties"), []byte(propertiesText(props)), 0o644); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "debezium.jsonl")
	hook := strings.Join([]string{filepath.Join(testenv.PGBinDir(), "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-h", e.PG.Host, "-p", strconv.Itoa(e.PG.Port), "-U", e.PG.User, "-d", db, "-f", filepath.Join(dir, "changes.sql")}, " ")
	idle := e.Idle
	if idle <= 0 {
		idle = 4 * time.Second
	}
	cctx, cancelCap := context.WithTimeout(ctx, 4*time.Minute)
	defer cancelCap()
	cmd := exec.CommandContext(cctx, filepath.Join(e.Repo, "reference/debezium/capture.sh"),
		filepath.Join(dir, "debezium.properties"), out, "0", strconv.Itoa(int(idle/time.Second)), hook)
	logf, err := os.Create(filepath.Join(dir, "debezium.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Run()
	logf.Close()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "debezium.log"))
		if cause := referenceFailure(string(log)); cause != "" {
			// Debezium itself refused the workload: nothing to compare.
			res.ReferenceErr = errors.New(cause)
			return res, nil
		}
		return nil, fmt.Errorf("debezium capture: %w\n%s", err, tail(string(log), 4000))
	}
	if res.Debezium, err = readCapture(out); err != nil {
		return nil, err
	}

	// connectd catches up: quiet for 3 s.
	if err := col.Quiet(ctx, 3*time.Second, 90*time.Second); err != nil {
		if _, cerr := col.Records(); cerr == nil {
			return nil, err
		}
	}
	stopPoll()
	col.Wait()
	var recs []*connect.SourceRecord
	recs, res.ConnectdErr = col.Records()
	conv := converters.NewJSONConverter()
	for _, r := range recs {
		rec, err := fromConnect(conv, r)
		if err != nil {
			// the worker would fail the task here; the comparison goes on
			res.ConvertErrs = append(res.ConvertErrs, err)
			continue
		}
		res.Connectd = append(res.Connectd, rec)
	}
	return res, writeConnectd(dir, res)
}

// writeConnectd writes connectd's records in ref.Capture's formats
// (connectd.jsonl + .record-offsets.jsonl) and its errors, so that a seed
// can be compared again without running it (Replay).
func writeConnectd(dir string, res *Result) error {
	var errs strings.Builder
	if res.ConnectdErr != nil {
		errs.WriteString("task " + res.ConnectdErr.Error() + "\n")
	}
	for _, e := range res.ConvertErrs {
		errs.WriteString("convert " + strings.ReplaceAll(e.Error(), "\n", " ") + "\n")
	}
	if err := difftest.WriteRecords(dir, "connectd.jsonl", res.Connectd); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "connectd.errors"), []byte(errs.String()), 0o644)
}

// Replay reads a seed's files written by an earlier Run.
func Replay(dir string) (*Result, error) {
	res := &Result{Dir: dir}
	log, _ := os.ReadFile(filepath.Join(dir, "debezium.log"))
	if cause := referenceFailure(string(log)); cause != "" {
		res.ReferenceErr = errors.New(cause)
		return res, nil
	}
	var err error
	if res.Debezium, err = readCapture(filepath.Join(dir, "debezium.jsonl")); err != nil {
		return nil, err
	}
	if res.Connectd, err = readCapture(filepath.Join(dir, "connectd.jsonl")); err != nil {
		return nil, err
	}
	errs, _ := readLines(filepath.Join(dir, "connectd.errors"))
	for _, l := range errs {
		if m, ok := strings.CutPrefix(l, "task "); ok {
			res.ConnectdErr = errors.New(m)
		} else if m, ok := strings.CutPrefix(l, "convert "); ok {
			res.ConvertErrs = append(res.ConvertErrs, errors.New(m))
		}
	}
	return res, nil
}

func slotSuffix(w *Workload) string { return strconv.FormatInt(w.Seed, 10) }

// connConfig is w's connector keys plus connection, slot and publication
// (prefix "cd" for connectd, "dbz" for Debezium).
func (e *Env) connConfig(db string, w *Workload, who string) map[string]string {
	cfg := map[string]string{
		"connector.class":             postgres.ClassName,
		"database.hostname":           e.PG.Host,
		"database.port":               strconv.Itoa(e.PG.Port),
		"database.user":               e.PG.User,
		"database.password":           "postgres",
		"database.dbname":             db,
		"plugin.name":                 "pgoutput",
		"slot.name":                   who + "_" + slotSuffix(w),
		"publication.name":            who + "_pub_" + slotSuffix(w),
		"publication.autocreate.mode": "all_tables",
	}
	for k, v := range w.Config {
		cfg[k] = v
	}
	return cfg
}

func (e *Env) exec(ctx context.Context, db string, stmts []string) error {
	c, err := e.PG.Connect(ctx, db)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

func (e *Env) waitSlot(ctx context.Context, slot string) error {
	c, err := e.PG.Connect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	deadline := time.Now().Add(60 * time.Second)
	for {
		var n int
		if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("connectd created no slot %s within 60 s", slot)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *Env) dropDatabase(db string) {
	ctx := context.Background()
	c, err := e.PG.Connect(ctx, "postgres")
	if err != nil {
		return
	}
	defer c.Close(ctx)
	c.Exec(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = $1 AND active`, db)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		c.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1 AND NOT active`, db)
		var left int
		c.QueryRow(ctx, `SELECT count(*) FROM pg_replication_slots WHERE database = $1`, db).Scan(&left)
		if left == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.Exec(ctx, `DROP DATABASE `+quote(db)+` WITH (FORCE)`)
}

type taskCtx = difftest.TaskCtx

type collector = difftest.Collector

func propertiesText(m map[string]string) string { return difftest.PropertiesText(m) }

func tail(s string, n int) string { return difftest.Tail(s, n) }
