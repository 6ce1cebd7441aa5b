package rest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/connectd/connectd/internal/keystore"
	"github.com/connectd/connectd/runtime"
)

// REST over TLS, configured as Kafka Connect's RestServer: a listener
// https://host:port, with the SSL settings under "listeners.https." when
// any key has that prefix, else the worker's own ssl.* keys (Kafka's
// valuesWithPrefixAllOrNothing):
//
//	ssl.keystore.type      PKCS12 | PEM | JKS (default JKS, as Kafka; a JKS-typed
//	                       file that is really PKCS12 is read, as Java 9+ does;
//	                       a real JKS file is an error: convert it with keytool)
//	ssl.keystore.location  the keystore file (PEM: private key + certificate chain)
//	ssl.keystore.password  PKCS12 password
//	ssl.key.password       the key's password (PKCS12: defaults to the store's)
//	ssl.keystore.key, ssl.keystore.certificate.chain   PEM text in the property
//	ssl.truststore.type / .location / .password / .certificates
//	                       CAs for client certificates and for forwarding
//	                       requests to other workers over https
//	ssl.client.auth        none (default) | requested | required

const httpsPrefix = "listeners.https."

// listenerScheme returns the scheme of the worker's first listener
// ("http" or "https").
func listenerScheme(cfg runtime.WorkerConfig) string { return cfg.RESTScheme() }

// sslSettings returns the listener's ssl.* settings, prefixed ones
// winning all or nothing.
func sslSettings(cfg runtime.WorkerConfig) map[string]string {
	if p := cfg.Prefixed(httpsPrefix); len(p) > 0 {
		return p
	}
	out := map[string]string{}
	for k, v := range cfg {
		if strings.HasPrefix(k, "ssl.") {
			out[k] = v
		}
	}
	return out
}

// serverTLSConfig returns the TLS configuration of an https listener, nil
// for http. Errors name the key at fault.
func serverTLSConfig(cfg runtime.WorkerConfig) (*tls.Config, error) {
	if listenerScheme(cfg) != "https" {
		return nil, nil
	}
	s := sslSettings(cfg)
	cert, err := loadKeystore(s)
	if err != nil {
		return nil, err
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	switch strings.ToLower(strings.TrimSpace(s["ssl.client.auth"])) {
	case "", "none":
	case "requested":
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("worker config ssl.client.auth: %q is not one of none, requested, required", s["ssl.client.auth"])
	}
	if tc.ClientAuth != tls.NoClientCert {
		pool, err := loadTruststore(s)
		if err != nil {
			return nil, err
		}
		if pool == nil {
			return nil, fmt.Errorf("worker config ssl.client.auth=%s needs ssl.truststore.location or ssl.truststore.certificates", s["ssl.client.auth"])
		}
		tc.ClientCAs = pool
	}
	return tc, nil
}

// clientTLSConfig is the TLS configuration for requests this worker
// forwards to other workers: the truststore's CAs, or the system's.
func clientTLSConfig(cfg runtime.WorkerConfig) (*tls.Config, error) {
	s := sslSettings(cfg)
	pool, err := loadTruststore(s)
	if err != nil {
		return nil, err
	}
	tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if listenerScheme(cfg) == "https" && s["ssl.keystore.location"]+s["ssl.keystore.key"] != "" {
		// A worker presents its own certificate when peers require one.
		if cert, err := loadKeystore(s); err == nil {
			tc.Certificates = []tls.Certificate{cert}
		}
	}
	return tc, nil
}

// loadKeystore reads the listener's certificate and private key.
func loadKeystore(s map[string]string) (tls.Certificate, error) {
	cert, err := keystore.Certificate(s, "")
	if errors.Is(err, keystore.ErrNoKeystore) {
		return cert, fmt.Errorf("worker config: an https listener needs ssl.keystore.location (or, with ssl.keystore.type=PEM, ssl.keystore.key and ssl.keystore.certificate.chain)")
	}
	return cert, err
}

// loadTruststore returns the CAs of the truststore, nil when none is set.
func loadTruststore(s map[string]string) (*x509.CertPool, error) {
	return keystore.Truststore(s, "")
}
