// Package keystore reads Kafka's ssl.keystore.* and ssl.truststore.*
// settings (PKCS12, PEM files or PEM text, and JKS-typed files that are
// really PKCS12, as Java 9+ writes them) into Go TLS material. The REST
// listener (rest/tls.go) and the worker's Kafka clients
// (runtime/kafka_security.go) share it.
//
// Keys, as Kafka's SslConfigs (each may carry a prefix such as
// "producer." or "listeners.https."):
//
//	ssl.keystore.type      PKCS12 | PEM | JKS (default JKS, as Kafka; a real JKS file is an error)
//	ssl.keystore.location  the keystore file (PEM: private key + certificate chain)
//	ssl.keystore.password  PKCS12 password
//	ssl.key.password       the key's password (PKCS12: defaults to the store's)
//	ssl.keystore.key, ssl.keystore.certificate.chain   PEM text in the property
//	ssl.truststore.type / .location / .password / .certificates
//
// Errors name the key at fault as "worker config <prefix><key>: …".
package keystore

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// ErrNoKeystore is returned by Certificate when neither
// ssl.keystore.location nor ssl.keystore.key is set.
var ErrNoKeystore = errors.New("no keystore configured")

// jksMagic starts a Java KeyStore (JKS) file.
var jksMagic = []byte{0xfe, 0xed, 0xfe, 0xed}

// Certificate reads the certificate chain and private key of the keystore
// described by s's <prefix>ssl.keystore.* keys. Errors: ErrNoKeystore
// when none is set; otherwise one naming the key at fault.
func Certificate(s map[string]string, prefix string) (tls.Certificate, error) {
	key := func(k string) string { return s[prefix+k] }
	typ := strings.ToUpper(strings.TrimSpace(key("ssl.keystore.type")))
	if typ == "" {
		typ = "JKS"
	}
	loc := strings.TrimSpace(key("ssl.keystore.location"))
	if typ == "PEM" {
		var data []byte
		if k, chain := key("ssl.keystore.key"), key("ssl.keystore.certificate.chain"); k != "" || chain != "" {
			data = []byte(k + "\n" + chain)
		} else if loc != "" {
			b, err := os.ReadFile(loc)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("worker config %sssl.keystore.location: %w", prefix, err)
			}
			data = b
		} else {
			return tls.Certificate{}, fmt.Errorf("%w: ssl.keystore.type=PEM needs %sssl.keystore.location or %sssl.keystore.key and %sssl.keystore.certificate.chain", ErrNoKeystore, prefix, prefix, prefix)
		}
		return pemKeyPair(data)
	}
	if typ != "PKCS12" && typ != "JKS" {
		return tls.Certificate{}, fmt.Errorf("worker config %sssl.keystore.type: %q is not one of PKCS12, PEM, JKS", prefix, key("ssl.keystore.type"))
	}
	if loc == "" {
		return tls.Certificate{}, fmt.Errorf("%w: needs %sssl.keystore.location", ErrNoKeystore, prefix)
	}
	data, err := os.ReadFile(loc)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("worker config %sssl.keystore.location: %w", prefix, err)
	}
	if bytes.HasPrefix(data, jksMagic) {
		return tls.Certificate{}, fmt.Errorf("worker config %sssl.keystore.location: %s is a JKS keystore, which connectd cannot read; convert it with "+
			"keytool -importkeystore -srckeystore %s -destkeystore keystore.p12 -deststoretype PKCS12 and set ssl.keystore.type=PKCS12", prefix, loc, loc)
	}
	pw := key("ssl.keystore.password")
	pk, leaf, chain, err := pkcs12.DecodeChain(data, pw)
	if kp := key("ssl.key.password"); err != nil && kp != "" && kp != pw {
		pk, leaf, chain, err = pkcs12.DecodeChain(data, kp)
	}
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("worker config %sssl.keystore.location: reading PKCS12 keystore %s: %w", prefix, loc, err)
	}
	cert := tls.Certificate{PrivateKey: pk, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
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

// Truststore returns the CAs of the truststore described by s's
// <prefix>ssl.truststore.* keys, nil when none is set.
func Truststore(s map[string]string, prefix string) (*x509.CertPool, error) {
	var certs []*x509.Certificate
	typ := strings.ToUpper(strings.TrimSpace(s[prefix+"ssl.truststore.type"]))
	if inline := s[prefix+"ssl.truststore.certificates"]; inline != "" {
		cs, err := pemCertificates([]byte(inline))
		if err != nil {
			return nil, fmt.Errorf("worker config %sssl.truststore.certificates: %w", prefix, err)
		}
		certs = cs
	} else if loc := strings.TrimSpace(s[prefix+"ssl.truststore.location"]); loc != "" {
		data, err := os.ReadFile(loc)
		if err != nil {
			return nil, fmt.Errorf("worker config %sssl.truststore.location: %w", prefix, err)
		}
		switch {
		case typ == "PEM":
			certs, err = pemCertificates(data)
		case bytes.HasPrefix(data, jksMagic):
			err = fmt.Errorf("%s is a JKS truststore, which connectd cannot read; convert it to PKCS12 with keytool -importkeystore", loc)
		default:
			certs, err = pkcs12.DecodeTrustStore(data, s[prefix+"ssl.truststore.password"])
		}
		if err != nil {
			return nil, fmt.Errorf("worker config %sssl.truststore.location: %w", prefix, err)
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
