package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// runCLI runs the connectd binary with args (30 s at most) and returns
// stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCLIFor(t, 30*time.Second, args...)
}

// runCLIFor is runCLI with another time limit.
func runCLIFor(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("connectd %s did not exit within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), limit, o.String(), e.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("connectd %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// tailedRecord is one line of `connectd topics tail`: key and value as
// JsonConverter writes them with schemas.enable=true ({"schema","payload"}).
type tailedRecord struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Key       struct {
		Schema  map[string]any `json:"schema"`
		Payload map[string]any `json:"payload"`
	} `json:"key"`
	Value struct {
		Schema  map[string]any `json:"schema"`
		Payload struct {
			Op     string         `json:"op"`
			After  map[string]any `json:"after"`
			Source map[string]any `json:"source"`
		} `json:"payload"`
	} `json:"value"`
}

func parseTail(t *testing.T, out string) []tailedRecord {
	t.Helper()
	var recs []tailedRecord
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r tailedRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("topics tail line is not the JSON record: %v\n%s", err, l)
		}
		recs = append(recs, r)
	}
	return recs
}

// `connectd --help`, `connectd help` and --help after each command exit 0
// and list every command (the flag package's -h/-help/--help convention;
// before 31ca184 --help exited 1 with "flag: help requested").
func TestCLIHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"topics", "--help"}, {"topics", "tail", "--help"}, {"status", "--help"}} {
		out, errOut, code := runCLI(t, args...)
		all := out + errOut
		if code != 0 {
			t.Fatalf("connectd %s: exit %d, want 0\n%s", strings.Join(args, " "), code, all)
		}
		for _, cmd := range []string{"connectd [run]", "connectd topics tail TOPIC", "--max-records N", "connectd status", "connectd version"} {
			if !strings.Contains(all, cmd) {
				t.Fatalf("connectd %s does not list %q:\n%s", strings.Join(args, " "), cmd, all)
			}
		}
		if strings.Contains(all, "help requested") {
			t.Fatalf("connectd %s prints the flag package's error:\n%s", strings.Join(args, " "), all)
		}
	}
	// An unknown command is still an error.
	if _, errOut, code := runCLI(t, "bogus"); code != 1 || !strings.Contains(errOut, `unknown command "bogus"`) {
		t.Fatalf("connectd bogus: exit %d\n%s", code, errOut)
	}
}

