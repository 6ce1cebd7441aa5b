package rest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/runtime"
	"software.sslmate.com/src/go-pkcs12"
)

// testPKI is a CA and a server certificate for 127.0.0.1 signed by it.
type testPKI struct {
	caCert, cert *x509.Certificate
	key          *ecdsa.PrivateKey
	pool         *x509.CertPool
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "connectd test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "worker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &testPKI{caCert: ca, cert: cert, key: key, pool: pool}
}

func (p *testPKI) pemKeystore(t *testing.T, dir string) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(p.key)
	if err != nil {
		t.Fatal(err)
	}
	text := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})) +
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.cert.Raw})) +
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.caCert.Raw}))
	f := filepath.Join(dir, "keystore.pem")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func (p *testPKI) pkcs12Keystore(t *testing.T, dir, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.Encode(p.key, p.cert, []*x509.Certificate{p.caCert}, password)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "keystore.p12")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// startServing starts a worker with cfg (plus a free embedded broker) and
// its REST server on a free port; it returns the server's base URL.
func startServing(t *testing.T, scheme string, extra runtime.WorkerConfig) string {
	t.Helper()
	url, _ := startWorkerServing(t, scheme, extra)
	return url
}

func startWorkerServing(t *testing.T, scheme string, extra runtime.WorkerConfig) (string, *runtime.Worker) {
	t.Helper()
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}
	rest := free()
	cfg := runtime.WorkerConfig{"data.dir": t.TempDir(), "embedded.kafka.listener": free(), "listeners": scheme + "://" + rest, "schema.registry.listener": ""}
	for k, v := range extra {
		cfg[k] = v
	}
	plugins := connect.NewPlugins()
	plugins.RegisterSource("test.CounterSourceConnector", func() connect.SourceConnector { return counterSource{} })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := runtime.StartWorker(ctx, cfg, plugins, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(w, plugins)
	if err != nil {
		w.Close()
		t.Fatal(err)
	}
	if err := srv.Listen(rest); err != nil {
		w.Close()
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Shutdown(context.Background()); w.Close() })
	return srv.URL(), w
}

