package mariadiff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/mysql"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/difftest"
	"github.com/connectd/connectd/internal/testenv"
)

// Env is where workloads run: one MariaDB (started by this package's
// test with the binary log on) and the repository (for
// reference/debezium/capture-mysql.sh). Dir keeps each seed's files.
type Env struct {
	M    *testenv.MariaDB
	Repo string
	Dir  string
	// Idle is how long the reference waits without a new record before it
	// stops (after the changes ran).
	Idle time.Duration
}

// Result is both connectors' output for one workload.
type Result struct {
	Debezium, Connectd []Record
	// DebeziumHistory and ConnectdHistory are the schema history records
	// (Debezium's FileSchemaHistory lines, connectd's history topic values).
	DebeziumHistory, ConnectdHistory []string
	Dir                              string // the seed's files
	// ConnectdErr is the error that failed connectd's task (its records
	// up to then are in Connectd).
	ConnectdErr error
	// ConvertErrs are connectd records its JsonConverter refused.
	ConvertErrs []error
	// ReferenceErr is the cause when Debezium's engine failed on the
	// workload (then nothing is compared).
	ReferenceErr error
}

const historyTopic = "schema-changes.difftest"

// Run sets the server's character_set_server and time_zone, loads w's
// schema and seed rows into a new database, starts connectd's MariaDB task
// (in process, its schema history on an in-process Kafka) and waits for
// its snapshot, then runs the real Debezium MariaDbConnector 3.5.0
// embedded engine (capture-mysql.sh), which runs w's changes with the
// mariadb client once its snapshot is over; both read the same binlog
// from the same position. It returns when Debezium went idle and connectd
// has been quiet for 3 s.
func (e *Env) Run(ctx context.Context, w *Workload) (*Result, error) {
	dir := filepath.Join(e.Dir, fmt.Sprintf("seed-%d", w.Seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res := &Result{Dir: dir}
	server := fmt.Sprintf("SET GLOBAL character_set_server = %s; SET GLOBAL collation_server = %s_general_ci; SET GLOBAL time_zone = '%s';\n",
		w.Server.Charset, w.Server.Charset, w.Server.TimeZone)
	for _, f := range []struct{ name, text string }{
		{"server.sql", server + "CREATE DATABASE " + quote(w.DB) + ";\n"},
		{"setup.sql", w.SetupSQL()}, {"changes.sql", w.ChangesSQL()}, {"connector.properties", w.ConfigText()},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.text), 0o644); err != nil {
			return nil, err
		}
	}
	defer e.cleanup(w)
	// SET GLOBAL character_set_server reaches new sessions only: the
	// database is created in the next one, so its default charset is it
	if err := e.M.Exec(ctx, "", server); err != nil {
		return nil, err
	}
	if err := e.M.Exec(ctx, "", "DROP DATABASE IF EXISTS "+quote(w.DB)+"; CREATE DATABASE "+quote(w.DB)+";\n"); err != nil {
		return nil, err
	}
	if err := e.M.Exec(ctx, w.DB, w.SetupSQL()); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}

	// connectd, its history topic on an in-process Kafka
	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return nil, err
	}
	defer kf.Close()
	cfg := e.connConfig(w, "cd")
	cfg[mysql.KeyHistoryTopic] = historyTopic
	cfg[mysql.KeyHistoryBootstrap] = strings.Join(kf.ListenAddrs(), ",")
	cfg[mysql.KeyPollIntervalMs] = "50"
	conn := mysql.NewMariaDB()
	if errs := conn.Validate(cfg); len(errs) > 0 {
		return nil, fmt.Errorf("connectd rejects the config: %v", errs)
	}
	tcs, err := conn.TaskConfigs(cfg, 1)
	if err != nil {
		return nil, err
	}
	task := conn.NewTask()
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	err = task.Start(sctx, difftest.TaskCtx{}, tcs[0])
	cancel()
	if err != nil {
		return nil, fmt.Errorf("connectd task start: %w", err)
	}
	col := &difftest.Collector{Task: task}
	pctx, stopPoll := context.WithCancel(ctx)
	go col.Run(pctx)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			stopPoll()
			col.Wait()
			task.Stop()
		}
	}
	defer stop()
	// its snapshot is over when it has been quiet for 2 s (a failed task
	// is compared as it is)
	col.Quiet(ctx, 2*time.Second, 120*time.Second)

	// Debezium: its hook runs the changes after its snapshot.
	props := e.connConfig(w, "dbz")
	props["name"] = "difftest"
	props["schema.history.internal"] = "io.debezium.storage.file.history.FileSchemaHistory"
	props["schema.history.internal.file.filename"] = filepath.Join(dir, "debezium.history.jsonl")
	props["offset.storage"] = "org.apache.kafka.connect.storage.FileOffsetBackingStore"
	props["offset.storage.file.filename"] = filepath.Join(dir, "offsets.dat")
	props["offset.flush.interval.ms"] = "0"
	props["converter.schemas.enable"] = "true"
	os.Remove(filepath.Join(dir, "offsets.dat"))
	os.Remove(filepath.Join(dir, "debezium.history.jsonl"))
	if err := os.WriteFile(filepath.Join(dir, "debezium.properties"), []byte(difftest.PropertiesText(props)), 0o644); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "debezium.jsonl")
	hook := strings.Join([]string{"mariadb", "--no-defaults", "--default-character-set=utf8mb4", "-S", shq(e.M.Socket), "-u", "root",
		"--batch", "-D", shq(w.DB), "<", shq(filepath.Join(dir, "changes.sql")), ">/dev/null"}, " ")
	idle := e.Idle
	if idle <= 0 {
		idle = 4 * time.Second
	}
	cctx, cancelCap := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelCap()
	cmd := exec.CommandContext(cctx, filepath.Join(e.Repo, "reference/debezium/capture-mysql.sh"),
		filepath.Join(dir, "debezium.properties"), out, "0", strconv.Itoa(int(idle/time.Second)), hook)
	cmd.Env = append(os.Environ(), "FLAVOR=mariadb")
	logf, err := os.Create(filepath.Join(dir, "debezium.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Run()
	logf.Close()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "debezium.log"))
		if strings.Contains(string(log), "hook failed with exit code") {
			return nil, fmt.Errorf("the changes script failed (a generator error):\n%s", difftest.Tail(string(log), 4000))
		}
		if cause := difftest.ReferenceFailure(string(log)); cause != "" {
			res.ReferenceErr = errors.New(cause)
			return res, nil
		}
		return nil, fmt.Errorf("debezium capture: %w\n%s", err, difftest.Tail(string(log), 4000))
	}
	if res.Debezium, err = difftest.ReadCapture(out); err != nil {
		return nil, err
	}
	if res.DebeziumHistory, err = difftest.ReadLines(filepath.Join(dir, "debezium.history.jsonl")); err != nil {
		return nil, err
	}

	// connectd catches up: quiet for 3 s.
	if err := col.Quiet(ctx, 3*time.Second, 120*time.Second); err != nil {
		if _, cerr := col.Records(); cerr == nil {
			return nil, err
		}
	}
	stop()
	var recs []*connect.SourceRecord
	recs, res.ConnectdErr = col.Records()
	conv := converters.NewJSONConverter()
	for _, r := range recs {
		rec, err := difftest.FromConnect(conv, r)
		if err != nil {
			res.ConvertErrs = append(res.ConvertErrs, err)
			continue
		}
		res.Connectd = append(res.Connectd, rec)
	}
	if res.ConnectdHistory, err = readTopic(ctx, kf.ListenAddrs(), historyTopic); err != nil {
		return nil, err
	}
	return res, writeConnectd(dir, res)
}

