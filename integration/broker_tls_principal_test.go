package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
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
)

// tlsATV is one attribute of a generated certificate subject, with its
// DER string type (12 UTF8String, 19 PrintableString, 22 IA5String).
type tlsATV struct {
	oid asn1.ObjectIdentifier
	tag int
	val string
}

// rawSubject encodes rdns (in DER order: most significant first) as a
// Name, each RDN a SET of its attributes.
func rawSubject(t *testing.T, rdns ...[]tlsATV) []byte {
	t.Helper()
	type atv struct {
		Type  asn1.ObjectIdentifier
		Value asn1.RawValue
	}
	type rdnSET []atv
	var seq []rdnSET
	for _, rdn := range rdns {
		var set rdnSET
		for _, a := range rdn {
			set = append(set, atv{a.oid, asn1.RawValue{Class: asn1.ClassUniversal, Tag: a.tag, Bytes: []byte(a.val)}})
		}
		seq = append(seq, set)
	}
	der, err := asn1.Marshal(seq)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

var (
	oidCN    = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidC     = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidO     = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidOU    = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidUID   = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidEmail = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
)

// tlsPrincipalPKI writes a CA, the brokers' PEM keystore (127.0.0.1) and
// truststore under dir, and returns a client certificate per subject.
func tlsPrincipalPKI(t *testing.T, dir string, subjects map[string][]byte) (keystore, truststore string, clients map[string]tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "connectd principal test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(2 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, tmpl *x509.Certificate) ([]byte, *ecdsa.PrivateKey) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(2*time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	der, key := issue(2, &x509.Certificate{Subject: pkix.Name{CommonName: "broker"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	pk, _ := x509.MarshalPKCS8PrivateKey(key)
	keystore, truststore = filepath.Join(dir, "broker.pem"), filepath.Join(dir, "ca.pem")
	ks := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})) + string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	if err := os.WriteFile(keystore, []byte(ks), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truststore, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	clients = map[string]tls.Certificate{}
	serial := int64(10)
	for name, subj := range subjects {
		serial++
		der, key := issue(serial, &x509.Certificate{RawSubject: subj, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		clients[name] = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	return keystore, truststore, clients
}

// ACL principals from TLS client certificates (issue 18), on the
// embedded broker and on a real Kafka 4.3, both on an SSL listener with
// ssl.client.auth=required, the StandardAuthorizer, the same
// ssl.principal.mapping.rules and the same ACLs granted to principals
// named by certificate subjects: a DN super user, a subject a rule maps
// (CN lower-cased), one taken as it is (multi-valued RDN, escaped
// characters, an attribute Java writes as an OID), and one no rule
// matches. Each client's produce to three topics, its metadata and a
// client without a certificate answer the same on both brokers.
func TestTLSPrincipalsSameOnEmbeddedBrokerAndKafka(t *testing.T) {
	dir := t.TempDir()
	subjects := map[string][]byte{
		// RFC 2253: CN=admin,O=Acme
		"admin": rawSubject(t, []tlsATV{{oidO, 19, "Acme"}}, []tlsATV{{oidCN, 12, "admin"}}),
		// CN=Alice,OU=eng,O=Acme\, Inc.,C=US → rule 1 → alice
		"alice": rawSubject(t, []tlsATV{{oidC, 19, "US"}}, []tlsATV{{oidO, 12, "Acme, Inc."}}, []tlsATV{{oidOU, 12, "eng"}}, []tlsATV{{oidCN, 12, "Alice"}}),
		// CN=\ Wé\#ird\;\+,OU=ops+UID=w1,O=Acme,1.2.840.113549.1.9.1=#1609774061636d652e696f → rule 2 (as it is)
		"weird": rawSubject(t, []tlsATV{{oidEmail, 22, "w@acme.io"}}, []tlsATV{{oidO, 12, "Acme"}}, []tlsATV{{oidOU, 12, "ops"}, {oidUID, 12, "w1"}}, []tlsATV{{oidCN, 12, " Wé#ird;+"}}),
		// CN=bob,O=Other: no rule matches (there is no DEFAULT)
		"bob": rawSubject(t, []tlsATV{{oidO, 19, "Other"}}, []tlsATV{{oidCN, 19, "bob"}}),
	}
	const (
		rules          = `RULE:^CN=([^,]*),OU=eng,.*$/$1/L, RULE:^(.*O=Acme.*)$/$1/`
		adminPrincipal = "User:CN=admin,O=Acme"
		weirdPrincipal = `User:CN=\ Wé\#ird\;\+,OU=ops+UID=w1,O=Acme,1.2.840.113549.1.9.1=#1609774061636d652e696f`
	)
	ks, ts, certs := tlsPrincipalPKI(t, dir, subjects)
	caPEM, _ := os.ReadFile(ts)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := func(addr, who string, opts ...kgo.Opt) *kgo.Client {
		tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		if c, ok := certs[who]; ok {
			tc.Certificates = []tls.Certificate{c}
		}
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTLSConfig(tc),
			kgo.RequestRetries(0), kgo.RetryTimeout(3 * time.Second), kgo.RecordDeliveryTimeout(3 * time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	outcome := func(err error) string {
		if err == nil {
			return "ok"
		}
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return ke.Message
		}
		// A connection the broker closes (failed authentication, no
		// certificate): the client's own wording differs by timing.
		return "connection refused by the broker"
	}
	run := func(addr string) []string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		adm := kadm.NewClient(client(addr, "admin", kgo.RequestRetries(10), kgo.RetryTimeout(20*time.Second)))
		for _, topic := range []string{"orders", "weird-t", "secret"} {
			if r, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil || r.Err != nil {
				t.Fatalf("admin creating %s on %s: %v %v", topic, addr, err, r.Err)
			}
		}
		acls := kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpWrite, kadm.OpDescribe)
		weird := kadm.NewACLs().Allow(weirdPrincipal).Topics("weird-t").Operations(kadm.OpWrite, kadm.OpDescribe)
		for _, b := range []*kadm.ACLBuilder{acls, weird} {
			res, err := adm.CreateACLs(ctx, b)
			if err == nil {
				for _, r := range res {
					err = errors.Join(err, r.Err)
				}
			}
			if err != nil {
				t.Fatalf("admin creating ACLs on %s: %v", addr, err)
			}
		}
		var out []string
		for _, who := range []string{"admin", "alice", "weird", "bob", "no certificate"} {
			cl := client(addr, who)
			for _, topic := range []string{"orders", "weird-t", "secret"} {
				pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
				err := cl.ProduceSync(pctx, &kgo.Record{Topic: topic, Value: []byte(who)}).FirstErr()
				pcancel()
				out = append(out, fmt.Sprintf("%s produce %s: %s", who, topic, outcome(err)))
			}
			md, err := kadm.NewClient(cl).Metadata(ctx)
			names := md.Topics.Names()
			slices.Sort(names)
			out = append(out, fmt.Sprintf("%s metadata: %s %v", who, outcome(err), names))
		}
		return out
	}

	embeddedAddr := freeAddr(t)
	opts, err := broker.SecurityOptions(map[string]string{
		"embedded.kafka.security.protocol":           "SSL",
		"embedded.kafka.ssl.keystore.type":           "PEM",
		"embedded.kafka.ssl.keystore.location":       ks,
		"embedded.kafka.ssl.client.auth":             "required",
		"embedded.kafka.ssl.truststore.type":         "PEM",
		"embedded.kafka.ssl.truststore.location":     ts,
		"embedded.kafka.ssl.principal.mapping.rules": rules,
		"embedded.kafka.authorizer.class.name":       broker.StandardAuthorizer,
		"embedded.kafka.super.users":                 adminPrincipal,
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := broker.Start(embeddedAddr, t.TempDir(), false, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	embedded := run(embeddedAddr)

	adminCert := certs["admin"]
	kafkaAddr := startKafkaWith(t, kafkaListenerOpts{
		protocol: "SSL",
		props: "listener.name.client.ssl.keystore.type=PEM\n" +
			"listener.name.client.ssl.keystore.location=" + ks + "\n" +
			"listener.name.client.ssl.truststore.type=PEM\n" +
			"listener.name.client.ssl.truststore.location=" + ts + "\n" +
			"listener.name.client.ssl.client.auth=required\n" +
			"ssl.principal.mapping.rules=" + rules + "\n" +
			"authorizer.class.name=" + broker.StandardAuthorizer + "\n" +
			// The controller and inter-broker listeners are PLAINTEXT
			// (principal ANONYMOUS): the broker itself must pass.
			"super.users=" + adminPrincipal + ";User:ANONYMOUS\n",
		clientOpts: []kgo.Opt{kgo.DialTLSConfig(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{adminCert}, MinVersion: tls.VersionTLS12})},
	})
	kafka := run(kafkaAddr)

	if !slices.Equal(embedded, kafka) {
		t.Errorf("the clients' operations answer differently\nembedded:\n%s\nkafka:\n%s", strings.Join(embedded, "\n"), strings.Join(kafka, "\n"))
	}
	// What must hold in any case, so that the same wrong answer on both
	// sides cannot pass: the mapped and the unmapped DN principal are
	// granted exactly their topics, the DN super user everything, and
	// neither an unmatched subject nor a client without a certificate
	// gets in.
	for _, want := range []string{
		"admin produce secret: ok", "alice produce orders: ok", "alice produce secret: TOPIC_AUTHORIZATION_FAILED",
		"weird produce weird-t: ok", "weird produce orders: TOPIC_AUTHORIZATION_FAILED",
		"bob produce orders: connection refused by the broker", "no certificate produce orders: connection refused by the broker",
	} {
		if !slices.Contains(embedded, want) {
			t.Errorf("embedded broker: no %q in\n%s", want, strings.Join(embedded, "\n"))
		}
	}
	t.Logf("%d outcomes the same on both:\n%s", len(embedded), strings.Join(embedded, "\n"))
}