// One worker with the embedded broker and registry, one PostgreSQL:
//   - topics tail decodes a topic written by AvroConverter (Confluent wire
//     format: magic byte 0, 4-byte big-endian schema id, Avro binary; see
//     Confluent's "Wire format" in the Schema Registry docs) through the
//     registry, and prints key and value as JsonConverter would;
//   - --max-records N prints exactly N records of a topic holding more;
//   - connectd status shows the cause of a FAILED task's trace (pgx puts
//     the server's message on a continuation line).
func TestCLIAgainstWorker(t *testing.T) {
	pg := startInventory(t)
	d := newDaemon(t)
	d.start()
	url := "http://" + d.schemaRegistry
	cfg := pgConnector(pg, map[string]string{
		"table.include.list":                  "inventory.customers",
		"key.converter":                       "io.confluent.connect.avro.AvroConverter",
		"key.converter.schema.registry.url":   url,
		"value.converter":                     "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url": url,
	})
	if code, b := d.do("POST", "/connectors", map[string]any{"name": "avro", "config": cfg}); code != 201 {
		t.Fatalf("create: %d %s", code, b)
	}
	const topic = "dbserver1.inventory.customers"
	// The 4 snapshot records of inventory.customers (internal/demo/inventory.sql).
	raw := readTopic(t, d.kafka, topic, 4)
	if len(raw) != 4 {
		t.Fatalf("%d records in %s, want 4", len(raw), topic)
	}
	for _, r := range raw {
		for _, b := range [][]byte{r.Key, r.Value} {
			if len(b) < 5 || b[0] != 0 || json.Valid(b) {
				t.Fatalf("%s@%d is not Confluent-framed Avro: % x", topic, r.Offset, b)
			}
		}
	}
	valueID := binary.BigEndian.Uint32(raw[0].Value[1:5])
	if code, body := registryGet(t, d, fmt.Sprintf("/schemas/ids/%d", valueID)); code != 200 || !strings.Contains(body, "dbserver1.inventory.customers.Envelope") {
		t.Fatalf("schema id %d of the value: %d %s", valueID, code, body)
	}

	t.Run("AvroTopicsTail", func(t *testing.T) {
		// Both ways topics tail finds the registry: the worker's embedded
		// one (schema.registry.listener) and value.converter.schema.registry.url.
		for _, reg := range []string{"schema.registry.listener=" + d.schemaRegistry, "value.converter.schema.registry.url=" + url} {
			out, errOut, code := runCLI(t, "topics", "tail", topic, "--from-beginning", "--max-records", "4",
				"-o", "embedded.kafka.listener="+d.kafka, "-o", reg)
			if code != 0 {
				t.Fatalf("topics tail (-o %s): exit %d\n%s", reg, code, errOut)
			}
			recs := parseTail(t, out)
			wantEmails := []string{"sally.thomas@acme.com", "gbailey@foobar.com", "ed@walker.com", "annek@noanswer.org"}
			if len(recs) != len(wantEmails) {
				t.Fatalf("topics tail (-o %s) printed %d records, want 4:\n%s", reg, len(recs), out)
			}
			for i, r := range recs {
				if r.Topic != topic || r.Offset != int64(i) {
					t.Fatalf("record %d is %s@%d", i, r.Topic, r.Offset)
				}
				// Key: the table's primary key, {"id":n}; Debezium names its
				// schema <topic>.Key and the value's <topic>.Envelope.
				if r.Key.Payload["id"] != float64(i+1) || r.Key.Schema["name"] != topic+".Key" {
					t.Fatalf("record %d key not decoded (-o %s):\n%s", i, reg, out)
				}
				v := r.Value
				if v.Schema["name"] != topic+".Envelope" || v.Payload.Op != "r" || v.Payload.After["email"] != wantEmails[i] ||
					v.Payload.After["id"] != float64(i+1) || v.Payload.Source["table"] != "customers" {
					t.Fatalf("record %d value not decoded (-o %s):\n%s", i, reg, out)
				}
			}
		}
	})

	t.Run("MaxRecords", func(t *testing.T) {
		// The topic holds 4 records, fetched in one batch: the tail stops
		// after the third, not at the end of the fetch.
		out, errOut, code := runCLI(t, "topics", "tail", topic, "--from-beginning", "--max-records", "3",
			"-o", "embedded.kafka.listener="+d.kafka, "-o", "schema.registry.listener="+d.schemaRegistry)
		if code != 0 {
			t.Fatalf("topics tail: exit %d\n%s", code, errOut)
		}
		recs := parseTail(t, out)
		if len(recs) != 3 {
			t.Fatalf("--max-records 3 printed %d records:\n%s", len(recs), out)
		}
		for i, r := range recs {
			if r.Offset != int64(i) || r.Value.Payload.After["id"] != float64(i+1) {
				t.Fatalf("record %d: offset %d, after %v", i, r.Offset, r.Value.Payload.After)
			}
		}
	})

	t.Run("StatusShowsFailedTaskCause", func(t *testing.T) {
		// A role with a password, and pg_hba.conf asking for it (scram)
		// ahead of the test server's trust lines; the connector gives the
		// wrong one.
		mustExec(t, pg, `CREATE ROLE cdc WITH LOGIN REPLICATION PASSWORD 'right'`)
		hba := filepath.Join(pg.Dir, "data", "pg_hba.conf") // testenv.StartPostgres initdb -D Dir/data
		old := readFile(t, hba)
		if err := os.WriteFile(hba, []byte("host all cdc 127.0.0.1/32 scram-sha-256\nhost replication cdc 127.0.0.1/32 scram-sha-256\n"+old), 0o600); err != nil {
			t.Fatal(err)
		}
		mustExec(t, pg, `SELECT pg_reload_conf()`)
		// The postmaster rereads pg_hba.conf on the SIGHUP pg_reload_conf
		// sends: wait until it asks cdc for the password.
		const cause = `password authentication failed for user "cdc"` // PostgreSQL's message, SQLSTATE 28P01 (libpq/auth.c auth_failed)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			conn, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://cdc:wrong@%s:%d/inventory", pg.Host, pg.Port))
			if err == nil {
				conn.Close(context.Background())
			} else if strings.Contains(err.Error(), cause) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pg_hba.conf reload not in effect after 10 s: %v", err)
			}
		}
		bad := pgConnector(pg, map[string]string{"database.user": "cdc", "database.password": "wrong", "topic.prefix": "badpw"})
		if code, b := d.do("POST", "/connectors", map[string]any{"name": "badpw", "config": bad}); code != 201 {
			t.Fatalf("create: %d %s", code, b)
		}
		st := d.waitTaskState("badpw", "FAILED")
		if !strings.Contains(st.Tasks[0].Trace, cause) {
			t.Fatalf("task trace lacks the cause: %q", st.Tasks[0].Trace)
		}
		out, errOut, code := runCLI(t, "status", "--url", d.rest)
		if code != 0 {
			t.Fatalf("connectd status: exit %d\n%s", code, errOut)
		}
		t.Logf("connectd status:\n%s", out)
		var row, trace bool
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			row = row || len(f) > 3 && f[0] == "badpw" && f[3] == "0:FAILED"
			trace = trace || strings.HasPrefix(l, "badpw: trace: ") && strings.Contains(l, cause)
		}
		if !row || !trace {
			t.Fatalf("connectd status lacks the FAILED row (%v) or the trace's cause line (%v):\n%s", row, trace, out)
		}
		// The healthy connector's row is there too.
		if !strings.Contains(out, "avro") {
			t.Fatalf("connectd status lacks the avro connector:\n%s", out)
		}
	})
	d.stop()
}