// readTopic reads every record value of topic.
func readTopic(ctx context.Context, brokers []string, topic string) ([]string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var out []string
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		pctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		n := 0
		cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)); n++ })
		cancel()
		if n == 0 && (len(out) > 0 || time.Until(deadline) < 10*time.Second) {
			break
		}
	}
	return out, nil
}

func writeConnectd(dir string, res *Result) error {
	var errs strings.Builder
	if res.ConnectdErr != nil {
		errs.WriteString("task " + strings.ReplaceAll(res.ConnectdErr.Error(), "\n", " ") + "\n")
	}
	for _, e := range res.ConvertErrs {
		errs.WriteString("convert " + strings.ReplaceAll(e.Error(), "\n", " ") + "\n")
	}
	if err := difftest.WriteRecords(dir, "connectd.jsonl", res.Connectd); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "connectd.history.jsonl"), []byte(strings.Join(res.ConnectdHistory, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "connectd.errors"), []byte(errs.String()), 0o644)
}

// Replay reads a seed's files written by an earlier Run.
func Replay(dir string) (*Result, error) {
	res := &Result{Dir: dir}
	log, _ := os.ReadFile(filepath.Join(dir, "debezium.log"))
	if cause := difftest.ReferenceFailure(string(log)); cause != "" {
		res.ReferenceErr = errors.New(cause)
		return res, nil
	}
	var err error
	if res.Debezium, err = difftest.ReadCapture(filepath.Join(dir, "debezium.jsonl")); err != nil {
		return nil, err
	}
	if res.Connectd, err = difftest.ReadCapture(filepath.Join(dir, "connectd.jsonl")); err != nil {
		return nil, err
	}
	if res.DebeziumHistory, err = difftest.ReadLines(filepath.Join(dir, "debezium.history.jsonl")); err != nil {
		return nil, err
	}
	if res.ConnectdHistory, err = difftest.ReadLines(filepath.Join(dir, "connectd.history.jsonl")); err != nil {
		return nil, err
	}
	for len(res.ConnectdHistory) > 0 && res.ConnectdHistory[len(res.ConnectdHistory)-1] == "" {
		res.ConnectdHistory = res.ConnectdHistory[:len(res.ConnectdHistory)-1]
	}
	errs, _ := difftest.ReadLines(filepath.Join(dir, "connectd.errors"))
	for _, l := range errs {
		if m, ok := strings.CutPrefix(l, "task "); ok {
			res.ConnectdErr = errors.New(m)
		} else if m, ok := strings.CutPrefix(l, "convert "); ok {
			res.ConvertErrs = append(res.ConvertErrs, errors.New(m))
		}
	}
	return res, nil
}

// connConfig is w's connector keys plus connection and a replica server id
// of its own (who: "cd" connectd, "dbz" Debezium).
func (e *Env) connConfig(w *Workload, who string) map[string]string {
	id := 5000 + w.Seed%1000
	if who == "dbz" {
		id += 1000
	}
	cfg := map[string]string{
		"name":               "difftest",
		"connector.class":    mysql.MariaDBClassName,
		"database.hostname":  e.M.Host,
		"database.port":      strconv.Itoa(e.M.Port),
		"database.user":      e.M.User,
		"database.password":  e.M.Password,
		"database.server.id": strconv.FormatInt(id, 10),
	}
	for k, v := range w.Config {
		cfg[k] = v
	}
	return cfg
}

func (e *Env) cleanup(w *Workload) {
	ctx := context.Background()
	sql := "DROP DATABASE IF EXISTS " + quote(w.DB) + ";\n"
	for _, u := range w.Users {
		sql += "DROP USER IF EXISTS " + u + ";\n"
	}
	e.M.Exec(ctx, "", sql)
}

// shq quotes s for /bin/sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
