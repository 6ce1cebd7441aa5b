package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// aclBroker starts the embedded broker on SASL_PLAINTEXT (PLAIN users
// admin and alice) with the StandardAuthorizer and super.users=User:admin,
// plus the worker keys in extra, under dir.
func aclBroker(t *testing.T, dir, addr string, extra map[string]string) *Broker {
	t.Helper()
	cfg := map[string]string{
		"embedded.kafka.security.protocol":       "SASL_PLAINTEXT",
		"embedded.kafka.sasl.enabled.mechanisms": "PLAIN",
		"embedded.kafka.sasl.users":              "admin:admin-pw,alice:alice-pw,bob:bob-pw",
		"embedded.kafka.authorizer.class.name":   StandardAuthorizer,
		"embedded.kafka.super.users":             "User:admin",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	opts, err := SecurityOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Start(addr, dir, false, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// metadataAs sends a Metadata request for topics (nil: all) with cl and
// returns each answered topic's error code and the names, sorted.
func metadataAs(t *testing.T, cl *kgo.Client, topics ...string) (map[string]int16, []string) {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	if topics != nil {
		for _, tp := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(tp)
			req.Topics = append(req.Topics, rt)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	codes := make(map[string]int16)
	var names []string
	for _, tp := range resp.Topics {
		codes[*tp.Topic] = tp.ErrorCode
		names = append(names, *tp.Topic)
	}
	slices.Sort(names)
	return codes, names
}

func saslClient(t *testing.T, addr, user string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr),
		kgo.SASL(plain.Auth{User: user, Pass: user + "-pw"}.AsMechanism()),
		kgo.RequestRetries(0), kgo.RetryTimeout(2 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// describeACLStrings lists every ACL of the broker, as
// "principal host type name pattern operation permission", sorted.
func describeACLStrings(t *testing.T, adm *kadm.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("DescribeACLs: %v", r.Err)
		}
		for _, d := range r.Described {
			out = append(out, fmt.Sprintf("%s %s %s %s %s %s %s", d.Principal, d.Host, d.Type, d.Name, d.Pattern, d.Operation, d.Permission))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The embedded broker with embedded.kafka.authorizer.class.name checks
// Kafka ACLs as Kafka's StandardAuthorizer: a super user may do anything,
// another principal only what an ALLOW ACL (and no DENY ACL) grants, with
// Kafka's error codes; ACLs are created, described and deleted with the
// Admin API and survive a restart.
func TestEmbeddedBrokerACLs(t *testing.T) {
	dir, addr := t.TempDir(), freeAddr(t)
	b := aclBroker(t, dir, addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(saslClient(t, addr, "admin"))
	for _, topic := range []string{"orders", "orders-eu", "secret"} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatalf("admin (super user) creating %s: %v", topic, err)
		}
	}
	created, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite, kadm.OpRead))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range created {
		if c.Err != nil {
			t.Fatalf("CreateACLs: %v", c.Err)
		}
	}
	for _, bld := range []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").Groups("g1").Operations(kadm.OpRead),
		kadm.NewACLs().Deny("User:alice").Topics("orders-eu").Operations(kadm.OpWrite),
	} {
		if _, err := adm.CreateACLs(ctx, bld); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"User:alice * GROUP g1 LITERAL READ ALLOW",
		"User:alice * TOPIC orders PREFIXED READ ALLOW",
		"User:alice * TOPIC orders PREFIXED WRITE ALLOW",
		"User:alice * TOPIC orders-eu LITERAL WRITE DENY",
	}
	if got := describeACLStrings(t, adm); !slices.Equal(got, want) {
		t.Fatalf("DescribeACLs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A MATCH filter finds the ACLs that apply to a name: the literal
	// ones and the prefixed ones whose prefix it has.
	matched, err := adm.DescribeACLs(ctx, kadm.NewACLs().Topics("orders-eu").ResourcePatternType(kadm.ACLPatternMatch).Operations(kadm.OpAny).Allow().Deny().AllowHosts().DenyHosts())
	if err != nil || len(matched) != 1 || matched[0].Err != nil {
		t.Fatalf("DescribeACLs MATCH orders-eu: %+v %v", matched, err)
	}
	if n := len(matched[0].Described); n != 3 {
		t.Errorf("DescribeACLs MATCH orders-eu: %d ACLs, want 3 (prefixed orders READ and WRITE, literal orders-eu)", n)
	}

	checkAlice := func(when string) {
		t.Helper()
		alice := saslClient(t, addr, "alice")
		aadm := kadm.NewClient(alice)
		if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("o1")}).FirstErr(); err != nil {
			t.Errorf("%s: alice producing to orders (prefixed WRITE): %v", when, err)
		}
		for topic, wantErr := range map[string]error{"secret": kerr.TopicAuthorizationFailed, "orders-eu": kerr.TopicAuthorizationFailed} {
			if err := alice.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("x")}).FirstErr(); !errors.Is(err, wantErr) {
				t.Errorf("%s: alice producing to %s: %v, want %v", when, topic, err, wantErr)
			}
		}
		// Metadata: a topic alice may not describe is an authorization
		// error when named, left out when all topics are listed.
		errs, _ := metadataAs(t, alice, "secret", "orders")
		if errs["secret"] != kerr.TopicAuthorizationFailed.Code || errs["orders"] != 0 {
			t.Errorf("%s: metadata error codes of secret, orders: %v", when, errs)
		}
		if _, all := metadataAs(t, alice); !slices.Equal(all, []string{"orders", "orders-eu"}) {
			t.Errorf("%s: alice lists topics %v, want orders, orders-eu", when, all)
		}
		// Topic create / delete / describe configs.
		if r, err := aadm.CreateTopic(ctx, 1, 1, nil, "alice-new"); !errors.Is(errors.Join(err, r.Err), kerr.TopicAuthorizationFailed) {
			t.Errorf("%s: alice creating a topic: %v %v", when, err, r.Err)
		}
		if r, err := aadm.DeleteTopic(ctx, "orders"); !errors.Is(errors.Join(err, r.Err), kerr.TopicAuthorizationFailed) {
			t.Errorf("%s: alice deleting orders: %v %v", when, err, r.Err)
		}
		rc, err := aadm.DescribeTopicConfigs(ctx, "secret")
		if err == nil {
			_, err = rc.On("secret", nil)
			if err == nil {
				r, _ := rc.On("secret", nil)
				err = r.Err
			}
		}
		if !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("%s: alice describing the configs of secret: %v", when, err)
		}
		// Groups: g1 may be read, g2 not.
		for group, wantErr := range map[string]error{"g1": nil, "g2": kerr.GroupAuthorizationFailed} {
			cl := saslClient(t, addr, "alice", kgo.ConsumerGroup(group), kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			pctx, pcancel := context.WithTimeout(ctx, 15*time.Second)
			fs := cl.PollFetches(pctx)
			pcancel()
			var err error
			fs.EachError(func(_ string, _ int32, e error) {
				if err == nil {
					err = e
				}
			})
			if wantErr == nil && (err != nil || fs.NumRecords() == 0) {
				t.Errorf("%s: alice consuming orders in group %s: %d records, %v", when, group, fs.NumRecords(), err)
			}
			if wantErr != nil && !errors.Is(err, wantErr) {
				t.Errorf("%s: alice consuming in group %s: %v, want %v", when, group, err, wantErr)
			}
			cl.Close()
		}
		// Transactions: no ACL on the transactional id.
		txn := saslClient(t, addr, "alice", kgo.TransactionalID("alice-txn"))
		err = txn.BeginTransaction()
		if err == nil {
			err = txn.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("t")}).FirstErr()
		}
		if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
			t.Errorf("%s: alice producing in a transaction without ACL on its id: %v", when, err)
		}
		// Managing ACLs needs ALTER on the cluster.
		res, err := aadm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("secret").Operations(kadm.OpRead))
		if err == nil && len(res) > 0 {
			err = res[0].Err
		}
		if !errors.Is(err, kerr.ClusterAuthorizationFailed) {
			t.Errorf("%s: alice creating an ACL: %v", when, err)
		}
	}
	checkAlice("before restart")

	// Restart: the ACLs are read back from the data dir.
	b.Close()
	b = aclBroker(t, dir, addr, nil)
	defer b.Close()
	adm = kadm.NewClient(saslClient(t, addr, "admin"))
	if got := describeACLStrings(t, adm); !slices.Equal(got, want) {
		t.Fatalf("after a restart, DescribeACLs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkAlice("after restart")

	// DeleteACLs answers what it deleted; the group is then denied.
	del, err := adm.DeleteACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts("*").Groups("g1").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || len(del) != 1 || del[0].Err != nil || len(del[0].Deleted) != 1 {
		t.Fatalf("DeleteACLs: %+v %v", del, err)
	}
	cl := saslClient(t, addr, "alice", kgo.ConsumerGroup("g1"), kgo.ConsumeTopics("orders"))
	pctx, pcancel := context.WithTimeout(ctx, 15*time.Second)
	defer pcancel()
	var gerr error
	cl.PollFetches(pctx).EachError(func(_ string, _ int32, e error) { gerr = e })
	if !errors.Is(gerr, kerr.GroupAuthorizationFailed) {
		t.Errorf("group g1 after its ACL was deleted: %v", gerr)
	}
}

// allow.everyone.if.no.acl.found=true allows what no ACL names and
// still denies a resource that has ACLs, for other principals.
func TestEmbeddedBrokerAllowEveryoneIfNoACLFound(t *testing.T) {
	addr := freeAddr(t)
	b := aclBroker(t, t.TempDir(), addr, map[string]string{"embedded.kafka.allow.everyone.if.no.acl.found": "true"})
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(saslClient(t, addr, "admin"))
	if _, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:bob").Topics("bobs").Operations(kadm.OpAll)); err != nil {
		t.Fatal(err)
	}
	alice := saslClient(t, addr, "alice")
	if r, err := kadm.NewClient(alice).CreateTopic(ctx, 1, 1, nil, "free"); err != nil || r.Err != nil {
		t.Fatalf("alice creating a topic no ACL names: %v %v", err, r.Err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "free", Value: []byte("x")}).FirstErr(); err != nil {
		t.Errorf("alice producing to a topic no ACL names: %v", err)
	}
	if r, err := adm.CreateTopic(ctx, 1, 1, nil, "bobs"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "bobs", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("alice producing to bob's topic: %v", err)
	}
	if err := saslClient(t, addr, "bob").ProduceSync(ctx, &kgo.Record{Topic: "bobs", Value: []byte("x")}).FirstErr(); err != nil {
		t.Errorf("bob producing to his topic: %v", err)
	}
}

func TestEmbeddedBrokerAuthorizerKeys(t *testing.T) {
	for _, bad := range []map[string]string{
		{"embedded.kafka.authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"},
		{"embedded.kafka.authorizer.class.name": StandardAuthorizer, "embedded.kafka.super.users": "admin"},
		{"embedded.kafka.authorizer.class.name": StandardAuthorizer, "embedded.kafka.allow.everyone.if.no.acl.found": "yes"},
		{"embedded.kafka.super.users": "User:admin"},
	} {
		if _, err := SecurityOptions(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
	if _, err := SecurityOptions(map[string]string{"embedded.kafka.authorizer.class.name": StandardAuthorizer,
		"embedded.kafka.super.users": "User:admin; User:ANONYMOUS", "embedded.kafka.allow.everyone.if.no.acl.found": "false"}); err != nil {
		t.Error(err)
	}
}
