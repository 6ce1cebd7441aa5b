package runtime

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/connectd/connectd/internal/keystore"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Kafka client security, passed through from the worker properties as
// Kafka Connect does (CommonClientConfigs, SaslConfigs, SslConfigs):
//
//	security.protocol   PLAINTEXT (default) | SSL | SASL_PLAINTEXT | SASL_SSL
//	sasl.mechanism      PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 (Kafka's default
//	                    GSSAPI, OAUTHBEARER: not supported, an error)
//	sasl.jaas.config    one login module: org.apache.kafka.common.security.plain.
//	                    PlainLoginModule or …scram.ScramLoginModule, flag required,
//	                    options username="…" password="…"
//	ssl.truststore.*    the brokers' CAs (PKCS12, PEM file or text); none = the system's
//	ssl.keystore.*, ssl.key.password   the client certificate (mutual TLS), optional
//	ssl.endpoint.identification.algorithm   https (default): check the broker's
//	                    host name; empty: do not
//
// Which keys a client reads, as Kafka Connect's Worker and
// DistributedHerder: the internal topics (config, status, offsets), the
// group membership and the schema registry's _schemas topic read the
// unprefixed keys; the tasks' producers "producer."-prefixed keys, the
// admin client that creates the connectors' topics "admin."-prefixed keys.
// One deviation: Kafka Connect's task producer starts from the prefixed
// keys alone, connectd's starts from the unprefixed ones and lets the
// prefixed ones win key by key, so a worker with only unprefixed settings
// also works (a Kafka Connect worker.properties, which repeats them under
// producer., gives the same clients).

// Security protocols (security.protocol).
const (
	SecurityPlaintext     = "PLAINTEXT"
	SecuritySSL           = "SSL"
	SecuritySASLPlaintext = "SASL_PLAINTEXT"
	SecuritySASLSSL       = "SASL_SSL"
)

// SASL mechanisms connectd's clients speak (sasl.mechanism).
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// Login module classes accepted in sasl.jaas.config.
const (
	PlainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	ScramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// kafkaSecuritySettings are one client's resolved security settings.
type kafkaSecuritySettings struct {
	prefix    string // the key prefix errors name ("", "producer.", "admin.")
	protocol  string
	mechanism string // empty without SASL
	user      string
	password  string
	tls       *tls.Config // nil without SSL
}

// isSecurityKey tells the keys kafkaSecurity reads.
func isSecurityKey(k string) bool {
	return k == "security.protocol" || strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.")
}

// kafkaSecurity reads the security settings of a client whose own keys
// carry prefix ("" for the worker's internal clients, "producer.",
// "admin.", "consumer."): the unprefixed keys, then the prefixed ones
// winning key by key. Errors name the key at fault.
func kafkaSecurity(cfg WorkerConfig, prefix string) (*kafkaSecuritySettings, error) {
	s := map[string]string{}
	named := map[string]string{} // key -> the name it was given as
	for k, v := range cfg {
		if isSecurityKey(k) {
			s[k], named[k] = v, k
		}
	}
	if prefix != "" {
		for k, v := range cfg.Prefixed(prefix) {
			if isSecurityKey(k) {
				s[k], named[k] = v, prefix+k
			}
		}
	}
	name := func(k string) string {
		if n, ok := named[k]; ok {
			return n
		}
		return prefix + k
	}
	out := &kafkaSecuritySettings{prefix: prefix}
	out.protocol = strings.ToUpper(strings.TrimSpace(s["security.protocol"]))
	if out.protocol == "" {
		out.protocol = SecurityPlaintext
	}
	var useSASL, useTLS bool
	switch out.protocol {
	case SecurityPlaintext:
	case SecuritySSL:
		useTLS = true
	case SecuritySASLPlaintext:
		useSASL = true
	case SecuritySASLSSL:
		useSASL, useTLS = true, true
	default:
		return nil, fmt.Errorf("worker config %s: %q is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", name("security.protocol"), s["security.protocol"])
	}
	if useSASL {
		out.mechanism = strings.ToUpper(strings.TrimSpace(s["sasl.mechanism"]))
		switch out.mechanism {
		case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		case "":
			return nil, fmt.Errorf("worker config %s is not set: Kafka's default GSSAPI (Kerberos) is not supported by connectd; set PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", name("sasl.mechanism"))
		default:
			return nil, fmt.Errorf("worker config %s: %q is not supported by connectd; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", name("sasl.mechanism"), s["sasl.mechanism"])
		}
		jaas := strings.TrimSpace(s["sasl.jaas.config"])
		if jaas == "" {
			return nil, fmt.Errorf("worker config %s is not set: %s=%s needs it (a KafkaClient entry of a JAAS file is not read by connectd)", name("sasl.jaas.config"), name("security.protocol"), out.protocol)
		}
		mod, err := parseClientJAAS(jaas)
		if err != nil {
			return nil, fmt.Errorf("worker config %s: %w", name("sasl.jaas.config"), err)
		}
		if mod.class != PlainLoginModule && mod.class != ScramLoginModule {
			return nil, fmt.Errorf("worker config %s: login module %s is not supported by connectd; use %s or %s", name("sasl.jaas.config"), mod.class, PlainLoginModule, ScramLoginModule)
		}
		out.user, out.password = mod.options["username"], mod.options["password"]
		if out.user == "" {
			return nil, fmt.Errorf("worker config %s: the %s needs a username option", name("sasl.jaas.config"), mod.class)
		}
	}
	if useTLS {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		pool, err := keystore.Truststore(s, "")
		if err != nil {
			return nil, renameKeyErr(err, name)
		}
		tc.RootCAs = pool
		if cert, err := keystore.Certificate(s, ""); err == nil {
			tc.Certificates = []tls.Certificate{cert}
		} else if !errors.Is(err, keystore.ErrNoKeystore) {
			return nil, renameKeyErr(err, name)
		}
		switch alg := strings.ToLower(strings.TrimSpace(s["ssl.endpoint.identification.algorithm"])); alg {
		case "https":
		case "":
			if _, set := s["ssl.endpoint.identification.algorithm"]; set {
				// Kafka: an empty value disables the host name check;
				// the chain is still verified against the truststore.
				tc.InsecureSkipVerify = true
				tc.VerifyConnection = verifyChainOnly(pool)
			}
		default:
			return nil, fmt.Errorf("worker config %s: %q is not https or empty", name("ssl.endpoint.identification.algorithm"), alg)
		}
		out.tls = tc
	}
	return out, nil
}

// renameKeyErr makes a keystore error name the key as the user wrote it
// (with its client prefix).
func renameKeyErr(err error, name func(string) string) error {
	msg := err.Error()
	for _, k := range []string{"ssl.keystore.location", "ssl.keystore.type", "ssl.truststore.location", "ssl.truststore.certificates"} {
		if strings.HasPrefix(msg, "worker config "+k+":") {
			return fmt.Errorf("worker config %s%s", name(k), strings.TrimPrefix(msg, "worker config "+k))
		}
	}
	return err
}

// verifyChainOnly verifies the broker's chain against pool (the system's
// when nil) without checking its host name.
func verifyChainOnly(pool *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the broker sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter})
		return err
	}
}

