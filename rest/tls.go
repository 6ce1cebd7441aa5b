package rest

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"

	"github.com/connectd/connectd/runtime"
	"software.sslmate.com/src/go-pkcs12"
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

// jksMagic starts a Java KeyStore (JKS) file.
var jksMagic = []byte{0xfe, 0xed, 0xfe, 0xed}

// loadKeystore reads the listener's certificate and private key.
func loadKeystore(s map[string]string) (tls.Certificate, error) {
	typ := strings.ToUpper(strings.TrimSpace(s["ssl.keystore.type"]))
	if typ == "" {
		typ = "JKS"
	}
	loc := strings.TrimSpace(s["ssl.keystore.location"])
	if typ == "PEM" {
		var data []byte
		if key, chain := s["ssl.keystore.key"], s["ssl.keystore.certificate.chain"]; key != "" || chain != "" {
			data = []byte(key + "\n" + chain)
		} else if loc != "" {
			b, err := os.ReadFile(loc)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("worker config ssl.keystore.location: %w", err)
			}
			data = b
		} else {
			return tls.Certificate{}, fmt.Errorf("worker config: an https listener with ssl.keystore.type=PEM needs ssl.keystore.location or ssl.keystore.key and ssl.keystore.certificate.chain")
		}
		return pemKeyPair(data)
	}
	if typ != "PKCS12" && typ != "JKS" {
		return tls.Certificate{}, fmt.Errorf("worker config ssl.keystore.type: %q is not one of PKCS12, PEM, JKS", s["ssl.keystore.type"])
	}
	if loc == "" {
		return tls.Certificate{}, fmt.Errorf("worker config: an https listener needs ssl.keystore.location")
	}
	data, err := os.ReadFile(loc)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("worker config ssl.keystore.location: %w", err)
	}
	if bytes.HasPrefix(data, jksMagic) {
		return tls.Certificate{}, fmt.Errorf("worker config ssl.keystore.location: %s is a JKS keystore, which connectd cannot read; convert it with "+
			"keytool -importkeystore -srckeystore %s -destkeystore keystore.p12 -deststoretype PKCS12 and set ssl.keystore.type=PKCS12", loc, loc)
	}
	pw := s["ssl.keystore.password"]
	key, leaf, chain, err := pkcs12.DecodeChain(data, pw)
	if err != nil && s["ssl.key.password"] != "" && s["ssl.key.password"] != pw {
		key, leaf, chain, err = pkcs12.DecodeChain(data, s["ssl.key.password"])
	}
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("worker config ssl.keystore.location: reading PKCS12 keystore %s: %w", loc, err)
	}
	cert := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}

// pemKeyPair reads an unencrypted private key and a certificate chain
// (leaf first) from PEM blocks in any order.
func pemKeyPair(data []byte) (tls.Certificate, error) {
	var certs, keys []byte
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		switch {
		case b.Type == "CERTIFICATE":
			certs = append(certs, pem.EncodeToMemory(b)...)
		case b.Type == "ENCRYPTED PRIVATE KEY":
			return tls.Certificate{}, fmt.Errorf("worker config: the PEM keystore's private key is encrypted, which connectd cannot read; use an unencrypted key or a PKCS12 keystore")
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			keys = append(keys, pem.EncodeToMemory(b)...)
		}
	}
	cert, err := tls.X509KeyPair(certs, keys)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("worker config: PEM keystore: %w", err)
	}
	return cert, nil
}

// loadTruststore returns the CAs of the truststore, nil when none is set.
func loadTruststore(s map[string]string) (*x509.CertPool, error) {
	var certs []*x509.Certificate
	typ := strings.ToUpper(strings.TrimSpace(s["ssl.truststore.type"]))
	if inline := s["ssl.truststore.certificates"]; inline != "" {
		cs, err := pemCertificates([]byte(inline))
		if err != nil {
			return nil, fmt.Errorf("worker config ssl.truststore.certificates: %w", err)
		}
		certs = cs
	} else if loc := strings.TrimSpace(s["ssl.truststore.location"]); loc != "" {
		data, err := os.ReadFile(loc)
		if err != nil {
			return nil, fmt.Errorf("worker config ssl.truststore.location: %w", err)
		}
		switch {
		case typ == "PEM":
			certs, err = pemCertificates(data)
		case bytes.HasPrefix(data, jksMagic):
			err = fmt.Errorf("%s is a JKS truststore, which connectd cannot read; convert it to PKCS12 with keytool -importkeystore", loc)
		default:
			certs, err = pkcs12.DecodeTrustStore(data, s["ssl.truststore.password"])
		}
		if err != nil {
			return nil, fmt.Errorf("worker config ssl.truststore.location: %w", err)
		}
	} else {
		return nil, nil
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

func pemCertificates(data []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no PEM certificate found")
	}
	return out, nil
}
