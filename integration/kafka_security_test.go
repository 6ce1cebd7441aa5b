package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// connectd against its embedded broker with SASL required
// (embedded.kafka.security.protocol=SASL_PLAINTEXT, SCRAM-SHA-256 users),
// its clients configured from a worker.properties file as a Kafka Connect
// worker's are (security.protocol, sasl.mechanism, sasl.jaas.config with
// the ScramLoginModule, repeated under producer. as Kafka Connect needs).
// A wrong password stops the worker at start with a message naming the
// mechanism and user; the right one runs the PostgreSQL connector, whose
// snapshot a SCRAM client reads.
func TestPostgresOverSASLEmbeddedBroker(t *testing.T) {
	pg := startInventory(t)
	props := func(password string) string { return saslWorkerProps(t, password) }

	bad := newDaemon(t)
	cmd := exec.Command(binPath, "--config", props("wrong"), "-o", "listeners="+bad.rest, "-o", "embedded.kafka.listener="+bad.kafka,
		"-o", "data.dir="+bad.dataDir, "-o", "schema.registry.listener="+bad.schemaRegistry)
	done := make(chan struct{})
	var out []byte
	go func() { out, _ = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("connectd with a wrong SASL password did not exit")
	}
	if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(out), `SASL SCRAM-SHA-256 authentication as user "connect" failed`) {
		t.Fatalf("wrong password: exit %d\n%s", cmd.ProcessState.ExitCode(), out)
	}

	d := newDaemon(t)
	d.args = []string{"--config", props("Kc-s3cret")}
	d.start()
	code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.customers"})})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("inv", "RUNNING")
	d.waitSnapshotDone("inv")
	mustExec(t, pg, `INSERT INTO inventory.customers (first_name, last_name, email) VALUES ('Sasl', 'User', 'sasl@example.com')`)
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.kafka), kgo.ConsumeTopics("dbserver1.inventory.customers"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SASL(scram.Auth{User: "connect", Pass: "Kc-s3cret"}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var ops []string
	for ctx.Err() == nil && (len(ops) == 0 || ops[len(ops)-1] != "c") {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { ops = append(ops, decodeEvent(t, r).Op) })
	}
	// inventory.sql's 4 customers (op r), then the insert (op c).
	if len(ops) != 5 || ops[0] != "r" || ops[4] != "c" {
		t.Fatalf("events: %v", ops)
	}
	// `connectd topics tail` logs in with the same worker.properties.
	tail := exec.Command(binPath, "topics", "tail", "dbserver1.inventory.customers", "--from-beginning", "--max-records", "5",
		"--config", props("Kc-s3cret"), "-o", "embedded.kafka.listener="+d.kafka)
	out, err = tail.CombinedOutput()
	if err != nil || strings.Count(string(out), `"topic":"dbserver1.inventory.customers"`) != 5 || !strings.Contains(string(out), "sasl@example.com") {
		t.Fatalf("topics tail over SASL: %v\n%s", err, out)
	}
}

