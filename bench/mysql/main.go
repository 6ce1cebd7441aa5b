// Command mysql benchmarks the MySQL/MariaDB connector end to end (the
// connectd binary with its embedded broker and JsonConverter, connector
// class io.debezium.connector.mariadb.MariaDbConnector) against references
// measured in the same run on the same throwaway MariaDB (issue 5):
//
//   - snapshot of -rows rows (10 columns) vs the mariadb client reading the
//     same SELECT * to /dev/null;
//
//   - -events binlog row events (INSERTs of -per-tx rows per transaction)
//     streamed from a backlog, vs mariadb-binlog --verbose decoding the
//     same binlog files to /dev/null;
//
//   - peak RSS (VmHWM) of the connectd process in each run.
//
//     go run ./bench/mysql [-connectd bin/connectd] [-rows 1000000] [-events 1000000] [-per-tx 100] [-config k=v,…]
//
// Each line gives the rate, the reference's rate and their ratio, and the
// load average before and after (the machine may be shared: compare ratios
// measured in the same run).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/connectd/connectd/bench/internal/measure"
	"github.com/connectd/connectd/internal/testenv"
)

var (
	bin    = flag.String("connectd", "bin/connectd", "connectd binary")
	rows   = flag.Int("rows", 1_000_000, "rows in the snapshot table (10 columns)")
	events = flag.Int("events", 1_000_000, "row events in the streaming backlog")
	perTx  = flag.Int("per-tx", 100, "rows per INSERT transaction in the backlog")
	extra  = flag.String("config", "", "extra connector configuration, k=v[,k=v…] (e.g. max.queue.size=2048)")
)

func main() { measure.Main(run) }

