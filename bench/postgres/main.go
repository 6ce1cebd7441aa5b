// Command postgres benchmarks the PostgreSQL connector end to end (the
// connectd binary with its embedded broker and JsonConverter) against
// references measured in the same run on the same database, as issue 3
// asks: snapshot vs COPY ... TO STDOUT, streaming a backlog vs
// pg_recvlogical (pgoutput), peak RSS of the connectd process, and the
// commit-to-consumer latency at a fixed transaction rate. With -avro (the
// default) each streaming backlog is also read by a second connectd whose
// key and value converters are Confluent's AvroConverter against its own
// embedded schema registry (issue 4: "the end-to-end streaming rate with
// Avro within 20% of the JSON rate"); both read the same WAL through their
// own slots, one after the other, and the Avro line's ratio is Avro/JSON.
//
//	go run ./bench/postgres [-rows 1000000] [-txns 200000] [-batched 1000000] [-rate 5000] [-avro=true]
//
// It prints one line per measurement with the ratio to its reference, and
// the load average before and after each streaming run (the machine may be
// shared: compare ratios measured in the same run).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/bench/internal/measure"
	"github.com/connectd/connectd/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	bin        = flag.String("connectd", "bin/connectd", "connectd binary")
	rows       = flag.Int("rows", 1_000_000, "rows in the snapshot table (10 columns)")
	txns       = flag.Int("txns", 200_000, "single-row INSERT transactions in the streaming backlog")
	batched    = flag.Int("batched", 1_000_000, "rows in 100-row transactions in the second backlog")
	rate       = flag.Int("rate", 5000, "transactions per second for the latency run")
	latSecs    = flag.Int("latency-seconds", 10, "duration of the latency run")
	avroToo    = flag.Bool("avro", true, "also snapshot the table and stream each backlog with the AvroConverter (and report Avro/JSON)")
	snapRuns   = flag.Int("snapshot-runs", 3, "JSON snapshot runs, each in a fresh connectd right after its own COPY reference; a last line gives the medians (this machine's rates vary by a third from run to run)")
	pairs      = flag.Int("pairs", 1, "JSON/Avro runs per backlog (alternating which goes first), to average out load changes")
	streamRuns = flag.Int("stream-runs", 3, "JSON runs per broker of each streaming backlog (alternating the broker order), each through its own slot")
	brokers    = flag.String("brokers", "embedded,kafka,debezium", "comma-separated systems each JSON snapshot run and each streaming backlog run goes to, alternating their order: embedded (connectd with its own broker), kafka (connectd into a real Apache Kafka 4.3 from scripts/kafka.sh, started once for the whole run) and debezium (the real Debezium 3.6.1 PostgreSQL connector on a real Kafka Connect 4.3 worker into that Kafka; reference/connect's jars); with embedded and kafka a kafka/embedded ratio is printed per run and as the median, with debezium the ratios of connectd to Debezium (events/s, CPU per event, peak RSS)")
	root       = flag.String("root", ".", "the repository root (scripts/kafka.sh)")
	kafka      *measure.Kafka
	sets       keyValues
)

// keyValues is a repeatable -set key=value flag: extra connector config
// (e.g. -set producer.override.linger.ms=20) for every connector the
// benchmark creates, to compare settings in the same run.
type keyValues map[string]string

func (kv keyValues) String() string { return fmt.Sprint(map[string]string(kv)) }
func (kv keyValues) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("-set %q: want key=value", v)
	}
	kv[k] = val
	return nil
}

func init() {
	sets = keyValues{}
	flag.Var(sets, "set", "extra connector config key=value for every connector (repeatable)")
}

func main() { measure.Main(run) }

