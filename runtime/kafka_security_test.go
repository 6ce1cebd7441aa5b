package runtime

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"software.sslmate.com/src/go-pkcs12"
)

// sasl.jaas.config values as Kafka's documentation writes them
// (https://kafka.apache.org/documentation/#security_sasl_plain_clientconfig,
// #security_sasl_scram_clientconfig), and what JaasConfig rejects.
func TestParseClientJAAS(t *testing.T) {
	for _, tc := range []struct {
		in          string
		class, user string
		pass        string
	}{
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`, PlainLoginModule, "alice", "alice-secret"},
		{"org.apache.kafka.common.security.scram.ScramLoginModule required\n  username=\"admin\"\n  password=\"a;b=c d\";", ScramLoginModule, "admin", "a;b=c d"},
		{`org.apache.kafka.common.security.scram.ScramLoginModule required username='bob' password="q\"uote\\";`, ScramLoginModule, "bob", `q"uote\`},
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username=carol password=pw;`, PlainLoginModule, "carol", "pw"},
	} {
		m, err := parseClientJAAS(tc.in)
		if err != nil || m.class != tc.class || m.flag != "required" || m.options["username"] != tc.user || m.options["password"] != tc.pass {
			t.Errorf("%s: %+v %v", tc.in, m, err)
		}
	}
	for in, want := range map[string]string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b"`:                "missing the closing ';'",
		`org.apache.kafka.common.security.plain.PlainLoginModule mandatory username="a";`:                           `control flag "mandatory"`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="a"; x.Y required username="b";`: "contains 2 login modules, should be 1 module",
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="a`:                              "unterminated",
		`org.apache.kafka.common.security.plain.PlainLoginModule required username;`:                                "expected key=value",
		``: "contains 0 login modules",
	} {
		if _, err := parseClientJAAS(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// Worker security settings: which keys each client reads, and the errors
// that name the key at fault.
func TestKafkaSecuritySettings(t *testing.T) {
	jaas := func(mod, user, pw string) string {
		return mod + ` required username="` + user + `" password="` + pw + `";`
	}
	cfg := WorkerConfig{
		"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
		"sasl.jaas.config":          jaas(ScramLoginModule, "worker", "w"),
		"producer.sasl.jaas.config": jaas(ScramLoginModule, "producer", "p"),
		"admin.sasl.mechanism":      "PLAIN", "admin.sasl.jaas.config": jaas(PlainLoginModule, "admin", "a"),
	}
	for prefix, want := range map[string]string{
		"":          "SASL_PLAINTEXT, SASL mechanism SCRAM-SHA-256 as user \"worker\"",
		"producer.": "SASL_PLAINTEXT, SASL mechanism SCRAM-SHA-256 as user \"producer\"",
		"admin.":    "SASL_PLAINTEXT, SASL mechanism PLAIN as user \"admin\"",
		"consumer.": "SASL_PLAINTEXT, SASL mechanism SCRAM-SHA-256 as user \"worker\"",
	} {
		s, err := kafkaSecurity(cfg, prefix)
		if err != nil || s.describe() != want || len(s.opts()) != 1 {
			t.Errorf("%q: %v %v, want %s", prefix, s, err, want)
		}
	}
	if s, err := kafkaSecurity(WorkerConfig{}, "producer."); err != nil || s.protocol != SecurityPlaintext || len(s.opts()) != 0 {
		t.Errorf("no settings: %+v %v", s, err)
	}
	for _, tc := range []struct {
		cfg    WorkerConfig
		prefix string
		want   string
	}{
		{WorkerConfig{"security.protocol": "SASL"}, "", `security.protocol: "SASL" is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL`},
		{WorkerConfig{"security.protocol": "SASL_SSL"}, "", "sasl.mechanism is not set: Kafka's default GSSAPI"},
		{WorkerConfig{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "", `sasl.mechanism: "OAUTHBEARER" is not supported`},
		{WorkerConfig{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "", "sasl.jaas.config is not set"},
		{WorkerConfig{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "producer.sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"}, "producer.",
			"worker config producer.sasl.jaas.config: login module com.sun.security.auth.module.Krb5LoginModule is not supported"},
		{WorkerConfig{"security.protocol": "SSL", "admin.ssl.truststore.location": "/nonexistent.p12"}, "admin.", "worker config admin.ssl.truststore.location: open /nonexistent.p12"},
		{WorkerConfig{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldap"}, "", `ssl.endpoint.identification.algorithm: "ldap"`},
	} {
		if _, err := kafkaSecurity(tc.cfg, tc.prefix); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// brokerPKI is a CA and a certificate for 127.0.0.1 signed by it, written
// as a PEM keystore and a PEM truststore, and a client certificate signed
// by the same CA in a PKCS12 keystore (password "changeit").
func brokerPKI(t *testing.T) (keystorePEM, truststorePEM, clientP12 string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "connectd test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := x509.MarshalPKCS8PrivateKey(key)
	dir := t.TempDir()
	keystorePEM = filepath.Join(dir, "broker.pem")
	truststorePEM = filepath.Join(dir, "ca.pem")
	ks := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})) + string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	if err := os.WriteFile(keystorePEM, []byte(ks), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truststorePEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	ckey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ctmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "connect-worker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	cder, err := x509.CreateCertificate(rand.Reader, ctmpl, ca, &ckey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ccert, _ := x509.ParseCertificate(cder)
	p12, err := pkcs12.Modern.Encode(ckey, ccert, []*x509.Certificate{ca}, "changeit")
	if err != nil {
		t.Fatal(err)
	}
	clientP12 = filepath.Join(dir, "client.p12")
	if err := os.WriteFile(clientP12, p12, 0o600); err != nil {
		t.Fatal(err)
	}
	return keystorePEM, truststorePEM, clientP12
}

func tryStartWorker(t *testing.T, cfg WorkerConfig, shared *counterShared) (*Worker, error) {
	t.Helper()
	plugins := connect.NewPlugins()
	plugins.RegisterSource("test.CounterSource", func() connect.SourceConnector { return counterSource{shared} })
	base := WorkerConfig{"data.dir": t.TempDir(), "listeners": "http://127.0.0.1:0", "offset.flush.interval.ms": "100", "schema.registry.listener": ""}
	for k, v := range cfg {
		base[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return StartWorker(ctx, base, plugins, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// The embedded broker with SASL (SCRAM-SHA-512 users) and with TLS
// (SASL_SSL, PLAIN): a worker with the right credentials runs a connector
// whose records a SASL client reads; one with a wrong password, or
// without the broker's CA, fails at start with a message naming the
// mechanism and user, or the TLS settings.
func TestWorkerOnSecuredEmbeddedBroker(t *testing.T) {
	ks, ts, clientP12 := brokerPKI(t)
	jaas := func(mod, user, pw string) string {
		return mod + ` required username="` + user + `" password="` + pw + `";`
	}
	for _, tc := range []struct {
		name   string
		broker WorkerConfig
		client WorkerConfig
		tls    bool
	}{
		{"SASL_PLAINTEXT SCRAM-SHA-512",
			WorkerConfig{"embedded.kafka.security.protocol": "SASL_PLAINTEXT", "embedded.kafka.sasl.enabled.mechanisms": "SCRAM-SHA-512", "embedded.kafka.sasl.users": "connect:c0nnect-pw,other:x"},
			WorkerConfig{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas(ScramLoginModule, "connect", "%s")}, false},
		{"SASL_SSL PLAIN",
			WorkerConfig{"embedded.kafka.security.protocol": "SASL_SSL", "embedded.kafka.sasl.users": "connect:c0nnect-pw",
				"embedded.kafka.ssl.keystore.type": "PEM", "embedded.kafka.ssl.keystore.location": ks},
			WorkerConfig{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas(PlainLoginModule, "connect", "%s"),
				"ssl.truststore.type": "PEM", "ssl.truststore.location": ts}, true},
		// Mutual TLS: the broker requires a client certificate, the worker
		// presents its PKCS12 keystore.
		{"SSL with a client certificate",
			WorkerConfig{"embedded.kafka.security.protocol": "SSL", "embedded.kafka.ssl.keystore.type": "PEM", "embedded.kafka.ssl.keystore.location": ks,
				"embedded.kafka.ssl.client.auth": "required", "embedded.kafka.ssl.truststore.type": "PEM", "embedded.kafka.ssl.truststore.location": ts},
			WorkerConfig{"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": ts,
				"ssl.keystore.type": "PKCS12", "ssl.keystore.location": clientP12, "ssl.keystore.password": "changeit"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := func(pw string, drop ...string) WorkerConfig {
				c := WorkerConfig{"embedded.kafka.listener": freeAddr(t)}
				for k, v := range tc.broker {
					c[k] = v
				}
				for k, v := range tc.client {
					c[k] = strings.ReplaceAll(v, "%s", pw)
				}
				for _, k := range drop {
					delete(c, k)
				}
				return c
			}
			if tc.client["sasl.mechanism"] != "" {
				start := time.Now()
				_, err := tryStartWorker(t, cfg("wrong"), &counterShared{})
				if err == nil || !strings.Contains(err.Error(), "SASL "+tc.client["sasl.mechanism"]+` authentication as user "connect" failed`) {
					t.Fatalf("wrong password: %v", err)
				}
				if d := time.Since(start); d > 15*time.Second {
					t.Errorf("wrong password reported after %s", d)
				}
			}
			if tc.client["ssl.keystore.location"] != "" {
				_, err := tryStartWorker(t, cfg("", "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password"), &counterShared{})
				if err == nil || !strings.Contains(err.Error(), "TLS handshake failed") {
					t.Fatalf("without a client certificate: %v", err)
				}
			}
			if tc.tls {
				_, err := tryStartWorker(t, cfg("c0nnect-pw", "ssl.truststore.type", "ssl.truststore.location"), &counterShared{})
				if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
					t.Fatalf("without the broker's CA: %v", err)
				}
			}

			c := cfg("c0nnect-pw")
			w, err := tryStartWorker(t, c, &counterShared{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if _, err := w.Herder.CreateConnector(context.Background(), "counter", map[string]string{"connector.class": "test.CounterSource", "topic": "secured", "count": "20"}); err != nil {
				t.Fatal(err)
			}
			// A client with the same credentials reads the records.
			sec, err := kafkaSecurity(c, "")
			if err != nil {
				t.Fatal(err)
			}
			cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(w.Brokers...), kgo.ConsumeTopics("secured"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, sec.opts()...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var got []string
			for len(got) < 20 && ctx.Err() == nil {
				cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
			}
			if len(got) != 20 || !strings.Contains(got[19], "record-19") {
				t.Fatalf("read %d records: %v", len(got), got)
			}
			if st, err := w.Herder.ConnectorStatus("counter"); err != nil || st.Tasks[0].State != StateRunning {
				t.Fatalf("status %+v %v", st, err)
			}
		})
	}
}

// A connector's producer.override.sasl.* keys (KIP-458; what the Principal
// policy exists for) give its tasks their own login: with the worker's
// producer.sasl.jaas.config wrong, only the connector that overrides it
// with a right one gets its records written. A bad override is a
// validation error naming the connector's key.
func TestConnectorProducerSecurityOverride(t *testing.T) {
	jaas := func(user, pw string) string {
		return ScramLoginModule + ` required username="` + user + `" password="` + pw + `";`
	}
	w, err := tryStartWorker(t, WorkerConfig{"embedded.kafka.listener": freeAddr(t),
		"embedded.kafka.security.protocol": "SASL_PLAINTEXT", "embedded.kafka.sasl.enabled.mechanisms": "SCRAM-SHA-256",
		"embedded.kafka.sasl.users": "worker:w-pw,tenant:t-pw",
		"security.protocol":         "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": jaas("worker", "w-pw"),
		"producer.sasl.jaas.config":               jaas("worker", "wrong"),
		"connector.client.config.override.policy": "Principal",
	}, &counterShared{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	if _, err := w.Herder.CreateConnector(ctx, "plain", map[string]string{"connector.class": "test.CounterSource", "topic": "plain", "count": "5"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Herder.CreateConnector(ctx, "tenant", map[string]string{"connector.class": "test.CounterSource", "topic": "tenant", "count": "5",
		"producer.override.sasl.jaas.config": jaas("tenant", "t-pw")}); err != nil {
		t.Fatal(err)
	}
	sec, _ := kafkaSecurity(w.Config, "")
	read := func(topic string, d time.Duration) int {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(w.Brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, sec.opts()...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		c, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		n := 0
		for n < 5 && c.Err() == nil {
			n += len(cl.PollFetches(c).Records())
		}
		return n
	}
	if n := read("tenant", 30*time.Second); n != 5 {
		t.Fatalf("the overriding connector's records: %d of 5", n)
	}
	// The control: the worker's (wrong) producer login writes nothing.
	if n := read("plain", 3*time.Second); n != 0 {
		t.Fatalf("records written with the worker's wrong producer password: %d", n)
	}

	infos, err := w.Herder.ValidateConnectorConfig(map[string]string{"connector.class": "test.CounterSource", "name": "x", "topic": "t",
		"producer.override.sasl.mechanism": "GSSAPI", "producer.override.sasl.jaas.config": jaas("tenant", "t-pw")})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, c := range infos.Configs {
		if c.Value != nil && c.Value.Name == "producer.override.sasl.mechanism" {
			msgs = c.Value.Errors
		}
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], `producer.override.sasl.mechanism: "GSSAPI" is not supported`) {
		t.Fatalf("errors of producer.override.sasl.mechanism: %v (error_count %d)", msgs, infos.ErrorCount)
	}
}

// embedded.kafka.sasl.users is authoritative at every start: kfake
// persists its SCRAM credentials under the data dir and would otherwise
// keep the first start's passwords and drop users added later.
func TestEmbeddedSASLUsersFollowTheConfigAcrossRestarts(t *testing.T) {
	dir, kafka := t.TempDir(), freeAddr(t)
	cfg := func(users, user, pw string) WorkerConfig {
		return WorkerConfig{"data.dir": dir, "embedded.kafka.listener": kafka,
			"embedded.kafka.security.protocol": "SASL_PLAINTEXT", "embedded.kafka.sasl.enabled.mechanisms": "SCRAM-SHA-256",
			"embedded.kafka.sasl.users": users, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
			"sasl.jaas.config": ScramLoginModule + ` required username="` + user + `" password="` + pw + `";`}
	}
	w, err := tryStartWorker(t, cfg("connect:first-pw", "connect", "first-pw"), &counterShared{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	// A changed password and a new user take effect; the old password
	// no longer works.
	if w, err = tryStartWorker(t, cfg("connect:second-pw,added:a-pw", "added", "a-pw"), &counterShared{}); err != nil {
		t.Fatalf("restart with a new user: %v", err)
	}
	w.Close()
	if w, err = tryStartWorker(t, cfg("connect:second-pw", "connect", "second-pw"), &counterShared{}); err != nil {
		t.Fatalf("restart with a changed password: %v", err)
	}
	w.Close()
	if _, err = tryStartWorker(t, cfg("connect:second-pw", "connect", "first-pw"), &counterShared{}); err == nil || !strings.Contains(err.Error(), "SCRAM-SHA-256 authentication") {
		t.Fatalf("the old password: %v", err)
	}
}

// A broker that is not up yet is waited for (a worker started before its
// Kafka cluster, as in a compose file), and one that never comes is
// reported as unreachable when the start's deadline passes.
func TestWorkerWaitsForBrokerToListen(t *testing.T) {
	addr := freeAddr(t)
	_, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	started := make(chan *kfake.Cluster, 1)
	go func() {
		time.Sleep(2 * time.Second)
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.AllowAutoTopicCreation())
		if err != nil {
			t.Error(err)
		}
		started <- c
	}()
	begin := time.Now()
	w, err := tryStartWorker(t, WorkerConfig{"bootstrap.servers": addr}, &counterShared{})
	c := <-started
	if c != nil {
		defer c.Close()
	}
	if err != nil {
		t.Fatalf("worker started before its broker: %v", err)
	}
	w.Close()
	if d := time.Since(begin); d < 2*time.Second {
		t.Fatalf("started after %s, before the broker listened", d)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err = checkKafkaReachable(ctx, []string{freeAddr(t)}, &kafkaSecuritySettings{protocol: SecurityPlaintext}, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "the broker is unreachable") {
		t.Fatalf("no broker: %v", err)
	}
}