func run() error {
	ctx := context.Background()
	m, err := testenv.StartMariaDB(ctx)
	if err != nil {
		return err
	}
	defer m.Stop()
	if err := m.CreateDatabase(ctx, "bench"); err != nil {
		return err
	}
	fmt.Printf("MariaDB at %s, connectd %s\n", m.Addr(), *bin)
	if *rows > 0 {
		if err := benchSnapshot(ctx, m); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	if *events > 0 {
		if err := benchStream(ctx, m); err != nil {
			return fmt.Errorf("stream: %w", err)
		}
	}
	return nil
}

func connector(m *testenv.MariaDB, table, mode string) map[string]string {
	cfg := map[string]string{
		"connector.class":   "io.debezium.connector.mariadb.MariaDbConnector",
		"database.hostname": m.Host, "database.port": fmt.Sprint(m.Port), "database.user": m.User,
		"database.password": m.Password, "database.server.id": "5400", "topic.prefix": "bench",
		"database.include.list": "bench", "table.include.list": "bench." + table, "snapshot.mode": mode,
	}
	for _, kv := range strings.Split(*extra, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			cfg[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return cfg
}

var report = measure.Rates{Unit: "events", NameWidth: 22}.Print

// ---- snapshot ----

func benchSnapshot(ctx context.Context, m *testenv.MariaDB) error {
	if err := m.Exec(ctx, "bench", fmt.Sprintf(`
SET SESSION sql_log_bin = 0;
CREATE TABLE snap_t (id BIGINT PRIMARY KEY, c_int INT, c_big BIGINT, c_text TEXT, c_vc VARCHAR(64),
  c_dbl DOUBLE, c_num DECIMAL(12,2), c_dt DATETIME, c_ts TIMESTAMP(3) NULL, c_bool TINYINT(1));
INSERT INTO snap_t SELECT seq, seq %% 1000, seq * 7919, CONCAT('text value ', seq), CONCAT('vc', seq %% 97), seq / 3.0,
  (seq %% 100000) / 100.0, '2024-01-01' + INTERVAL seq SECOND, '2024-01-01 00:00:00' + INTERVAL seq * 1000 MICROSECOND, seq %% 2
FROM seq_1_to_%d;`, *rows)); err != nil {
		return err
	}
	start := time.Now()
	ref := exec.Command("mariadb", "--no-defaults", "-S", m.Socket, "-u", "root", "--batch", "--quick", "bench", "-e", "SELECT * FROM snap_t")
	ref.Stdout = io.Discard
	var stderr bytes.Buffer
	ref.Stderr = &stderr
	if err := ref.Run(); err != nil {
		return fmt.Errorf("mariadb SELECT: %v: %s", err, stderr.String())
	}
	refD := time.Since(start)

	dir, _ := os.MkdirTemp("", "connectd-bench-")
	defer os.RemoveAll(dir)
	d, err := measure.Start(*bin, dir, 0)
	if err != nil {
		return err
	}
	defer d.Stop()
	before := measure.LoadAvg()
	cpu0 := d.CPU()
	start = time.Now()
	if err := d.Create("snap", connector(m, "snap_t", "initial_only")); err != nil {
		return err
	}
	if err := d.WaitCount("bench.bench.snap_t", int64(*rows), 20*time.Minute); err != nil {
		return err
	}
	report("snapshot JSON", *rows, time.Since(start), "mariadb SELECT * >/dev/null", refD,
		fmt.Sprintf("connectd CPU %.1f µs/row; peak RSS %.0f MiB; loadavg %s → %s",
			measure.MicrosPer(d.CPU()-cpu0, *rows), d.PeakRSS(), before, measure.LoadAvg()))
	return nil
}

// ---- streaming backlog ----

func benchStream(ctx context.Context, m *testenv.MariaDB) error {
	ntx := *events / *perTx
	n := ntx * *perTx
	if err := m.Exec(ctx, "bench", `CREATE TABLE stream_t (id BIGINT AUTO_INCREMENT PRIMARY KEY, a INT, b VARCHAR(64), c DOUBLE, d DATETIME(6));`); err != nil {
		return err
	}
	dir, _ := os.MkdirTemp("", "connectd-bench-")
	defer os.RemoveAll(dir)
	// The connector starts (no_data: schema only) and stores its binlog
	// position; it is stopped while the backlog is written.
	d, err := measure.Start(*bin, dir, 0)
	if err != nil {
		return err
	}
	if err := d.Create("s", connector(m, "stream_t", "no_data")); err != nil {
		d.Stop()
		return err
	}
	if err := d.WaitCount("bench", 1, time.Minute); err != nil { // a schema change event: the snapshot ran
		d.Stop()
		return err
	}
	time.Sleep(2 * time.Second) // past offset.flush.interval.ms
	d.Stop()

	// The backlog, in binlog files of its own.
	if err := m.Exec(ctx, "", "FLUSH BINARY LOGS;"); err != nil {
		return err
	}
	first, err := currentBinlog(m)
	if err != nil {
		return err
	}
	var sql strings.Builder
	for i := 0; i < ntx; i++ {
		fmt.Fprintf(&sql, "INSERT INTO stream_t (a, b, c, d) SELECT seq, CONCAT('row ', seq), seq * 1.5, NOW(6) FROM seq_1_to_%d;\n", *perTx)
	}
	genStart := time.Now()
	if err := m.Exec(ctx, "bench", sql.String()); err != nil {
		return err
	}
	genD := time.Since(genStart)
	if err := m.Exec(ctx, "", "FLUSH BINARY LOGS;"); err != nil {
		return err
	}
	last, err := currentBinlog(m)
	if err != nil {
		return err
	}
	files, err := binlogFiles(m, first, last)
	if err != nil {
		return err
	}

	before := measure.LoadAvg()
	start := time.Now()
	ref := exec.Command("mariadb-binlog", append([]string{"--no-defaults", "--verbose"}, files...)...)
	ref.Stdout = io.Discard
	var stderr bytes.Buffer
	ref.Stderr = &stderr
	if err := ref.Run(); err != nil {
		return fmt.Errorf("mariadb-binlog: %v: %s", err, stderr.String())
	}
	refD := time.Since(start)

	d, err = measure.Start(*bin, dir, 0)
	if err != nil {
		return err
	}
	cpu0 := d.CPU()
	start = time.Now()
	if err := d.WaitCount("bench.bench.stream_t", int64(n), 20*time.Minute); err != nil {
		d.Stop()
		return err
	}
	ourD := time.Since(start)
	rss, cpu := d.PeakRSS(), d.CPU()-cpu0
	d.Stop()
	report(fmt.Sprintf("stream %d-row txns JSON", *perTx), n, ourD, "mariadb-binlog --verbose", refD,
		fmt.Sprintf("connectd CPU %.1f µs/event; peak RSS %.0f MiB; %d binlog files; backlog made in %.1fs; loadavg %s → %s", measure.MicrosPer(cpu, n), rss, len(files), genD.Seconds(), before, measure.LoadAvg()))
	return nil
}

// currentBinlog returns the binlog file the server writes.
func currentBinlog(m *testenv.MariaDB) (string, error) {
	c, err := m.Connect(context.Background(), "")
	if err != nil {
		return "", err
	}
	defer c.Close()
	r, err := c.Execute("SHOW MASTER STATUS")
	if err != nil {
		return "", err
	}
	return r.GetString(0, 0)
}

// binlogFiles lists the binlog files from first up to (not including)
// last, as paths in the server's data directory.
func binlogFiles(m *testenv.MariaDB, first, last string) ([]string, error) {
	c, err := m.Connect(context.Background(), "")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	r, err := c.Execute("SHOW BINARY LOGS")
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range r.Values {
		name, _ := r.GetString(i, 0)
		if name >= first && name < last {
			out = append(out, filepath.Join(m.Dir, "data", name))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no binlog files between %s and %s", first, last)
	}
	return out, nil
}
