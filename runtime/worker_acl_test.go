package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/broker"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// workerACLs are the ACLs the worker's principal needs on a broker with
// an authorizer (README, "Authorization"), for group.id connectd and
// source connectors writing topics prefixed "secured": the internal
// topics (connect-*), the worker group, its connectors' topics and their
// transactional ids (exactly-once source, <group.id>-<connector>-<task>).
func workerACLs(principal string) []*kadm.ACLBuilder {
	return []*kadm.ACLBuilder{
		kadm.NewACLs().Allow(principal).Topics("connect-").ResourcePatternType(kadm.ACLPatternPrefixed).
			Operations(kadm.OpRead, kadm.OpWrite, kadm.OpCreate, kadm.OpDescribeConfigs),
		kadm.NewACLs().Allow(principal).Groups("connectd").Operations(kadm.OpRead),
		kadm.NewACLs().Allow(principal).Topics("secured").ResourcePatternType(kadm.ACLPatternPrefixed).
			Operations(kadm.OpWrite, kadm.OpCreate),
		kadm.NewACLs().Allow(principal).TransactionalIDs("connectd-").ResourcePatternType(kadm.ACLPatternPrefixed).
			Operations(kadm.OpWrite),
	}
}

// A worker whose principal is not a super user runs a source connector
// on the embedded broker with the StandardAuthorizer given only
// workerACLs; with none of them it does not start.
func TestWorkerOnEmbeddedBrokerWithLeastPrivilege(t *testing.T) {
	dir, addr := t.TempDir(), freeAddr(t)
	brokerCfg := WorkerConfig{
		"embedded.kafka.listener":                addr,
		"embedded.kafka.security.protocol":       "SASL_PLAINTEXT",
		"embedded.kafka.sasl.enabled.mechanisms": "PLAIN",
		"embedded.kafka.sasl.users":              "admin:admin-pw,connect:connect-pw",
		"embedded.kafka.authorizer.class.name":   broker.StandardAuthorizer,
		"embedded.kafka.super.users":             "User:admin",
	}
	cfg := WorkerConfig{"data.dir": dir, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": PlainLoginModule + ` required username="connect" password="connect-pw";`,
		// Exactly-once source: the tasks write in transactions.
		"exactly.once.source.support": "enabled"}
	for k, v := range brokerCfg {
		cfg[k] = v
	}
	// No ACL: the worker cannot even read its config topic.
	if w, err := tryStartWorker(t, cfg, &counterShared{}); err == nil {
		w.Close()
		t.Fatal("a worker without ACLs started")
	} else {
		t.Logf("without ACLs: %v", err)
	}

	// The admin (super user) grants workerACLs, on the broker alone.
	opts, err := broker.SecurityOptions(brokerCfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := broker.Start(addr, dir, false, opts...)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(plain.Auth{User: "admin", Pass: "admin-pw"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, acl := range workerACLs("User:connect") {
		res, err := kadm.NewClient(admin).CreateACLs(ctx, acl)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	admin.Close()
	b.Close()

	w, err := tryStartWorker(t, cfg, &counterShared{})
	if err != nil {
		t.Fatalf("worker with workerACLs: %v", err)
	}
	defer w.Close()
	if _, err := w.Herder.CreateConnector(ctx, "counter", map[string]string{"connector.class": "test.CounterSource", "topic": "secured", "count": "20"}); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(plain.Auth{User: "admin", Pass: "admin-pw"}.AsMechanism()),
		kgo.ConsumeTopics("secured"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	for len(got) < 20 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != 20 || !strings.Contains(got[19], "record-19") {
		t.Fatalf("read %d records: %v", len(got), got)
	}
	for ctx.Err() == nil {
		st, err := w.Herder.ConnectorStatus("counter")
		if err == nil && len(st.Tasks) == 1 && st.Tasks[0].State == StateRunning {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st, err := w.Herder.ConnectorStatus("counter"); err != nil || st.Tasks[0].State != StateRunning {
		t.Fatalf("status %+v %v", st, err)
	}
}