func run() error {
	ctx := context.Background()
	pg, err := testenv.StartPostgres(ctx)
	if err != nil {
		return err
	}
	defer pg.Stop()
	if err := pg.CreateDatabase(ctx, "bench"); err != nil {
		return err
	}
	fmt.Printf("PostgreSQL 15 at %s, connectd %s\n", pg.DSN("bench"), *bin)
	for _, b := range brokerList() {
		switch b {
		case "embedded":
		case "kafka", "debezium":
			if kafka != nil {
				continue
			}
			if kafka, err = measure.StartKafka(*root); err != nil {
				return err
			}
			defer kafka.Stop()
			fmt.Printf("Apache Kafka 4.3 at %s (its own JVM process; the kafka and debezium lines add its CPU per row)\n", kafka.Addr)
		default:
			return fmt.Errorf("-brokers: %q is none of embedded, kafka, debezium", b)
		}
	}
	if *rows > 0 {
		if err := benchSnapshot(ctx, pg); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
	}
	if *txns > 0 {
		if err := benchStream(ctx, pg, "single", *txns, 1); err != nil {
			return fmt.Errorf("stream single: %w", err)
		}
	}
	if *batched > 0 {
		if err := benchStream(ctx, pg, "batched", *batched/100, 100); err != nil {
			return fmt.Errorf("stream batched: %w", err)
		}
	}
	if *rate > 0 {
		if err := benchLatency(ctx, pg); err != nil {
			return fmt.Errorf("latency: %w", err)
		}
	}
	return nil
}

// brokerList is -brokers as a list.
func brokerList() []string { return strings.Split(*brokers, ",") }

// brokerOrder is brokerList for run i: reversed on odd runs, so that
// neither broker always goes first.
func brokerOrder(i int) []string {
	bs := brokerList()
	if i%2 == 1 {
		slices.Reverse(bs)
	}
	return bs
}

// startOn starts the system broker names on dir: connectd with its
// embedded broker ("embedded") or into the real Kafka ("kafka"), or a
// Kafka Connect worker with Debezium into the real Kafka ("debezium").
func startOn(broker, dir string, registryPort int) (*measure.Daemon, error) {
	switch broker {
	case "kafka":
		return measure.StartOn(*bin, dir, registryPort, kafka.Addr)
	case "debezium":
		return measure.StartKafkaConnect(*root, dir, kafka.Addr)
	}
	return measure.Start(*bin, dir, registryPort)
}

// processName is what the CPU figure of broker's lines measures.
func processName(broker string) string {
	if broker == "debezium" {
		return "Kafka Connect"
	}
	return "connectd"
}

// runFigures are one system's runs of one workload: wall time, process
// CPU per event (µs) and peak RSS (MiB) of each.
type runFigures struct {
	durs      []time.Duration
	cpus, rss []float64
}

func (f *runFigures) add(d time.Duration, cpu, rss float64) {
	f.durs, f.cpus, f.rss = append(f.durs, d), append(f.cpus, cpu), append(f.rss, rss)
}

// debeziumRatios prints, for connectd into each broker against Debezium
// on Kafka Connect (same database, same workload, runs alternating), the
// ratios of the medians: events/s (connectd over Debezium), CPU per event
// and peak RSS (Debezium over connectd), against issue 20's goal of 10x
// each.
func debeziumRatios(name string, n int, figs map[string]*runFigures) {
	dbz := figs["debezium"]
	if dbz == nil || len(dbz.durs) == 0 {
		return
	}
	for _, b := range []string{"embedded", "kafka"} {
		f := figs[b]
		if f == nil || len(f.durs) == 0 {
			continue
		}
		report(fmt.Sprintf("%s connectd %s vs Debezium (median)", name, b), n, median(f.durs), "Debezium on Kafka Connect", median(dbz.durs),
			fmt.Sprintf("CPU/event %.1fx less (%.1f vs %.1f µs), peak RSS 1/%.0f (%.0f vs %.0f MiB); %d and %d runs; goal ≥ 10x, ≥ 10x, ≤ 1/10",
				median(dbz.cpus)/median(f.cpus), median(f.cpus), median(dbz.cpus), median(dbz.rss)/median(f.rss), median(f.rss), median(dbz.rss), len(f.durs), len(dbz.durs)))
	}
}

// kafkaCPU is the external broker's CPU time so far (0 without one).
func kafkaCPU() time.Duration {
	if kafka == nil {
		return 0
	}
	return kafka.CPU()
}

