package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/broker"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// aclUsers are the SASL PLAIN users of both brokers of the ACL
// comparison: admin is the super user.
var aclUsers = map[string]string{"admin": "admin-pw", "alice": "alice-pw"}

func aclClient(t *testing.T, addr, user string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr),
		kgo.SASL(plain.Auth{User: user, Pass: aclUsers[user]}.AsMechanism()),
		kgo.RequestRetries(0), kgo.RetryTimeout(3 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// errName is a Kafka error's name (TOPIC_AUTHORIZATION_FAILED), or ok.
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return "error: " + err.Error()
}

// aclOutcomes runs the same operations as alice (ACLs: READ and WRITE on
// the topics prefixed "orders", READ on group g1, WRITE on orders-eu
// denied; nothing else) and returns what each answered.
func aclOutcomes(t *testing.T, addr string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out []string
	add := func(step string, err error) { out = append(out, step+": "+errName(err)) }
	alice := aclClient(t, addr, "alice")
	aadm := kadm.NewClient(alice)
	for _, topic := range []string{"orders", "orders-eu", "secret"} {
		add("produce "+topic, alice.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr())
	}
	md, err := aadm.Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("metadata all: %v", md.Topics.Names()))
	r, err := aadm.CreateTopic(ctx, 1, 1, nil, "alice-new")
	add("create topic", errors.Join(err, r.Err))
	d, err := aadm.DeleteTopic(ctx, "orders")
	add("delete topic orders", errors.Join(err, d.Err))
	for _, topic := range []string{"orders", "secret"} {
		rc, err := aadm.DescribeTopicConfigs(ctx, topic)
		if err == nil {
			var c kadm.ResourceConfig
			c, err = rc.On(topic, nil)
			err = errors.Join(err, c.Err)
		}
		add("describe configs "+topic, err)
	}
	for _, group := range []string{"g1", "g2"} {
		cl := aclClient(t, addr, "alice", kgo.ConsumerGroup(group), kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			// Kafka creates __consumer_offsets at the first group
			// request (COORDINATOR_NOT_AVAILABLE meanwhile): retry.
			kgo.RequestRetries(20), kgo.RetryTimeout(15*time.Second))
		pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		var ferr error
		fs.EachError(func(_ string, _ int32, e error) {
			if ferr == nil {
				ferr = e
			}
		})
		add(fmt.Sprintf("consume orders in group %s (%d records)", group, fs.NumRecords()), ferr)
		cl.Close()
	}
	txn := aclClient(t, addr, "alice", kgo.TransactionalID("alice-txn"))
	err = txn.BeginTransaction()
	if err == nil {
		err = txn.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("t")}).FirstErr()
	}
	add("transactional produce", err)
	res, err := aadm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("secret").Operations(kadm.OpRead))
	if err == nil && len(res) > 0 {
		err = res[0].Err
	}
	add("create acl", err)
	return out
}