// opts returns the kgo options of the settings: a TLS dialer and the SASL
// mechanism.
func (s *kafkaSecuritySettings) opts() []kgo.Opt {
	var opts []kgo.Opt
	if s.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(s.tls.Clone()))
	}
	switch s.mechanism {
	case SASLPlain:
		opts = append(opts, kgo.SASL(plain.Auth{User: s.user, Pass: s.password}.AsMechanism()))
	case SASLScramSHA256:
		opts = append(opts, kgo.SASL(scram.Auth{User: s.user, Pass: s.password}.AsSha256Mechanism()))
	case SASLScramSHA512:
		opts = append(opts, kgo.SASL(scram.Auth{User: s.user, Pass: s.password}.AsSha512Mechanism()))
	}
	return opts
}

// describe names the settings for messages: "SASL_SSL, SCRAM-SHA-256 as
// user alice".
func (s *kafkaSecuritySettings) describe() string {
	if s.mechanism == "" {
		return s.protocol
	}
	return fmt.Sprintf("%s, SASL mechanism %s as user %q", s.protocol, s.mechanism, s.user)
}

// jaasLoginModule is one login module of a sasl.jaas.config value.
type jaasLoginModule struct {
	class, flag string
	options     map[string]string
}

// parseClientJAAS parses a client's sasl.jaas.config value, as Kafka's
// JaasConfig: exactly one `<class> <flag> [key=value ...];` where values
// are bare words or quoted with " or ' (backslash escapes the next
// character), as Java's StreamTokenizer reads them.
func parseClientJAAS(text string) (jaasLoginModule, error) {
	var toks []string
	quoted := map[int]bool{}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == ';' || c == '=':
			toks = append(toks, string(c))
			i++
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			for ; j < len(text) && text[j] != c; j++ {
				if text[j] == '\\' && j+1 < len(text) {
					j++
				}
				b.WriteByte(text[j])
			}
			if j >= len(text) {
				return jaasLoginModule{}, fmt.Errorf("unterminated quoted value")
			}
			quoted[len(toks)] = true
			toks = append(toks, b.String())
			i = j + 1
		default:
			j := i
			for j < len(text) && !strings.ContainsRune(" \t\r\n;=\"'", rune(text[j])) {
				j++
			}
			toks = append(toks, text[i:j])
			i = j
		}
	}
	var mods []jaasLoginModule
	for i := 0; i < len(toks); {
		if i+1 >= len(toks) || toks[i] == ";" || toks[i] == "=" {
			return jaasLoginModule{}, fmt.Errorf("expected `LoginModuleClass required key=\"value\" ...;`")
		}
		m := jaasLoginModule{class: toks[i], flag: strings.ToLower(toks[i+1]), options: map[string]string{}}
		switch m.flag {
		case "required", "requisite", "sufficient", "optional":
		default:
			return jaasLoginModule{}, fmt.Errorf("login module %s: control flag %q is not one of required, requisite, sufficient, optional", m.class, toks[i+1])
		}
		i += 2
		for i < len(toks) && !(toks[i] == ";" && !quoted[i]) {
			if i+2 >= len(toks) || toks[i+1] != "=" || quoted[i+1] {
				return jaasLoginModule{}, fmt.Errorf("login module %s: expected key=value, got %q", m.class, toks[i])
			}
			m.options[toks[i]] = toks[i+2]
			i += 3
		}
		if i >= len(toks) {
			return jaasLoginModule{}, fmt.Errorf("login module %s: missing the closing ';'", m.class)
		}
		i++ // ;
		mods = append(mods, m)
	}
	if len(mods) != 1 {
		// Kafka's JaasContext.loadClientContext: "JAAS config property
		// contains N login modules, should be 1 module".
		return jaasLoginModule{}, fmt.Errorf("JAAS config property contains %d login modules, should be 1 module", len(mods))
	}
	return mods[0], nil
}