// brokerRatios prints, for each run, the rate into a real Kafka over the
// rate into the embedded broker (durs[broker][i]: run i's time), then the
// median of those ratios.
func brokerRatios(name string, n int, durs map[string][]time.Duration) {
	e, k := durs["embedded"], durs["kafka"]
	if len(e) == 0 || len(e) != len(k) {
		return
	}
	var ratios []float64
	for i := range e {
		report(fmt.Sprintf("%s kafka vs embedded (run %d)", name, i+1), n, k[i], "embedded", e[i], "")
		ratios = append(ratios, e[i].Seconds()/k[i].Seconds())
	}
	report(fmt.Sprintf("%s kafka vs embedded (median)", name), n, median(k), "embedded (median)", median(e),
		fmt.Sprintf("median of the runs' ratios %.2f (%d runs each; target ≥ 0.70)", median(ratios), len(e)))
}

func connector(pg *testenv.Postgres, table, mode string) map[string]string {
	cfg := map[string]string{
		"connector.class":   "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname": pg.Host, "database.port": fmt.Sprint(pg.Port), "database.user": pg.User,
		"database.dbname": "bench", "topic.prefix": "bench", "plugin.name": "pgoutput",
		"table.include.list": "public." + table, "snapshot.mode": mode,
		"publication.autocreate.mode": "filtered", "publication.name": "pub_" + table, "slot.name": "slot_" + table,
	}
	for k, v := range sets {
		cfg[k] = v
	}
	return cfg
}

var report = measure.Rates{Unit: "rows", NameWidth: 28}.Print

// ---- snapshot ----