// The same pass-through against a real Apache Kafka 4.3 broker (KRaft,
// scripts/kafka.sh) whose client listener is SASL_PLAINTEXT with PLAIN
// (users in the listener's JAAS config, as Kafka's documentation
// configures them) and SCRAM-SHA-512 (a user added by kafka-storage
// format --add-scram): a wrong SCRAM password stops connectd at start
// naming the mechanism and user (the broker answers
// SASL_AUTHENTICATION_FAILED, unlike kfake, which closes the connection);
// SCRAM for the internal topics plus PLAIN for the tasks' producer
// (producer.-prefixed keys) runs the PostgreSQL connector.
func TestPostgresOverSASLRealKafka(t *testing.T) {
	pg := startInventory(t)
	bootstrap := startKafkaWith(t, kafkaListenerOpts{
		protocol: "SASL_PLAINTEXT",
		props: "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512\n" +
			`listener.name.client.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_producer="Pr0d-pw";` + "\n" +
			`listener.name.client.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;` + "\n",
		formatArgs: []string{"--add-scram", "SCRAM-SHA-512=[name=connect,password=Sc-pw]"},
		clientOpts: []kgo.Opt{kgo.SASL(scram.Auth{User: "connect", Pass: "Sc-pw"}.AsSha512Mechanism())},
	})
	args := func(password string) []string {
		return []string{"-o", "bootstrap.servers=" + bootstrap, "-o", "group.id=sasl-real",
			"-o", "config.storage.replication.factor=1", "-o", "offset.storage.replication.factor=1", "-o", "status.storage.replication.factor=1",
			"-o", "security.protocol=SASL_PLAINTEXT", "-o", "sasl.mechanism=SCRAM-SHA-512",
			"-o", `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="` + password + `";`,
			"-o", "producer.sasl.mechanism=PLAIN",
			"-o", `producer.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="producer" password="Pr0d-pw";`}
	}
	bad := newDaemon(t)
	cmd := exec.Command(binPath, append([]string{"-o", "listeners=" + bad.rest, "-o", "data.dir=" + bad.dataDir, "-o", "schema.registry.listener="}, args("wrong")...)...)
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(out), `SASL SCRAM-SHA-512 authentication as user "connect" failed`) {
		t.Fatalf("wrong password: exit %d\n%s", cmd.ProcessState.ExitCode(), out)
	}

	d := newDaemon(t)
	d.args = args("Sc-pw")
	d.start()
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.customers"})}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("inv", "RUNNING")
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("dbserver1.inventory.customers"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SASL(plain.Auth{User: "producer", Pass: "Pr0d-pw"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n := 0
	for n < 4 && ctx.Err() == nil {
		n += len(cl.PollFetches(ctx).Records())
	}
	if n != 4 {
		t.Fatalf("snapshot records read: %d of 4", n)
	}
}

// saslWorkerProps writes a worker.properties whose embedded broker
// requires SCRAM-SHA-256 (user connect, password Kc-s3cret) and whose
// clients log in as connect with password, as a Kafka Connect
// worker.properties would (unprefixed keys, repeated under producer.).
func saslWorkerProps(t *testing.T, password string) string {
	t.Helper()
	jaas := `org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="` + password + `";`
	f := filepath.Join(t.TempDir(), "worker.properties")
	text := "embedded.kafka.security.protocol=SASL_PLAINTEXT\n" +
		"embedded.kafka.sasl.enabled.mechanisms=SCRAM-SHA-256\n" +
		"embedded.kafka.sasl.users=connect:Kc-s3cret\n" +
		"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config=" + jaas + "\n" +
		"producer.security.protocol=SASL_PLAINTEXT\nproducer.sasl.mechanism=SCRAM-SHA-256\nproducer.sasl.jaas.config=" + jaas + "\n"
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// The MariaDB connector's schema history topic, on the worker's embedded
// broker (no schema.history.internal.kafka.bootstrap.servers), is reached
// with the worker's SASL login (connect.WorkerInfo.KafkaClientOpts): the
// snapshot's DDL lands in it and the row events follow.
func TestMariaDBSchemaHistoryOverSASL(t *testing.T) {
	m := startMariaDB(t)
	mariaExec(t, m, `CREATE TABLE t (id int PRIMARY KEY, a int NOT NULL); INSERT INTO t VALUES (1, 1)`)
	d := newDaemon(t)
	d.args = []string{"--config", saslWorkerProps(t, "Kc-s3cret")}
	d.start()
	code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": mariaConnector(m, map[string]string{
		"table.include.list": "inventory.t", "schema.history.internal.kafka.topic": "schema-changes.inventory",
	})})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("inv", "RUNNING")
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.kafka), kgo.ConsumeTopics("schema-changes.inventory", "dbserver1.inventory.t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.SASL(scram.Auth{User: "connect", Pass: "Kc-s3cret"}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	perTopic := map[string]int{}
	var ddl string
	for (perTopic["schema-changes.inventory"] == 0 || perTopic["dbserver1.inventory.t"] == 0) && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			perTopic[r.Topic]++
			if r.Topic == "schema-changes.inventory" && strings.Contains(string(r.Value), "CREATE TABLE") {
				ddl = string(r.Value)
			}
		})
	}
	if perTopic["dbserver1.inventory.t"] == 0 || !strings.Contains(ddl, "`t`") {
		t.Fatalf("records per topic %v; schema history CREATE TABLE record: %.300s", perTopic, ddl)
	}
}
