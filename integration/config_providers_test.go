package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The PostgreSQL connector logs in with a password it takes from a
// FileConfigProvider (Kafka Connect KIP-297: database.password=
// ${file:/path:key}); the server checks it (scram-sha-256 for that role),
// the snapshot arrives, and the password is in neither the config topic
// nor GET /connectors/{c}/config, which keep the variable.
func TestConnectorPasswordFromConfigProvider(t *testing.T) {
	const secret = "pg-S3cret-pw-42"
	pg := startInventory(t)
	mustExec(t, pg, `CREATE ROLE cdc_user LOGIN SUPERUSER REPLICATION PASSWORD '`+secret+`'`)
	// Password authentication for cdc_user over TCP; everyone else keeps
	// trust (the first matching pg_hba line wins).
	hbaPath := filepath.Join(pg.Dir, "data", "pg_hba.conf")
	hba, err := os.ReadFile(hbaPath)
	if err != nil {
		t.Fatal(err)
	}
	hba = append([]byte("host all cdc_user 127.0.0.1/32 scram-sha-256\nhost replication cdc_user 127.0.0.1/32 scram-sha-256\n"), hba...)
	if err := os.WriteFile(hbaPath, hba, 0o600); err != nil {
		t.Fatal(err)
	}
	mustExec(t, pg, `SELECT pg_reload_conf()`)

	secrets := filepath.Join(t.TempDir(), "pg.properties")
	if err := os.WriteFile(secrets, []byte("password="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := newDaemon(t)
	d.args = []string{"-o", "config.providers=file", "-o", "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider"}
	d.start()

	// The control: a wrong password is refused by the server.
	bad := pgConnector(pg, map[string]string{"database.user": "cdc_user", "database.password": "wrong", "table.include.list": "inventory.customers", "slot.name": "bad_slot"})
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "bad", "config": bad}); code == 201 {
		st := d.waitTaskState("bad", "FAILED")
		if !strings.Contains(st.Tasks[0].Trace, "password authentication failed") {
			t.Fatalf("wrong password: %+v", st)
		}
		d.do("DELETE", "/connectors/bad", nil)
	} else if !strings.Contains(string(body), "password authentication failed") {
		t.Fatalf("wrong password: %d %s", code, body)
	}

	raw := "${file:" + secrets + ":password}"
	cfg := pgConnector(pg, map[string]string{"database.user": "cdc_user", "database.password": raw, "table.include.list": "inventory.customers"})
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": cfg}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("inv", "RUNNING")
	c := newConsumer(t, d.kafka, `dbserver1\.inventory\.customers`)
	if ev := c.until(1, 60*time.Second); ev[0].Op != "r" {
		t.Fatalf("first event %+v", ev[0])
	}
	code, body := d.do("GET", "/connectors/inv/config", nil)
	if code != 200 || !strings.Contains(string(body), `"database.password":"${file:`+secrets+`:password}"`) || strings.Contains(string(body), secret) {
		t.Fatalf("GET config: %d %s", code, body)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(d.kafka), kgo.ConsumeTopics("connect-configs"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var recs, tasks int
	for ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			recs++
			if strings.HasPrefix(string(r.Key), "task-inv-") {
				tasks++
			}
			if strings.Contains(string(r.Value), secret) {
				t.Errorf("config topic record %s holds the password: %s", r.Key, r.Value)
			}
		})
	}
	if tasks == 0 {
		t.Fatalf("read %d config records, none a task config of inv", recs)
	}
}