func benchSnapshot(ctx context.Context, pg *testenv.Postgres) error {
	err := pg.Exec(ctx, "bench", fmt.Sprintf(`
CREATE TABLE snap_t (id bigint PRIMARY KEY, c_int int, c_big bigint, c_text text, c_vc varchar(64),
  c_dbl double precision, c_num numeric(12,2), c_ts timestamp, c_tstz timestamptz, c_bool boolean);
INSERT INTO snap_t SELECT g, g %% 1000, g::bigint * 7919, 'text value ' || g, 'vc' || (g %% 97), g / 3.0,
  (g %% 100000) / 100.0, timestamp '2024-01-01' + g * interval '1 second',
  timestamptz '2024-01-01 00:00:00+00' + g * interval '1 ms', g %% 2 = 0
FROM generate_series(1, %d) g;
ANALYZE snap_t;`, *rows))
	if err != nil {
		return err
	}
	copyRef := func() (time.Duration, error) {
		conn, err := pg.Connect(ctx, "bench")
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		start := time.Now()
		if _, err := conn.PgConn().CopyTo(ctx, io.Discard, "COPY (SELECT * FROM snap_t) TO STDOUT"); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	copyD, err := copyRef()
	if err != nil {
		return err
	}
	// The same COPY through psql into /dev/null, the shell form of the
	// issue's reference ("COPY (SELECT …) TO STDOUT into /dev/null"): psql
	// parses and writes every row, so it is slower than the in-process
	// pgx CopyTo above, which stays the ratio's reference.
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	psql := exec.Command(filepath.Join(testenv.PGBinDir(), "psql"), "-h", pg.Host, "-p", fmt.Sprint(pg.Port), "-U", pg.User, "-d", "bench",
		"-X", "-q", "-c", "COPY (SELECT * FROM snap_t) TO STDOUT")
	psql.Stdout = devnull
	start := time.Now()
	err = psql.Run()
	psqlD := time.Since(start)
	devnull.Close()
	if err != nil {
		return fmt.Errorf("psql COPY: %w", err)
	}

	// Each JSON run reads the table in a fresh connectd (its own slot and
	// topics) right after a COPY of its own: the ratio of a run compares
	// two measurements taken seconds apart.
	runs := max(1, *snapRuns)
	var snapDs, copyDs []time.Duration
	var ratios []float64
	byBroker := map[string][]time.Duration{}
	figs := map[string]*runFigures{}
	var d *measure.Daemon // the last embedded-broker daemon, for the Avro run
	k := 0
	for i := 0; i < runs; i++ {
		if i > 0 {
			if copyD, err = copyRef(); err != nil {
				return err
			}
		}
		for _, broker := range brokerOrder(i) {
			dir, _ := os.MkdirTemp("", "connectd-bench-")
			defer os.RemoveAll(dir)
			dd, err := startOn(broker, dir, 0)
			if err != nil {
				return err
			}
			cfg := connector(pg, "snap_t", "initial_only")
			if k > 0 {
				cfg["topic.prefix"], cfg["slot.name"] = fmt.Sprintf("bench%d", k), fmt.Sprintf("slot_snap_t_%d", k)
			}
			k++
			before, cpu0, kcpu0 := measure.LoadAvg(), dd.CPU(), kafkaCPU()
			start = time.Now()
			if err := dd.Create("snap", cfg); err != nil {
				dd.Stop()
				return err
			}
			if err := dd.WaitCount(cfg["topic.prefix"]+".public.snap_t", int64(*rows), 20*time.Minute); err != nil {
				dd.Stop()
				return err
			}
			snapD := time.Since(start)
			name := "snapshot JSON " + broker
			if runs > 1 {
				name = fmt.Sprintf("snapshot JSON %s (run %d/%d)", broker, i+1, runs)
			}
			cpu, rss := measure.MicrosPer(dd.CPU()-cpu0, *rows), dd.PeakRSS()
			if figs[broker] == nil {
				figs[broker] = &runFigures{}
			}
			figs[broker].add(snapD, cpu, rss)
			extra := fmt.Sprintf("peak RSS %.0f MiB; %s CPU %.1f µs/row", rss, processName(broker), cpu)
			if broker != "embedded" {
				extra += fmt.Sprintf("; Kafka CPU %.1f µs/row", measure.MicrosPer(kafkaCPU()-kcpu0, *rows))
			}
			report(name, *rows, snapD, "COPY TO STDOUT", copyD, fmt.Sprintf("%s; loadavg %s → %s", extra, before, measure.LoadAvg()))
			byBroker[broker] = append(byBroker[broker], snapD)
			if broker == "embedded" {
				snapDs, copyDs = append(snapDs, snapD), append(copyDs, copyD)
				ratios = append(ratios, copyD.Seconds()/snapD.Seconds())
				if d != nil {
					d.Stop()
				}
				d = dd
				defer dd.Stop()
			} else {
				dd.Stop()
			}
		}
	}
	brokerRatios("snapshot JSON", *rows, byBroker)
	debeziumRatios("snapshot JSON", *rows, figs)
	if len(snapDs) == 0 {
		return nil
	}
	snapD := median(snapDs)
	if runs > 1 {
		report("snapshot JSON (median)", *rows, snapD, "COPY TO STDOUT (median)", median(copyDs), fmt.Sprintf("median of the runs' ratios %.2f (%d runs, embedded broker)", median(ratios), runs))
	}
	report("snapshot JSON vs psql", *rows, snapD, "psql COPY > /dev/null", psqlD, "")
	if !*avroToo {
		return nil
	}
	// The same table again through the AvroConverter, in the same
	// connectd (its peak RSS is the maximum over both runs).
	cfg := connector(pg, "snap_t", "initial_only")
	cfg["topic.prefix"], cfg["slot.name"] = "benchavro", "slot_snap_avro"
	avroConverters(cfg, d.Registry)
	before, cpu0 := measure.LoadAvg(), d.CPU()
	start = time.Now()
	if err := d.Create("snap_avro", cfg); err != nil {
		return err
	}
	if err := d.WaitCount("benchavro.public.snap_t", int64(*rows), 20*time.Minute); err != nil {
		return err
	}
	report("snapshot Avro", *rows, time.Since(start), "COPY TO STDOUT", copyD, fmt.Sprintf("peak RSS %.0f MiB; connectd CPU %.1f µs/row; loadavg %s → %s",
		d.PeakRSS(), measure.MicrosPer(d.CPU()-cpu0, *rows), before, measure.LoadAvg()))
	return nil
}

// median returns the middle value of xs (the mean of the two middle ones
// for an even count); xs is not changed.
func median[T time.Duration | float64](xs []T) T {
	c := slices.Clone(xs)
	slices.Sort(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}

// ---- streaming backlog ----

// streamRun is one connectd reading the backlog through its own slot.
type streamRun struct {
	label   string     // "JSON" or "Avro"
	broker  string     // "embedded" or "kafka"
	partner *streamRun // an Avro run's JSON run, next to it in the order
	first   bool       // an Avro run went before its partner
	d       time.Duration
	dir     string
	regPort int // the registry port its converters were configured with
	slot    string
	topic   string
	cfg     map[string]string
}

// avroConverters sets Confluent's AvroConverter for keys and values,
// against the daemon's embedded registry.
func avroConverters(cfg map[string]string, registryURL string) {
	for _, side := range []string{"key", "value"} {
		cfg[side+".converter"] = "io.confluent.connect.avro.AvroConverter"
		cfg[side+".converter.schema.registry.url"] = registryURL
	}
}

func benchStream(ctx context.Context, pg *testenv.Postgres, name string, ntx, perTx int) error {
	table := "stream_" + name
	if err := pg.Exec(ctx, "bench", fmt.Sprintf(`
CREATE TABLE %[1]s (id bigserial PRIMARY KEY, a int, b text, c double precision, d timestamptz);
CREATE OR REPLACE PROCEDURE gen_%[1]s(ntx int, per int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..ntx LOOP
    INSERT INTO %[1]s (a, b, c, d) SELECT i, 'row ' || i, i * 1.5, now() FROM generate_series(1, per);
    COMMIT;
  END LOOP;
END $$;`, table)); err != nil {
		return err
	}
	seq := 0
	newRun := func(label, broker string) *streamRun {
		cfg := connector(pg, table, "no_data")
		suffix := ""
		if label == "Avro" {
			suffix = "avro"
		}
		if seq > 0 {
			suffix += fmt.Sprint(seq + 1)
		}
		seq++
		if suffix != "" {
			cfg["slot.name"] += "_" + suffix
			cfg["topic.prefix"] += suffix
		}
		return &streamRun{label: label, broker: broker, slot: cfg["slot.name"], topic: cfg["topic.prefix"] + ".public." + table, cfg: cfg}
	}
	// JSON runs on each broker (-stream-runs of each, the broker order
	// alternating), and -pairs Avro runs on the embedded broker, each
	// next to an embedded JSON run (alternating which goes first).
	var runs []*streamRun
	avroLeft := 0
	if *avroToo {
		avroLeft = max(*pairs, 1)
	}
	for i := 0; i < max(*streamRuns, *pairs, 1); i++ {
		for _, broker := range brokerOrder(i) {
			if i >= max(*streamRuns, 1) && broker != "embedded" {
				continue
			}
			j := newRun("JSON", broker)
			if broker != "embedded" || avroLeft == 0 {
				runs = append(runs, j)
				continue
			}
			avroLeft--
			a := newRun("Avro", broker)
			a.partner = j
			if i%2 == 0 {
				runs = append(runs, j, a)
			} else {
				a.first = true
				runs = append(runs, a, j)
			}
		}
	}
	// The phase's slots are dropped when it ends (every run stopped by
	// then): the next phase makes as many again, and max_replication_slots
	// (20, testenv) holds one phase's runs and reference, not two.
	defer func() {
		slots := []string{"ref_" + table}
		for _, r := range runs {
			slots = append(slots, r.slot)
		}
		for _, sl := range slots {
			pg.Exec(context.Background(), "bench", fmt.Sprintf(`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '%s'`, sl))
		}
	}()
	// Each connector creates its slot (no_data) in its own connectd (own
	// data.dir, so that only it restarts later) and is then stopped, so
	// that the backlog accumulates behind every slot; the reference slot
	// is made at the same moment.
	for _, r := range runs {
		r.dir, _ = os.MkdirTemp("", "connectd-bench-")
		defer os.RemoveAll(r.dir)
		r.regPort, _ = testenv.FreePort()
		d, err := startOn(r.broker, r.dir, r.regPort)
		if err != nil {
			return err
		}
		if r.label == "Avro" {
			avroConverters(r.cfg, d.Registry)
		}
		if err := d.Create("s", r.cfg); err != nil {
			d.Stop()
			return err
		}
		if err := waitSlot(ctx, pg, r.slot); err != nil {
			d.Stop()
			return err
		}
		d.Stop()
	}
	if err := pg.Exec(ctx, "bench", fmt.Sprintf(`SELECT pg_create_logical_replication_slot('ref_%s', 'pgoutput')`, table)); err != nil {
		return err
	}
	genStart := time.Now()
	if err := pg.Exec(ctx, "bench", fmt.Sprintf(`CALL gen_%s(%d, %d)`, table, ntx, perTx)); err != nil {
		return err
	}
	genD := time.Since(genStart)
	conn, err := pg.Connect(ctx, "bench")
	if err != nil {
		return err
	}
	var endLSN string
	conn.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&endLSN)
	conn.Close(ctx)
	n := ntx * perTx

	start := time.Now()
	ref := exec.Command(filepath.Join(testenv.PGBinDir(), "pg_recvlogical"), "-h", pg.Host, "-p", fmt.Sprint(pg.Port), "-U", pg.User,
		"-d", "bench", "--slot", "ref_"+table, "--start", "-o", "proto_version=1", "-o", "publication_names=pub_"+table,
		"--endpos", endLSN, "-f", "/dev/null", "--no-loop")
	if out, err := ref.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_recvlogical: %v: %s", err, out)
	}
	refD := time.Since(start)

	byBroker := map[string][]time.Duration{}
	figs := map[string]*runFigures{}
	for _, r := range runs {
		before := measure.LoadAvg()
		d, err := startOn(r.broker, r.dir, r.regPort)
		if err != nil {
			return err
		}
		start = time.Now()
		cpu0, kcpu0 := d.CPU(), kafkaCPU()
		if err := d.WaitCount(r.topic, int64(n), 20*time.Minute); err != nil {
			d.Stop()
			return err
		}
		ourD := time.Since(start)
		rss := d.PeakRSS()
		cpu := measure.MicrosPer(d.CPU()-cpu0, n)
		kcpu := measure.MicrosPer(kafkaCPU()-kcpu0, n)
		d.Stop()
		extra := fmt.Sprintf("peak RSS %.0f MiB; %s CPU %.1f µs/row", rss, processName(r.broker), cpu)
		if r.broker != "embedded" {
			extra += fmt.Sprintf("; Kafka CPU %.1f µs/row", kcpu)
		}
		report(fmt.Sprintf("stream %d-row txns %s %s", perTx, r.label, r.broker), n, ourD, "pg_recvlogical", refD,
			fmt.Sprintf("%s; backlog made in %.1fs; loadavg %s → %s", extra, genD.Seconds(), before, measure.LoadAvg()))
		r.d = ourD
		if r.label == "JSON" {
			byBroker[r.broker] = append(byBroker[r.broker], ourD)
			if figs[r.broker] == nil {
				figs[r.broker] = &runFigures{}
			}
			figs[r.broker].add(ourD, cpu, rss)
		}
	}
	brokerRatios(fmt.Sprintf("stream %d-row JSON", perTx), n, byBroker)
	debeziumRatios(fmt.Sprintf("stream %d-row JSON", perTx), n, figs)
	// Each Avro run ran next to an embedded JSON run on the same backlog.
	var jt, at time.Duration
	k := 0
	for _, r := range runs {
		if r.partner == nil {
			continue
		}
		k++
		first := "JSON"
		if r.first {
			first = "Avro"
		}
		report(fmt.Sprintf("stream %d-row Avro vs JSON", perTx), n, r.d, "JSON", r.partner.d, fmt.Sprintf("(pair %d, %s first)", k, first))
		jt, at = jt+r.partner.d, at+r.d
	}
	if k > 1 {
		report(fmt.Sprintf("stream %d-row Avro vs JSON", perTx), n*k, at, "JSON", jt, fmt.Sprintf("(all %d pairs)", k))
	}
	return nil
}