// The ACLs of Kafka's own kafka-acls tool (Kafka 4.3) on the embedded
// broker with embedded.kafka.authorizer.class.name=StandardAuthorizer and
// on a real Kafka 4.3 with the StandardAuthorizer, both on SASL_PLAINTEXT
// with super.users=User:admin: the same tool invocations print the same
// (lines sorted: each broker lists ACLs in its own order), and alice's
// operations under those ACLs (produce, metadata, topic create/delete,
// describe configs, groups, a transaction, creating an ACL) answer the
// same error codes on both.
func TestKafkaAclsSameOnEmbeddedBrokerAndKafka(t *testing.T) {
	cp := filepath.Join(kafkaJars(t), "*") + string(os.PathListSeparator) + filepath.Join(kafkaJars(t, "tools"), "*")
	const aclCmd = "org.apache.kafka.tools.AclCommand"
	dir := t.TempDir()
	adminProps := filepath.Join(dir, "admin.properties")
	if err := os.WriteFile(adminProps, []byte("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw";`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := [][]string{
		{"--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Write", "--topic", "orders", "--resource-pattern-type", "prefixed"},
		{"--add", "--allow-principal", "User:alice", "--operation", "Read", "--group", "g1"},
		{"--add", "--deny-principal", "User:alice", "--operation", "Write", "--topic", "orders-eu"},
		{"--add", "--allow-principal", "User:bob", "--allow-host", "127.0.0.1", "--operation", "Describe", "--cluster"},
		{"--add", "--allow-principal", "User:bob", "--operation", "Write", "--transactional-id", "bob-txn"},
		{"--list"},
		{"--list", "--topic", "orders", "--resource-pattern-type", "prefixed"},
		{"--list", "--topic", "orders-eu", "--resource-pattern-type", "match"},
		{"--list", "--principal", "User:bob"},
		{"--remove", "--force", "--allow-principal", "User:bob", "--operation", "Write", "--transactional-id", "bob-txn"},
		{"--remove", "--force", "--cluster"},
		{"--list"},
	}
	run := func(addr string) (tool []string, outcomes []string) {
		adm := kadm.NewClient(aclClient(t, addr, "admin"))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, topic := range []string{"orders", "orders-eu", "secret"} {
			if r, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil || r.Err != nil {
				t.Fatalf("admin creating %s on %s: %v %v", topic, addr, err, r.Err)
			}
		}
		for _, s := range steps {
			out := runJava(t, cp, "", aclCmd, append([]string{"--bootstrap-server", addr, "--command-config", adminProps}, s...)...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			slices.Sort(lines)
			tool = append(tool, strings.Join(lines, "\n"))
		}
		return tool, aclOutcomes(t, addr)
	}

	embeddedAddr := freeAddr(t)
	opts, err := broker.SecurityOptions(map[string]string{
		"embedded.kafka.security.protocol":       "SASL_PLAINTEXT",
		"embedded.kafka.sasl.enabled.mechanisms": "PLAIN",
		"embedded.kafka.sasl.users":              "admin:admin-pw,alice:alice-pw",
		"embedded.kafka.authorizer.class.name":   broker.StandardAuthorizer,
		"embedded.kafka.super.users":             "User:admin",
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := broker.Start(embeddedAddr, t.TempDir(), false, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	embeddedTool, embeddedOut := run(embeddedAddr)

	kafkaAddr := startKafkaWith(t, kafkaListenerOpts{
		protocol: "SASL_PLAINTEXT",
		props: "sasl.enabled.mechanisms=PLAIN\n" +
			`listener.name.client.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-pw" user_alice="alice-pw";` + "\n" +
			"authorizer.class.name=" + broker.StandardAuthorizer + "\n" +
			// The controller and inter-broker listeners are PLAINTEXT
			// (principal ANONYMOUS): the broker itself must pass.
			"super.users=User:admin;User:ANONYMOUS\n",
		clientOpts: []kgo.Opt{kgo.SASL(plain.Auth{User: "admin", Pass: "admin-pw"}.AsMechanism())},
	})
	kafkaTool, kafkaOut := run(kafkaAddr)

	for i, s := range steps {
		if embeddedTool[i] != kafkaTool[i] {
			t.Errorf("kafka-acls %s: the embedded broker's output differs from Kafka 4.3's\nembedded:\n%s\nkafka:\n%s", strings.Join(s, " "), embeddedTool[i], kafkaTool[i])
		}
	}
	if !slices.Equal(embeddedOut, kafkaOut) {
		t.Errorf("alice's operations answer differently\nembedded:\n%s\nkafka:\n%s", strings.Join(embeddedOut, "\n"), strings.Join(kafkaOut, "\n"))
	}
	// What must be there in any case, so that the same wrong answer on
	// both sides cannot pass.
	for _, want := range []string{"(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)", "patternType=PREFIXED"} {
		if !strings.Contains(embeddedTool[5], want) {
			t.Errorf("kafka-acls --list lacks %q:\n%s", want, embeddedTool[5])
		}
	}
	for _, want := range []string{"produce orders: ok", "produce secret: TOPIC_AUTHORIZATION_FAILED", "produce orders-eu: TOPIC_AUTHORIZATION_FAILED",
		"create acl: CLUSTER_AUTHORIZATION_FAILED", "transactional produce: TRANSACTIONAL_ID_AUTHORIZATION_FAILED"} {
		if !slices.Contains(embeddedOut, want) {
			t.Errorf("alice's outcomes lack %q:\n%s", want, strings.Join(embeddedOut, "\n"))
		}
	}
	t.Logf("%d kafka-acls invocations and %d operations as alice, compared:\n%s", len(steps), len(embeddedOut), strings.Join(embeddedOut, "\n"))
}
