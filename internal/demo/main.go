// Command demo is what "make demo" runs: a throwaway PostgreSQL 15 with an
// inventory schema, connectd with its embedded broker, a PostgreSQL
// connector registered over REST, a small change generator, and the change
// events printed as they arrive. Ctrl-C stops everything and removes the
// temporary database and data dir.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/twmb/franz-go/pkg/kgo"
)

//go:embed inventory.sql
var inventorySQL string

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("connectd", "bin/connectd", "connectd binary")
	restAddr := flag.String("rest", "127.0.0.1:8083", "REST listener of connectd")
	kafkaAddr := flag.String("kafka", "127.0.0.1:9092", "embedded Kafka listener")
	registryAddr := flag.String("registry", "127.0.0.1:8081", "embedded schema registry listener")
	changes := flag.Bool("changes", true, "run the change generator")
	envFile := flag.String("env-file", "/tmp/connectd-demo.env", "file written with the database's PGHOST/PGPORT/PGUSER/PGDATABASE and connectd's PID (CONNECTD_PID), for the README's tour (`. /tmp/connectd-demo.env`); removed at exit")
	identityFull := flag.Bool("replica-identity-full", false,
		"ALTER the tables to REPLICA IDENTITY FULL (full before images, as Flink's debezium-json format needs)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// Ctrl-C on "make demo | tee …" also ends the reader of stdout: a write
	// to the closed pipe would kill the demo with SIGPIPE before its deferred
	// cleanup, leaving PostgreSQL running and the temp dirs behind. Ignored,
	// the write fails with EPIPE and the cleanup runs.
	signal.Ignore(syscall.SIGPIPE)

	fmt.Println("== starting PostgreSQL 15 (wal_level=logical) in a temp dir")
	pg, err := testenv.StartPostgres(ctx)
	if err != nil {
		return err
	}
	defer func() {
		pg.Stop()
		fmt.Println("== removed the temporary PostgreSQL")
	}()
	if err := pg.CreateDatabase(ctx, "inventory"); err != nil {
		return err
	}
	if err := pg.Exec(ctx, "inventory", inventorySQL); err != nil {
		return fmt.Errorf("seeding inventory: %w", err)
	}
	if *identityFull {
		if err := pg.Exec(ctx, "inventory", `ALTER TABLE inventory.customers REPLICA IDENTITY FULL;
ALTER TABLE inventory.products REPLICA IDENTITY FULL; ALTER TABLE inventory.orders REPLICA IDENTITY FULL`); err != nil {
			return err
		}
		fmt.Println("   tables: REPLICA IDENTITY FULL")
	}
	fmt.Printf("   psql: %s\n", pg.DSN("inventory"))

	dataDir, err := os.MkdirTemp("", "connectd-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dataDir)
	fmt.Println("== starting connectd with its embedded Kafka broker")
	args := []string{
		"-o", "listeners=http://" + *restAddr,
		"-o", "embedded.kafka.listener=" + *kafkaAddr,
		"-o", "schema.registry.listener=" + *registryAddr,
		"-o", "data.dir=" + dataDir,
		"-o", "offset.flush.interval.ms=1000"}
	logf, err := os.Create(dataDir + ".log")
	if err != nil {
		return err
	}
	defer os.Remove(dataDir + ".log")
	writeEnv := func(pid int) error {
		if *envFile == "" {
			return nil
		}
		env := fmt.Sprintf("export PGHOST=%s PGPORT=%d PGUSER=%s PGDATABASE=inventory\nexport CONNECTD_PID=%d\n", pg.Host, pg.Port, pg.User, pid)
		return os.WriteFile(*envFile, []byte(env), 0o644)
	}
	if *envFile != "" {
		defer os.Remove(*envFile)
	}
	// connectd runs supervised: killed (kill -9 "$CONNECTD_PID" in the
	// tour), it is started again on the same data dir, and the events go on
	// from where its offsets were, with nothing lost.
	start := func() (*exec.Cmd, error) {
		cmd := exec.Command(*bin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting %s (run `make build` first): %w", *bin, err)
		}
		return cmd, writeEnv(cmd.Process.Pid)
	}
	cmd, err := start()
	if err != nil {
		return err
	}
	var mu sync.Mutex
	supervised := make(chan struct{})
	go func() {
		defer close(supervised)
		for {
			mu.Lock()
			c := cmd
			mu.Unlock()
			err := c.Wait()
			if ctx.Err() != nil {
				return
			}
			fmt.Printf("== connectd exited (%v); starting it again on the same data dir\n", err)
			time.Sleep(500 * time.Millisecond)
			if ctx.Err() != nil {
				return
			}
			next, err := start()
			if err != nil {
				fmt.Fprintln(os.Stderr, "demo:", err)
				return
			}
			mu.Lock()
			cmd = next
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		c := cmd
		mu.Unlock()
		c.Process.Signal(syscall.SIGTERM)
		<-supervised
		fmt.Println("== connectd stopped")
	}()
	base := "http://" + *restAddr
	if err := waitHTTP(ctx, base+"/", 60*time.Second); err != nil {
		log, _ := os.ReadFile(dataDir + ".log")
		return fmt.Errorf("connectd did not start: %w\n%s", err, log)
	}
	fmt.Printf("   REST API: %s   (connectd log: %s.log)\n", base, dataDir)

	connector := map[string]any{
		"name": "inventory-connector",
		"config": map[string]string{
			"connector.class":    "io.debezium.connector.postgresql.PostgresConnector",
			"database.hostname":  pg.Host,
			"database.port":      fmt.Sprint(pg.Port),
			"database.user":      pg.User,
			"database.password":  "",
			"database.dbname":    "inventory",
			"topic.prefix":       "dbserver1",
			"plugin.name":        "pgoutput",
			"table.include.list": "inventory.*",
		},
	}
	body, _ := json.Marshal(connector)
	fmt.Printf("== POST %s/connectors\n   %s\n", base, body)
	resp, err := http.Post(base+"/connectors", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	rb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("creating the connector: %s: %s", resp.Status, rb)
	}
	fmt.Printf("   %s %s\n", resp.Status, rb)
	fmt.Printf("   status: curl -s %s/connectors/inventory-connector/status\n", base)
	listener := "" // the embedded broker's default listener needs no -o
	if *kafkaAddr != "127.0.0.1:9092" {
		listener = " -o embedded.kafka.listener=" + *kafkaAddr
	}
	fmt.Printf("   tail:   %s topics tail dbserver1.inventory.customers --from-beginning%s\n", *bin, listener)
	if *envFile != "" {
		fmt.Printf("   env:    . %s   (PGHOST/PGPORT/PGUSER/PGDATABASE for psql, CONNECTD_PID)\n", *envFile)
	}
	fmt.Println("== change events (Ctrl-C to stop):")

	if *changes {
		go generate(ctx, pg)
	}
	return printEvents(ctx, *kafkaAddr)
}

func waitHTTP(ctx context.Context, url string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// generate inserts, updates and deletes customers and orders every couple
// of seconds until ctx is done.
func generate(ctx context.Context, pg *testenv.Postgres) {
	conn, err := pg.Connect(ctx, "inventory")
	if err != nil {
		fmt.Fprintln(os.Stderr, "change generator:", err)
		return
	}
	defer conn.Close(context.Background())
	names := []string{"Ada", "Grace", "Linus", "Barbara", "Edsger", "Margaret", "Ken", "Frances"}
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
		n := names[rand.Intn(len(names))]
		var id int
		err := conn.QueryRow(ctx, `INSERT INTO inventory.customers (first_name, last_name, email) VALUES ($1, 'Demo', $2) RETURNING id`,
			n, fmt.Sprintf("%s.%d@example.com", strings.ToLower(n), i)).Scan(&id)
		if err == nil {
			_, err = conn.Exec(ctx, `UPDATE inventory.customers SET email = $1 WHERE id = $2`, fmt.Sprintf("%s.%d@example.org", strings.ToLower(n), i), id)
		}
		if err == nil {
			_, err = conn.Exec(ctx, `INSERT INTO inventory.orders (order_date, purchaser, quantity, product_id) VALUES (current_date, $1, $2, 1)`, id, 1+rand.Intn(5))
		}
		if err == nil && i%3 == 0 {
			_, err = conn.Exec(ctx, `DELETE FROM inventory.orders WHERE purchaser = $1`, id)
			if err == nil {
				_, err = conn.Exec(ctx, `DELETE FROM inventory.customers WHERE id = $1`, id)
			}
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "change generator:", err)
		}
	}
}

// printEvents prints one line per change event of every dbserver1.* topic.
func printEvents(ctx context.Context, broker string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeRegex(), kgo.ConsumeTopics(`^dbserver1\..*`),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(250*time.Millisecond), kgo.MetadataMaxAge(time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		fs.EachRecord(func(r *kgo.Record) {
			fmt.Println(summarize(r))
		})
	}
}

func summarize(r *kgo.Record) string {
	var key, val struct {
		Payload json.RawMessage `json:"payload"`
	}
	json.Unmarshal(r.Key, &key)
	if r.Value == nil {
		return fmt.Sprintf("%-32s tombstone key=%s", r.Topic, key.Payload)
	}
	if err := json.Unmarshal(r.Value, &val); err != nil {
		return fmt.Sprintf("%-32s %s", r.Topic, r.Value)
	}
	var p struct {
		Op     string          `json:"op"`
		Before json.RawMessage `json:"before"`
		After  json.RawMessage `json:"after"`
		Source struct {
			Snapshot string `json:"snapshot"`
			LSN      *int64 `json:"lsn"`
		} `json:"source"`
	}
	if err := json.Unmarshal(val.Payload, &p); err != nil {
		return fmt.Sprintf("%-32s %s", r.Topic, val.Payload)
	}
	lsn := ""
	if p.Source.LSN != nil {
		lsn = fmt.Sprint(*p.Source.LSN)
	}
	return fmt.Sprintf("%-32s op=%s key=%s before=%s after=%s lsn=%s", r.Topic, p.Op, key.Payload, orNull(p.Before), orNull(p.After), lsn)
}

func orNull(b json.RawMessage) string {
	if len(b) == 0 {
		return "null"
	}
	return string(b)
}
