package pgdiff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
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

// referenceFailure returns the last "Caused by:" of a Debezium engine
// failure in its log, or "".
func referenceFailure(log string) string {
	if !strings.Contains(log, "[capture] engine stopped with error") {
		return ""
	}
	cause := "engine stopped with error"
	for _, l := range strings.Split(log, "\n") {
		if c, ok := strings.CutPrefix(l, "Caused by: "); ok {
			cause = c
		}
	}
	return cause
}

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
	col := &collector{task: task}
	pctx, stopPoll := context.WithCancel(ctx)
	go col.run(pctx)
	defer func() { stopPoll(); col.wait(); task.Stop() }()
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
	if err := col.quiet(ctx, 3*time.Second, 90*time.Second); err != nil && col.err == nil {
		return nil, err
	}
	stopPoll()
	col.wait()
	res.ConnectdErr = col.err
	conv := converters.NewJSONConverter()
	for _, r := range col.recs {
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
	var recs, offs, errs strings.Builder
	for _, r := range res.Connectd {
		recs.WriteString(r.Line() + "\n")
		offs.WriteString(`{"key":["connectd",` + jsonText(r.Partition) + `],"value":` + jsonText(r.Offset) + "}\n")
	}
	if res.ConnectdErr != nil {
		errs.WriteString("task " + res.ConnectdErr.Error() + "\n")
	}
	for _, e := range res.ConvertErrs {
		errs.WriteString("convert " + strings.ReplaceAll(e.Error(), "\n", " ") + "\n")
	}
	for name, text := range map[string]string{"connectd.jsonl": recs.String(), "connectd.jsonl.record-offsets.jsonl": offs.String(), "connectd.errors": errs.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
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

type taskCtx struct{}

func (taskCtx) OffsetReader() connect.OffsetReader { return noOffsets{} }

type noOffsets struct{}

func (noOffsets) Offset(context.Context, map[string]any) (map[string]any, error) { return nil, nil }

// collector polls connectd's task from one goroutine.
type collector struct {
	task connect.SourceTask
	mu   sync.Mutex
	recs []*connect.SourceRecord
	last time.Time
	err  error
	done chan struct{}
}

func (c *collector) run(ctx context.Context) {
	c.mu.Lock()
	c.done = make(chan struct{})
	c.last = time.Now()
	c.mu.Unlock()
	defer close(c.done)
	for ctx.Err() == nil {
		b, err := c.task.Poll(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
			return
		}
		if len(b) > 0 {
			c.mu.Lock()
			c.recs = append(c.recs, b...)
			c.last = time.Now()
			c.mu.Unlock()
		}
	}
}

func (c *collector) wait() {
	c.mu.Lock()
	d := c.done
	c.mu.Unlock()
	if d != nil {
		<-d
	}
}

// quiet waits until no record arrived for d (at most max).
func (c *collector) quiet(ctx context.Context, d, max time.Duration) error {
	end := time.Now().Add(max)
	for {
		c.mu.Lock()
		last, err := c.last, c.err
		c.mu.Unlock()
		if err != nil {
			return fmt.Errorf("connectd poll: %w", err)
		}
		if time.Since(last) >= d {
			return nil
		}
		if time.Now().After(end) {
			return errors.New("connectd did not go quiet")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// propertiesText writes a java.util.Properties file: backslashes doubled,
// non-ASCII as \uXXXX (Properties.load reads ISO-8859-1).
func propertiesText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(propEscape(k, true))
		b.WriteByte('=')
		b.WriteString(propEscape(m[k], false))
		b.WriteByte('\n')
	}
	return b.String()
}

func propEscape(s string, key bool) string {
	var b strings.Builder
	for i, c := range s {
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case key && (c == '=' || c == ':'):
			b.WriteByte('\\')
			b.WriteRune(c)
		case c > 0x7e || c < 0x20:
			for _, u := range utf16Units(c) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func utf16Units(c rune) []uint16 {
	if c < 0x10000 {
		return []uint16{uint16(c)}
	}
	c -= 0x10000
	return []uint16{uint16(0xd800 + (c >> 10)), uint16(0xdc00 + (c & 0x3ff))}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