func waitSlot(ctx context.Context, pg *testenv.Postgres, slot string) error {
	conn, err := pg.Connect(ctx, "bench")
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for i := 0; i < 600; i++ {
		var n int
		// Streaming, not merely active: a slot being created is active
		// (its walsender in state startup) until its consistent point, and
		// a worker stopped then leaves no slot (the ephemeral slot is
		// dropped); the restarted worker then made a new one after the
		// backlog and waited for it forever.
		conn.QueryRow(ctx, `SELECT count(*) FROM pg_replication_slots s JOIN pg_stat_replication r ON r.pid = s.active_pid
			WHERE s.slot_name = $1 AND r.state IN ('catchup', 'streaming')`, slot).Scan(&n)
		if n == 1 {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("slot %s never became active", slot)
}

// ---- latency ----

// benchLatency commits single-row transactions at -rate per second and
// measures, per event, consumer receive time minus source.ts_us (the
// commit time): an upper bound of commit → Kafka acknowledgement.
func benchLatency(ctx context.Context, pg *testenv.Postgres) error {
	if err := pg.Exec(ctx, "bench", `CREATE TABLE lat_t (id bigserial PRIMARY KEY, v int)`); err != nil {
		return err
	}
	dir, _ := os.MkdirTemp("", "connectd-bench-")
	defer os.RemoveAll(dir)
	d, err := measure.Start(*bin, dir, 0)
	if err != nil {
		return err
	}
	defer d.Stop()
	if err := d.Create("lat", connector(pg, "lat_t", "no_data")); err != nil {
		return err
	}
	if err := waitSlot(ctx, pg, "slot_lat_t"); err != nil {
		return err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.Kafka), kgo.ConsumeTopics("bench.public.lat_t"), kgo.AllowAutoTopicCreation(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(10*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	total := *rate * *latSecs
	var mu sync.Mutex
	var lat []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		cctx, cancel := context.WithTimeout(ctx, time.Duration(*latSecs+60)*time.Second)
		defer cancel()
		for {
			fs := cl.PollFetches(cctx)
			if cctx.Err() != nil {
				return
			}
			now := time.Now()
			fs.EachRecord(func(r *kgo.Record) {
				var v struct {
					Payload struct {
						Source struct {
							TsUs int64 `json:"ts_us"`
						} `json:"source"`
					} `json:"payload"`
				}
				if json.Unmarshal(r.Value, &v) == nil && v.Payload.Source.TsUs > 0 {
					mu.Lock()
					lat = append(lat, now.Sub(time.UnixMicro(v.Payload.Source.TsUs)))
					mu.Unlock()
				}
			})
			mu.Lock()
			n := len(lat)
			mu.Unlock()
			if n >= total {
				return
			}
		}
	}()
	// Two writer connections share the rate.
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, pg.DSN("bench"))
			if err != nil {
				return
			}
			defer conn.Close(ctx)
			interval := time.Duration(float64(time.Second) / (float64(*rate) / 2))
			next := time.Now()
			for i := 0; i < total/2; i++ {
				if d := time.Until(next); d > 0 {
					time.Sleep(d)
				}
				next = next.Add(interval)
				conn.Exec(ctx, `INSERT INTO lat_t (v) VALUES ($1)`, i)
			}
		}()
	}
	wg.Wait()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(lat) == 0 {
		return fmt.Errorf("no events received")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	fmt.Printf("latency at %d tx/s            p50 %v  p99 %v  max %v  (%d events; commit → consumer, includes the consumer's fetch)   peak RSS %.0f MiB\n",
		*rate, q(0.5).Round(100*time.Microsecond), q(0.99).Round(100*time.Microsecond), lat[len(lat)-1].Round(time.Millisecond), len(lat), d.PeakRSS())
	return nil
}
