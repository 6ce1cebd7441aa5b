package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/connectd/connectd/internal/keystore"
	"github.com/twmb/franz-go/pkg/kfake"
)

// The embedded broker's own listener security (connectd only; a real
// broker is configured in its server.properties), from worker keys under
// "embedded.kafka.":
//
//	embedded.kafka.security.protocol          PLAINTEXT (default) | SSL | SASL_PLAINTEXT | SASL_SSL
//	embedded.kafka.sasl.enabled.mechanisms    which of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 the
//	                                          users may log in with (default all three)
//	embedded.kafka.sasl.users                 user:password[,user:password...], each allowed every
//	                                          enabled mechanism (required with SASL; a password
//	                                          may come from a config provider, ${file:…})
//	embedded.kafka.ssl.keystore.*             the listener's certificate (as ssl.keystore.*:
//	                                          PKCS12 or PEM), required with SSL
//	embedded.kafka.ssl.client.auth            none (default) | requested | required: mutual TLS,
//	                                          client certificates checked against
//	embedded.kafka.ssl.truststore.*           the CAs of the clients' certificates
//	embedded.kafka.ssl.principal.mapping.rules  DEFAULT | RULE:pattern/replacement/[LU],...: the ACL
//	                                          principal of a client certificate (tls_principal.go)
//
// The worker's own clients reach the broker like any other client: with
// security.protocol, sasl.mechanism, sasl.jaas.config and ssl.truststore.*
// (kafka_security.go), which the user sets to match.
const embeddedPrefix = "embedded.kafka."

// The listener's security protocols and SASL mechanisms, by Kafka's names.
const (
	securityPlaintext     = "PLAINTEXT"
	securitySSL           = "SSL"
	securitySASLPlaintext = "SASL_PLAINTEXT"
	securitySASLSSL       = "SASL_SSL"
	saslPlain             = "PLAIN"
	saslScramSHA256       = "SCRAM-SHA-256"
	saslScramSHA512       = "SCRAM-SHA-512"
)

// SecurityOptions returns the kfake options of the embedded
// broker's listener security. Errors name the key at fault.
func SecurityOptions(cfg map[string]string) ([]kfake.Opt, error) {
	key := func(k string) string { return strings.TrimSpace(cfg[embeddedPrefix+k]) }
	proto := strings.ToUpper(key("security.protocol"))
	var useSASL, useTLS bool
	switch proto {
	case "", securityPlaintext:
	case securitySSL:
		useTLS = true
	case securitySASLPlaintext:
		useSASL = true
	case securitySASLSSL:
		useSASL, useTLS = true, true
	default:
		return nil, fmt.Errorf("worker config %ssecurity.protocol: %q is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", embeddedPrefix, key("security.protocol"))
	}
	authz, err := parseAuthorizer(cfg)
	if err != nil {
		return nil, err
	}
	opts := authz.opts()
	if useSASL {
		mechs := []string{saslPlain, saslScramSHA256, saslScramSHA512}
		if v := key("sasl.enabled.mechanisms"); v != "" {
			mechs = nil
			for _, m := range strings.Split(v, ",") {
				m = strings.ToUpper(strings.TrimSpace(m))
				switch m {
				case saslPlain, saslScramSHA256, saslScramSHA512:
					mechs = append(mechs, m)
				case "":
				default:
					return nil, fmt.Errorf("worker config %ssasl.enabled.mechanisms: %q is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512", embeddedPrefix, m)
				}
			}
		}
		users := key("sasl.users")
		if users == "" {
			return nil, fmt.Errorf("worker config %ssasl.users is not set: %ssecurity.protocol=%s needs at least one user:password", embeddedPrefix, embeddedPrefix, proto)
		}
		opts = append(opts, kfake.EnableSASL())
		for _, up := range strings.Split(users, ",") {
			u, p, ok := strings.Cut(strings.TrimSpace(up), ":")
			if !ok || u == "" {
				return nil, fmt.Errorf("worker config %ssasl.users: %q is not user:password", embeddedPrefix, strings.TrimSpace(up))
			}
			for _, m := range mechs {
				if authz.enabled {
					// Only embedded.kafka.super.users bypass the ACLs.
					opts = append(opts, kfake.User(m, u, p))
				} else {
					opts = append(opts, kfake.Superuser(m, u, p))
				}
			}
		}
	}
	mapper, err := parsePrincipalRules(key("ssl.principal.mapping.rules"))
	if err != nil {
		return nil, fmt.Errorf("worker config %sssl.principal.mapping.rules: %w", embeddedPrefix, err)
	}
	if useTLS {
		cert, err := keystore.Certificate(cfg, embeddedPrefix)
		if err != nil {
			return nil, fmt.Errorf("embedded broker with %ssecurity.protocol=%s: %w", embeddedPrefix, proto, err)
		}
		tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		switch strings.ToLower(key("ssl.client.auth")) {
		case "", "none":
		case "requested", "required":
			if !useSASL {
				// On SSL the ACLs' principal is the client
				// certificate's (tls_principal.go); on SASL_SSL the
				// SASL user's.
				opts = append(opts, kfake.TLSPrincipal(mapper.principal))
			}
			pool, err := keystore.Truststore(cfg, embeddedPrefix)
			if err != nil {
				return nil, err
			}
			if pool == nil {
				return nil, fmt.Errorf("worker config %sssl.client.auth=%s needs %sssl.truststore.location or %sssl.truststore.certificates", embeddedPrefix, key("ssl.client.auth"), embeddedPrefix, embeddedPrefix)
			}
			tc.ClientCAs, tc.ClientAuth = pool, tls.VerifyClientCertIfGiven
			if strings.EqualFold(key("ssl.client.auth"), "required") {
				tc.ClientAuth = tls.RequireAndVerifyClientCert
			}
		default:
			return nil, fmt.Errorf("worker config %sssl.client.auth: %q is not one of none, requested, required", embeddedPrefix, key("ssl.client.auth"))
		}
		opts = append(opts, kfake.TLS(tc))
	}
	return opts, nil
}

// ForgetPersistedSASLUsers removes the SASL credentials kfake persisted
// under dataDir (<data.dir>/kafka/sasl.json) when cfg configures
// embedded.kafka.sasl.users: kfake loads them after the configured users
// and would keep the first start's passwords and drop users added since,
// while the worker property is meant to be authoritative at every start.
func ForgetPersistedSASLUsers(cfg map[string]string, dataDir string) error {
	if strings.TrimSpace(cfg[embeddedPrefix+"sasl.users"]) == "" {
		return nil
	}
	err := os.Remove(filepath.Join(dataDir, "kafka", "sasl.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("embedded broker: resetting its persisted SASL users: %w", err)
	}
	return nil
}