// checkKafkaReachable asks brokers for their metadata with the client
// options of s, so that a worker whose credentials or TLS settings are
// wrong fails at start with a message naming them, instead of retrying in
// the background. A broker that refuses connections (not up yet) is
// asked again every 500 ms until ctx ends, as the internal topics' clients
// would wait for it; any other failure returns at once. Each attempt
// waits at most attempt. Errors: the broker's answer or the connection
// failure, wrapped with the protocol, mechanism and user.
func checkKafkaReachable(ctx context.Context, brokers []string, s *kafkaSecuritySettings, attempt time.Duration) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.WithLogger(kafkaClientLogger()),
		kgo.RequestRetries(2), kgo.RetryTimeout(attempt)}, s.opts()...)...)
	if err != nil {
		return fmt.Errorf("Kafka client (%s): %w", s.describe(), err)
	}
	defer cl.Close()
	var refused error // the last refusal, reported when ctx ends
	for {
		actx, cancel := context.WithTimeout(ctx, attempt)
		_, err = kmsg.NewPtrMetadataRequest().RequestWith(actx, cl)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil && refused != nil {
			err = refused
			break
		}
		if !isConnectionRefused(err) || ctx.Err() != nil {
			break
		}
		refused = err
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
	hint := ""
	switch {
	case isConnectionRefused(err):
		hint = ": the broker is unreachable"
	case s.mechanism != "":
		hint = fmt.Sprintf(": SASL %s authentication as user %q failed or the broker is unreachable (check %ssasl.jaas.config and %ssasl.mechanism)", s.mechanism, s.user, s.prefix, s.prefix)
	case s.tls != nil:
		hint = fmt.Sprintf(": TLS handshake failed or the broker is unreachable (check %sssl.truststore.* and %ssecurity.protocol)", s.prefix, s.prefix)
	}
	return fmt.Errorf("connecting to Kafka at %s with security.protocol=%s%s: %w", strings.Join(brokers, ","), s.protocol, hint, err)
}

// isConnectionRefused tells a dial that nothing listens on (a broker not
// started yet) from the other connection failures.
func isConnectionRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// securityOptsOf returns the TLS and SASL options cl was built with.
func securityOptsOf(cl *kgo.Client) []kgo.Opt {
	var opts []kgo.Opt
	if tc, ok := cl.OptValue(kgo.DialTLSConfig).(*tls.Config); ok && tc != nil {
		opts = append(opts, kgo.DialTLSConfig(tc.Clone()))
	}
	if ms, ok := cl.OptValue(kgo.SASL).([]sasl.Mechanism); ok && len(ms) > 0 {
		opts = append(opts, kgo.SASL(ms...))
	}
	return opts
}

// KafkaClientOpts returns the TLS and SASL options of a client that reads
// topics as the worker's consumers do (the unprefixed security.protocol,
// sasl.*, ssl.* keys, "consumer."-prefixed ones winning key by key), after
// resolving config provider variables; for tools such as `connectd
// topics tail`. Errors: a provider or security setting that is invalid,
// naming its key.
func KafkaClientOpts(cfg WorkerConfig) ([]kgo.Opt, error) {
	tr, err := NewConfigTransformer(cfg)
	if err != nil {
		return nil, err
	}
	if cfg, err = tr.Transform(cfg); err != nil {
		return nil, fmt.Errorf("worker config: %w", err)
	}
	s, err := kafkaSecurity(cfg, "consumer.")
	if err != nil {
		return nil, err
	}
	return s.opts(), nil
}