func get(t *testing.T, cl *http.Client, url, user, password string) (int, string, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// The REST API serves https with a PEM keystore (ssl.keystore.type=PEM, as
// Kafka 2.7+ accepts) and with a PKCS12 one under the listeners.https.
// prefix (Kafka Connect's RestServer settings); a client that does not
// trust the CA, or speaks plain http, gets nothing.
func TestRESTOverTLS(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	trusting := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.pool}}}
	for name, cfg := range map[string]runtime.WorkerConfig{
		"PEM": {"ssl.keystore.type": "PEM", "ssl.keystore.location": pki.pemKeystore(t, dir)},
		"PKCS12": {"listeners.https.ssl.keystore.type": "PKCS12", "listeners.https.ssl.keystore.location": pki.pkcs12Keystore(t, dir, "changeit"),
			"listeners.https.ssl.keystore.password": "changeit",
			// Ignored: the prefixed settings win all or nothing.
			"ssl.keystore.type": "PEM", "ssl.keystore.location": "/nonexistent"},
		// The password from a config provider (KIP-421: worker properties
		// resolve variables too).
		"PKCS12 password from a FileConfigProvider": {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": pki.pkcs12Keystore(t, t.TempDir(), "from-file"),
			"ssl.keystore.password": "${file:" + writeFile(t, dir, "worker-secrets.properties", "keystore.password=from-file\n") + ":keystore.password}",
			"config.providers":      "file", "config.providers.file.class": runtime.FileConfigProviderClass},
	} {
		url := startServing(t, "https", cfg)
		if !strings.HasPrefix(url, "https://127.0.0.1:") {
			t.Fatalf("%s: URL %s", name, url)
		}
		code, body, err := get(t, trusting, url+"/", "", "")
		if err != nil || code != 200 || !strings.Contains(body, `"version":"`+Version+`"`) {
			t.Fatalf("%s: GET / over https: %d %s %v", name, code, body, err)
		}
		if _, _, err := get(t, &http.Client{Timeout: 5 * time.Second}, url+"/", "", ""); err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s: a client without the CA: %v", name, err)
		}
		if code, _, err := get(t, &http.Client{Timeout: 5 * time.Second}, "http"+strings.TrimPrefix(url, "https")+"/", "", ""); err == nil && code == 200 {
			t.Errorf("%s: plain http was served", name)
		}
	}
	// Misconfigurations are reported at start, naming the key.
	for _, tc := range []struct {
		cfg  runtime.WorkerConfig
		want string
	}{
		{runtime.WorkerConfig{"listeners": "https://127.0.0.1:1"}, "needs ssl.keystore.location"},
		{runtime.WorkerConfig{"listeners": "https://127.0.0.1:1", "ssl.keystore.type": "PKCS12", "ssl.keystore.location": pki.pkcs12Keystore(t, dir, "right"), "ssl.keystore.password": "wrong"},
			"reading PKCS12 keystore"},
		{runtime.WorkerConfig{"listeners": "https://127.0.0.1:1", "ssl.keystore.location": writeFile(t, dir, "ks.jks", "\xfe\xed\xfe\xed\x00\x00\x00\x02")}, "is a JKS keystore"},
	} {
		if _, err := serverTLSConfig(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// A PKCS12 keystore made by Java's keytool (the usual way Kafka Connect
// keystores are made; Java 9+ writes PKCS12 by default, with PBES2/AES)
// is read, whether typed PKCS12 or left at Kafka's default JKS type.
func TestRESTOverTLSWithKeytoolKeystore(t *testing.T) {
	keytool, err := exec.LookPath("keytool")
	if err != nil {
		t.Fatal("keytool (Java) not found: scripts/setup.sh installs Java for the tests")
	}
	ks := filepath.Join(t.TempDir(), "connect.keystore.p12")
	out, err := exec.Command(keytool, "-genkeypair", "-alias", "connect", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
		"-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1", "-storetype", "PKCS12", "-keystore", ks, "-storepass", "s3cret", "-keypass", "s3cret").CombinedOutput()
	if err != nil {
		t.Fatalf("keytool: %v\n%s", err, out)
	}
	url := startServing(t, "https", runtime.WorkerConfig{"ssl.keystore.location": ks, "ssl.keystore.password": "s3cret", "ssl.key.password": "s3cret"})
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := cl.Get(url + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET / with a keytool keystore: %v %v", resp, err)
	}
	if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != "127.0.0.1" {
		t.Errorf("served certificate CN %q", cn)
	}
	resp.Body.Close()
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	f := filepath.Join(dir, name)
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// Basic authentication as Kafka Connect's BasicAuthSecurityRestExtension
// with a JAAS file naming PropertyFileLoginModule and its credentials
// file: 401 with JaasBasicAuthFilter's body without valid credentials.
func TestRESTBasicAuth(t *testing.T) {
	dir := t.TempDir()
	creds := writeFile(t, dir, "credentials.properties", "# user=password\nadmin=adm1n-secret\nreader: r3ader\n")
	jaas := writeFile(t, dir, "connect_jaas.conf", `/* as in Kafka Connect's docs */
KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="`+creds+`";
};
OtherApp { com.example.Module required; };
`)
	pki := newTestPKI(t)
	url := startServing(t, "https", runtime.WorkerConfig{
		"rest.extension.classes":          BasicAuthExtensionClass,
		"java.security.auth.login.config": jaas,
		"ssl.keystore.type":               "PEM", "ssl.keystore.location": pki.pemKeystore(t, dir),
	})
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.pool}}}
	for _, tc := range []struct {
		user, password string
		code           int
	}{
		{"", "", 401},
		{"admin", "wrong", 401},
		{"nobody", "adm1n-secret", 401},
		{"admin", "adm1n-secret", 200},
		{"reader", "r3ader", 200},
	} {
		code, body, err := get(t, cl, url+"/connectors", tc.user, tc.password)
		if err != nil || code != tc.code {
			t.Fatalf("%s/%s: %d %s %v, want %d", tc.user, tc.password, code, body, err, tc.code)
		}
		if code == 401 && body != "User cannot access the resource." {
			t.Errorf("401 body %q", body)
		}
		if code == 200 && body != "[]" {
			t.Errorf("200 body %q", body)
		}
	}
	// A malformed header is refused like a missing one.
	req, _ := http.NewRequest(http.MethodGet, url+"/", nil)
	req.Header.Set("Authorization", "Bearer abc")
	if resp, err := cl.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("bearer token: %v %v", resp, err)
	}

	// The JAAS path may come from KAFKA_OPTS, as a Java worker gets it.
	a, err := basicAuthFromConfig(runtime.WorkerConfig{"rest.extension.classes": "BasicAuthSecurityRestExtension"},
		[]string{"KAFKA_OPTS=-Xmx1g -Djava.security.auth.login.config=" + jaas + " -Dother=1"})
	if err != nil || a == nil || !a.authenticate("admin", "adm1n-secret") {
		t.Errorf("KAFKA_OPTS: %v %v", a, err)
	}
	for _, tc := range []struct {
		cfg  runtime.WorkerConfig
		want string
	}{
		{runtime.WorkerConfig{"rest.extension.classes": "com.example.OAuth"}, "Class com.example.OAuth could not be found"},
		{runtime.WorkerConfig{"rest.extension.classes": BasicAuthExtensionClass}, "needs a JAAS file"},
		{runtime.WorkerConfig{"rest.extension.classes": BasicAuthExtensionClass, "java.security.auth.login.config": writeFile(t, dir, "other.conf", "Other { x required; };")},
			"No LoginModules configured for KafkaConnect"},
	} {
		if _, err := basicAuthFromConfig(tc.cfg, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// JAAS control flags combine as javax.security.auth.login.LoginContext's.
func TestBasicAuthControlFlags(t *testing.T) {
	alice := map[string]string{"alice": "a"}
	bob := map[string]string{"bob": "b"}
	for _, tc := range []struct {
		mods []loginModule
		user string
		pw   string
		want bool
	}{
		{[]loginModule{{"required", alice}, {"required", bob}}, "alice", "a", false},
		{[]loginModule{{"sufficient", alice}, {"sufficient", bob}}, "bob", "b", true},
		{[]loginModule{{"requisite", alice}, {"sufficient", bob}}, "bob", "b", false},
		{[]loginModule{{"optional", alice}, {"optional", bob}}, "carol", "c", false},
		{[]loginModule{{"optional", alice}, {"required", bob}}, "bob", "b", true},
	} {
		if got := (&basicAuthenticator{modules: tc.mods}).authenticate(tc.user, tc.pw); got != tc.want {
			t.Errorf("%+v %s: %v, want %v", tc.mods, tc.user, got, tc.want)
		}
	}
}

// A write sent to a follower is forwarded to the leader over https (the
// truststore's CA verifies it) with the user's Authorization header, as
// Kafka Connect's RestClient forwards it: two workers in one group on the
// embedded broker, both with TLS and basic authentication.
func TestForwardedRequestKeepsCredentialsOverTLS(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t)
	creds := writeFile(t, dir, "credentials.properties", "admin=adm1n\n")
	jaas := writeFile(t, dir, "jaas.conf", `KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required file="`+creds+`"; };`)
	ca := writeFile(t, dir, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pki.caCert.Raw})))
	cfg := runtime.WorkerConfig{
		"rest.extension.classes": BasicAuthExtensionClass, "java.security.auth.login.config": jaas,
		"ssl.keystore.type": "PEM", "ssl.keystore.location": pki.pemKeystore(t, dir),
		"ssl.truststore.type": "PEM", "ssl.truststore.location": ca,
		"group.id": "tls-group", "heartbeat.interval.ms": "300", "session.timeout.ms": "6000",
	}
	url1, w1 := startWorkerServing(t, "https", cfg)
	cfg2 := runtime.WorkerConfig{"bootstrap.servers": w1.Brokers[0]}
	for k, v := range cfg {
		cfg2[k] = v
	}
	url2, w2 := startWorkerServing(t, "https", cfg2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	followerURL := ""
	for followerURL == "" {
		for _, c := range []struct {
			url string
			w   *runtime.Worker
		}{{url1, w1}, {url2, w2}} {
			if err := c.w.Herder.AwaitStable(ctx, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			if leader, leaderURL, err := c.w.Herder.Leader(); err == nil && !leader && strings.HasPrefix(leaderURL, "https://") {
				followerURL = c.url
			}
		}
		if ctx.Err() != nil {
			t.Fatal("no follower with an https leader URL")
		}
	}
	cl := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.pool}}}
	post := func(user, pw string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, followerURL+"/connectors",
			strings.NewReader(`{"name":"fwd","config":{"connector.class":"test.CounterSourceConnector","topic":"fwd","count":"1"}}`))
		req.Header.Set("Content-Type", "application/json")
		if user != "" {
			req.SetBasicAuth(user, pw)
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("", ""); code != 401 {
		t.Fatalf("without credentials: %d %s", code, body)
	}
	if code, body := post("admin", "adm1n"); code != 201 || !strings.Contains(body, `"name":"fwd"`) {
		t.Fatalf("forwarded create: %d %s", code, body)
	}
}
