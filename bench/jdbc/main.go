// Command jdbc benchmarks the JDBC sink (io.debezium.connector.jdbc.
// JdbcSinkConnector, package sinks/jdbc) against COPY on the same
// PostgreSQL in the same run, as issue 7 asks: upsert N Debezium change
// events (envelopes with op=c, then op=u for the same keys) through
// SinkTask.Put in batches of -put records (the runtime's
// max.poll.records, 500; the sink commits the Puts queued behind a
// transaction being written together), and COPY the same N
// rows into an empty table with the same primary key.
//
//	go run ./bench/jdbc [-events 1000000] [-put 500]
//
// It prints rows/s for each run and the ratio sink/COPY (targets: at
// least 0.3 × COPY and 50,000 rows/s), and the CPU seconds each run
// cost in this process and in the PostgreSQL backends: on a machine
// shared with other work the wall-clock rates vary from run to run, the
// CPU cost per row much less.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/big"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
	"github.com/connectd/connectd/sinks/jdbc"
	"github.com/jackc/pgx/v5"
)

var (
	events = flag.Int("events", 1_000_000, "change events (distinct keys) per run")
	put    = flag.Int("put", 500, "records per SinkTask.Put")
	prof   = flag.String("cpuprofile", "", "write a CPU profile of the sink runs to this file")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// schemas as Debezium's PostgreSQL connector writes them for
// CREATE TABLE t (id bigint PRIMARY KEY, name text, qty int,
// price numeric(10,2), ts timestamp(6)).
var (
	keyS   = connect.StructSchema().Name("b.public.t.Key").Field("id", connect.Prim(connect.Int64, false)).Build()
	priceS = connect.NewSchema(connect.Bytes).Name(connect.DecimalName).Version(1).Param("scale", "2").Param("connect.decimal.precision", "10").Optional().Build()
	tsS    = connect.NewSchema(connect.Int64).Name("io.debezium.time.MicroTimestamp").Version(1).Optional().Build()
	rowS   = connect.StructSchema().Name("b.public.t.Value").Optional().
		Field("id", connect.Prim(connect.Int64, false)).Field("name", connect.Prim(connect.String, true)).
		Field("qty", connect.Prim(connect.Int32, true)).Field("price", priceS).Field("ts", tsS).Build()
	envS = connect.StructSchema().Name("b.public.t.Envelope").Version(2).
		Field("before", rowS).Field("after", rowS).Field("op", connect.Prim(connect.String, false)).Build()
)

const baseTS = int64(1709212455123456)

// cpuMeter reads the CPU time (user + system, seconds) of this process
// and of PostgreSQL's client backends.
type cpuMeter struct{ conn *pgx.Conn }

func (m cpuMeter) read(ctx context.Context) (self, backends float64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self = float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	rows, err := m.conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'`)
	if err != nil {
		return self, 0
	}
	pids, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command name: utime and stime are the 14th and
		// 15th fields of the line, in clock ticks (100 per second).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		backends += float64(u+st) / 100
	}
	return self, backends
}

func record(i int, op string) *connect.SinkRecord {
	id := int64(i)
	row := connect.NewStruct(rowS).Put("id", id).Put("name", "name-"+strconv.Itoa(i)+"-"+op).Put("qty", int32(i%1000)).
		Put("price", connect.Decimal{Unscaled: big.NewInt(int64(i % 100000)), Scale: 2}).Put("ts", baseTS+id)
	env := connect.NewStruct(envS).Put("after", row).Put("op", op)
	return &connect.SinkRecord{Topic: "b.public.t", Offset: id, KeySchema: keyS, Key: connect.NewStruct(keyS).Put("id", id), ValueSchema: envS, Value: env}
}

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
	conn, err := pg.Connect(ctx, "bench")
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	n := *events

	// Reference: COPY n rows into an empty table with the same primary key.
	if _, err := conn.Exec(ctx, `CREATE TABLE copy_t (id bigint PRIMARY KEY, name text, qty integer, price numeric(10,2), ts timestamp(6))`); err != nil {
		return err
	}
	meter := cpuMeter{conn: conn}
	s0, b0 := meter.read(ctx)
	t0 := time.Now()
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i >= n {
			return nil, nil
		}
		i++
		return []any{int64(i), "name-" + strconv.Itoa(i) + "-c", int32(i % 1000), fmt.Sprintf("%d.%02d", (i%100000)/100, (i%100000)%100), time.UnixMicro(baseTS + int64(i)).UTC()}, nil
	})
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"copy_t"}, []string{"id", "name", "qty", "price", "ts"}, src); err != nil {
		return err
	}
	copyD := time.Since(t0)
	s1, b1 := meter.read(ctx)
	fmt.Printf("COPY %d rows: %v, %.0f rows/s (cpu: bench %.1fs, postgres %.1fs)\n", n, copyD.Round(time.Millisecond), float64(n)/copyD.Seconds(), s1-s0, b1-b0)

	task := jdbc.New().NewTask()
	cfg := map[string]string{
		"connection.url":      fmt.Sprintf("jdbc:postgresql://%s:%d/bench?sslmode=disable", pg.Host, pg.Port),
		"connection.username": pg.User, "insert.mode": "upsert", "primary.key.mode": "record_key",
		"delete.enabled": "true", "schema.evolution": "basic", "collection.name.format": "sink_t", "batch.size": strconv.Itoa(*put),
	}
	if err := task.Start(ctx, nil, cfg); err != nil {
		return err
	}
	defer task.Stop()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for _, op := range []string{"c", "u"} {
		s0, b0 := meter.read(ctx)
		t0 = time.Now()
		batch := make([]*connect.SinkRecord, 0, *put)
		for i := 1; i <= n; i++ {
			batch = append(batch, record(i, op))
			if len(batch) == *put || i == n {
				if err := task.Put(ctx, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if err := task.Flush(ctx); err != nil {
			return err
		}
		d := time.Since(t0)
		s1, b1 := meter.read(ctx)
		what := map[string]string{"c": "inserts (empty table)", "u": "updates (every key exists)"}[op]
		fmt.Printf("JDBC sink upsert %d change events, %s, %d per Put: %v, %.0f rows/s, %.2f x COPY (cpu: sink %.1fs, postgres %.1fs)\n",
			n, what, *put, d.Round(time.Millisecond), float64(n)/d.Seconds(), copyD.Seconds()/d.Seconds(), s1-s0, b1-b0)
	}
	var cnt int
	var name string
	if err := conn.QueryRow(ctx, `SELECT count(*), max(name) FROM sink_t`).Scan(&cnt, &name); err != nil {
		return err
	}
	if cnt != n {
		return fmt.Errorf("sink_t has %d rows, want %d", cnt, n)
	}
	fmt.Printf("check: sink_t has %d rows (max name %s)\n", cnt, name)
	return nil
}
